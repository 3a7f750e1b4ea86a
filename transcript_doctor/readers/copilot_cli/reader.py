"""Reader ``copilot-cli``: GitHub Copilot CLI ``~/.copilot/session-state/<id>/events.jsonl``.

Spec: docs/formats/copilot-cli.md (from files Copilot CLI 1.0.102 wrote, fixtures/copilot-cli,
and the SDK's generated ``session-events`` types).  Every line is one event
``{type, data, agentId?, id, timestamp, parentId}``.  On resume the CLI rebuilds the model's
history from the **main agent's** events only (no ``agentId``): ``system.message``,
``user.message`` (its ``transformedContent``), ``assistant.message`` (text, reasoning and
``toolRequests``) and ``tool.execution_complete`` (one tool message per call).  Sub-agent
events interleave in the same file but are never replayed into that history (spec §4, §6):
they are parsed (an unparseable one is still TD001) and kept out of the conversation, which
is how the vendor separates them.  ``session.*``, ``assistant.turn_*``, ``tool.execution_start``
and the other bookkeeping events are not sent to the model.

The CLI's own recovery writes ``events.jsonl.backup-before-recovery-<sha256>``: a byte copy
of a log it rewrote, a companion, never a transcript to lint or repair.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import orjson

from transcript_doctor.analysis.screen import from_cut
from transcript_doctor.model import Conversation, Dialect, Message, Origin, Part, PartKind, Role
from transcript_doctor.readers.base import DEFINITIVE, SPECIFIC, Decided, Detection, Reader
from transcript_doctor.readers.copilot_cli import torn
from transcript_doctor.readers.copilot_cli.envelope import LATE_DELIVERY, is_event
from transcript_doctor.readers.copilot_cli.refs import CallRef, EventRef
from transcript_doctor.source import HEAD_RECORDS, NODE, Container, Line, Source

if TYPE_CHECKING:
    from collections.abc import Iterable

    from transcript_doctor.analysis.screen import Screen

REASON = "Copilot CLI event log (session.start by copilot-agent)"
# Event types only this log has, for a file whose session.start line was lost (torn, cut).
CORE_TYPES = frozenset(
    {
        "session.start",
        "session.resume",
        "user.message",
        "system.message",
        "assistant.turn_start",
        "assistant.message",
        "tool.execution_start",
        "tool.execution_complete",
    }
)
BACKUP_NAME = "events.jsonl.backup-before-recovery-"
# A short log (of fewer lines than this and bytes) is screened from the records detection
# parsed (``HEAD_RECORDS`` of them) instead of decoded again.
_SHORT_LINES = 2 * HEAD_RECORDS
_SHORT_BYTES = 1 << 16


def _started(record: Any) -> bool:
    return bool(record["type"] == "session.start" and record["data"].get("producer") == "copilot-agent")


class CopilotCliReader(Reader):
    name = "copilot-cli"
    summary = "GitHub Copilot CLI session-state/<id>/events.jsonl event log"
    # The CLI always sends a new prompt after the stored history, so its last assistant
    # text is never prefill (TD102 does not apply).
    dialect = Dialect(final_text_is_prefill=False)
    # Node: the errors users quote are V8's JSON.parse ("Unterminated string in JSON at
    # position …", #2012, #2649; "Unexpected token …", #1864).  Whether the file is decoded
    # with U+FFFD replacement is unconfirmed (Node's utf-8 decoding does that).  1.0.102 reads
    # raw U+2028/U+2029 inside strings (fixtures/copilot-cli/rawsep-resume); 1.0.16 to 1.0.24
    # did not (#2012, #2490, #2658): not a finding for the current CLI.  Unconfirmed: whether
    # a provider rejects a lone surrogate JSON.parse read when the history is replayed.
    loader = NODE

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSONL:
            return None
        head = source.head()
        events = [r for r in head if is_event(r)]
        if not events:
            return None
        if os.path.basename(source.path).startswith(BACKUP_NAME):
            return self.claim(
                "Copilot CLI's backup of an event log it recovered (a companion: the live log is "
                "events.jsonl)",
                DEFINITIVE,
                transcript=False,
            )
        if events[0] is head[0] and _started(head[0]):
            # The vendor's own header: a later record of another shape is read as unknown.
            return self.claim(REASON, DEFINITIVE)
        if len(events) == len(head) and any(r["type"] in CORE_TYPES for r in head):
            return self.claim("Copilot CLI event envelope (the first line is not session.start)", SPECIFIC)
        return None

    def decide(self, source: Source) -> Decided | None:
        """``detect``'s claim from the proof's typed events, with no head parsed: every line
        an event (none holds a key of ``fast.ABSENT``), the first one, parsed by orjson as
        the head parses it, the session.start ``detect`` asks for; not the CLI's backup.

        The readers listed before this one that are shown a file by ``id`` (Codex, Pi) are
        ruled out by the first record alone: the registry asks their ``refuses`` of it."""
        if os.path.basename(source.path).startswith(BACKUP_NAME):
            return None  # a companion (transcript=False): the head decides
        from transcript_doctor.readers.copilot_cli import fast  # msgspec: loaded on first use

        raw = fast.first_line(source)
        if raw is None:
            return None
        try:
            first = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        if not (is_event(first) and _started(first)):
            return None
        return Decided(self.claim(REASON, DEFINITIVE), first.keys(), fast.ABSENT, first=first)

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Nothing for a log the fast path proves clean (``fast``); a long one it covers but
        the screen doubts is read from the screen's cut (every line is an event that
        parses, nothing before the cut can be flagged); anything else in full."""
        if screen is not None:
            from transcript_doctor.readers.copilot_cli import fast  # msgspec: loaded on first use

            data = source.data
            if fast.decoded_on(source):
                # Detection decoded every event (``decide``): the proof takes them.
                proof = fast.prove(data, screen, source)
                if proof:
                    return []
                if proof is not None and screen.cut:
                    return [from_cut(screen, lambda start: self._from(source, start))]
                return self.read(source)
            if len(data) <= _SHORT_BYTES and data.count(b"\n") < _SHORT_LINES:
                # Detection parsed (nearly) every line: screened as parsed, built from them.
                records = list(source.records())
                if fast.clean_records(records, screen) and not source.errors:
                    return []
                return self._build(source, records)
            proof = fast.prove(data, screen)
            if proof:
                return []
            if proof is not None and screen.cut:
                return [from_cut(screen, lambda start: self._from(source, start))]
        return self.read(source)

    def read(self, source: Source) -> list[Conversation]:
        return self._build(source, source.records())

    def _from(self, source: Source, start: int) -> Conversation:
        """The conversation from line ``start`` on (a screen's cut; 0: all of it)."""
        lines = source.lines[start:] if start else None
        return self._build(source, source.records(lines))[0]

    def _build(self, source: Source, records: Iterable[tuple[Line, Any]]) -> list[Conversation]:
        history = _History()
        run: list[tuple[Line, Any]] = []  # lines that are no event: maybe one event torn
        for line, record in records:
            if record is None or not is_event(record):
                run.append((line, record))
                continue
            if run:
                _mend(source, run, history)
                run = []
            _add(history, line, record)
        if run:
            _mend(source, run, history)
        return [Conversation(history.finish(), self.dialect)]


def _add(history: _History, line: Line, record: Any) -> None:
    if record is None or record.get("agentId") is not None:
        return  # unparseable (TD001), or a sub-agent's: not replayed
    data = record.get("data")
    kind = record.get("type")
    if isinstance(data, dict) and isinstance(kind, str):
        history.add(kind, data, record.get("id"), line.number, line.index)


def _mend(source: Source, run: list[tuple[Line, Any]], history: _History) -> None:
    """Read a run of lines that are no event: an event torn across some of them by raw
    newlines (#2649, torn.py) is rejoined (one TD001, repaired by rejoining) and read; every
    other line is read as it is."""
    lines = [line for line, _ in run]
    index = 0
    while index < len(run):
        line, record = run[index]
        found = None
        if not (index == 0 and line.index == 0 and source.bom):
            found = torn.rejoin(source.data, lines[index:], is_event)
        if found is None:
            _add(history, line, record)
            index += 1
            continue
        pieces, event = found
        last = lines[index + pieces]
        source.rejoin(
            line,
            last,
            f"one event torn across lines {line.number}-{last.number} by raw newlines inside a "
            "string (JSON.parse rejects every piece; the CLI's recovery drops them all)",
        )
        _add(history, line, event)
        index += pieces + 1


class _History:
    """The main agent's replayed messages, built event by event."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.calls: dict[str, CallRef] = {}  # open calls by id (no completion yet)
        self.held: list[Message] = []  # late prompts waiting for the open calls' results
        self.results: Message | None = None  # the tool messages right after the last call

    def add(self, kind: str, data: dict[str, Any], event_id: Any, number: int, index: int) -> None:
        if kind == "assistant.message":
            self._flush()
            self._assistant(data, number, index)
        elif kind == "tool.execution_complete":
            self._result(data, number, index)
        elif kind == "tool.execution_start":
            call_id = data.get("toolCallId")
            call = self.calls.get(call_id) if isinstance(call_id, str) else None
            if call is not None and call.start is None:
                call.start = index
        elif kind == "user.message":
            self._user(data, event_id, number, index)
        elif kind == "system.message":
            content = data.get("content")
            if isinstance(content, str):
                part = Part(PartKind.TEXT, Origin(number, index, "/data/content"), text=content)
                self._append(Message(Role.SYSTEM, [part], Origin(number, index), ref=EventRef(index)))
        # Everything else (session.*, assistant.turn_*, usage records, subagent.*, hooks,
        # compaction bookkeeping, abort) is not sent as a message.  Unconfirmed: how
        # `session.compaction_complete` shortens the replayed history (no recorded file has
        # one); the whole history is read, in which no pairing is broken by a compaction.

    def finish(self) -> list[Message]:
        self.messages.extend(self.held)
        self.held = []
        return self.messages

    def _append(self, message: Message) -> None:
        self.messages.append(message)
        self.results = None

    def _flush(self) -> None:
        if self.held:
            self.messages.extend(self.held)
            self.held = []
            self.results = None

    def _assistant(self, data: dict[str, Any], number: int, index: int) -> None:
        parts: list[Part] = []
        reasoning = data.get("reasoningText")
        if isinstance(reasoning, str) and reasoning:
            parts.append(
                Part(PartKind.THINKING, Origin(number, index, "/data/reasoningText"), text=reasoning)
            )
        content = data.get("content")
        if isinstance(content, str):
            parts.append(Part(PartKind.TEXT, Origin(number, index, "/data/content"), text=content))
        requests = data.get("toolRequests")
        for k, request in enumerate(requests if isinstance(requests, list) else []):
            if not isinstance(request, dict):
                continue
            call_id = request.get("toolCallId")
            name = request.get("name")
            ref = CallRef(index)
            part = Part(
                PartKind.TOOL_CALL,
                Origin(number, index, f"/data/toolRequests/{k}"),
                call_id=call_id if isinstance(call_id, str) else None,
                name=name if isinstance(name, str) else None,
                ref=ref,
            )
            parts.append(part)
            if part.call_id is not None:
                self.calls[part.call_id] = ref
        self._append(Message(Role.ASSISTANT, parts, Origin(number, index), ref=EventRef(index)))

    def _result(self, data: dict[str, Any], number: int, index: int) -> None:
        call_id = data.get("toolCallId")
        result = data.get("result")
        error = data.get("error")
        # What the replay sends (spec §4): `result.content`, or for a failure `error.message`.
        if isinstance(result, dict) and isinstance(result.get("content"), str):
            text, pointer = result["content"], "/data/result/content"
        elif isinstance(error, dict) and isinstance(error.get("message"), str):
            text, pointer = error["message"], "/data/error/message"
        else:
            text, pointer = "", "/data"
        part = Part(
            PartKind.TOOL_RESULT,
            Origin(number, index, pointer),
            text=text,
            call_id=call_id if isinstance(call_id, str) else None,
            is_error=data.get("success") is False,
            ref=EventRef(index),
        )
        if isinstance(call_id, str):
            self.calls.pop(call_id, None)
        if self.results is not None:
            self.results.parts.append(part)  # consecutive tool messages answer one turn
        else:
            self._append(Message(Role.USER, [part], Origin(number, index), ref=EventRef(index)))
            self.results = self.messages[-1]
        if not self.calls:
            self._flush()

    def _user(self, data: dict[str, Any], event_id: Any, number: int, index: int) -> None:
        text = data.get("transformedContent")
        pointer = "/data/transformedContent"
        if not isinstance(text, str):
            text, pointer = data.get("content"), "/data/content"
        if not isinstance(text, str):
            text = ""
        part = Part(PartKind.TEXT, Origin(number, index, pointer), text=text)
        # A harness copy repeats the event id (a byte copy of the line); two prompts typed
        # alike get two ids.
        key = ("event", event_id, text) if isinstance(event_id, str) else None
        message = Message(Role.USER, [part], Origin(number, index), dup_key=key, ref=EventRef(index))
        delivery = data.get("delivery")
        if self.calls and isinstance(delivery, str) and delivery in LATE_DELIVERY:
            self.held.append(message)
        else:
            self._append(message)


READER = CopilotCliReader()
