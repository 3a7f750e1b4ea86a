"""The reader registry and detection.

A reader is asked about a file only when the file can be its: the registry says, per
reader, what a file must show before its module is even imported (so that linting one
file imports the readers that could claim it, not all fourteen), and a loaded reader may
narrow that further with ``first_keys``.  The highest-scoring claim wins and ties go to the
reader listed first (vendor layouts before the generic API layouts), so the first
``DEFINITIVE`` claim in registry order ends the search.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from importlib import import_module
from typing import Any

from transcript_doctor.readers.base import DEFINITIVE, SHAPE, SPECIFIC, Decided, Detection, Reader
from transcript_doctor.source import Container, Source

Keys = frozenset[str] | None
ANY: Keys = None  # asked about every file of that container
NEVER: Keys = frozenset()  # its detect returns None for every file of that container


class Registered:
    """One reader of the registry and the files its ``detect`` could claim, by container:
    for JSONL, keys one of which a record of the file's head holds; for a JSON document,
    keys one of which the document (or, for an array, its first item) holds; ``ANY`` or
    ``NEVER``.  ``unless``: keys that, held by a record of the head, rule the reader out.
    ``most``: the highest score its ``detect`` gives a JSONL file (a decision it cannot
    outscore need not rule it out, ``_settled``).  ``markers`` and ``lead``: what has its
    ``decide`` asked (``Reader.decide``).  Declare only what ``detect`` itself
    requires: tests/test_registry.py checks every fixture and corpus file the reader claims."""

    __slots__ = ("json", "jsonl", "lead", "markers", "module", "most", "unless")

    def __init__(
        self,
        module: str,
        jsonl: Keys,
        json: Keys,
        unless: Collection[str] = (),
        markers: tuple[bytes, ...] = (),
        most: int = DEFINITIVE,
        lead: tuple[bytes, ...] = (),
    ) -> None:
        self.module = module
        self.most = most
        # Bytes one of which the file starts with, or its markers are not looked for: a
        # marker missed costs a search of the first ``MARKED`` bytes of every JSONL file.
        self.lead = lead
        self.jsonl = jsonl
        self.json = json
        self.unless = frozenset(unless)
        # Bytes one of which, found near the start of a JSONL file, has the reader's
        # ``decide`` asked before the head is parsed (``Reader.decide``).
        self.markers = markers

    def may_claim(self, source: Source, keys: Collection[str] | None) -> bool:
        """Whether ``detect`` could claim ``source``, whose head holds ``keys`` (None: the
        file has no record to tell by, only ``NEVER`` rules a reader out)."""
        wanted = self.jsonl if source.container is Container.JSONL else self.json
        if wanted is None:
            return keys is None or self.unless.isdisjoint(keys)
        if not wanted:
            return False
        return keys is None or (not wanted.isdisjoint(keys) and self.unless.isdisjoint(keys))


# A file whose first line starts with a chat role, as Python's json.dumps writes it (not
# Kimi CLI's control record, nor compact JSON).  Mistral Vibe keeps its system prompt in
# meta.json: a session starts with a prompt (openworker's with its system prompt).
CHAT_LEAD = tuple(b'{"role": "%s"' % role for role in (b"user", b"assistant", b"tool"))

_MODULES = (
    Registered(
        "gemini_cli", frozenset({"projectHash", "$set", "$rewindTo"}), frozenset({"projectHash", "messageId"})
    ),
    Registered("gemini_checkpoint", NEVER, frozenset({"clientHistory", "history", "role"})),
    Registered(
        "qwen_code",
        frozenset({"uuid"}),
        NEVER,
        unless={"userType", "toolUseResult"},
        markers=(b'"parts":[', b'"systemPayload"'),
        lead=(b'{"uuid":"',),  # a ChatRecord's first field (every corpus file's)
    ),
    # An entry (a string ``uuid``) or a metadata line (claude_code.reader.METADATA_KEYS).
    Registered(
        "claude_code",
        frozenset({"uuid", "leafUuid", "snapshot", "operation"}),
        NEVER,
        markers=(b'"userType"', b'"type":"file-history-snapshot"', b'"type":"summary"'),
    ),
    # Leads: what the vendor writes first (every corpus file of the layout starts so); a
    # file that starts otherwise is detected from its head, as before its ``decide``.
    Registered(
        "codex",
        frozenset({"payload", "id", "ts"}),
        NEVER,
        markers=(b'"type":"session_meta"',),
        lead=(b'{"timestamp":"',),  # RolloutLine: the timestamp, then the item
    ),
    Registered("pi", frozenset({"id"}), NEVER, markers=(b'"type":"session"',), lead=(b'{"type":"session",',)),
    Registered(
        "copilot_cli",
        frozenset({"parentId"}),
        NEVER,
        markers=(b'"producer":"copilot-agent"',),
        lead=(b'{"type":"session.start",',),
    ),
    # Its stamps (``ts``) are on every line but a system prompt's.
    Registered(
        "openworker",
        frozenset({"role"}),
        NEVER,
        markers=(b'"ts"',),
        most=SPECIFIC,
        lead=(b'{"role": "system"', b'{"role": "notice"', *CHAT_LEAD),
    ),
    # A message list (its first item has a role), or an object with two envelope keys.
    Registered(
        "neurolink",
        NEVER,
        frozenset({"role", "id", "title", "sessionId", "userId", "createdAt", "updatedAt"}),
    ),
    # Its lines (LLMMessage.model_dump) start with the role; ``injected`` is on every one.
    Registered(
        "mistral_vibe",
        frozenset({"role"}),
        frozenset({"total_messages"}),
        markers=(b'"injected"',),
        lead=CHAT_LEAD,
    ),
    # context.py writes the system prompt first, with json.dumps (every corpus file's).
    Registered(
        "kimi_cli",
        frozenset({"role", "protocol_version"}),
        NEVER,
        markers=(b'"_system_prompt"',),
        lead=(b'{"role": "_system_prompt"',),
    ),
    Registered("opencode", NEVER, frozenset({"info"})),
    Registered(
        "anthropic_messages",
        frozenset({"role", "messages"}),
        frozenset({"messages", "role", "type", "task", "files_in_context"}),
        most=SPECIFIC,
    ),
    Registered("openai_chat", frozenset({"role", "messages"}), frozenset({"messages", "role"}), most=SHAPE),
)


@cache
def _loaded(module: str) -> Reader:
    reader: Reader = import_module(f"{__name__}.{module}").READER
    return reader


@cache
def all_readers() -> tuple[Reader, ...]:
    return tuple(_loaded(entry.module) for entry in _MODULES)


def by_name(name: str) -> Reader | None:
    for reader in all_readers():
        if reader.name == name:
            return reader
    return None


def names() -> tuple[str, ...]:
    return tuple(reader.name for reader in all_readers())


def claim(reader: Reader, source: Source) -> Detection | None:
    """``reader``'s claim on the file, if its detection makes one."""
    try:
        return reader.detect(source)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None  # malformed look-alike: this reader does not understand it


def detect(source: Source, every: bool = False) -> tuple[Reader, Detection] | None:
    """The best claim on ``source``.  Only the readers that may claim it are loaded and
    asked, and of those, one that declares ``first_keys`` only when the file's first record
    holds one of them (``every``: ask every reader).

    Readers are asked in registry order and the first ``DEFINITIVE`` claim ends the search:
    no claim scores higher (``Reader.claim``; tests/test_registry.py checks every file) and
    ties go to the reader listed first, so no later reader could win."""
    if every:
        best: tuple[Reader, Detection] | None = None
        for reader in all_readers():
            found = claim(reader, source)
            if found is not None and (best is None or found.score > best[1].score):
                best = (reader, found)
        return best
    jsonl = source.container is Container.JSONL
    first: Collection[str]
    keys: Collection[str] | None
    if jsonl:
        data = source.data
        find = data.find
        # A file that starts with no lead is asked only of the deciders without one (listed
        # last): one test of every lead at once, not one per decider.
        deciders = _DECIDERS if data.startswith(_LEADS) else _DECIDERS[_UNLED:]
        for module, lead, markers, others in deciders:
            if lead and not data.startswith(lead):
                continue
            for marker in markers:  # a loop, not any(): a generator per file costs more
                if find(marker, 0, MARKED) >= 0:
                    reader = _loaded(module)
                    decided = reader.decide(source)
                    if decided is not None and _settled(decided, others):
                        return reader, decided.detection
                    break
        head = source.head()  # objects only: the keys of ``head_keys`` and ``first_keys``
        first = head[0].keys() if head else ()
        keys = None if not head else first if len(head) == 1 else set().union(*head)
    else:
        value = source.value
        item = value[0] if isinstance(value, list) and value else value
        keys = item.keys() if isinstance(item, dict) else None
        first = keys or ()
    # No record to tell by: only NEVER rules a reader out.
    claimants = (_JSONL_ALL if jsonl else _JSON_ALL) if keys is None else _claimants(jsonl, keys)
    best = None
    for module in claimants:
        reader = _loaded(module)
        asks = reader.first_keys
        if asks is not None and asks.isdisjoint(first):
            continue  # its detect could not claim this file
        found = claim(reader, source)
        if found is not None and (best is None or found.score > best[1].score):
            best = (reader, found)
            if found.score >= DEFINITIVE:
                break
    return best


def _settled(decided: Decided, others: _Entries) -> bool:
    """Whether a reader's decision is what the head would give: no other reader can
    outscore it (one listed before it must score lower, one listed after it no higher).
    A reader is ruled out by its bound (``Registered.most``), by keys as ``detect`` rules
    readers out (by what the decision says the head shows), by the decider's own
    reading of its ``detect`` (``Decided.beaten``), or by its own ``refuses`` of the
    head's first record (``Decided.first``)."""
    absent, keys, beaten, first = decided.absent, decided.keys, decided.beaten, decided.first
    score = decided.detection.score
    for module, wanted, unless, most, before in others:
        if most < score or (most == score and not before):
            continue
        if (
            (wanted is None or not wanted <= absent)
            and unless.isdisjoint(keys)
            and module not in beaten
            and (first is None or not _loaded(module).refuses(first))
        ):
            return False
    return True


_Entries = tuple[tuple[str, Keys, frozenset[str], int, bool], ...]


# Per container, the registry entries that may claim some file of it, in registry order.
_JSONL = tuple((e.module, e.jsonl, e.unless) for e in _MODULES if e.jsonl != NEVER)
_JSON = tuple((e.module, e.json, e.unless) for e in _MODULES if e.json != NEVER)
_JSONL_ALL = tuple(module for module, _, _ in _JSONL)
_JSON_ALL = tuple(module for module, _, _ in _JSON)
_CLAIMANTS: dict[tuple[bool, frozenset[str]], tuple[str, ...]] = {}
_CLAIMANTS_KEPT = 1024  # key sets remembered (a tree's files show a few per layout)
_FEW_KEYS = 64  # larger key sets (a document's own keys) are not remembered: memory


def _claimants(jsonl: bool, keys: Collection[str]) -> tuple[str, ...]:
    """The modules whose registry entry lets them claim a file that shows ``keys``
    (``Registered.may_claim``), in registry order; remembered per key set: the files of one
    layout show the same few, and each would otherwise be tested against every entry."""
    if len(keys) > _FEW_KEYS:
        return _may_claim(_JSONL if jsonl else _JSON, keys)
    memo = (jsonl, frozenset(keys))
    found = _CLAIMANTS.get(memo)
    if found is None:
        if len(_CLAIMANTS) >= _CLAIMANTS_KEPT:
            _CLAIMANTS.clear()
        found = _CLAIMANTS[memo] = _may_claim(_JSONL if jsonl else _JSON, keys)
    return found


def _may_claim(
    entries: tuple[tuple[str, Keys, frozenset[str]], ...], keys: Collection[str]
) -> tuple[str, ...]:
    return tuple(
        module
        for module, wanted, unless in entries
        if not ((wanted is not None and wanted.isdisjoint(keys)) or not unless.isdisjoint(keys))
    )


_JSONL_ENTRIES = tuple(e for e in _MODULES if e.jsonl != NEVER)
# The JSONL readers with ``markers``: each with its ``lead`` and every other JSONL reader
# (its module, keys, bound, and whether it is listed before the decider).  Those with a
# lead are asked first: a settled decision is the head's answer whichever decider makes
# it (no other reader can outscore it), so the order only decides how many first 8 KB
# are searched in vain, and a lead rules a file out at once.
_DECIDERS = tuple(
    sorted(
        (
            (
                entry.module,
                entry.lead,
                entry.markers,
                tuple(
                    (other.module, other.jsonl, other.unless, other.most, at < position)
                    for at, other in enumerate(_JSONL_ENTRIES)
                    if at != position
                ),
            )
            for position, entry in enumerate(_JSONL_ENTRIES)
            if entry.markers
        ),
        key=lambda decider: not decider[1],
    )
)
_LEADS = tuple(lead for _, leads, _, _ in _DECIDERS for lead in leads)  # every decider's
_UNLED = next((at for at, decider in enumerate(_DECIDERS) if not decider[1]), len(_DECIDERS))
MARKED = 1 << 13  # how far into a file a marker is looked for (a session states it at once)


def head_keys(source: Source) -> Collection[str] | None:
    """The keys a file shows the registry: those of every record of a JSONL head, or of a
    JSON document (or its first item); None when there is no record to tell by."""
    if source.container is Container.JSONL:
        records = [record for record in source.head() if isinstance(record, dict)]
        if not records:
            return None
        return records[0].keys() if len(records) == 1 else set().union(*records)
    value = source.value
    first = value[0] if isinstance(value, list) and value else value
    return first.keys() if isinstance(first, dict) else None


def first_keys(source: Source) -> Collection[str]:
    """The keys of the file's first record (``Reader.first_keys``); none when it has no
    object there."""
    if source.container is Container.JSONL:
        head = source.head()
        first = head[0] if head else None
    else:
        value = source.value
        first = value[0] if isinstance(value, list) and value else value
    return first.keys() if isinstance(first, dict) else ()


SPEAKER_KEYS = frozenset({"role", "type", "from", "author", "sender", "speaker", "source"})
CONTENT_KEYS = frozenset({"content", "message", "parts", "text", "value", "payload", "data"})
LIST_KEYS = ("messages", "history", "conversation", "conversations", "events", "items", "contents")


def message_like(item: Any) -> bool:
    return isinstance(item, dict) and not SPEAKER_KEYS.isdisjoint(item) and not CONTENT_KEYS.isdisjoint(item)


def conversation_hint(source: Source) -> str | None:
    """Why an unclaimed file still looks like a conversation (TD002), or None.

    Records need both a speaker-like key and a content-like key, so that configuration
    files pre-commit passes along (``package.json``) are never mistaken for transcripts.
    """
    if source.container is Container.JSONL:
        items = source.head()
        what = "JSONL records"
    else:
        value = source.value
        items = value if isinstance(value, list) else []
        what = "a JSON array of records"
        if isinstance(value, dict):
            for key in LIST_KEYS:
                if isinstance(value.get(key), list):
                    items, what = value[key], f"a {key!r} list of records"
                    break
    sample = items[:50]
    if not sample:
        return None
    like = sum(1 for item in sample if message_like(item))
    if like * 2 < len(sample):
        return None
    keys = sorted({k for item in sample if isinstance(item, dict) for k in item})[:6]
    return f"{what} with keys {', '.join(keys)}"
