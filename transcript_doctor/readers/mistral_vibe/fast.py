"""Proof that a Mistral Vibe session has no finding, without reading it as dicts.

A session is mostly short lines; parsing each into a dict, then asking the dict for the
keys the screen reads, cost three times the parse.  msgspec decodes each line into
``_Line``, in C, and the turns ``reader._plain_turns`` would give are handed to the
screen.  A session the screen proves clean is left unread; one it doubts is built from
its cut, as the full read builds it (``listing.lines_from``: only the lines from the cut
on are parsed); anything else is read in full, so the findings are the full read's.

What the proof does not take falls back to the full read (``clean`` returns False):

- a line msgspec does not decode into ``_Line``: a key outside ``reader.PLAIN_KEYS``
  (``forbid_unknown_fields``: the full read's screen gives up there too), a field of
  another type, a torn, glued or blank line, a value that is not an object, NUL bytes,
  raw control characters, a lone surrogate escape, NaN, nesting deeper than msgspec's
  limit (lower than orjson's; msgspec refuses what orjson refuses there), a BOM, and invalid UTF-8 anywhere (msgspec does not
  check the bytes of fields it skips: ``typed_lines.decoded`` checks the whole text);
- an empty line (two newlines in a row, or one at the start): Vibe's loader fails on it
  (TD001, ``reader.blank_lines``), and ``decoded`` skips it.

A number beyond a double (``1e400``) in a skipped field is skipped by msgspec and refused
by orjson; Vibe's loader (``json.loads``) reads it, so the full read reports nothing for
it either.  Duplicate keys: msgspec keeps the last, as orjson does.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn
from transcript_doctor.readers.typed_lines import decoded
from transcript_doctor.source import BOM, HEAD_RECORDS, Source, valid_utf8


class _Call(msgspec.Struct, gc=False):
    id: str | None = None


class _Line(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A line of ``reader.PLAIN_KEYS`` only; what the screen does not read is kept raw."""

    role: str | None = None
    content: str | None = None
    tool_calls: list[_Call] | None = None
    tool_call_id: str | None = None
    injected: msgspec.Raw = msgspec.Raw(b"")
    message_id: msgspec.Raw = msgspec.Raw(b"")
    name: msgspec.Raw = msgspec.Raw(b"")
    reasoning_content: msgspec.Raw = msgspec.Raw(b"")
    reasoning_message_id: msgspec.Raw = msgspec.Raw(b"")


_DECODER = msgspec.json.Decoder(_Line)
_WRAPPED = msgspec.json.Decoder(tuple[_Line])  # a line wrapped in brackets (``_lines``)
# Above this size lines are decoded one at a time (``typed_lines.decoded``): ``_lines``
# holds two copies of the text for a moment, and the peak memory must stay near the file's.
_WRAP_LIMIT = 16 << 20


# The keys of the other registry entries (``readers._MODULES``: what a file must show
# before each reader is asked, and ``unless``) that are not ``reader.PLAIN_KEYS``: no line
# ``_Line`` decodes holds one (tests/test_decide_roles.py holds this equal to the registry).
ABSENT = frozenset(
    {
        "projectHash",
        "$set",
        "$rewindTo",
        "uuid",
        "leafUuid",
        "snapshot",
        "operation",
        "payload",
        "id",
        "ts",
        "parentId",
        "protocol_version",
        "messages",
        "userType",
        "toolUseResult",
    }
)
_DECIDED_LINES = 4 * HEAD_RECORDS  # the longest session ``vibe_lines`` decides (``fix`` reads no proof)
_ROLES = frozenset({"user", "assistant", "tool", "system"})  # reader.ROLES
_BOOLEANS = (msgspec.Raw(b"false"), msgspec.Raw(b"true"))


def clean(data: bytes, screen: Screen) -> bool:
    """True when no rule can find anything in this session (False: read it in full)."""
    return prove(data, screen) is True


def prove(data: bytes, screen: Screen, source: Source | None = None) -> bool | None:
    """True when no rule can find anything in this session; None when the proof covers
    the session but the screen doubts it (``screen.cut`` and ``screen.before`` say where
    the full read's screen would cut it: every line is a record, in order); False when
    only the full read can tell.  ``source``: the file of ``data``, whose lines detection
    may have decoded already (``vibe_lines``)."""
    if source is not None and _WRAPPED in source.typed:
        lines: list[_Line] | None = source.typed.pop(_WRAPPED)  # the proof owns them now
    else:
        lines = _whole(data)
    if lines is None:
        return False
    return True if screen.clean(_turns(lines)) else None


def _whole(data: bytes, segments: int | None = None) -> list[_Line] | None:
    """Every line's record, one per segment between newlines (``segments``: their
    count, if known), or None (an empty line: TD001, which ``decoded`` skips; or a line
    that is not one ``_Line``)."""
    if segments is None:
        segments = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    try:
        lines = _lines(data) if len(data) <= _WRAP_LIMIT else decoded(data, _DECODER)
    except RecursionError:  # msgspec's depth limit, in the wrapped decode
        return None
    if lines is None or len(lines) != segments:
        return None
    return lines


def vibe_lines(source: Source) -> bool:
    """Whether every line of a short session decodes as ``_Line`` (so holds only
    ``reader.PLAIN_KEYS``: no key of ``ABSENT``) with a role of ``reader.ROLES`` and a
    boolean ``injected``; the records are kept on the source for ``prove``.

    Every record of the head is such a line, whichever lines orjson refuses (a number
    beyond a double in a field ``_Line`` keeps raw or skips): the head holds the lines'
    keys and the same role and ``injected`` values (duplicate keys: orjson, like msgspec,
    keeps the last; keys are compared unescaped by both)."""
    data = source.data
    segments = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if segments > _DECIDED_LINES:
        return False  # a long session: its head costs less to parse than every line to check
    lines = source.typed[_WRAPPED] = _whole(data, segments)
    if not lines:
        return False
    roles, booleans = _ROLES, _BOOLEANS
    return all(line.role in roles and line.injected in booleans for line in lines)


def _lines(data: bytes) -> list[_Line] | None:
    """Every line's record, or None when a line is not one ``_Line`` or the text is not
    UTF-8, in one call into msgspec instead of one per line (a third of the time).

    Each line is wrapped in brackets (newlines become ``]\\n[``) and the lines are
    decoded as whitespace-separated one-element arrays.  A line holding more than one
    value makes more arrays than lines (``prove`` compares the counts) or an array of
    two; no value can run across a newline, since each newline now follows a ``]`` and
    precedes a ``[``, which no JSON container takes without a comma between, and a
    string never holds a raw newline; an empty or blank line makes an empty array.  So
    when the counts agree, each line is exactly one value, decoded as the line alone
    would be (one more level of nesting: msgspec's depth limit comes a level sooner, and
    such a file is read in full).  tests/test_fast_path.py compares this with
    ``typed_lines.decoded`` on damaged files."""
    if data.startswith(BOM) or not valid_utf8(data):
        return None
    wrapped = memoryview(b"[" + data.replace(b"\n", b"]\n[") + b"]")
    if data.endswith(b"\n"):
        wrapped = wrapped[:-2]  # the "[]" after the last newline
    try:
        return [line for (line,) in _WRAPPED.decode_lines(wrapped)]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _turns(lines: list[_Line]) -> Iterator[Turn | None]:
    """``reader._plain_turns`` on decoded lines (every line's keys are plain already)."""
    previous: msgspec.Raw | None = None  # the ``message_id`` of the line before, a user's
    for index, line in enumerate(lines):
        role = line.role
        if role == "user":
            if line.content is None or (previous is not None and _may_share_id(previous, line.message_id)):
                yield None
                return
            previous = line.message_id
            yield OTHER, None, (index,)
            continue
        previous = None
        if role == "assistant":
            turn = _assistant(line)
            yield turn
            if turn is None:
                return
        elif role == "tool" and line.tool_call_id is not None:
            yield RESULT, None, (line.tool_call_id,)
        else:
            yield None
            return


def _may_share_id(first: msgspec.Raw, second: msgspec.Raw) -> bool:
    """``reader._same_id`` on two raw ``message_id`` values (empty: absent): both strings
    and the same bytes, or either escaped (then equal strings may differ in bytes)."""
    one, other = bytes(first), bytes(second)
    if one[:1] != b'"' or other[:1] != b'"':
        return False  # not both strings: no identity
    return one == other or one.find(b"\\") >= 0 or other.find(b"\\") >= 0


def _assistant(line: _Line) -> Turn | None:
    """``listing.chat_assistant_turn`` on a decoded line."""
    content = line.content
    calls = line.tool_calls
    ids: tuple[str, ...] = ()
    if calls is not None:
        found = [call.id for call in calls]
        if None in found:
            return None
        ids = tuple(found)  # type: ignore[arg-type]  # no None left
    if content is None and not ids:
        return None
    return ASSISTANT, content, ids
