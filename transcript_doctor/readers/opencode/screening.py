"""An ``opencode export`` screened as parsed, without building its model.

The export is one JSON document, parsed whole when the file is sniffed; building messages,
parts and origins from it and running the rules costs several times that parse.  Here
its messages are read as ``history.conversation`` reads them, into the turns the
clean-file screen asks about (``analysis/screen.py``): only a session the screen proves
clean is left unbuilt.

What the screen does not cover makes ``turns`` return None (the session is built and
checked in full): a message or part that is no object, a part without a string type, a
tool part without a string ``callID``.  Parts no rule reads (step markers, reasoning,
patches and the other kinds the reader keeps as opaque parts) are left out of a reply's
turn: a reply holding only them is a turn without text or calls, which the screen doubts.
"""

from __future__ import annotations

from typing import Any

from transcript_doctor.analysis.screen import ASSISTANT, NOTICE, OTHER, RESULT, Turn
from transcript_doctor.readers.opencode.history import ABORTED, NOT_SENT, SKIPPED_ERROR, UNANSWERED, UNKNOWN

_QUIET = frozenset({"step-start", "reasoning"})  # history._assistant: no sign an aborted step spoke


def turns(messages: list[Any]) -> list[Turn | None] | None:
    """The screen's turns of an export's ``messages``, or None."""
    out: list[Turn | None] = []
    for item in messages:
        if not isinstance(item, dict):
            return None
        info, parts = item.get("info"), item.get("parts")
        if not isinstance(parts, list):
            parts = []
        role = info.get("role") if isinstance(info, dict) else None
        if role == "user":
            out.append((OTHER, None, ()))
        elif role == "assistant":
            assert isinstance(info, dict)
            if not _assistant(info, parts, out):
                return None
        else:
            out.append((NOTICE, UNKNOWN, ()))
    if out and out[-1] is not None and out[-1][0] != NOTICE:
        # OpenCode sends the next prompt after the final text (``DIALECT``: no prefill, no
        # TD102): the screen is shown it, as ``gemini_content.closing`` shows it, unless
        # notices end the turns (after them a prompt would disarm TD101).
        out.append((OTHER, None, ()))
    return out


def _assistant(info: dict[str, Any], parts: list[Any], out: list[Turn | None]) -> bool:
    """``history._assistant``'s messages as turns, appended to ``out``; False for a part the
    screen does not cover."""
    kinds: list[str] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(kind, str):
            return False  # an unreadable part: the full read keeps it as opaque content
        kinds.append(kind)
    error = info.get("error")
    if error is not None:
        aborted = isinstance(error, dict) and error.get("name") == ABORTED
        if not (aborted and any(k not in _QUIET for k in kinds)):
            out.append((NOTICE, SKIPPED_ERROR, ()))
            return True
    texts: list[str] = []
    calls: list[str] = []
    results: list[str] = []
    content = False
    for part, kind in zip(parts, kinds, strict=True):
        if kind in NOT_SENT:
            continue
        content = True
        if kind == "text":
            text = part.get("text")
            texts.append(text if isinstance(text, str) else "")
        elif kind == "tool":
            call_id = part.get("callID")
            if not isinstance(call_id, str):
                return False
            calls.append(call_id)
            state = part.get("state")
            status = state.get("status") if isinstance(state, dict) else None
            if not (isinstance(status, str) and status in UNANSWERED):
                results.append(call_id)
    if content:  # else nothing but step markers: dropped on replay
        out.append((ASSISTANT, "".join(texts) if texts else None, tuple(calls)))
        out.extend((RESULT, None, (call_id,)) for call_id in results)
    return True
