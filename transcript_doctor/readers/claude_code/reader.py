"""Reader ``claude-code``: Claude Code session JSONL (uuid/parentUuid entries, one line per content block).

Spec: shared/spec/formats/claude-code.md.  The file is a tree, not a list: the conversation the
API sees is the active chain (``chain``), with the one-line-per-block assistant
lines of one response grouped into one turn and consecutive user lines merged, tool results
first, as Claude Code's ``normalizeMessagesForAPI`` does.  Off-chain branches (rewinds,
retries) and metadata lines are not replayed, so they are never findings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from transcript_doctor.analysis.screen import crosses
from transcript_doctor.jsonspan import join
from transcript_doctor.model import (
    BrokenLink,
    Conversation,
    Dialect,
    Message,
    Origin,
    Part,
    PartKind,
    Repeat,
    Role,
)
from transcript_doctor.readers.base import DEFINITIVE, SPECIFIC, Decided, Detection, Reader
from transcript_doctor.readers.claude_code.chain import CHAIN_KINDS, Entry, Segment, load, newest_leaf, walk
from transcript_doctor.readers.claude_code.refs import FileRef, LineRef, MessageRef, RelinkRef
from transcript_doctor.source import NODE_TO_ANTHROPIC, Container, Line, Source

if TYPE_CHECKING:
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.readers.claude_code.fast import Doubt

REASON = "Claude Code entry envelope (uuid/parentUuid, message.content blocks)"
METADATA_REASON = (
    "Claude Code metadata lines (summary, file-history-snapshot, queue-operation) before any entry"
)
CALL_BLOCKS = frozenset({"tool_use"})  # server_tool_use / mcp_tool_use answer inside the same turn
THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
MEDIA_BLOCKS = frozenset({"image", "document"})
# uuid-less lines that only Claude Code writes, with the key that marks each.
METADATA_KEYS = {
    "summary": "leafUuid",
    "file-history-snapshot": "snapshot",
    "queue-operation": "operation",
}


def _entry_like(record: dict[str, Any]) -> bool:
    """A user/assistant entry in Claude Code's envelope (Qwen Code uses ``message.parts``)."""
    if record.get("type") not in ("user", "assistant"):
        return False
    message = record.get("message")
    return (
        isinstance(record.get("uuid"), str)
        and "parentUuid" in record
        and isinstance(record.get("sessionId"), str)
        and isinstance(message, dict)
        and message.get("role") in ("user", "assistant")
        and isinstance(message.get("content"), (str, list))
    )


def _foreign(record: dict[str, Any]) -> bool:
    """Signals of Qwen Code's look-alike envelope."""
    message = record.get("message")
    if isinstance(message, dict) and ("parts" in message or message.get("role") == "model"):
        return True
    return record.get("type") == "tool_result" or "systemPayload" in record


def _metadata_line(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    key = METADATA_KEYS.get(kind) if isinstance(kind, str) else None
    return key is not None and key in record and "uuid" not in record


class ClaudeCodeReader(Reader):
    name = "claude-code"
    summary = "Claude Code session JSONL (uuid/parentUuid entries, one line per content block)"
    # Node (closed source: the exact read call is not verified; every Node UTF-8 decode
    # replaces invalid bytes) and JSON.parse per line; the API rejects lone surrogates.
    loader = NODE_TO_ANTHROPIC
    dialect = Dialect(coalesce_roles=True, thinking_only_is_empty=True)

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSONL:
            return None
        head = source.head()
        if not head or not all(isinstance(r, dict) for r in head):
            return None
        entries = full = False  # one pass: asked of every file, most of them not this layout's
        for record in head:
            if _foreign(record):
                return None
            if not full and _entry_like(record):
                entries, full = True, "userType" in record or "isSidechain" in record
        if entries:
            return self.claim(REASON, DEFINITIVE if full else SPECIFIC)
        # Metadata written ahead of the first message (summaries, snapshots, queue operations,
        # bookkeeping types that change every release) can fill the whole head.
        if all(isinstance(r.get("type"), str) for r in head) and any(_metadata_line(r) for r in head):
            return self.claim(METADATA_REASON, SPECIFIC)
        return None

    def decide(self, source: Source) -> Decided | None:
        """``detect``'s claim from the typed records the proof reads (``fast.candidates``),
        with no head parsed: a line that makes the claim DEFINITIVE whatever else the head
        holds, parsed by orjson as the head parses it, and shows ``userType`` (which rules
        Qwen Code out); every line free of the Gemini CLI keys the registry looks for.  Or,
        in a file without entries, a metadata line (``fast.metadata_lines``): asked first
        when no ``"uuid"`` key is written (an entry's, unless escaped), so that a file of
        metadata lines is decoded once, for this and its proof."""
        from transcript_doctor.readers.claude_code import fast  # msgspec: loaded on first use

        metadata = fast.metadata_lines(source, METADATA_KEYS.keys()) if b'"uuid"' not in source.data else None
        if metadata is None:
            lines = fast.candidates(source)
            if lines is None:
                return None
            for raw in lines:
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue  # not in the head: a number beyond a double (orjson refuses it)
                if _entry_like(record) and "userType" in record:
                    return Decided(_ENTRY_CLAIM, ENTRY_KEYS, fast.PROBED)
            metadata = fast.metadata_lines(source, METADATA_KEYS.keys())
        # No entry at all: a file of metadata lines (summaries, snapshots) is the reader's,
        # by a line that is one, when no other reader is shown the file (``fast.UNSEEN``).
        for raw in metadata or ():
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if _metadata_line(record):
                return Decided(_METADATA_CLAIM, _TYPED, fast.UNSEEN)
        return None

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Nothing for a session the typed fast path proves clean (``fast``), else all of it."""
        if screen is not None:
            from transcript_doctor.readers.claude_code import fast  # msgspec: loaded on first use

            proof = fast.prove_source(source, screen)
            if proof is True:
                return []
            if proof is not False and len(proof.records) == len(source.lines):
                conversation = _doubted(source, proof, screen.cut, self.dialect)
                if screen.cut and crosses(conversation, screen.before):
                    conversation = _doubted(source, proof, 0, self.dialect)
                return [conversation]
        return self.read(source)

    def read(self, source: Source) -> list[Conversation]:
        scan = _Scan(source)
        for line, record in source.records():
            if isinstance(record, dict):
                scan.add(line, record)
        return [scan.conversation(self.dialect)]


class _Scan:
    """One streaming pass: keeps per line only what the chain and the rules need."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.entries: dict[str, Entry] = {}
        self.known: dict[str, int] = {}  # every uuid in the file (first line), whatever the line type
        self.ref = FileRef()
        self.previous: dict[tuple[object, bool], str] = {}
        self.snipped: set[str] = set()  # history-snip removals (``snipMetadata.removedUuids``)
        self.segment: Segment | None = None  # newest partial-compaction segment
        self.last_boundary = -1  # record index of the newest compact boundary

    def add(self, line: Line, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "summary":
            leaf = record.get("leafUuid")
            if isinstance(leaf, str):
                self.ref.summaries.setdefault(leaf, []).append(line.index)
            return
        uuid = record.get("uuid")
        if not isinstance(uuid, str):
            return  # snapshots, queue operations, titles, bookkeeping: passed through
        first = self.known.setdefault(uuid, line.index)
        if first != line.index:
            self.ref.versions.setdefault(uuid, [first]).append(line.index)
        parent = record.get("parentUuid")
        parent = parent if isinstance(parent, str) else None
        if parent is not None:
            self.ref.children.setdefault(parent, []).append(line.index)
        logical = record.get("logicalParentUuid")
        if isinstance(logical, str):
            self.ref.logical_children.setdefault(logical, []).append(line.index)
        if not isinstance(kind, str) or kind not in CHAIN_KINDS:
            return  # api-request-blob and other bookkeeping: never turns
        self._load_metadata(line, record)
        earlier = self.entries.get(uuid)
        if earlier is not None and self._same_bytes(earlier, line):
            earlier.copies.append((line.number, line.index))
            return
        # A rewritten line (same uuid, new bytes) replaces the earlier one, as Claude Code's Map does.
        entry = self._entry(line, record, kind, uuid, parent)
        if earlier is not None:
            entry.previous = earlier.previous  # not itself
        self.entries[uuid] = entry

    def _load_metadata(self, line: Line, record: dict[str, Any]) -> None:
        """Compaction and snip markers that change the chain Claude Code loads."""
        snip = record.get("snipMetadata")
        removed = snip.get("removedUuids") if isinstance(snip, dict) else None
        if isinstance(removed, list):
            self.snipped.update(u for u in removed if isinstance(u, str))
        if record.get("type") != "system" or record.get("subtype") != "compact_boundary":
            return
        self.last_boundary = line.index
        compact = record.get("compactMetadata")
        kept = compact.get("preservedSegment") if isinstance(compact, dict) else None
        if isinstance(kept, dict):
            head, anchor, tail = kept.get("headUuid"), kept.get("anchorUuid"), kept.get("tailUuid")
            if isinstance(head, str) and isinstance(anchor, str) and isinstance(tail, str):
                self.segment = Segment(line.index, head, anchor, tail)

    def _same_bytes(self, earlier: Entry, line: Line) -> bool:
        first = self.source.lines[earlier.index]
        return self.source.line_bytes(first) == self.source.line_bytes(line)

    def _entry(self, line: Line, record: dict[str, Any], kind: str, uuid: str, parent: str | None) -> Entry:
        sidechain = record.get("isSidechain") is True
        timestamp = record.get("timestamp")
        entry = Entry(
            line.index,
            line.number,
            kind,
            uuid,
            parent,
            sidechain,
            timestamp if isinstance(timestamp, str) else "",
        )
        if kind != "progress":
            session = record.get("sessionId")
            key = (session if isinstance(session, str) else None, sidechain)
            entry.previous = self.previous.get(key)
            self.previous[key] = uuid
        message = record.get("message")
        if kind in ("user", "assistant") and isinstance(message, dict):
            ref = LineRef(line.index, uuid, parent)
            entry.parts = _parts(message.get("content"), line, ref, kind == "assistant")
            if kind == "assistant":
                msg_id = message.get("id")
                entry.msg_id = msg_id if isinstance(msg_id, str) and msg_id else None
                # Only API-error lines are the harness's text whatever they say.  A line of
                # model "<synthetic>" says who wrote it, not that its text is filler: 2.1.8x
                # keeps the partial answer of an interrupted response that way, with
                # ``isApiErrorMessage: false`` (spec §3.3); its placeholders are the catalog's.
                entry.harness = record.get("isApiErrorMessage") is True
            else:
                entry.has_result = any(p.kind is PartKind.TOOL_RESULT for p in entry.parts)
        return entry

    def conversation(self, dialect: Dialect) -> Conversation:
        broken = self._broken_links()  # every line of the file, before the loader drops any
        written = dict(self.entries)  # the loader drops bridged and compacted entries
        load(self.entries, self.snipped, self.segment, self.last_boundary)
        leaf = newest_leaf(self.entries)
        chain = walk(self.entries, leaf) if leaf is not None else []
        self.ref.leaf = leaf.uuid if leaf is not None else None
        self.ref.leaf_time = leaf.timestamp if leaf is not None else ""
        self.ref.sidechain = leaf.sidechain if leaf is not None else False
        self.ref.path = self._path(written, leaf)
        return Conversation(_messages(chain), dialect, broken, ref=self.ref, repeats=_recorded_twice(chain))

    def _path(self, written: dict[str, Entry], leaf: Entry | None) -> frozenset[int]:
        """The lines on the written ``parentUuid`` links from ``leaf`` up (see ``FileRef.path``)."""
        path: set[int] = set()
        seen: set[str] = set()
        current = written.get(leaf.uuid) if leaf is not None else None
        while current is not None and current.uuid not in seen:
            seen.add(current.uuid)
            path.update(self.ref.versions.get(current.uuid, (current.index,)))
            current = written.get(current.parent) if current.parent is not None else None
        return frozenset(path)

    def _broken_links(self) -> list[BrokenLink]:
        links = []
        for entry in sorted(self.entries.values(), key=lambda e: e.index):
            if entry.parent is not None and entry.parent not in self.known:
                ref = RelinkRef(LineRef(entry.index, entry.uuid, entry.parent), entry.previous)
                links.append(BrokenLink(Origin(entry.number, entry.index), entry.parent, ref))
        return links


def _doubted(source: Source, doubt: Doubt, start: int, dialect: Dialect) -> Conversation:
    """The conversation of a session the fast path covers and its screen doubted, from the
    chain position ``start`` on (the screen's cut; 0: all of it), as ``read`` builds it.

    The proof refused what makes ``_Scan`` more than this: a uuid written again other
    than as a byte copy of a chain line (rewrites), a broken link, snips, compact
    boundaries; so only the chain lines from ``start`` are parsed again, for their parts,
    and the file's links come from the typed records."""
    lines = source.lines
    chain = doubt.chain_from(start)
    copies = doubt.copies
    for entry in chain:
        line = lines[entry.index]
        entry.number = line.number  # the proof numbers records, and an empty line is none
        if copies and entry.uuid in copies:
            entry.copies = [(lines[i].number, i) for i in copies[entry.uuid]]
        kind = entry.kind
        if kind != "user" and kind != "assistant":
            continue
        record = source.record(line)
        message = record.get("message") if isinstance(record, dict) else None
        if isinstance(message, dict):
            at = LineRef(entry.index, entry.uuid, entry.parent)
            entry.parts = _parts(message.get("content"), line, at, kind == "assistant")
    ref = FileRef()
    children, logical, summaries = ref.children, ref.logical_children, ref.summaries
    versions = ref.versions
    written = doubt.written  # each chain-kind uuid's record index
    for uuid, again in copies.items():
        versions[uuid] = [written[uuid], *again]
    for index, record in enumerate(doubt.records):
        if record.type == "summary":
            if isinstance(record.leafUuid, str):
                summaries.setdefault(record.leafUuid, []).append(index)
            continue
        if record.uuid is None:
            continue
        if record.parentUuid is not None:
            children.setdefault(record.parentUuid, []).append(index)
        if isinstance(record.logicalParentUuid, str):
            logical.setdefault(record.logicalParentUuid, []).append(index)
    leaf = doubt.leaf
    ref.leaf = leaf.uuid if leaf is not None else None
    ref.leaf_time = leaf.timestamp if leaf is not None else ""
    ref.sidechain = leaf.sidechain if leaf is not None else False
    path = doubt.path()
    for uuid, indexes in versions.items():  # as ``_Scan._path``: every line of a uuid on it
        if written[uuid] in path:
            path.update(indexes)
    ref.path = frozenset(path)
    return Conversation(_messages(chain), dialect, [], ref=ref, repeats=_recorded_twice(chain))


def _parts(content: Any, line: Line, ref: LineRef, assistant: bool) -> list[Part]:
    if isinstance(content, str):
        return [
            Part(PartKind.TEXT, Origin(line.number, line.index, "/message/content"), text=content, ref=ref)
        ]
    if not isinstance(content, list):
        return []
    parts = []
    for position, block in enumerate(content):
        origin = Origin(line.number, line.index, join("message", "content", position))
        parts.append(_block(block, origin, ref, assistant))
    return parts


def _block(block: Any, origin: Origin, ref: LineRef, assistant: bool) -> Part:
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(block, dict) or not isinstance(kind, str):
        return Part(PartKind.OTHER, origin, ref=ref)
    if kind == "text":
        text = block.get("text")
        return Part(PartKind.TEXT, origin, text=text if isinstance(text, str) else "", ref=ref)
    if kind in THINKING_BLOCKS and assistant:
        return _thinking(block, kind, origin, ref)
    if kind in CALL_BLOCKS and assistant:
        return Part(
            PartKind.TOOL_CALL, origin, call_id=_text(block, "id"), name=_text(block, "name"), ref=ref
        )
    if kind == "tool_result" and not assistant:
        return Part(
            PartKind.TOOL_RESULT,
            origin,
            call_id=_text(block, "tool_use_id"),
            is_error=block.get("is_error") is True,
            ref=ref,
        )
    if kind in MEDIA_BLOCKS:
        return Part(PartKind.MEDIA, origin, ref=ref)
    return Part(PartKind.OTHER, origin, ref=ref)


def _thinking(block: dict[str, Any], kind: str, origin: Origin, ref: LineRef) -> Part:
    if kind == "redacted_thinking":
        # The encrypted ``data`` is the block's own proof: no signature is asked of it.
        return Part(PartKind.THINKING, origin, signature=_text(block, "data"), ref=ref)
    signature = block.get("signature")
    return Part(
        PartKind.THINKING,
        origin,
        text=_text(block, "thinking") or "",
        signature=signature if isinstance(signature, str) else None,
        needs_signature=True,
        ref=ref,
    )


def _text(block: dict[str, Any], key: str) -> str | None:
    value = block.get(key)
    return value if isinstance(value, str) else None


class _Run:
    """A message being assembled from chain lines (consecutive ones, or one response's lines
    folded back together across the results of its own calls)."""

    def __init__(self, role: Role, entry: Entry) -> None:
        self.role = role
        self.origin = Origin(entry.number, entry.index)
        self.lines: list[LineRef] = []
        self.results: list[Part] = []
        self.others: list[Part] = []
        self.harness = False
        self.dup_key: object = None  # set when a byte copy follows: the run is closed

    def take(self, entry: Entry) -> None:
        self.lines.append(LineRef(entry.index, entry.uuid, entry.parent))
        self.harness = self.harness or entry.harness
        if self.role is Role.ASSISTANT:
            self.others.extend(entry.parts)
            return
        for part in entry.parts:  # Claude Code hoists tool_result blocks to the front
            (self.results if part.kind is PartKind.TOOL_RESULT else self.others).append(part)

    def message(self) -> Message:
        kind = "assistant" if self.role is Role.ASSISTANT else "user"
        return Message(
            self.role,
            self.results + self.others,
            self.origin,
            harness_written=self.harness,
            dup_key=self.dup_key,
            ref=MessageRef(kind, tuple(self.lines)),
        )


def _messages(chain: list[Entry]) -> list[Message]:
    """Group the chain into API messages as ``normalizeMessagesForAPI`` does.

    Consecutive user lines merge into one message.  An assistant line joins the earlier
    assistant message of its response (same ``message.id``) when only assistant messages and
    messages of tool results lie between: streamed tool execution (2.1.x) records the
    results of a response's first calls before its later ``tool_use`` lines, and Claude
    Code folds those lines back into the one response, so the results follow it whole.
    System and attachment lines are not sent.

    Unconfirmed: how Claude Code renders each ``attachment`` type into the request; they are
    left out here, and never split a run of user lines or the lines of one response.
    """
    grouper = _Grouper()
    for entry in chain:
        if entry.kind == "assistant":
            grouper.assistant(entry)
        elif entry.kind == "user":
            grouper.user(entry)
    return [r.message() if isinstance(r, _Run) else r for r in grouper.runs]


class _Grouper:
    """The message list being built, with what the fold-back walk would find kept at hand.

    Claude Code walks back from the end for an assistant message of the same ``message.id``
    over assistant and tool-result messages; a user message without tool results stops it.
    Remembering each response's latest message and the latest such stop answers the same
    question without the walk (a 20k-line chain would make it quadratic).
    """

    def __init__(self) -> None:
        self.runs: list[_Run | Message] = []  # Messages here are byte copies (TD403), not sent
        self.responses: dict[str, int] = {}  # message.id -> position of its latest message
        self.stops: list[int] = []  # positions of user messages without tool results

    def assistant(self, entry: Entry) -> None:
        at = self.responses.get(entry.msg_id) if entry.msg_id is not None else None
        if at is not None and not (self.stops and self.stops[-1] > at):
            target = self.runs[at]
            assert isinstance(target, _Run)
        else:
            target = _Run(Role.ASSISTANT, entry)
            if entry.msg_id is not None:
                self.responses[entry.msg_id] = len(self.runs)
            self.runs.append(target)
        target.take(entry)

    def user(self, entry: Entry) -> None:
        last = self.runs[-1] if self.runs else None
        if isinstance(last, _Run) and last.role is Role.USER and last.dup_key is None:
            stopped = not last.results
            last.take(entry)
            if stopped and last.results:  # tool results merged in: no longer a stop
                self.stops.pop()
        else:
            last = _Run(Role.USER, entry)
            last.take(entry)
            if not last.results:
                self.stops.append(len(self.runs))
            self.runs.append(last)
        if entry.copies:
            last.dup_key = ("uuid", entry.uuid)
            self.runs.extend(_copies(entry))


def _recorded_twice(chain: list[Entry]) -> list[Repeat]:
    """Responses the file records twice: lines of one ``message.id`` holding one ``tool_use`` id.

    The writer puts each block of a response on its own line once; a second line with the
    same response and call id is a second recording of it under new uuids (a conversation
    copied into the file again).  Claude Code's loader splices the other recording back in
    beside the first (``recoverOrphanedParallelToolResults`` matches by ``message.id``) and
    merges both into one response, so every copied call id repeats: one cause (TD305 once).
    """
    held: dict[tuple[str, str], int] = {}
    ids: set[str] = set()
    responses: set[str] = set()
    first: list[int] = []
    again: list[int] = []
    for entry in chain:
        if entry.kind != "assistant" or entry.msg_id is None:
            continue
        for part in entry.parts:
            if part.kind is not PartKind.TOOL_CALL or part.call_id is None:
                continue
            earlier = held.setdefault((entry.msg_id, part.call_id), entry.number)
            if earlier != entry.number:
                ids.add(part.call_id)
                responses.add(entry.msg_id)
                first.append(earlier)
                again.append(entry.number)
    if not ids:
        return []
    count = f"{len(responses)} responses are" if len(responses) > 1 else "a response is"
    cause = (
        f"{count} recorded twice (same message.id, new uuids: lines {min(first)}-{max(first)} "
        f"and again {min(again)}-{max(again)}), and Claude Code merges the two copies of each into one replayed response"
    )
    return [Repeat(frozenset(ids), cause)]


def _copies(entry: Entry) -> list[Message]:
    """Byte-identical repeats of a user line: invisible to Claude Code (keyed by uuid), TD403 here."""
    return [
        Message(
            Role.USER,
            [],
            Origin(number, index),
            dup_key=("uuid", entry.uuid),
            ref=MessageRef("copy", (LineRef(index, entry.uuid, entry.parent),)),
        )
        for number, index in entry.copies
    ]


READER = ClaudeCodeReader()
# A decision's claims, the same value for every file, and keys the line that decides
# holds: an entry's (``_entry_like``, and ``userType``, by which the registry rules Qwen
# Code out); a metadata line's type (the registry asks no key of it: ``fast.UNSEEN``).
_ENTRY_CLAIM = READER.claim(REASON, DEFINITIVE)
_METADATA_CLAIM = READER.claim(METADATA_REASON, SPECIFIC)
ENTRY_KEYS = frozenset({"type", "uuid", "parentUuid", "sessionId", "message", "userType"})
_TYPED = frozenset({"type"})
