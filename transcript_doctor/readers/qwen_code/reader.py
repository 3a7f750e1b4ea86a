"""Reader ``qwen-code``: Qwen Code session JSONL (uuid/parentUuid chain of Gemini Content records).

Spec: shared/spec/formats/qwen-code.md.  The file is an append-only log, not a history: what
Qwen Code replays is the chain walked back from the **last record in the file** through
``parentUuid`` (rewinds leave dead branches behind), with the records of one uuid merged,
system records skipped, and the latest ``chat_compression`` record on the chain replacing
everything before it by its ``compressedHistory``.  The reader rebuilds exactly that view
and remembers, for every message, the lines and uuids a fix must edit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from transcript_doctor.model import BrokenLink, Conversation, Dialect, Message, Origin, Part, PartKind, Role
from transcript_doctor.plain import Plain
from transcript_doctor.readers import gemini_content
from transcript_doctor.readers.base import DEFINITIVE, Decided, Detection, Reader
from transcript_doctor.readers.qwen_code.refs import ChainRef, CompressedRef, LineCopyRef, LinkRef, RecordRef
from transcript_doctor.source import NODE, Container, Line, Source

if TYPE_CHECKING:
    from transcript_doctor.analysis.screen import Screen

RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
ENVELOPE_STRINGS = ("uuid", "sessionId", "timestamp", "cwd", "version")
# Records that carry a message the vendor still keeps out of the API history
# (session-api-history.ts @ 03291a25: `realtime_message`; `code_mode_tool_result` answers
# internal calls that have no model-emitted functionCall).
UNSENT_SUBTYPES = frozenset({"realtime_message", "code_mode_tool_result"})
# Claude Code envelope keys and uuid-less line types: never in a Qwen record.
CLAUDE_KEYS = ("userType", "toolUseResult")
REASON = "uuid/parentUuid chain with Gemini Content messages (`message.parts`, role `model`)"
# The keys every record of a head this reader claims holds (``_envelope``).
ENVELOPE_KEYS = frozenset({"type", *ENVELOPE_STRINGS})
CLAUDE_TYPES = frozenset({"summary", "file-history-snapshot"})


class _Entry(Plain):
    """What one line contributes; parsed dicts are not kept (files reach 100 MB)."""

    __slots__ = ("compression", "line", "parent", "parts", "replayed", "role", "uuid")
    line: Line
    uuid: str
    parent: str | None
    replayed: bool  # False for system records and unsent subtypes
    compression: bool
    role: Role | None  # None: the line has no message
    parts: list[Part]

    def __init__(
        self,
        line: Line,
        uuid: str,
        parent: str | None,
        replayed: bool,
        compression: bool,
        role: Role | None,
        parts: list[Part],
    ) -> None:
        self.line = line
        self.uuid = uuid
        self.parent = parent
        self.replayed = replayed
        self.compression = compression
        self.role = role
        self.parts = parts

    def at(self, pointer: str | None = None) -> Origin:
        return Origin(self.line.number, self.line.index, pointer)


class QwenCodeReader(Reader):
    name = "qwen-code"
    # First record: every head record carries the createBaseRecord() envelope.
    first_keys = frozenset({"uuid"})
    summary = "Qwen Code session JSONL (uuid/parentUuid chain of Gemini Content records)"
    # jsonl-utils.ts read(): readline over a byte stream (UTF-8 with U+FFFD), JSON.parse.
    loader = NODE
    # Curation merges consecutive user Contents, and the vendor's own repair hoists a
    # prompt-adjacent response the same way: TD104 does not apply (spec §4.7, rules.md).
    dialect = Dialect(coalesce_roles=True)

    def detect(self, source: Source) -> Detection | None:
        """Every head record a Qwen envelope, none a Claude Code tell, every message a
        Gemini Content, and one record only Qwen writes.  (One loop: detection runs on
        every JSONL file whose head holds a uuid.)"""
        if source.container is not Container.JSONL:
            return None
        head = source.head()
        if not head:
            return None
        feature = False
        for record in head:
            if not _envelope(record) or _claude_tell(record):
                return None
            if "message" in record:
                if not _gemini_content(record["message"]):
                    return None
                feature = True
            elif not feature:
                feature = _qwen_feature(record)
        if not feature:
            return None
        return self.claim(REASON, DEFINITIVE)

    def decide(self, source: Source) -> Decided | None:
        """``detect``'s claim from the proof's typed records (``fast.head``: the head's
        records, none holding a key of Gemini CLI, the reader listed before this one),
        with no head parsed: ``detect``'s loop asked of the typed fields.  When they may
        hold more than the head (lines orjson refuses), every record must pass as the
        head's must, and the record that shows Qwen's feature must be one of the head's
        (``fast.parses``)."""
        from msgspec import UNSET as unset

        from transcript_doctor.readers.qwen_code import fast  # msgspec: loaded on first use

        found = fast.head(source)
        if found is None:
            return None
        records, exact = found
        feature = -1  # the index of the first record that shows Qwen's feature
        for index, record in enumerate(records):
            kind, message, parent = record.type, record.message, record.parentUuid
            if not (
                kind.__class__ is str
                and kind in RECORD_TYPES  # never one of CLAUDE_TYPES
                and record.uuid.__class__ is str
                and record.sessionId.__class__ is str
                and record.timestamp.__class__ is str
                and record.cwd.__class__ is str
                and record.version.__class__ is str
                and (parent is None or parent.__class__ is str)
                and record.userType is unset
                and record.toolUseResult is unset
            ):
                return None
            if message is not unset:
                if message is None or message.content is not unset or message.role == "assistant":
                    return None  # not a Gemini Content, or Claude Code's message
                if not (message.role in ("user", "model") and bytes(message.parts)[:1] == b"["):
                    return None
                if feature < 0:
                    feature = index
            elif feature < 0 and (kind == "tool_result" or record.systemPayload is not unset):
                feature = index
        if feature < 0 or not (exact or fast.parses(source, feature)):
            return None
        return Decided(self.claim(REASON, DEFINITIVE), ENVELOPE_KEYS, fast.PROBED)

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Nothing for a chain the screen proves clean: from typed records (``fast``), else
        from the built chain (``gemini_content.screen_turns``; the rules cost more than
        building the chain's messages)."""
        if screen is not None and source.container is Container.JSONL:
            from transcript_doctor.readers.qwen_code import fast  # msgspec: loaded on first use

            turns = fast.turns(source.data, source)
            if turns is not None:
                return [] if screen.clean(turns) else self.read(source)
        conversations = self.read(source)
        if screen is None or source.errors:
            return conversations  # TD001 beside them: read as the full read does
        return [c for c in conversations if not screen.clean(gemini_content.screen_turns(c))]

    def read(self, source: Source) -> list[Conversation]:
        if source.container is not Container.JSONL:
            return [Conversation([], self.dialect)]
        entries, first, extra = _scan(source)
        chain = _walk(entries, first)
        links = _broken_links(entries, first, extra)
        start = _latest_compression(chain, first)
        compression = chain[start - 1] if start else None
        messages = _compressed(source, first[compression]) if compression else []
        for uuid in chain[start:]:
            messages.extend(_messages(source, first[uuid], extra.get(uuid, ())))
        _pair_idless(messages)
        records = tuple((e.line.index, e.uuid, e.parent) for e in entries)
        ref = ChainRef(tuple(chain), compression, records)
        return [Conversation(messages, self.dialect, links, ref=ref)]


# -- detection --------------------------------------------------------------------------


def _envelope(record: Any) -> bool:
    """The ``createBaseRecord()`` fields every Qwen record carries."""
    if record.__class__ is not dict or record.get("type") not in RECORD_TYPES:
        return False
    for key in ENVELOPE_STRINGS:
        if record.get(key).__class__ is not str:
            return False
    parent = record.get("parentUuid", 0)
    return parent is None or parent.__class__ is str


def _claude_tell(record: dict[str, Any]) -> bool:
    message = record.get("message")
    if message.__class__ is dict and ("content" in message or message.get("role") == "assistant"):
        return True
    return record.get("type") in CLAUDE_TYPES or not record.keys().isdisjoint(CLAUDE_KEYS)


def _gemini_content(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("role") in ("user", "model")
        and isinstance(message.get("parts"), list)
    )


def _qwen_feature(record: dict[str, Any]) -> bool:
    """Something only Qwen writes: a Content message, a tool_result record, a systemPayload."""
    return "message" in record or record.get("type") == "tool_result" or "systemPayload" in record


# -- reading ----------------------------------------------------------------------------


def _scan(source: Source) -> tuple[list[_Entry], dict[str, _Entry], dict[str, list[_Entry]]]:
    """One pass over the lines: every record's entry, the first per uuid, the later ones."""
    entries: list[_Entry] = []
    first: dict[str, _Entry] = {}
    extra: dict[str, list[_Entry]] = {}
    for line, record in source.records():
        if not isinstance(record, dict):
            continue
        entry = _entry(line, record)
        if entry is None:
            continue
        entries.append(entry)
        if entry.uuid in first:
            extra.setdefault(entry.uuid, []).append(entry)
        else:
            first[entry.uuid] = entry
    return entries, first, extra


def _entry(line: Line, record: dict[str, Any]) -> _Entry | None:
    uuid = record.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        return None  # not a chain member: nothing can link to it
    parent = record.get("parentUuid")
    kind = record.get("type")
    subtype = record.get("subtype")
    payload = record.get("systemPayload")
    compression = (
        kind == "system"
        and subtype == "chat_compression"
        and isinstance(payload, dict)
        and isinstance(payload.get("compressedHistory"), list)
    )
    entry = _Entry(
        line,
        uuid,
        parent if isinstance(parent, str) and parent else None,
        # Qwen compares ``subtype`` with strings: any other value (a list cannot be
        # looked up in a set) is no unsent subtype.
        replayed=kind != "system" and not (subtype.__class__ is str and subtype in UNSENT_SUBTYPES),
        compression=compression,
        role=None,
        parts=[],
    )
    message = record.get("message")
    if isinstance(message, dict):
        entry.role = _role(message.get("role"), kind)
        entry.parts = _parts(message.get("parts"), line, "/message")
    return entry


def _role(role: Any, kind: Any) -> Role:
    if role == "model":
        return Role.ASSISTANT
    if role == "user":
        return Role.USER
    return Role.ASSISTANT if kind == "assistant" else Role.USER


def _parts(items: Any, line: Line, base: str) -> list[Part]:
    if not isinstance(items, list):
        return []  # Content.parts is a list; anything else is nothing the model can read

    def at(index: int) -> Origin:
        return Origin(line.number, line.index, f"{base}/parts/{index}")

    parts = gemini_content.parts(items, at)
    for part in parts:
        # `{text:"", thoughtSignature}` passes Qwen's isValidContent: it carries the
        # signature, not visible text, so it must not make the turn look empty (TD103).
        if part.kind is PartKind.TEXT and not part.text and part.signature:
            part.kind = PartKind.THINKING
    return parts


def _walk(entries: list[_Entry], first: dict[str, _Entry]) -> list[str]:
    """The active branch, root to leaf: from the last record back to a root, a missing
    parent or a cycle (``reconstructHistory``; iterative, chains are 100k records deep)."""
    if not entries:
        return []
    # Unconfirmed: whether Qwen's loader skips an unparseable line (then the leaf is the last
    # record that parses, as here) or fails the whole load; spec §10.
    chain: list[str] = []
    seen: set[str] = set()
    uuid: str | None = entries[-1].uuid
    while uuid is not None and uuid not in seen:
        seen.add(uuid)
        chain.append(uuid)
        parent = first[uuid].parent  # the first record of a uuid decides its link
        uuid = parent if parent is not None and parent in first else None
    chain.reverse()
    return chain


def _latest_compression(chain: list[str], first: dict[str, _Entry]) -> int:
    """Where replay starts: after the latest ``chat_compression`` on the chain (0: none)."""
    for position in range(len(chain) - 1, -1, -1):
        if first[chain[position]].compression:
            return position + 1
    return 0


def _broken_links(
    entries: list[_Entry], first: dict[str, _Entry], extra: dict[str, list[_Entry]]
) -> list[BrokenLink]:
    """Every record whose parent is not in the file, on the chain or off it (TD404)."""
    links: list[BrokenLink] = []
    previous: str | None = None
    for entry in entries:
        if first[entry.uuid] is entry and entry.parent is not None and entry.parent not in first:
            lines = (entry.line.index, *(e.line.index for e in extra.get(entry.uuid, ())))
            ref = LinkRef(entry.uuid, lines, entry.parent, previous)
            links.append(BrokenLink(entry.at(), entry.parent, ref))
        previous = entry.uuid  # a uuid's first line never follows a line of its own uuid
    return links


def _messages(source: Source, head: _Entry, later: list[_Entry] | tuple[()]) -> list[Message]:
    """The replayed message of one uuid: its lines' parts concatenated (``aggregateRecords``).

    A later line that is a byte copy of an earlier line of the same uuid doubles the
    record's parts when the vendor merges it; for a user record the copy becomes its own
    message with a shared ``dup_key`` so TD403 names the copy.
    """
    if not head.replayed:
        return []
    if not later:  # the usual case: one line per uuid
        if head.role is None:
            return []
        ref = RecordRef(head.uuid, head.parent, (head.line.index,))
        return [Message(head.role, head.parts, head.at(), ref=ref)]
    group = [head, *later]
    bearing = [e for e in group if e.role is not None]
    if not bearing:
        return []
    role = bearing[0].role
    assert role is not None
    copies = _copies(source, group) if role is Role.USER else {}
    lines = tuple(e.line.index for e in group)
    ref = RecordRef(head.uuid, head.parent, lines)
    parts = [p for e in bearing if e.line.index not in copies for p in e.parts]
    dup_key = ("qwen-line-copy", head.uuid) if copies else None
    found = [Message(role, parts, head.at(), dup_key=dup_key, ref=ref)]
    for entry in bearing:
        original = copies.get(entry.line.index)
        if original is not None:
            copy_ref = LineCopyRef(head.uuid, entry.line.index, original)
            found.append(Message(role, entry.parts, entry.at(), dup_key=dup_key, ref=copy_ref))
    return found


def _copies(source: Source, group: list[_Entry]) -> dict[int, int]:
    """Later lines of one uuid that repeat an earlier line byte for byte: copy -> original."""
    seen: dict[bytes, int] = {}
    copies: dict[int, int] = {}
    for entry in group:
        raw = source.line_bytes(entry.line)
        if raw in seen:
            copies[entry.line.index] = seen[raw]
        else:
            seen[raw] = entry.line.index
    return copies


def _compressed(source: Source, entry: _Entry) -> list[Message]:
    """The Contents a ``chat_compression`` record replaces the history with."""
    record = source.record(entry.line)
    payload = record.get("systemPayload") if isinstance(record, dict) else None
    history = payload.get("compressedHistory") if isinstance(payload, dict) else None
    if not isinstance(history, list):
        return []  # not a candidate: `_entry` only marks list-valued compressedHistory
    messages: list[Message] = []
    for index, content in enumerate(history):
        if not isinstance(content, dict):
            continue
        pointer = f"/systemPayload/compressedHistory/{index}"
        messages.append(
            Message(
                _role(content.get("role"), None),
                _parts(content.get("parts"), entry.line, pointer),
                entry.at(pointer),
                ref=CompressedRef(entry.uuid, entry.line.index, index),
            )
        )
    return messages


def _pair_idless(messages: list[Message]) -> None:
    """Calls without an id answer by position in the next user turn (older records)."""
    called = {p.call_id for m in messages for p in m.tool_calls if p.call_id is not None}
    for index, message in enumerate(messages):
        if message.role is not Role.ASSISTANT:
            continue
        calls = [p for p in message.tool_calls if p.call_id is None]
        if not calls:
            continue
        results: list[Part] = []
        for reply in messages[index + 1 :]:
            if reply.role is not Role.USER:
                break
            results.extend(reply.tool_results)
        origin = message.origin
        gemini_content.pair_by_position(calls, results, f"qwen@{origin.line}:{origin.pointer or ''}", called)


READER = QwenCodeReader()
