"""Byte spans of the values inside a JSON text, addressed by JSON Pointer (RFC 6901).

orjson gives values without positions.  Findings in a single-document file need the line
where an element starts, and fixes must replace exactly an element's bytes and nothing
else, so this module indexes where each value sits.  It trusts its input: call it only
on text that already parsed.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import orjson

_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+')


@dataclass(slots=True, eq=False)
class Span:
    """Where one value sits: ``start``/``end`` byte offsets; ``key_start`` for members."""

    start: int
    end: int = -1
    items: list[Span] | None = None  # arrays
    members: dict[str, Span] | None = None  # objects, in document order
    key_start: int = -1

    def child(self, token: str) -> Span:
        if self.items is not None:
            return self.items[int(token)]
        if self.members is not None:
            return self.members[token]
        raise KeyError(token)


@dataclass(slots=True)
class _Frame:
    span: Span
    expect_key: bool = False
    key: str = ""
    key_start: int = -1


def index(data: bytes, start: int = 0, end: int | None = None) -> Span:
    """Index every value of the JSON text ``data[start:end]``."""
    stack: list[_Frame] = []
    root: Span | None = None
    for match in _TOKEN.finditer(data, start, len(data) if end is None else end):
        token = match.group()
        head = token[0]
        if head == 0x2C:  # ,
            frame = stack[-1]
            frame.expect_key = frame.span.members is not None
            continue
        if head == 0x3A:  # :
            continue
        if head in (0x7D, 0x5D):  # } ]
            stack.pop().span.end = match.end()
            continue
        if stack and stack[-1].expect_key:
            frame = stack[-1]
            frame.key = _decode_key(token)
            frame.key_start = match.start()
            frame.expect_key = False
            continue
        span = Span(match.start())
        if head == 0x7B:  # {
            span.members = {}
        elif head == 0x5B:  # [
            span.items = []
        else:
            span.end = match.end()
        if stack:
            parent = stack[-1]
            if parent.span.items is not None:
                parent.span.items.append(span)
            else:
                span.key_start = parent.key_start
                assert parent.span.members is not None
                parent.span.members[parent.key] = span
        else:
            root = span
        if span.end < 0:
            stack.append(_Frame(span, expect_key=span.members is not None))
    if root is None:
        raise ValueError("no JSON value")
    return root


def _decode_key(token: bytes) -> str:
    if b"\\" not in token:
        return token[1:-1].decode("utf-8")
    key = orjson.loads(token)
    assert isinstance(key, str)
    return key


def resolve(root: Span, pointer: str) -> Span:
    span = root
    for token in split(pointer):
        span = span.child(token)
    return span


def split(pointer: str) -> list[str]:
    if not pointer:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def join(*tokens: str | int) -> str:
    """A JSON Pointer from tokens; escaping only where a key holds ``~`` or ``/``."""
    if not tokens:
        return ""
    if any(isinstance(t, str) and ("~" in t or "/" in t) for t in tokens):
        return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)
    return "/" + "/".join(map(str, tokens))


def line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


class LineIndex:
    """Line numbers of many offsets in one text without recounting from the start."""

    def __init__(self, data: bytes) -> None:
        self._newlines = [m.start() for m in re.finditer(b"\n", data)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self._newlines, offset) + 1
