"""Reader ``codex``: Codex CLI rollout JSONL ({timestamp, type, payload} lines).

Spec: shared/spec/formats/codex.md.  What the model is sent is the sequence of
``response_item`` payloads (OpenAI Responses API items), restarted by the latest
``compacted.replacement_history``; ``event_msg`` lines only mirror them for the UI.  The
items are regrouped into vendor-neutral messages in ``history``.  The legacy layout
(a bare meta line, bare items, ``{"record_type":"state"}`` lines) holds the same items.
``session_index.jsonl`` and ``history.jsonl`` from ``$CODEX_HOME`` are companions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import orjson

from transcript_doctor.analysis.screen import from_cut
from transcript_doctor.model import Conversation, Message, Origin, Part, PartKind, Role
from transcript_doctor.plain import Value
from transcript_doctor.readers.base import DEFINITIVE, SPECIFIC, Decided, Detection, Reader
from transcript_doctor.readers.codex.history import At, History
from transcript_doctor.source import STRICT, Container, Line, Source

if TYPE_CHECKING:
    from transcript_doctor.analysis.screen import Screen

REASON = "Codex RolloutLine envelope with session_meta"
ENVELOPE_KEYS = frozenset({"timestamp", "type", "payload", "ordinal"})
# `RolloutItem` tags (protocol.rs; the newer ones are passed through untouched).
ROLLOUT_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "token_usage_record",
        "world_state",
        "retained_context",
        "security_risk_score",
        "realtime_item",
    }
)
# Legacy recorder (codex-rs/core/src/rollout.rs @ 89a151f5): `SessionMeta{id, timestamp,
# instructions?}` first (later with `git`), then bare ResponseItems and state lines.
LEGACY_META_KEYS = frozenset({"id", "timestamp", "instructions", "git"})
LEGACY_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
    }
)
# session_index.rs `SessionIndexEntry`; message_history.rs `HistoryEntry` (older: conversation_id).
INDEX_KEYS = frozenset({"id", "thread_name", "updated_at"})
HISTORY_KEYS = (frozenset({"session_id", "ts", "text"}), frozenset({"conversation_id", "ts", "text"}))
ROLLOUT = "rollout"
LEGACY = "legacy"
# Kept on a source (``Source.typed``) whose first record ``decide`` found to be a rollout
# line: its layout is ``ROLLOUT`` without a head parsed.
_ROLLOUT_FIRST = "codex: the first record is a rollout line"


class Layout(Value):
    """``Conversation.ref``: how the file is laid out, for a later fix.

    ``compacted`` is the record index of the ``compacted`` line whose replacement_history
    the replayed history starts from (edits to items before the next line go into that
    array), or None.
    """

    __slots__ = ("compacted", "kind")
    kind: Final[str]
    compacted: Final[int | None]

    def __init__(self, kind: str, compacted: int | None) -> None:
        self.kind = kind
        self.compacted = compacted


def _is_line(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("type"), str)
        and isinstance(record.get("timestamp"), str)
        and "payload" in record
        and record.keys() <= ENVELOPE_KEYS
    )


def _str_in(value: Any, names: frozenset[str]) -> bool:
    return isinstance(value, str) and value in names


def _is_legacy(head: list[Any]) -> bool:
    meta, rest = head[0], head[1:]
    if not (isinstance(meta, dict) and meta.keys() <= LEGACY_META_KEYS):
        return False
    if not (isinstance(meta.get("id"), str) and isinstance(meta.get("timestamp"), str)):
        return False
    return bool(rest) and all(
        isinstance(r, dict)
        and (
            r.get("record_type") == "state"
            or (_str_in(r.get("type"), LEGACY_ITEM_TYPES) and "payload" not in r)
        )
        for r in rest
    )


def _companion(head: list[Any]) -> str | None:
    if not all(isinstance(r, dict) for r in head):
        return None
    if all(r.keys() == INDEX_KEYS for r in head):
        return "Codex session_index.jsonl (thread names; not a transcript)"
    if all(r.keys() in HISTORY_KEYS and isinstance(r.get("ts"), int) for r in head):
        return "Codex history.jsonl (prompt history; not a transcript)"
    return None


def _layout(head: list[Any]) -> str:
    return LEGACY if head and not _is_line(head[0]) and _is_legacy(head) else ROLLOUT


def _layout_of(source: Source) -> str:
    """``_layout`` of the source's head, parsed only when ``decide`` did not find its first
    record a rollout line."""
    return ROLLOUT if _ROLLOUT_FIRST in source.typed else _layout(source.head())


class CodexReader(Reader):
    name = "codex"
    # First record: rollout lines' payload, the legacy meta's id, the companions' id / ts.
    first_keys = frozenset({"payload", "id", "ts"})
    summary = "Codex CLI rollout JSONL ({timestamp, type, payload} lines)"
    # read_to_string (fails on invalid UTF-8) then serde_json per line: as strict as orjson.
    loader = STRICT

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSONL:
            return None
        head = source.head()
        if not head:
            return None
        first = head[0]
        if _is_line(first) and first["type"] == "session_meta":
            return self.claim(REASON, DEFINITIVE)
        if all(_is_line(r) and r["type"] in ROLLOUT_TYPES for r in head):
            # A torn or cut first line: the vendor cannot resume it, but it is still a rollout.
            return self.claim("Codex RolloutLine envelope (first line is not session_meta)", SPECIFIC)
        if _is_legacy(head):
            return self.claim("legacy Codex rollout", SPECIFIC)
        companion = _companion(head)
        if companion is not None:
            return self.claim(companion, SPECIFIC, transcript=False)
        return None

    def decide(self, source: Source) -> Decided | None:
        """``detect``'s claim from the proof's typed records, with no head parsed: the first
        line, parsed by orjson as the head parses it, a rollout line of ``session_meta``,
        and no record of the head holding a key of the readers listed before this one
        (``fast.first_line``)."""
        from transcript_doctor.readers.codex import fast  # msgspec: loaded on first use

        raw = fast.first_line(source)
        if raw is None:
            return None
        try:
            first = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        if not (_is_line(first) and first["type"] == "session_meta"):
            return None
        source.typed[_ROLLOUT_FIRST] = True
        return Decided(self.claim(REASON, DEFINITIVE), first.keys(), fast.PROBED)

    def refuses(self, first: dict[str, Any]) -> bool:
        """Whether ``detect`` claims no head whose first record is ``first``: each of its
        claims needs that record a rollout line, a legacy meta line or a companion's
        line, each a closed set of keys.  For another reader's decision (``decide``) that
        knows the head's first record but not the rest."""
        keys = first.keys()
        return not (_is_line(first) or keys <= LEGACY_META_KEYS or keys == INDEX_KEYS or keys in HISTORY_KEYS)

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Nothing for a rollout the typed fast path proves clean (``fast``); one it covers
        but the screen doubts is read from the screen's cut (nothing before it can be
        flagged), and without parsing again the lines before its compaction (every line
        is known to parse: no TD001 there); anything else in full."""
        if screen is not None and _layout_of(source) == ROLLOUT:
            from transcript_doctor.readers.codex import fast  # msgspec: loaded on first use

            proof = fast.prove(source.data, screen, source)
            if proof is not None:
                if proof.clean:
                    return []
                compacted = proof.compacted
                return [from_cut(screen, lambda start: self._from(source, start, compacted))]
        return self.read(source)

    def _from(self, source: Source, start: int, compacted: int | None) -> Conversation:
        """The conversation of a rollout the proof covers (every line parses) from line
        ``start`` on (a screen's cut after the last compaction, whose line index is
        ``compacted``; 0: all of it, the lines before the compaction left unparsed)."""
        if not start:
            return self._whole(source, proven=True)
        history = History(source)
        for line, record in source.records(source.lines[start:]):
            if isinstance(record, dict):
                _rollout_line(history, line, record)
        return Conversation(history.finish(), self.dialect, ref=Layout(ROLLOUT, compacted))

    def read(self, source: Source) -> list[Conversation]:
        return [self._whole(source, proven=False)]

    def _whole(self, source: Source, proven: bool) -> Conversation:
        """The whole conversation; ``proven``: every line is known to parse (``fast``)."""
        history = History(source)
        kind = _layout_of(source)
        compacted: int | None = None
        lines = source.lines
        start = 0 if kind == LEGACY else _last_compaction(source)
        for line in [] if proven else lines[:start]:
            source.record(line)  # only for TD001: the compaction replaces what they held
        for line, record in source.records(lines[start:]):
            if not isinstance(record, dict):
                continue
            if kind == LEGACY:
                # The meta and state lines have no `type`: the history skips them.
                history.add(record, At(line.number, line.index, None, "", line))
                continue
            payload = record.get("payload")
            if record.get("type") == "compacted" and isinstance(payload, dict):
                compacted = line.index
                _compact(history, payload, line.number, line.index)
            else:
                _rollout_line(history, line, record)
        return Conversation(history.finish(), self.dialect, ref=Layout(kind, compacted))


def _rollout_line(history: History, line: Line, record: dict[str, Any]) -> None:
    """A rollout line other than a compaction: an item, or the event that rolls back."""
    rollout_type = record.get("type")
    payload = record.get("payload")
    if rollout_type == "response_item":
        history.add(payload, At(line.number, line.index, None, "/payload", line))
    elif rollout_type == "event_msg" and isinstance(payload, dict):
        _event(history, payload)


def _last_compaction(source: Source) -> int:
    """The index of the last ``compacted`` line (0 without one): Codex rebuilds the history
    from its replacement, so nothing before it needs building (a long session compacts
    hundreds of times, each replacement holding the history so far)."""
    for line in reversed(source.lines):
        if b'"compacted"' in source.line_bytes(line):
            record = source.peek(line)
            if (
                isinstance(record, dict)
                and record.get("type") == "compacted"
                and isinstance(record.get("payload"), dict)
            ):
                return line.index
    return 0


def _event(history: History, payload: dict[str, Any]) -> None:
    """The one UI event that changes what is replayed: a rollback of whole user turns."""
    turns = payload.get("num_turns")
    if payload.get("type") == "thread_rolled_back" and type(turns) is int and turns > 0:
        # Unconfirmed: newer builds add `rollback_start_index`; read as num_turns here.
        history.rollback(turns)


def _compact(history: History, payload: dict[str, Any], number: int, index: int) -> None:
    """Restart the history from a ``compacted`` line, as Codex does on resume."""
    history.reset()
    replacement = payload.get("replacement_history")
    if isinstance(replacement, list):
        for k, item in enumerate(replacement):
            pointer = f"/payload/replacement_history/{k}"
            history.add(item, At(number, index, pointer, pointer, None, k))
        return
    # Unconfirmed for builds before replacement_history existed: Codex now rebuilds the
    # history from the earlier user messages plus the summary, all sent as user messages.
    summary = payload.get("message")
    if isinstance(summary, str):
        part = Part(PartKind.TEXT, Origin(number, index, "/payload/message"), text=summary)
        history.append(Message(Role.USER, [part], Origin(number, index)))


READER = CodexReader()
