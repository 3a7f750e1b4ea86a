"""Reader ``pi``: Pi coding agent session JSONL (a ``session`` header, then an id/parentId tree).

Spec: docs/formats/pi.md (from files Pi 0.73.1 wrote, ``fixtures/pi/``, and its compiled
source).  The file is append-only and a tree: Pi resumes from the **last entry of the file**
and walks ``parentId`` up to the root (``session-manager.js`` ``_buildIndex``,
``buildSessionContext``); entries off that path (``/tree`` branches) are not replayed, and
the latest ``compaction`` on the path replaces what came before its ``firstKeptEntryId``.
At send time ``transformMessages`` (``pi-ai/dist/providers/transform-messages.js``) skips
assistants whose ``stopReason`` is ``error`` or ``aborted``, and the providers' converters
skip assistants with nothing to send: those are display-only notices here, never turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from transcript_doctor.model import BrokenLink, Conversation, Dialect, Message, Origin, Part, PartKind, Role
from transcript_doctor.readers.base import DEFINITIVE, SPECIFIC, Decided, Detection, Reader
from transcript_doctor.readers.pi.refs import EntryRef, FileRef, RelinkRef
from transcript_doctor.readers.pi.tree import Entry, replayed, walk
from transcript_doctor.source import NODE, Container, Line, ParseError, Source

if TYPE_CHECKING:
    from collections.abc import Iterable

    from transcript_doctor.analysis.screen import Screen

REASON = "Pi session header (type session) followed by id/parentId entries"
HEADERLESS_REASON = "Pi session entries (id/parentId, message roles) without the session header line"
HEADER_MISSING = (
    "the Pi session header line (type session) is missing: Pi rejects the file on resume "
    "(earendil-works/pi#8939) or, before 0.84, starts it afresh and discards every entry"
)
# session-manager.ts entry types (docs/session-format.md; only the first three recorded).
ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
# AgentMessage roles convertToLlm knows (coding-agent messages.js).
ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
# transformMessages skips these assistants entirely (transform-messages.js:156).
SKIPPED_STOPS = frozenset({"error", "aborted"})


def _header(record: dict[str, Any]) -> bool:
    """Pi's own test (``loadEntriesFromFile``), plus the ``cwd`` every header has."""
    return (
        record.get("type") == "session"
        and isinstance(record.get("id"), str)
        and isinstance(record.get("cwd"), str)
        and "parentId" not in record
    )


def _entry(record: dict[str, Any]) -> bool:
    """A version-2/3 entry: a known type, an id and a ``parentId`` key (null at a root)."""
    kind = record.get("type")
    parent = record.get("parentId", 0)
    if not (isinstance(kind, str) and kind in ENTRY_TYPES and isinstance(record.get("id"), str)):
        return False
    if not (parent is None or isinstance(parent, str)):
        return False
    if kind == "message":
        message = record.get("message")
        return isinstance(message, dict) and isinstance(message.get("role"), str) and message["role"] in ROLES
    return True


class PiReader(Reader):
    name = "pi"
    summary = "Pi coding agent session JSONL (session header, then an id/parentId tree of entries)"
    # readFileSync(..., "utf8") then JSON.parse per line (session-manager.js:221): invalid
    # bytes become U+FFFD, lone surrogates parse, and the converters' sanitizeSurrogates
    # drops them before a provider sees them.
    loader = NODE
    # Consecutive toolResult messages are one user turn for Anthropic (anthropic.js batches
    # them) and separate ``tool`` messages for OpenAI: either way they answer the turn
    # before them together.  Pi never continues from an assistant message
    # (agent-loop.js:32 "Cannot continue from message role: assistant"): the final text
    # is never prefill.
    dialect = Dialect(coalesce_roles=True, final_text_is_prefill=False)

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSONL:
            return None
        head = source.head()
        if not head:
            return None
        first, rest = head[0], head[1:]
        if _header(first):
            if rest and not any(_entry(r) for r in rest):
                return None  # v1 files (no ids) or another vendor's "session" record
            if not rest and not isinstance(first.get("version"), int):
                return None
            return self.claim(REASON, DEFINITIVE)
        # earendil-works/pi#8939: a file rewritten without its header line.
        if all(_entry(r) or _header(r) for r in head) and any(r.get("type") == "message" for r in head):
            return self.claim(HEADERLESS_REASON, SPECIFIC)
        return None

    def decide(self, source: Source) -> Decided | None:
        """``detect``'s claim from the proof's typed records, with no head parsed: the first
        line a header and the second an entry (or, alone, a header with a version), both
        parsed by orjson as the head parses them; no record of the head holding a key of
        Gemini CLI, Qwen Code or Claude Code (``fast.first_lines``).

        Codex, listed before this reader, is shown a file by ``id``, which every header
        holds: the registry rules it out by its ``refuses`` of the header."""
        from transcript_doctor.readers.pi import fast  # msgspec: loaded on first use

        found = fast.first_lines(source)
        if found is None:
            return None
        lines, count = found
        try:
            first = orjson.loads(lines[0])
            second = orjson.loads(lines[1]) if count > 1 else None
        except orjson.JSONDecodeError:
            return None
        if first.__class__ is not dict or not _header(first):
            return None
        if second is None:
            if not isinstance(first.get("version"), int):
                return None
        elif second.__class__ is not dict or not _entry(second):
            return None
        return Decided(self.claim(REASON, DEFINITIVE), first.keys(), fast.PROBED, first=first)

    def refuses(self, first: dict[str, Any]) -> bool:
        """Whether ``detect`` claims no head whose first record is ``first``: a header, or
        (without one) an entry like every other record.  For another reader's decision
        (``decide``) that knows the head's first record but not the rest."""
        return not (_header(first) or _entry(first))

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Nothing for a session the typed fast path proves clean (``fast``), else all of it."""
        if screen is not None:
            from transcript_doctor.readers.pi import fast  # msgspec: loaded on first use

            if fast.clean(source.data, screen, self.dialect, source):
                return []
        return self.read(source)

    def read(self, source: Source) -> list[Conversation]:
        scan = _Scan(source)
        for line, record in source.records():
            scan.add(line, record)
        return [scan.conversation(self.dialect)]


class _Scan:
    """One pass over the lines: the index Pi builds (``byId``, the leaf) and who names whom."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.entries: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        self.first: tuple[Line, dict[str, Any] | None] | None = None
        self.ref = FileRef()

    def add(self, line: Line, record: dict[str, Any] | None) -> None:
        if self.first is None:
            self.first = (line, record)
        if record is None or record.get("type") == "session":
            return  # unparseable (TD001, Pi skips it too) or a header: not an entry
        raw_id, raw_parent = record.get("id"), record.get("parentId")
        entry = Entry(
            line,
            record,
            raw_id if isinstance(raw_id, str) else None,
            raw_parent if isinstance(raw_parent, str) else None,
        )
        self.entries.append(entry)
        if entry.id is not None:
            self.ref.order.append((line.index, entry.id))
            earlier = self.by_id.get(entry.id)
            if earlier is not None:
                self.ref.versions.setdefault(entry.id, [earlier.line.index]).append(line.index)
            self.by_id[entry.id] = entry  # a later line of the same id wins, as in Pi's Map
        if entry.parent:
            self.ref.children.setdefault(entry.parent, []).append(line.index)

    def conversation(self, dialect: Dialect) -> Conversation:
        self._check_header()
        path = walk(self.entries[-1], self.by_id) if self.entries else []
        self.ref.leaf = self.entries[-1].line.index if self.entries else None
        self.ref.path = frozenset(e.line.index for e in path)
        self.ref.ids = frozenset(self.by_id)
        self.ref.tails = _tails(path)
        messages = [m for e in replayed(path) for m in _messages(e)]
        return Conversation(messages, dialect, self._broken_links(self.ref.path), ref=self.ref)

    def _check_header(self) -> None:
        """#8939: a first record that is not the header makes Pi drop the whole file.

        A first line that does not parse is already TD001 by itself.  Reported as TD001
        (the file as a whole does not load) with no repair: the header's ``cwd`` cannot be
        recovered from the folder name without guessing (``/`` and ``-`` both became ``-``).
        """
        if self.first is None:
            return
        line, record = self.first
        if record is not None and not _header(record):
            self.source.report(
                ParseError(line.number, line.index, HEADER_MISSING, kinds=frozenset({"header"}))
            )

    def _broken_links(self, path: frozenset[int]) -> list[BrokenLink]:
        """The path's top entry when its ``parentId`` names no entry: Pi's walk stops there
        and resume drops everything above (TD404).  A dangling link on a branch off the
        path changes nothing Pi resumes, so it is not reported."""
        links: list[BrokenLink] = []
        previous: str | None = None
        for entry in self.entries:
            parent = entry.parent
            if parent and parent not in self.by_id and entry.line.index in path and entry.id is not None:
                ref = RelinkRef(EntryRef(entry.line.index, entry.id, parent), previous)
                links.append(BrokenLink(Origin(entry.line.number, entry.line.index), parent, ref))
            if entry.id is not None:
                previous = entry.id
        return links


def _tails(path: list[Entry]) -> dict[int, EntryRef]:
    """For each assistant on the path, the last toolResult of the run right after it."""
    tails: dict[int, EntryRef] = {}
    for at, entry in enumerate(path):
        if entry.role != "assistant" or entry.id is None:
            continue
        last = entry
        for position in range(at + 1, len(path)):  # by index: a slice would copy the rest
            follower = path[position]
            if follower.role != "toolResult" or follower.id is None:
                break
            last = follower
        assert last.id is not None
        tails[entry.line.index] = EntryRef(last.line.index, last.id, last.parent)
    return tails


def _messages(entry: Entry) -> list[Message]:
    """What ``convertToLlm`` and ``transformMessages`` make of one replayed entry."""
    record, line = entry.record, entry.line
    ref = EntryRef(line.index, entry.id, entry.parent) if entry.id is not None else None
    origin = Origin(line.number, line.index)
    kind = record.get("type")
    if kind == "custom_message":
        return [Message(Role.USER, _content(record.get("content"), line, "/content", ref), origin, ref=ref)]
    if kind == "branch_summary":
        summary = record.get("summary")
        if not summary:
            return []  # appendMessage skips a branch summary without text
        return [Message(Role.USER, [_text(summary, line, "/summary", ref)], origin, ref=ref)]
    if kind == "compaction":  # the summary replayed first (buildSessionContext)
        return [Message(Role.USER, [_text(record.get("summary"), line, "/summary", ref)], origin, ref=ref)]
    if kind != "message":
        return []  # model/thinking changes, labels, session info, extension data: not sent
    message = record.get("message")
    role = entry.role
    if not isinstance(message, dict):
        return []  # no message object: Pi itself fails on it (``entry.message.role``)
    if role == "assistant":
        return [_assistant(message, line, origin, ref)]
    if role == "toolResult":
        call_id, name = message.get("toolCallId"), message.get("toolName")
        part = Part(
            PartKind.TOOL_RESULT,
            Origin(line.number, line.index, "/message"),
            call_id=call_id if isinstance(call_id, str) else None,
            name=name if isinstance(name, str) else None,
            is_error=message.get("isError") is True,
            ref=ref,
        )
        return [Message(Role.USER, [part], origin, ref=ref)]
    if role in ("user", "custom"):
        return [
            Message(
                Role.USER, _content(message.get("content"), line, "/message/content", ref), origin, ref=ref
            )
        ]
    if role == "bashExecution":
        if message.get("excludeFromContext") is True:
            return []  # "!!" commands are kept out of the context (convertToLlm)
        command = message.get("command")
        text = _text(command if isinstance(command, str) else "", line, "/message/command", ref)
        return [Message(Role.USER, [text], origin, ref=ref)]
    if role in ("branchSummary", "compactionSummary"):
        return [
            Message(
                Role.USER, [_text(message.get("summary"), line, "/message/summary", ref)], origin, ref=ref
            )
        ]
    return []  # a role convertToLlm does not know is dropped


def _assistant(message: dict[str, Any], line: Line, origin: Origin, ref: EntryRef | None) -> Message:
    stop = message.get("stopReason")
    if isinstance(stop, str) and stop in SKIPPED_STOPS:
        # A failed or aborted attempt (with whatever had streamed): never sent again.
        return Message(Role.NOTICE, [], origin, notice=f"skipped-{stop}", ref=ref)
    parts = list(_blocks(message.get("content"), line, ref))
    if not any(_sendable(p) for p in parts):
        # anthropic.js and openai-completions.js skip an assistant with nothing to send
        # (blank text, blank thinking); the other providers' converters: unconfirmed.
        return Message(Role.NOTICE, [], origin, notice="skipped-empty", ref=ref)
    return Message(Role.ASSISTANT, parts, origin, ref=ref)


def _sendable(part: Part) -> bool:
    if part.kind in (PartKind.TEXT, PartKind.THINKING):
        return bool(part.text.strip()) or part.signature is not None  # signature: redacted thinking
    return True


def _blocks(content: Any, line: Line, ref: EntryRef | None) -> Iterable[Part]:
    if not isinstance(content, list):
        return
    for position, block in enumerate(content):
        origin = Origin(line.number, line.index, f"/message/content/{position}")
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text = block.get("text")
            yield Part(PartKind.TEXT, origin, text=text if isinstance(text, str) else "", ref=ref)
        elif kind == "thinking":
            # Redacted thinking keeps its opaque payload in ``thinkingSignature``; Pi sends it
            # back as such (anthropic.js).  Unsigned thinking is sent as text, so no
            # signature is ever demanded here (not TD402).
            thought, signature = block.get("thinking"), block.get("thinkingSignature")
            redacted = block.get("redacted") is True
            yield Part(
                PartKind.THINKING,
                origin,
                text="" if redacted or not isinstance(thought, str) else thought,
                signature=signature if redacted and isinstance(signature, str) else None,
                ref=ref,
            )
        elif kind == "toolCall":
            call_id, name = block.get("id"), block.get("name")
            yield Part(
                PartKind.TOOL_CALL,
                origin,
                call_id=call_id if isinstance(call_id, str) else None,
                name=name if isinstance(name, str) else None,
                ref=ref,
            )
        elif kind == "image":
            yield Part(PartKind.MEDIA, origin, ref=ref)
        else:
            yield Part(PartKind.OTHER, origin, ref=ref)


def _content(content: Any, line: Line, pointer: str, ref: EntryRef | None) -> list[Part]:
    """User-side content: a string, or text and image blocks."""
    if isinstance(content, str):
        return [Part(PartKind.TEXT, Origin(line.number, line.index, pointer), text=content, ref=ref)]
    if not isinstance(content, list):
        return []
    parts = []
    for position, block in enumerate(content):
        origin = Origin(line.number, line.index, f"{pointer}/{position}")
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text = block.get("text")
            parts.append(Part(PartKind.TEXT, origin, text=text if isinstance(text, str) else "", ref=ref))
        elif kind == "image":
            parts.append(Part(PartKind.MEDIA, origin, ref=ref))
        else:
            parts.append(Part(PartKind.OTHER, origin, ref=ref))
    return parts


def _text(value: Any, line: Line, pointer: str, ref: EntryRef | None) -> Part:
    return Part(
        PartKind.TEXT,
        Origin(line.number, line.index, pointer),
        text=value if isinstance(value, str) else "",
        ref=ref,
    )


READER = PiReader()
