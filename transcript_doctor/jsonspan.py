"""Byte spans of the values inside a JSON text, addressed by JSON Pointer (RFC 6901).

orjson gives values without positions.  Findings in a single-document file need the line
where an element starts, and fixes must replace exactly an element's bytes and nothing
else, so this module indexes where each value sits.  It trusts its input: call it only
on text that already parsed.  A few line numbers in a large document need no index of it:
:class:`Locator` proves where one message list element sits from serializations.
"""

from __future__ import annotations

import bisect
import codecs
import json
import re
from collections.abc import Callable
from itertools import accumulate, repeat
from typing import Any

import orjson

# Compiled on first use (``re``'s cache keeps them): a clean file's lint never locates
# a value in a document's text (start-up).
_TOKEN = rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+'
_BRACKET = rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]'
# The stdlib's C scanner returns where a value ends.  Over a latin-1 decoding of the
# bytes every byte is one character, so its offsets are byte offsets; UTF-8 sequences
# inside strings are just characters >= 0x80 there, which JSON strings may hold.
# (typeshed does not declare the decoder's ``scan_once``, the C scanner it makes itself)
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_WHITESPACE = re.compile(r"[ \t\n\r]*")

# Containers this deep are indexed when a pointer first goes into them (arrays one level
# when met: see :func:`_listed`): a finding needs one element of the message list, not
# every value of a 100 MB document.
EAGER_DEPTH = 1
ARRAY, OBJECT, SCALAR = 0, 1, 2
_UNKNOWN: Any = object()  # no parsed value given for a text


class Span:
    """Where one value sits: ``start``/``end`` byte offsets; ``key_start`` for members.

    ``items`` (arrays) and ``members`` (objects, in document order) are None for the
    other kinds; a deep container fills them on first access.
    """

    __slots__ = ("_data", "_items", "_laid", "_members", "end", "key_start", "kind", "shadows", "start")

    def __init__(self, start: int, kind: int = SCALAR, end: int = -1, data: bytes | None = None) -> None:
        self.start = start
        self.end = end
        self.kind = kind
        self.key_start = -1
        # An object holding one key twice: ``members`` keeps the last (as JSON.parse does),
        # so the earlier member is in no span and the object's layout cannot be edited.
        self.shadows = False
        self._data = data  # set while the container's children are not indexed yet
        self._items: list[Span] | None = [] if kind == ARRAY and data is None else None
        self._members: dict[str, Span] | None = {} if kind == OBJECT and data is None else None
        self._laid: _Laid | None = None  # a serialized list's elements, made into spans when asked

    @property
    def items(self) -> list[Span] | None:
        if self._data is not None:
            self._expand()
        if self._laid is not None:
            self._items, self._laid = self._laid.spans(), None
        return self._items

    @property
    def members(self) -> dict[str, Span] | None:
        if self._data is not None:
            self._expand()
        return self._members

    def _expand(self) -> None:
        assert self._data is not None
        full = index(self._data, self.start, self.end)
        self._items, self._members, self._laid, self._data = full._items, full._members, full._laid, None
        self.shadows = full.shadows

    def child(self, token: str) -> Span:
        if self._laid is not None:
            return self._laid.span(int(token))
        if self.kind == ARRAY:
            assert self.items is not None
            return self.items[int(token)]
        if self.kind == OBJECT:
            assert self.members is not None
            return self.members[token]
        raise KeyError(token)


class _Laid:
    """The elements of a list indexed by its serialization: offsets, made into spans only
    when asked (a finding's line needs one element of a list of thousands)."""

    __slots__ = ("data", "ends", "made", "starts")

    def __init__(self, data: bytes, starts: list[int], ends: list[int]) -> None:
        self.data, self.starts, self.ends = data, starts, ends
        self.made: dict[int, Span] = {}

    def span(self, position: int) -> Span:
        position = range(len(self.starts))[position]  # IndexError and negative positions as a list's
        made = self.made.get(position)
        if made is None:
            made = self.made[position] = _element(self.data, self.starts[position], self.ends[position])
        return made

    def spans(self) -> list[Span]:
        return [self.span(position) for position in range(len(self.starts))]


def index(data: bytes, start: int = 0, end: int | None = None, value: Any = _UNKNOWN) -> Span:
    """Index the JSON text ``data[start:end]`` (containers below ``EAGER_DEPTH`` lazily).

    ``value``, the text's parsed value when the caller has it, lets the message lists be
    indexed by comparing them with their serialization (see :func:`_serialized`).
    """
    stop = len(data) if end is None else end
    text: list[str] = []  # the latin-1 text of data[start:stop], made when first needed
    if data[start : start + 1] == b"[":
        listed = _listed(data, start, _latin(data, start, stop, text), start, value)
        if listed is not None:
            return listed
    stack: list[Span] = []
    expect_key: list[bool] = []
    keys: list[tuple[str, int]] = []
    root: Span | None = None
    search = re.compile(_TOKEN).search
    pos = start
    while True:
        match = search(data, pos, stop)
        if match is None:
            break
        pos = match.end()
        token = match.group()
        head = token[0]
        if head == 0x2C:  # ,
            expect_key[-1] = stack[-1].kind == OBJECT
            continue
        if head == 0x3A:  # :
            continue
        if head in (0x7D, 0x5D):  # } ]
            if not stack:  # a closer with nothing open: not JSON (a glued or torn line)
                raise ValueError("unbalanced JSON text")
            stack.pop().end = pos
            expect_key.pop()
            keys.pop()
            continue
        if stack and expect_key[-1]:
            keys[-1] = (_decode_key(token), match.start())
            expect_key[-1] = False
            continue
        if head in (0x7B, 0x5B):  # { [
            kind = OBJECT if head == 0x7B else ARRAY
            if len(stack) >= EAGER_DEPTH:
                span = (
                    _listed(
                        data,
                        match.start(),
                        _latin(data, start, stop, text),
                        start,
                        _member(value, stack, keys),
                    )
                    if kind == ARRAY
                    else None
                )
                if span is None:
                    span = Span(match.start(), kind, _skip(data, match.start(), stop, start, text), data)
                pos = span.end
            else:
                span = Span(match.start(), kind)
        else:
            span = Span(match.start(), SCALAR, pos)
        if stack:
            parent = stack[-1]
            if parent.kind == ARRAY:
                assert parent._items is not None
                parent._items.append(span)
            else:
                key, span.key_start = keys[-1]
                assert parent._members is not None
                parent.shadows = parent.shadows or key in parent._members
                parent._members[key] = span
        elif root is None:
            root = span
        else:  # a second value after the first: not one JSON text
            raise ValueError("more than one JSON value")
        if span.end < 0:
            stack.append(span)
            expect_key.append(kind == OBJECT)
            keys.append(("", -1))
    if root is None:
        raise ValueError("no JSON value")
    if stack:
        raise ValueError("unterminated JSON text")
    return root


def _latin(data: bytes, start: int, stop: int, text: list[str]) -> str:
    """The latin-1 text of ``data[start:stop]``, made once per indexed text (``text``)."""
    if not text:
        text.append(codecs.latin_1_decode(memoryview(data)[start:stop])[0])
    return text[0]


def _member(value: Any, stack: list[Span], keys: list[tuple[str, int]]) -> Any:
    """The parsed value of the root object's member being indexed, if known."""
    if len(stack) == 1 and stack[0].kind == OBJECT and isinstance(value, dict):
        return value.get(keys[-1][0], _UNKNOWN)
    return _UNKNOWN


def _listed(data: bytes, at: int, text: str, offset: int, value: Any = _UNKNOWN) -> Span | None:
    """The array opening at ``at`` with its elements indexed (``text`` is the latin-1
    text of the bytes from ``offset``; ``value`` its parsed value if known), or None
    where the scanner refuses one.

    Messages sit in arrays: a lookup goes into one of their elements, so they are indexed
    when met rather than skipped and indexed again.  Each element is scanned on its own,
    so the values built at once stay the size of one message.
    """
    try:
        return _array(data, at, text, offset, value if isinstance(value, list) else None)
    except (StopIteration, ValueError, RecursionError, IndexError):
        return None


def _array(data: bytes, at: int, text: str, start: int, values: list[Any] | None) -> Span:
    laid = None if values is None else _serialized(data, at, values)
    if laid is not None:
        end, starts, ends = laid
        root = Span(at, ARRAY, end)
        root._items, root._laid = None, _Laid(data, starts, ends)
        return root
    root = Span(at, ARRAY)
    items = root._items
    assert items is not None
    pos = _space(text, at - start + 1)
    if text[pos] != "]":
        while True:
            head = text[pos]
            end = _SCAN(text, pos)[1]
            if head in "[{":
                items.append(Span(pos + start, ARRAY if head == "[" else OBJECT, end + start, data))
            else:
                items.append(Span(pos + start, SCALAR, end + start))
            pos = _space(text, end)
            if text[pos] != ",":
                break
            pos = _space(text, pos + 1)
    if text[pos] != "]":
        raise ValueError("no comma between values")
    root.end = pos + 1 + start
    return root


def _element(data: bytes, start: int, end: int) -> Span:
    head = data[start]
    if head in (0x5B, 0x7B):  # [ {
        return Span(start, ARRAY if head == 0x5B else OBJECT, end, data)
    return Span(start, SCALAR, end)


_SPACES = re.compile(b" *")


def _serialized(data: bytes, at: int, values: list[Any]) -> tuple[int, list[int], list[int]] | None:
    """The end of the array opening at ``at`` and where each element starts and ends,
    when its bytes are exactly ``values`` as JSON.stringify writes them (compact, or
    indented by two spaces; Python's json.dumps with ``ensure_ascii=False`` too); else
    None.

    Comparing bytes with a serialization costs a fraction of scanning them, and the
    offsets follow from lengths or separators without a Python step per element.
    Whatever the writer did otherwise (escapes, number forms, a key twice) is a
    mismatch, scanned.
    """
    if not values:
        return None
    try:
        if data[at + 1 : at + 2] == b"\n":
            return _indented(data, at, values)
        pieces = list(map(orjson.dumps, values))
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate, nesting too deep
        return None
    lengths = list(map(len, pieces))
    starts = list(accumulate(map((1).__add__, lengths[:-1]), initial=at + 1))  # after "[" or ","
    ends = list(map(int.__add__, starts, lengths))
    if not (
        data.startswith(b"[", at)
        and all(map(data.startswith, pieces, starts))
        and all(map(data.startswith, repeat(b","), ends[:-1]))
        and data.startswith(b"]", ends[-1])
    ):
        return None
    return ends[-1] + 1, starts, ends


def _indented(data: bytes, at: int, values: list[Any]) -> tuple[int, list[int], list[int]] | None:
    """:func:`_serialized` for an indented array: the whole list serialized at once (a call
    per element costs more than the bytes), its elements found at the separators.

    Strings hold no raw newline and nested lines are indented deeper, so a comma, a
    newline and exactly the elements' indentation separate two elements and nothing else.
    """
    spaces = _SPACES.match(data, at + 2)
    assert spaces is not None  # the pattern matches the empty string
    inner = b"\n" + spaces.group()  # the elements' indentation; the bracket's is 2 less
    whole = orjson.dumps(values, option=orjson.OPT_INDENT_2).replace(b"\n", inner[:-2])
    if not data.startswith(whole, at):
        return None
    cuts = [match.span() for match in re.finditer(re.escape(b"," + inner) + b"(?! )", whole)]
    if len(cuts) != len(values) - 1:
        return None
    starts = [at + 1 + len(inner), *(at + end for _, end in cuts)]
    ends = [*(at + start for start, _ in cuts), at + len(whole) - len(inner) + 1]
    return at + len(whole), starts, ends


def _skip(data: bytes, at: int, stop: int, start: int, text: list[str]) -> int:
    """The end of the container opening at ``at``, the text indexed being ``data[start:stop]``.

    The C scanner skips it (building values that are dropped: still several times faster
    than matching brackets in Python); what it refuses (nesting beyond the recursion
    limit, integers beyond ``int``'s digit limit) is walked bracket by bracket.
    """
    try:
        return _SCAN(_latin(data, start, stop, text), at - start)[1] + start
    except (StopIteration, ValueError, RecursionError, IndexError):
        pass
    depth = 0
    for match in re.compile(_BRACKET).finditer(data, at, stop):
        head = match.group()[0]
        if head in (0x7B, 0x5B):
            depth += 1
        elif head in (0x7D, 0x5D):
            depth -= 1
            if depth == 0:
                return match.end()
    raise ValueError("unbalanced JSON text")


def _space(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _decode_key(token: bytes) -> str:
    if b"\\" not in token:
        # "replace": a key with an invalid byte is named as Node reads it (U+FFFD).
        return token[1:-1].decode("utf-8", "replace")
    try:
        key = orjson.loads(token)
    except orjson.JSONDecodeError:  # a lone surrogate escape, or an invalid byte besides escapes
        key = json.loads(token.decode("utf-8", "replace"))
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
    pointer = ""
    for token in tokens:  # called for every element read: kept to plain concatenation
        if isinstance(token, int):
            pointer += "/" + str(token)
        elif "~" in token or "/" in token:
            pointer += "/" + token.replace("~", "~0").replace("/", "~1")
        else:
            pointer += "/" + token
    return pointer


class LineIndex:
    """Line numbers of many offsets in one text without recounting from the start."""

    def __init__(self, data: bytes) -> None:
        self._newlines = [m.start() for m in re.finditer(b"\n", data)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self._newlines, offset) + 1


class Locator:
    """The spans of a few pointers in one parsed document, each found without indexing the
    whole document: a finding's line costs what it locates, not a second parse.

    ``value`` must be the document's parsed value (orjson's, or the strict stdlib
    ``json``'s), the proof that ``data[start:]`` is one JSON text.  A lookup into a message
    list (``/k`` in a top-level array, ``/key/k`` in a top-level object) is proved from
    serializations (:func:`_in_root_array`, :func:`_in_member`).  Where the bytes are not
    what orjson writes (other whitespace, escapes, number forms, a key twice), for other
    pointers, and after ``FEW`` lookups (many findings in one file: one index serves
    them all) it resolves in the full :func:`index`, so every span is byte for byte the
    one the full index gives, errors included.
    """

    FEW = 4

    __slots__ = ("_lookups", "_root", "_whole", "data", "start", "value")

    def __init__(self, data: bytes, start: int = 0, value: Any = _UNKNOWN) -> None:
        self.data, self.start, self.value = data, start, value
        self._root: Span | None = None
        self._whole: int | None = None  # the length of orjson's indented text, once compared
        self._lookups = 0

    def root(self) -> Span:
        """The full index (built once)."""
        if self._root is None:
            self._root = index(self.data, self.start, value=self.value)
        return self._root

    def span(self, pointer: str) -> Span:
        if self._root is None and self._lookups < self.FEW:
            self._lookups += 1
            tokens = split(pointer)
            found = self._fast(tokens)
            if found is not None:
                start, end, taken, value, newline = found
                if taken < len(tokens):  # inside the element: from its serialization too
                    inside = _within(self.data, start, value, tokens[taken:], newline)
                    if inside is not None:
                        return inside
                span = _element(self.data, start, end)
                for token in tokens[taken:]:
                    span = span.child(token)
                return span
        return resolve(self.root(), pointer)

    def _fast(self, tokens: list[str]) -> tuple[int, int, int, Any, bytes | None] | None:
        """Where the message list element the pointer goes into starts and ends, how many
        tokens that took, its value, and the newline and indentation of its own lines
        (None: compact), its text being exactly orjson's of its value."""
        data, at, value = self.data, self.start, self.value
        if not tokens or value is _UNKNOWN:
            return None
        try:
            head = data[at]
            if head == 0x5B:  # [
                k = _position(tokens[0], value)
                found = None if k is None else _in_root_array(data, at, value, k)
                if found is None:
                    return None
                assert k is not None
                return *found, 1, value[k], _root_newline(data, at)
            if head == 0x7B and isinstance(value, dict) and len(tokens) > 1:  # {
                k = _position(tokens[1], value.get(tokens[0]))
                whole = None if k is None else self._canonical()
                if k is None or whole is None:
                    return None
                found = _in_member(data, at, value, tokens[0], k, whole)
                return None if found is None else (*found, 2, value[tokens[0]][k], _MEMBER_NEWLINE)
            return None
        except (TypeError, IndexError):  # orjson.JSONEncodeError: a lone surrogate, an integer beyond 64 bits
            return None

    def _canonical(self) -> int | None:
        """The document's length when it is exactly orjson's two-space indented text of its
        value (then it holds no key twice, and every offset follows from serializations)."""
        if self._whole is None:
            self._whole = -1
            whole = orjson.dumps(self.value, option=orjson.OPT_INDENT_2)  # TypeError: see _fast
            self._whole = len(whole) if self.data.startswith(whole, self.start) else -1
        return self._whole if self._whole >= 0 else None


def _root_newline(data: bytes, at: int) -> bytes | None:
    """The newline and indentation of a top-level array's elements (None: compact), as
    :func:`_in_root_array` proved them."""
    if data[at + 1 : at + 2] != b"\n":
        return None
    spaces = _SPACES.match(data, at + 2)
    assert spaces is not None  # the pattern matches the empty string
    return b"\n" + spaces.group()


_MEMBER_NEWLINE = b"\n    "  # a top-level member list's elements, in an indented document


def _length(value: Any, newline: bytes | None) -> int:
    """The length of ``value``'s text as orjson writes it, compact (``newline`` None) or
    indented by two spaces with its lines after the first starting with ``newline``."""
    if newline is None:
        return len(orjson.dumps(value))
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    return len(text) + text.count(b"\n") * (len(newline) - 1)


def _within(data: bytes, at: int, value: Any, tokens: list[str], newline: bytes | None) -> Span | None:
    """The span at ``tokens`` inside the value at ``at`` whose text is exactly orjson's
    text of ``value`` (compact, or indented with ``newline`` before its closing bracket),
    from the lengths of the serialized members and elements before it: no scan of the
    text.  None where a token names no member or element of a container (the full index
    then gives the span, or its error).

    Each member or element of a container follows its ``{``, ``[`` or ``,`` after a
    newline and two more spaces than the container's (nothing, compact); a key is
    followed by ``": "`` (``":"``)."""
    key_start = -1
    try:
        for token in tokens:
            inner = None if newline is None else newline + b"  "
            lead = 0 if inner is None else len(inner)
            colon = 1 if inner is None else 2
            pos = at + 1  # after the bracket
            if value.__class__ is dict:
                for key, member in value.items():
                    name = len(orjson.dumps(key))
                    if key == token:
                        key_start = pos + lead
                        at = key_start + name + colon
                        value = member
                        break
                    pos += lead + name + colon + _length(member, inner) + 1
                else:
                    return None
            elif value.__class__ is list:
                if not (token.isascii() and token.isdigit()) or int(token) >= len(value):
                    return None
                k = int(token)
                for element in value[:k]:
                    pos += lead + _length(element, inner) + 1
                at, key_start, value = pos + lead, -1, value[k]
            else:
                return None
            newline = inner
        span = _element(data, at, at + _length(value, newline))
    except TypeError:  # orjson.JSONEncodeError (see Locator._fast)
        return None
    span.key_start = key_start
    return span


def line_span(data: bytes, start: int, end: int, pointer: str) -> Span:
    """``resolve(index(data, start, end), pointer)`` for a JSONL line: where the line is
    exactly orjson's compact text of its value (JSON.stringify's, as most vendors write
    their lines), from serializations (:func:`_within`), with no scan of its text."""
    raw = data[start:end]
    try:
        value = orjson.loads(raw)
        canonical = orjson.dumps(value) == raw
    except (orjson.JSONDecodeError, TypeError):  # (TypeError: orjson.JSONEncodeError)
        canonical = False
    if canonical:
        found = _within(data, start, value, split(pointer), None)
        if found is not None:
            return found
    return resolve(index(data, start, end), pointer)


def locate(data: bytes, pointer: str, start: int = 0, value: Any = _UNKNOWN) -> Span:
    """``resolve(index(data, start, value=value), pointer)``, without indexing the whole
    document where it can (see :class:`Locator`)."""
    return Locator(data, start, value).span(pointer)


def _position(token: str, values: Any) -> int | None:
    """The element a pointer token names in ``values`` (a list), or None (left to the full
    index, with its errors: a negative or absent position, not a number)."""
    if isinstance(values, list) and token.isascii() and token.isdigit() and int(token) < len(values):
        return int(token)
    return None


def _dump(value: Any, newline: bytes) -> bytes:
    """``value`` as orjson writes it indented by two spaces, its lines after the first
    starting with ``newline`` (a newline and the value's own indentation)."""
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    return text if newline == b"\n" else text.replace(b"\n", newline)


def _in_root_array(data: bytes, at: int, values: list[Any], k: int) -> tuple[int, int] | None:
    """Where element ``k`` of the top-level array opening at ``at`` starts and ends.

    Proved from the bytes before it (the serialization of the elements before it, then
    its own), or, from the end when that is shorter, from the bytes after a comma and a
    newline: a newline is never inside a string, so that comma separates two elements of
    the array the document's end closes, this one.  Compact arrays are proved from the
    start.
    """
    if data[at + 1 : at + 2] == b"\n":
        spaces = _SPACES.match(data, at + 2)
        assert spaces is not None  # the pattern matches the empty string
        inner = b"\n" + spaces.group()  # the elements' indentation; the bracket's is 2 less
        if len(inner) < 3:
            return None
        outer = inner[:-2]
        if k > len(values) // 2:
            return _from_end(data, at, values, k, inner)
        prefix = _dump(values[:k], outer)[: -len(outer) - 1] + b"," + inner if k else b"[" + inner
        piece = _dump(values[k], inner)
        after = b"," + inner if k < len(values) - 1 else outer + b"]"
    else:
        prefix = orjson.dumps(values[:k])[:-1] + b"," if k else b"["
        piece = orjson.dumps(values[k])
        after = b"," if k < len(values) - 1 else b"]"
    pos = at + len(prefix)
    end = pos + len(piece)
    if data.startswith(prefix, at) and data.startswith(piece, pos) and data.startswith(after, end):
        return pos, end
    return None


def _from_end(data: bytes, at: int, values: list[Any], k: int, inner: bytes) -> tuple[int, int] | None:
    stop = len(data)
    while stop > at and data[stop - 1] in b" \t\r\n":
        stop -= 1
    body = _dump(values[k:], inner[:-2])[1:]  # from the newline before element k to the "]"
    begin = stop - len(body)
    if begin <= at or data[begin - 1] != 0x2C or not data.startswith(body, begin):  # ,
        return None
    pos = begin + len(inner)
    return pos, pos + len(_dump(values[k], inner))


def _in_member(
    data: bytes, at: int, value: dict[str, Any], key: str, k: int, whole: int
) -> tuple[int, int] | None:
    """Where element ``k`` of the top-level member ``key`` (a list) starts and ends, in a
    document that is exactly orjson's indented text of its value, ``whole`` bytes long:
    from the length of the serialized text before the element, or after it when shorter."""
    values = value[key]
    inner = b"\n    "
    members: dict[str, Any] = {}
    if k <= len(values) // 2:
        for name, member in value.items():
            members[name] = values[:k] if name == key else member
            if name == key:
                break
        before = orjson.dumps(members, option=orjson.OPT_INDENT_2)
        # it ends "[]\n}" (k is 0) or "...last\n  ]\n}": element k follows the "[" or a ","
        pos = at + len(before) - (len(b"]\n}") if k == 0 else len(b"\n  ]\n}") - 1) + len(inner)
    else:
        for name, member in value.items():
            if name == key:
                members[name] = values[k:]
            elif members:
                members[name] = member
        after = orjson.dumps(members, option=orjson.OPT_INDENT_2)
        lead = len(b"{\n  " + orjson.dumps(key) + b": [" + inner)
        pos = at + whole - (len(after) - lead)
    return pos, pos + len(_dump(values[k], inner))
