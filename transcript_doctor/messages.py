"""Check and repair a message list as a harness holds it, before it is saved or sent.

The list is written out as the JSON document the API takes and handed to the reader of
that API's layout, so the rules and repairs are exactly those of a stored file.  A
finding's ``pointer`` points into the list (``/3/content/1``); there is no line.  The
caller's objects are only read: a repair returns a new list, parsed from the repaired
JSON, that shares nothing with the input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import orjson

from transcript_doctor import api as _api
from transcript_doctor import engine
from transcript_doctor.results import CheckError, Finding, FixResult, Repair, Unfixed

Api = Literal["openai-chat", "anthropic", "gemini"]

# The reader of each API's message list (a bare JSON array is a layout each one reads).
READERS: dict[str, str] = {
    "openai-chat": "openai-chat",
    "anthropic": "anthropic-messages",
    "gemini": "gemini-checkpoint",  # Content[] as the Gemini API takes it
}
NAME = "messages.json"  # what the engine is told the list is called


@dataclass(frozen=True, slots=True)
class MessageReport:
    """What :func:`repair_messages` did: the repairs, and the findings it left."""

    applied: tuple[Repair, ...]
    unfixed: tuple[Unfixed, ...]
    introduced: tuple[Finding, ...]
    rolled_back: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.applied)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fixes": [
                {
                    "rule": r.rule,
                    "action": r.action,
                    "applicability": r.applicability,
                    "safety": r.safety,
                    "message": r.message,
                    "records": [
                        {"where": e.pointer, "original": _text(e.old), "new": _text(e.new)} for e in r.edits
                    ],
                }
                for r in self.applied
            ],
            "unfixed": [{**u.finding.to_dict(), "why": u.why} for u in self.unfixed],
            "introduced": [f.to_dict() for f in self.introduced],
            "rolled_back": list(self.rolled_back),
        }


def check_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    api: Api = "openai-chat",
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
) -> list[Finding]:
    """Findings of a message list, sorted by position; the list is not changed."""
    data = _dump(messages)
    options = api_options(api, select, ignore)
    try:
        report = engine.lint_bytes(NAME, data, options)
    except RecursionError:
        raise CheckError("messages: nested too deeply to check") from None
    return sorted((_unlined(f) for f in _api.findings(report, lines=False)), key=_position)


def repair_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    api: Api = "openai-chat",
    unsafe: bool = False,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], MessageReport]:
    """A repaired copy of the list and what was done; the input list is not changed."""
    data = _dump(messages)
    options = _api.with_unsafe(api_options(api, select, ignore), unsafe)
    result: FixResult = _api.fixed(_api.fix_outcome(NAME, data, options), lines=False)
    repaired: list[dict[str, Any]] = orjson.loads(result.data)
    report = MessageReport(
        applied=result.applied,
        unfixed=tuple(Unfixed(_unlined(u.finding), u.why) for u in result.unfixed),
        introduced=tuple(_unlined(f) for f in result.introduced),
        rolled_back=result.rolled_back,
    )
    return repaired, report


def api_options(name: str, select: Sequence[str] | None, ignore: Sequence[str]) -> engine.Options:
    reader = READERS.get(name)
    if reader is None:
        raise ValueError(f"unknown api {name!r}; choose from {', '.join(READERS)}")
    return _api.settings(select, ignore, reader, None)


def _dump(messages: Sequence[Mapping[str, Any]]) -> bytes:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError("messages must be a list of message dicts")
    try:
        return orjson.dumps(list(messages))
    except orjson.JSONEncodeError as exc:
        raise TypeError(f"messages are not JSON: {exc}") from None


def _unlined(finding: Finding) -> Finding:
    """A finding about the list: no path, no line (the pointer says where)."""
    pointer = finding.pointer if finding.pointer is not None else f"/{finding.record}"
    return replace(finding, path=None, line=None, pointer=pointer)


def _position(finding: Finding) -> tuple[int, tuple[tuple[int, str], ...], str]:
    """List order: message, then the path inside it (numbers as numbers), then rule."""
    tokens = (finding.pointer or "").split("/")[1:]
    path = tuple((int(t), "") if t.isdigit() else (-1, t) for t in tokens)
    return finding.record, path, finding.rule


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")
