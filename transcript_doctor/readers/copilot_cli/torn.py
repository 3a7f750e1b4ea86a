"""Events torn across lines by raw newlines inside a string (github/copilot-cli#2649).

A writer that put a raw line feed into ``result.content`` instead of its ``\\n`` escape
leaves one event on several lines, none of which parses: JSON.parse rejects each, and the
CLI's own recovery drops them all (fixtures/copilot-cli/rawnl-resume).  Rejoining the lines
with the escape in place of each raw line feed gives back the event the writer meant, with
every character of its content.  It is done only when that is certain: the first piece
opens an object, every piece but the last ends inside a string (so each line break was in
a string), the pieces joined with ``\\n`` (``\\r\\n`` for a CRLF break, a blank line's
break escaped as well) parse as exactly one value, and that value is a Copilot event.  A
piece that is itself an event is never a piece.

The scan is linear in the run's bytes; runs of lines that do not parse are rare, and a
clean file never reaches this module.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

import orjson

from transcript_doctor.source import Line

_TOKEN = re.compile(rb'[\\"{}\[\]]')
_OPEN, _CLOSE = frozenset(b"{["), frozenset(b"}]")


def _scan(raw: bytes, in_string: bool, depth: int) -> tuple[bool, int] | None:
    """Whether ``raw`` ends inside a string and at what nesting depth, read from the state
    the previous piece ended in; None where it cannot be JSON text going on (a bracket
    closing nothing, a backslash outside a string or escaping the line break itself)."""
    pos, size = 0, len(raw)
    while (found := _TOKEN.search(raw, pos)) is not None:
        char = raw[found.start()]
        pos = found.start() + 1
        if in_string:
            if char == 0x5C:  # backslash: it escapes the next byte
                if pos >= size:
                    return None  # it would escape the raw line feed: not a torn string
                pos += 1
            elif char == 0x22:
                in_string = False
        elif char == 0x22:
            in_string = True
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        else:
            return None  # a backslash outside a string
    return in_string, depth


def _escaped(gap: bytes) -> bytes:
    """The bytes between two pieces as string escapes: line feeds and carriage returns;
    any other byte (a blank line's spaces) is kept, a raw tab would not parse anyway."""
    return gap.replace(b"\r", b"\\r").replace(b"\n", b"\\n")


def joined(data: bytes, lines: Sequence[Line]) -> bytes:
    """The pieces ``lines`` joined with their line breaks escaped (what a repair writes)."""
    out = [data[lines[0].start : lines[0].end]]
    for before, line in itertools.pairwise(lines):
        out.append(_escaped(data[before.end : line.start]))
        out.append(data[line.start : line.end])
    return b"".join(out)


def rejoin(data: bytes, lines: Sequence[Line], is_event: Any) -> tuple[int, Any] | None:
    """The index of the last piece of an event torn across ``lines`` from the first, and
    the event, or None (module docstring).  ``is_event`` says whether a value is one."""
    first = data[lines[0].start : lines[0].end]
    if not first.startswith(b"{"):
        return None
    state = _scan(first, False, 0)
    for last in range(1, len(lines)):
        if state is None or not state[0]:
            return None  # the break before this piece was not inside a string
        line = lines[last]
        state = _scan(data[line.start : line.end], True, state[1])
        if state is not None and not state[0] and state[1] == 0:
            try:
                value = orjson.loads(joined(data, lines[: last + 1]))
            except orjson.JSONDecodeError:
                return None
            return (last, value) if is_event(value) else None
    return None
