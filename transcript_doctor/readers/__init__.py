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

from transcript_doctor.readers.base import DEFINITIVE, Decided, Detection, Reader
from transcript_doctor.source import Container, Source

Keys = frozenset[str] | None
ANY: Keys = None  # asked about every file of that container
NEVER: Keys = frozenset()  # its detect returns None for every file of that container


class Registered:
    """One reader of the registry and the files its ``detect`` could claim, by container:
    for JSONL, keys one of which a record of the file's head holds; for a JSON document,
    keys one of which the document (or, for an array, its first item) holds; ``ANY`` or
    ``NEVER``.  ``unless``: keys that, held by a record of the head, rule the reader out.
    Declare only what ``detect`` itself requires: tests/test_registry.py checks every
    fixture and corpus file the reader claims."""

    __slots__ = ("json", "jsonl", "markers", "module", "unless")

    def __init__(
        self,
        module: str,
        jsonl: Keys,
        json: Keys,
        unless: Collection[str] = (),
        markers: tuple[bytes, ...] = (),
    ) -> None:
        self.module = module
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
    ),
    # An entry (a string ``uuid``) or a metadata line (claude_code.reader.METADATA_KEYS).
    Registered(
        "claude_code",
        frozenset({"uuid", "leafUuid", "snapshot", "operation"}),
        NEVER,
        markers=(b'"userType"', b'"type":"file-history-snapshot"', b'"type":"summary"'),
    ),
    Registered("codex", frozenset({"payload", "id", "ts"}), NEVER, markers=(b'"type":"session_meta"',)),
    Registered("pi", frozenset({"id"}), NEVER),
    Registered("copilot_cli", frozenset({"parentId"}), NEVER),
    Registered("openworker", frozenset({"role"}), NEVER),
    # A message list (its first item has a role), or an object with two envelope keys.
    Registered(
        "neurolink",
        NEVER,
        frozenset({"role", "id", "title", "sessionId", "userId", "createdAt", "updatedAt"}),
    ),
    Registered("mistral_vibe", frozenset({"role"}), frozenset({"total_messages"})),
    Registered("kimi_cli", frozenset({"role", "protocol_version"}), NEVER),
    Registered("opencode", NEVER, frozenset({"info"})),
    Registered(
        "anthropic_messages",
        frozenset({"role", "messages"}),
        frozenset({"messages", "role", "type", "task", "files_in_context"}),
    ),
    Registered("openai_chat", frozenset({"role", "messages"}), frozenset({"messages", "role"})),
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
        find = source.data.find
        for module, markers, before, others in _DECIDERS:
            for marker in markers:  # a loop, not any(): a generator per file costs more
                if find(marker, 0, MARKED) >= 0:
                    reader = _loaded(module)
                    decided = reader.decide(source)
                    if decided is not None and _settled(decided, before, others):
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
    best = None
    for module, wanted, unless in _JSONL if jsonl else _JSON:  # Registered.may_claim, inlined
        if keys is not None and (
            (wanted is not None and wanted.isdisjoint(keys)) or (unless and not unless.isdisjoint(keys))
        ):
            continue
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


def _settled(decided: Decided, before: _Entries, others: _Entries) -> bool:
    """Whether a reader's decision is what the head would give: every reader listed before
    it ruled out, as ``detect`` rules readers out, by what the decision says the head
    shows, and unless the claim is ``DEFINITIVE`` (no later reader can win), every other
    reader (``others``: those listed before it and after it) too."""
    absent, keys = decided.absent, decided.keys
    for wanted, unless in before if decided.detection.score >= DEFINITIVE else others:
        if (wanted is None or not wanted <= absent) and unless.isdisjoint(keys):
            return False
    return True


_Entries = tuple[tuple[Keys, frozenset[str]], ...]


# Per container, the registry entries that may claim some file of it, in registry order.
_JSONL = tuple((e.module, e.jsonl, e.unless) for e in _MODULES if e.jsonl != NEVER)
_JSON = tuple((e.module, e.json, e.unless) for e in _MODULES if e.json != NEVER)
# The JSONL readers with ``markers``: each with what rules out the readers listed before
# it, and every other reader (before it and after it).
_DECIDERS = tuple(
    (
        module,
        markers,
        tuple((wanted, unless) for _, wanted, unless in _JSONL[:position]),
        tuple((wanted, unless) for _, wanted, unless in _JSONL[:position] + _JSONL[position + 1 :]),
    )
    for position, (module, markers) in enumerate((e.module, e.markers) for e in _MODULES if e.jsonl != NEVER)
    if markers
)
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
