"""The replayed history of one OpenCode session, from its message and part records.

What OpenCode 1.18.33 sends (docs/formats/opencode.md §6, confirmed by the fake model's
request logs in fixtures/opencode): messages in stored order; an assistant message whose
``error`` is set is skipped, unless the error is ``MessageAbortedError`` and a part other
than ``step-start``/``reasoning`` exists; ``step-start``/``step-finish`` parts are never
sent and a message holding nothing else is dropped; a ``tool`` part is the call *and* its
result (``completed``/``error``), sent as the call in the assistant message followed by a
tool message; a ``pending``/``running`` part has no result stored (OpenCode fills
``[Tool execution was interrupted]`` at send time and never persists it).

The database and the export hold the same records; only where each lives differs, so both
hand this module the parsed values with their origins and refs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from transcript_doctor.model import Conversation, Dialect, Message, Origin, Part, PartKind, Role
from transcript_doctor.plain import Mutable

# OpenCode appends the new user message before every request, so a stored history never
# reaches a provider ending in an assistant turn: its final text is never prefill (TD102).
DIALECT = Dialect(final_text_is_prefill=False)
UNANSWERED = frozenset({"pending", "running"})  # no result stored (§4)
NOT_SENT = frozenset({"step-start", "step-finish"})
ABORTED = "MessageAbortedError"
# A skipped errored step: display-only, and not a sign that the turn before it is partial
# (the errored message itself is the failed step), so not one of turns.ABANDONING_NOTICES.
SKIPPED_ERROR = "skipped-error"
UNKNOWN = "unknown"


class Record(Mutable):
    """A message or part record as stored: its value (None: unreadable), origin and ref."""

    __slots__ = ("origin", "ref", "value")
    value: dict[str, Any] | None
    origin: Origin
    ref: object

    def __init__(self, value: dict[str, Any] | None, origin: Origin, ref: object = None) -> None:
        self.value = value
        self.origin = origin
        self.ref = ref


def conversation(
    messages: Iterable[tuple[Record, list[Record]]], label: str | None, ref: object = None
) -> Conversation:
    out: list[Message] = []
    for info, parts in messages:
        value = info.value
        role = value.get("role") if value is not None else None
        if role == "user":
            out.append(_user(info, parts))
        elif role == "assistant" and value is not None:
            out.extend(_assistant(value, info, parts))
        else:  # unreadable or a role this reader does not know: shown, not judged
            out.append(Message(Role.NOTICE, [], info.origin, notice=UNKNOWN, ref=info.ref))
    return Conversation(out, DIALECT, label=label, ref=ref)


def _kind(part: Record) -> str | None:
    kind = part.value.get("type") if part.value is not None else None
    return kind if isinstance(kind, str) else None


def _text(value: dict[str, Any], key: str = "text") -> str:
    text = value.get(key)
    return text if isinstance(text, str) else ""


def _user(info: Record, parts: list[Record]) -> Message:
    out: list[Part] = []
    for part in parts:
        value, kind = part.value, _kind(part)
        if value is None or kind is None:
            out.append(Part(PartKind.OTHER, part.origin, ref=part.ref))
        elif kind == "text":
            if value.get("ignored") is True or not _text(value):
                continue  # not sent (source: only non-empty, non-ignored text)
            out.append(Part(PartKind.TEXT, part.origin, _text(value), ref=part.ref))
        elif kind == "file":
            out.append(Part(PartKind.MEDIA, part.origin, ref=part.ref))
        elif kind not in NOT_SENT:
            out.append(Part(PartKind.OTHER, part.origin, ref=part.ref))
    return Message(Role.USER, out, info.origin, ref=info.ref)


def _assistant(value: dict[str, Any], info: Record, parts: list[Record]) -> list[Message]:
    error = value.get("error")
    kinds = [_kind(p) for p in parts]
    if error is not None:
        aborted = isinstance(error, dict) and error.get("name") == ABORTED
        if not (aborted and any(k not in ("step-start", "reasoning") for k in kinds)):
            return [Message(Role.NOTICE, [], info.origin, notice=SKIPPED_ERROR, ref=info.ref)]
    content: list[Part] = []
    results: list[Part] = []
    for part, kind in zip(parts, kinds, strict=True):
        body = part.value
        if body is None or kind is None:
            content.append(Part(PartKind.OTHER, part.origin, ref=part.ref))  # unreadable: not empty
        elif kind in NOT_SENT:
            continue
        elif kind == "text":
            content.append(Part(PartKind.TEXT, part.origin, _text(body), ref=part.ref))
        elif kind == "reasoning":
            content.append(Part(PartKind.THINKING, part.origin, _text(body), ref=part.ref))
        elif kind == "tool":
            call, result = _tool(body, part)
            content.append(call)
            if result is not None:
                results.append(result)
        else:  # file, patch, snapshot, agent, subtask…: not judged (unconfirmed on disk)
            content.append(Part(PartKind.OTHER, part.origin, ref=part.ref))
    if not content:
        return []  # nothing but step markers: OpenCode drops the message on replay
    messages = [Message(Role.ASSISTANT, content, info.origin, ref=info.ref)]
    if results:
        messages.append(Message(Role.USER, results, results[0].origin, ref=info.ref))
    return messages


def _tool(body: dict[str, Any], part: Record) -> tuple[Part, Part | None]:
    call_id = body.get("callID")
    call_id = call_id if isinstance(call_id, str) else None
    name = body.get("tool")
    name = name if isinstance(name, str) else None
    call = Part(PartKind.TOOL_CALL, part.origin, call_id=call_id, name=name, ref=part.ref)
    state = body.get("state")
    state = state if isinstance(state, dict) else None  # a shape this reader does not know
    status = state.get("status") if state is not None else None
    status = status if isinstance(status, str) else None
    if status in UNANSWERED:
        return call, None
    # completed, error, or a status or state this reader does not know: answered (never damage).
    text = _text(state, "output") or _text(state, "error") if state else ""
    result = Part(
        PartKind.TOOL_RESULT, part.origin, text, call_id=call_id, name=name, is_error=status == "error",
        ref=part.ref,
    )  # fmt: skip
    return call, result


def escape(token: str) -> str:
    """A JSON Pointer reference token (RFC 6901)."""
    if "~" not in token and "/" not in token:  # every id OpenCode writes
        return token
    return token.replace("~", "~0").replace("/", "~1")
