"""Byte-faithful access to one input file: its container, its records and their spans.

Everything downstream addresses the file through this module: JSONL records are byte
ranges of lines, a single JSON document is one value.  Nothing here decodes more than it
must, so untouched bytes can be copied verbatim by a fix and a 50 MB line costs one parse.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import orjson

from transcript_doctor.plain import Value

if TYPE_CHECKING:
    from transcript_doctor.jsonspan import LineIndex, Locator, Span

BOM = b"\xef\xbb\xbf"
JSONL_SUFFIXES = (".jsonl", ".ndjson")
TEXT_SUFFIXES = (".json", *JSONL_SUFFIXES)  # never an SQLite database (dbsource.py)
HEAD_RECORDS = 20
FEW_LOOKUPS = 16  # line numbers counted from the start before indexing every newline
# JSON.parse in the vendors' own readers rejects a BOM: the first record is unreadable there.
BOM_MESSAGE = "UTF-8 byte order mark before the first record (JSON.parse rejects it)"
_WHITESPACE = b" \t\r\f\v"
_BLANK = _WHITESPACE + b"\n"  # what may follow the last record line
_SPLIT_AHEAD = 1 << 16  # below this size, the head splits every line at once (readers need them)
# Patterns of paths rarely taken (damage, odd files): compiled on first use (start-up).
_JSONL_START = rb"\n[ \t\r]*[\[{]"


class Container(str, Enum):
    JSON = "json"  # one JSON document
    JSONL = "jsonl"  # one JSON value per line


class Line(NamedTuple):
    """A non-blank JSONL line: ``start``/``end`` exclude the terminator (``\\n`` or ``\\r\\n``).

    A tuple, not a dataclass: files have hundreds of thousands of lines and this is built
    for every one of them before any rule runs.
    """

    # Shadows tuple.index on purpose: readers name it like every other record index.
    index: int  # type: ignore[assignment]  # 0-based record index among non-blank lines
    number: int  # 1-based line number in the file
    start: int
    end: int


class ParseError(Value):
    """A record that does not parse (TD001).

    ``repair`` says what a fix may do: ``"drop"`` a torn final line, ``"split"`` a torn
    stub glued to a complete record (``keep_from`` is the byte offset in the line where
    that record starts), ``"rejoin"`` the lines ``record`` to ``through`` of one record torn
    across them by raw newlines inside a string (a reader found it: :meth:`Source.rejoin`),
    or ``None`` when nothing can be done without guessing.
    """

    __slots__ = ("keep_from", "kinds", "line", "message", "record", "repair", "through")
    line: Final[int]
    record: Final[int]
    message: Final[str]
    repair: Final[str | None]
    keep_from: Final[int]
    # What is wrong, in words a Loader can accept (see Loader): a record some vendors' own
    # parsers read is not unparseable for those vendors.
    kinds: Final[frozenset[str]]
    through: Final[int]  # "rejoin": the record index of the last piece

    def __init__(
        self,
        line: int,
        record: int,
        message: str,
        repair: str | None = None,
        keep_from: int = 0,
        kinds: frozenset[str] = frozenset({"syntax"}),
        through: int = -1,
    ) -> None:
        self.line = line
        self.record = record
        self.message = message
        self.repair = repair
        self.keep_from = keep_from
        self.kinds = kinds
        self.through = through


REJOIN = "rejoin"

# ParseError kinds.  Only the last four name something a lenient parser reads.
SYNTAX, NUL, DEPTH, BOM_KIND, NOT_OBJECT = "syntax", "nul", "depth", "bom", "not-object"
UTF8, SURROGATE, RANGE, NAN = "utf8", "surrogate", "range", "nan"
# A raw control character inside a string: Python's json.loads(strict=False) reads it.
CONTROL = "control"
CONTROL_MESSAGE = "a raw control character inside a string (JSON requires an escape)"


class Loader(Value):
    """How a vendor's own program turns a stored record into a value.

    orjson is this tool's parser and the arbiter of what parses (conventions.md 7.2), but
    a record the vendor's loader reads is not missing for that vendor: a lone surrogate
    escape or ``1e400`` that JSON.parse takes is no damage at all in a Node vendor's file
    (``accepts``: such TD001 errors are not reported), and a record with an invalid UTF-8
    byte is read by Node with U+FFFD in its place (``replaces_invalid_utf8``: the record
    keeps its place in the conversation and is still reported, its bytes being damaged).
    Each reader names its vendor's loader (``Reader.loader``).
    """

    __slots__ = ("accepts", "name", "replaces_invalid_utf8")
    name: Final[str]
    accepts: Final[frozenset[str]]
    replaces_invalid_utf8: Final[bool]

    def __init__(
        self, name: str, accepts: frozenset[str] = frozenset(), replaces_invalid_utf8: bool = False
    ) -> None:
        self.name = name
        self.accepts = accepts
        self.replaces_invalid_utf8 = replaces_invalid_utf8


# orjson, and the loaders as strict as it: serde_json (Codex reads a rollout with
# read_to_string, which fails on invalid UTF-8, then serde_json, which rejects lone
# surrogates and numbers beyond f64), and the APIs generic message lists are sent to.
STRICT = Loader("orjson")
# Node: readline or readFile decode UTF-8 replacing invalid bytes with U+FFFD, and
# JSON.parse keeps lone surrogates in its UTF-16 strings and reads 1e400 as Infinity;
# it rejects NaN/Infinity literals.
NODE = Loader("JSON.parse", frozenset({SURROGATE, RANGE}), replaces_invalid_utf8=True)
# Claude Code: JSON.parse reads a lone surrogate, but the session is then sent to the
# Anthropic API, whose parser rejects it ("no low surrogate in string": the session cannot
# be resumed, anthropics/claude-code#56064, #3277): still reported there.
NODE_TO_ANTHROPIC = Loader("JSON.parse", frozenset({RANGE}), replaces_invalid_utf8=True)
# Python: json.loads takes lone surrogates, NaN, Infinity and 1e400; the file is read with
# read_text(encoding="utf-8"), which fails on invalid UTF-8 (openworker's store).
PYTHON = Loader("json.loads", frozenset({SURROGATE, RANGE, NAN}))


def load_any(raw: bytes) -> Any:
    """A record's value, also where orjson refuses what a vendor did write (a lone
    surrogate escape from JSON.stringify, NaN from Python): stdlib json takes those."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def fingerprint(value: Any) -> bytes:
    """Bytes that are equal exactly when two parsed values are (lone surrogates too)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=True).encode()


class NotJson(Exception):
    """The bytes are not JSON text at all: not a transcript."""


def diagnose(
    raw: bytes, replace_utf8: bool = False, controls: bool = False
) -> tuple[frozenset[str], str, Any]:
    """Explain why ``raw`` failed orjson: its kinds, a message, and stdlib ``json``'s value.

    orjson is strict where stdlib is lenient (lone surrogates, NaN, numbers beyond a
    double): those records are still findings for a strict loader, but their value can be
    analysed.  The value is ``None`` when the bytes are not JSON at all; with
    ``replace_utf8`` (a loader that reads invalid UTF-8 as U+FFFD) such a record has one,
    and with ``controls`` (a loader that reads raw control characters inside strings) so
    does a record that holds them.
    """
    if controls:
        lenient = _with_controls(raw)
        if lenient is not None:
            return lenient
    if b"\x00" in raw:
        return frozenset({NUL}), "NUL bytes in the record (the file was damaged by a crash)", None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"invalid UTF-8 at byte {exc.start} of the record"
        if not replace_utf8:
            return frozenset({UTF8}), message, None
        try:
            value = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return frozenset({UTF8}), message, None
        return frozenset({UTF8}), f"{message} (the vendor reads U+FFFD in its place)", value
    try:
        value = json.loads(text)
    except RecursionError:
        return frozenset({DEPTH}), "JSON nested too deeply to parse", None
    except ValueError as exc:
        return frozenset({SYNTAX}), f"invalid JSON: {_json_error(exc)}", None
    return (*_unrepresentable(text, value), value)


def _with_controls(raw: bytes) -> tuple[frozenset[str], str, Any] | None:
    """The diagnosis of a record that only ``json.loads(strict=False)`` reads (raw control
    characters inside strings), or None when that is not what is wrong with it."""
    try:
        text = raw.decode("utf-8")
        value = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return None
    try:
        json.loads(text)
    except ValueError:
        kinds, message = _unrepresentable(text, value)
        if kinds == {SYNTAX}:
            return frozenset({CONTROL}), CONTROL_MESSAGE, value
        return kinds | {CONTROL}, f"{message}; {CONTROL_MESSAGE}", value
    except RecursionError:
        return None
    return None  # strict stdlib reads it too: the usual diagnosis says what it is


_INFINITY = r"(?<![\w\".])-?Infinity(?![\w\"])"
_STRINGS = r'"(?:[^"\\]|\\.)*"'  # JSON strings, to look between them


def _unrepresentable(text: str, value: Any) -> tuple[frozenset[str], str]:
    """What in a value stdlib read makes orjson refuse it, found in the value itself."""
    surrogate: str | None = None
    nan = infinite = False
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if surrogate is None:
                found = re.search(_SURROGATE, item)
                surrogate = found.group() if found else None
        elif isinstance(item, float):
            nan = nan or item != item
            infinite = infinite or item in (math.inf, -math.inf)
        elif isinstance(item, int) and abs(item) > _DOUBLE_MAX:  # an integer literal past a double
            infinite = True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    kinds: set[str] = set()
    causes: list[str] = []
    if nan or (infinite and re.search(_INFINITY, re.sub(_STRINGS, '""', text))):
        kinds.add(NAN)
        causes.append("NaN or Infinity, which JSON does not allow")
    elif infinite:
        kinds.add(RANGE)
        causes.append("a number beyond the range of a double")
    if surrogate is not None:
        kinds.add(SURROGATE)
        causes.append(f"a lone surrogate escape (\\u{ord(surrogate):04x}), which is not valid Unicode")
    if not causes:  # not met: stdlib fails first on nesting orjson refuses
        return frozenset({SYNTAX}), "JSON that orjson cannot read"
    return frozenset(kinds), "; ".join(causes)


_SURROGATE = "[\ud800-\udfff]"
_DOUBLE_MAX = sys.float_info.max


def _json_error(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        # Some messages already end in "at" ("Unterminated string starting at").
        joint = " column" if exc.msg.endswith(" at") else " at column"
        return f"{exc.msg}{joint} {exc.colno}"
    return str(exc)


class Source:
    """One file's bytes, split into records.

    ``path`` is the name to report (as given or found by the walk).  For JSONL,
    :meth:`record` parses a line on demand; the first few parsed lines are cached for
    detection so the reader that claims the file does not parse them twice.
    """

    # What most files never set: class defaults, not a store each per file (one is made
    # per file linted; the instance takes its own value when one is set).
    loader: Loader = STRICT  # the reader that claims the file names its vendor's
    _lines: list[Line] | None = None
    _head: tuple[int, list[Any]] | None = None
    _value: Any = None
    _parsed = False
    _locator: Locator | None = None
    _lines_index: LineIndex | None = None
    _lookups = 0
    _counted = (0, 1)  # the last offset whose line was counted, and that line

    def __init__(self, path: str, data: bytes, container: Container) -> None:
        self.path = path
        self.data = data
        self.container = container
        self.bom = data.startswith(BOM)
        self._errors: list[ParseError] = []
        self._cache: dict[int, Any] = {}
        self._pieces: set[int] = set()  # records rejoined into one (Source.rejoin)
        self._torn: set[int] = set()  # lines whose bytes are not one value the loader reads
        # What a typed fast path decoded of the file, by decoder (readers/typed_lines.py):
        # detection decodes it once and the reader's proof takes it.
        self.typed: dict[object, Any] = {}

    @property
    def errors(self) -> list[ParseError]:
        """The TD001 errors for this file's vendor: what its loader reads is left out."""
        accepts = self.loader.accepts
        if not accepts:
            return list(self._errors)
        return [e for e in self._errors if not e.kinds <= accepts]

    # -- JSONL ---------------------------------------------------------------------

    @property
    def lines(self) -> list[Line]:
        if self._lines is None:
            self._lines = list(_split_lines(self.data))
        return self._lines

    def line_bytes(self, line: Line) -> bytes:
        return self.data[line.start : line.end]

    def record(self, line: Line) -> Any:
        """The parsed record object of a JSONL line, or ``None`` after recording a TD001
        error (a line that does not parse, or a value that is not an object)."""
        if line.index == 0 and self.bom:
            self.report(ParseError(line.number, 0, BOM_MESSAGE, kinds=frozenset({BOM_KIND})))
        if line.index in self._cache:
            value = self._cache.pop(line.index)
        else:
            start = line.start + (3 if line.index == 0 and self.bom else 0)
            try:
                value = orjson.loads(self.data[start : line.end])  # a bytes slice parses faster than a view
            except orjson.JSONDecodeError:
                return self._bad_line(line)
        if value.__class__ is not dict:
            self._not_object(line, value)
            return None
        return value

    def records(self, lines: list[Line] | None = None) -> Iterator[tuple[Line, Any]]:
        """Each line (of ``lines``, by default all) with :meth:`record`'s value: what a
        reader streaming the file loops over, without a method call per line."""
        loads, data, record, cache = orjson.loads, self.data, self.record, self._cache
        for line in self.lines if lines is None else lines:
            if line.index in cache or (self.bom and line.index == 0):  # parsed for detection
                yield line, record(line)
                continue
            try:
                value = loads(data[line.start : line.end])
            except orjson.JSONDecodeError:
                value = self._bad_line(line)
            else:
                if value.__class__ is not dict:
                    self._not_object(line, value)
                    value = None
            yield line, value

    def head(self, count: int = HEAD_RECORDS) -> list[Any]:
        """The first JSONL records that parse (for detection); cached for :meth:`record`.

        Only objects count: a ``null``, number or array line is no vendor's record (a
        TD001 when the file is read), and one among the first lines must not hide the
        layout of all the others.
        """
        if self._head is not None and self._head[0] == count:
            return list(self._head[1])
        found: list[Any] = []
        # Detection reads a few lines: a large file is split only when a reader reads it.
        split = self._lines is not None or len(self.data) < _SPLIT_AHEAD
        for line in self.lines if split else _first_lines(self.data):
            if len(found) >= count:
                break
            parsed, value = self._parse(line)
            if not parsed:
                value = _read_as_node(self.line_bytes(line))  # an invalid byte hides no layout
            if value.__class__ is dict:
                found.append(value)
        self._head = (count, found)  # every reader detects on the same head: parse it once
        return found

    def peek(self, line: Line) -> Any:
        """A line's value, or None if it does not parse (diagnosed when it is read);
        cached for :meth:`record`."""
        return self._parse(line)[1]

    def _parse(self, line: Line) -> tuple[bool, Any]:
        start = line.start + (3 if line.index == 0 and self.bom else 0)
        try:
            value = orjson.loads(self.data[start : line.end])
        except orjson.JSONDecodeError:
            return False, None
        self._cache[line.index] = value
        return True, value

    def _is_last(self, line: Line) -> bool:
        """Whether no record line follows ``line`` (``len(self.lines) - 1 == line.index``)
        without splitting the whole file: only blank lines (whitespace, a blank is ASCII
        whitespace between newlines, as ``_split_lines`` reads it) may follow it."""
        data, end = self.data, len(self.data)
        while end > line.end and data[end - 1] in _BLANK:
            end -= 1
        return end == line.end

    def _bad_line(self, line: Line) -> Any:
        raw = self.line_bytes(line)
        if line.index == 0 and self.bom:
            raw = raw[3:]
        kinds, message, value = diagnose(
            raw, self.loader.replaces_invalid_utf8, CONTROL in self.loader.accepts
        )
        repair: str | None = None
        keep_from = 0
        if value is None:
            self._torn.add(line.index)
            keep_from = _glued_record_start(raw)
            if keep_from:
                repair = "split"
                message = "a torn record glued to the next one on one line"
                value = orjson.loads(raw[keep_from:])
                if line.index == 0 and self.bom:
                    keep_from += 3
            elif self._is_last(line) and _cut_short(raw):
                repair = "drop"
                message = f"torn final line ({message})"
        if value is not None and value.__class__ is not dict:
            self._not_object(line, value)  # what it is matters more than how it is spelt
            return None
        self.report(ParseError(line.number, line.index, message, repair, keep_from, kinds))
        return value

    def torn(self, index: int) -> bool:
        """Whether the line's own bytes are no value its vendor's loader reads (a torn,
        glued or rejoined line): nothing may be edited inside it."""
        return index in self._torn or index in self._pieces

    def rejoin(self, first: Line, last: Line, message: str) -> None:
        """Report the lines ``first`` to ``last`` as one record torn across them by raw
        newlines inside a string, which the reader that claims the file found to rejoin to
        exactly one record of its layout: one TD001 error, repaired by rejoining, in place
        of each piece's own."""
        pieces = range(first.index, last.index + 1)
        self._pieces.update(pieces)
        self._errors = [e for e in self._errors if e.record not in pieces]
        self.report(ParseError(first.number, first.index, message, REJOIN, through=last.index))

    def reject(self, line: Line, message: str) -> None:
        """Report a line that parses here but that the vendor's own loader cannot read
        (TD001, nothing to repair); the reader leaves it out as the vendor does."""
        self.report(ParseError(line.number, line.index, message))

    def _not_object(self, line: Line, value: Any) -> None:
        """A line whose value is not an object: no vendor reads it as a record (Qwen Code
        skips it, Gemini CLI finds no id in it)."""
        what = "null" if value is None else _JSON_TYPE.get(type(value), "value")
        message = f"a JSON {what} where a record object belongs"
        self.report(ParseError(line.number, line.index, message, kinds=frozenset({NOT_OBJECT})))

    def report(self, error: ParseError) -> None:
        """Record a TD001 error once, however often a reader reads the record (a reader
        reports through it what its vendor's loader rejects in a file that parses)."""
        if error.record in self._pieces and error.repair != REJOIN:
            return  # a piece of a rejoined record, read again
        if error not in self._errors:
            self._errors.append(error)

    # -- single JSON document --------------------------------------------------------

    def adopt(self, value: Any) -> None:
        """Take the document's value from whoever already parsed it (BOM still reported)."""
        self._parsed = True
        self._value = value
        if self.bom:
            self.report(ParseError(1, 0, BOM_MESSAGE, kinds=frozenset({BOM_KIND})))

    def spans(self) -> Span:
        """Byte spans of the document's values, indexed on first use (fixes, line numbers)."""
        return self.locator().root()

    def locator(self) -> Locator:
        """Spans of a few pointers without indexing the whole document (a finding's line)."""
        if self._locator is None:
            import transcript_doctor.jsonspan as jsonspan

            self._locator = jsonspan.Locator(self.data, 3 if self.bom else 0, self.value)
        return self._locator

    def line_at(self, pointer: str) -> int:
        """The line where the value at ``pointer`` starts (single-document files)."""
        if b"\n" not in self.data:
            return 1  # one-line documents (Cline, NeuroLink): no index needed
        offset = self.locator().span(pointer).start
        if self._lines_index is None:
            self._lookups += 1
            if self._lookups <= FEW_LOOKUPS:  # a few findings: counting beats indexing every line
                return self._count_to(offset)
            from transcript_doctor.jsonspan import LineIndex

            self._lines_index = LineIndex(self.data)
        return self._lines_index.line_of(offset)

    def _count_to(self, offset: int) -> int:
        """The line of ``offset``, counted from the last offset asked (forwards or back)
        rather than from the start: a file's findings are looked up near one another."""
        last, line = self._counted
        if offset >= last:
            line += self.data.count(b"\n", last, offset)
        else:
            line -= self.data.count(b"\n", offset, last)
        self._counted = (offset, line)
        return line

    @property
    def value(self) -> Any:
        """The parsed document (``None`` after recording a TD001 error)."""
        if not self._parsed:
            self._parsed = True
            body = self.data[3:] if self.bom else self.data
            if self.bom:
                self.report(ParseError(1, 0, BOM_MESSAGE, kinds=frozenset({BOM_KIND})))
            try:
                self._value = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                # Strict about UTF-8: the document is parsed before a reader (and so its
                # vendor's loader) is known.
                kinds, message, self._value = diagnose(body)
                line = _line_of(self.data, getattr(exc, "pos", 0) or 0)
                self.report(ParseError(line, 0, message, kinds=kinds))
        return self._value


def _read_as_node(raw: bytes) -> Any:
    """A line's value as Node reads it (U+FFFD for invalid UTF-8), or None: for detection
    only, never cached (a strict vendor's reader must not get it)."""
    if raw.isascii() or b"\x00" in raw:
        return None  # no invalid UTF-8 in it: orjson's error was about something else
    try:
        return json.loads(raw.removeprefix(BOM).decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None


_JSON_TYPE = {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}


def _split_lines(data: bytes) -> list[Line]:
    lines: list[Line] = []
    append = lines.append
    find = data.find
    new = tuple.__new__  # NamedTuple's own __new__ is a Python function: one call per line saved
    pos = 0
    number = 0
    size = len(data)
    while pos < size:
        number += 1
        nl = find(b"\n", pos)
        end = size if nl < 0 else nl
        stop = end - 1 if end > pos and data[end - 1] == 0x0D else end
        # Only a line that starts with whitespace can be blank: check those by stripping.
        if stop > pos and (data[pos] not in _WHITESPACE or data[pos:stop].strip()):
            append(new(Line, (len(lines), number, pos, stop)))
        pos = end + 1
    return lines


def _first_lines(data: bytes) -> Iterator[Line]:
    """The lines of ``_split_lines``, one at a time (for a head of a large file)."""
    pos = 0
    number = 0
    index = 0
    size = len(data)
    while pos < size:
        number += 1
        nl = data.find(b"\n", pos)
        end = size if nl < 0 else nl
        stop = end - 1 if end > pos and data[end - 1] == 0x0D else end
        if stop > pos and (data[pos] not in _WHITESPACE or data[pos:stop].strip()):
            yield Line(index, number, pos, stop)
            index += 1
        pos = end + 1


def _cut_short(raw: bytes) -> bool:
    """Whether a record is the beginning of one, as a write cut off by a crash leaves it.

    Only such a record is safe to drop: the bytes after it never reached the disk.  A
    record that is wrong in its middle (a splice, a flipped byte) is not a torn write,
    and dropping it would be a guess.
    """
    body = raw.rstrip(b"\0")
    if len(body) < len(raw):  # zeros where the rest should be: the ext4 crash pattern
        return b"\0" not in body and (not body.strip() or _cut_short(body))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(body) - 3 and _cut_short(body[: exc.start])
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
    except (ValueError, RecursionError):
        return False
    return False


def _glued_record_start(raw: bytes) -> int:
    """Offset of a complete JSON object that follows a torn stub on the same line, or 0.

    Writers that append records with separate writes can leave a stub without its
    newline (``{"type":"pr-link","prNu{"parentUuid":…}``); the record after it is whole.

    One pass from the end: in JSON text a quote delimits a string exactly when an even
    number of backslashes precede it, so the line's last ``}`` can be matched with its
    ``{`` walking backwards without knowing where the stub's strings end.  Only that
    ``{`` can start an object running to the end of the line: one parse checks it.
    (Trying each ``{"`` by parsing what follows cost a parse per candidate: quadratic.)
    A line that is as a whole a record cut short ends in a whole inner object, which is
    no record of its own: that is a torn line, not a glued one.
    """
    body = raw.rstrip(b" \t\r")
    if not raw.startswith(b"{") or not body.endswith(b"}") or raw.find(b'{"', 1) < 0:
        return 0
    reverse = body[::-1]
    depth = 0
    start = -1
    for token in re.finditer(_TOKENS_BACKWARDS, reverse):
        char = reverse[token.start()]
        if char == 0x22:  # a whole string, read backwards
            continue
        if char in b"}]":
            depth += 1
            continue
        depth -= 1
        if depth == 0:
            start = len(body) - 1 - token.start()
            break
        if depth < 0:
            return 0
    if start <= 0 or not body.startswith(b'{"', start):
        return 0
    try:
        if not isinstance(orjson.loads(body[start:]), dict):
            return 0
    except orjson.JSONDecodeError:
        return 0
    return 0 if _cut_short(raw) else start


# Reversed text: a whole JSON string, or a bracket.  Reversed, the backslashes that escape
# a quote follow it: a quote followed by an even run (none included) delimits a string, an
# odd run makes it part of one.  The lookahead-and-backreference pairs match runs
# atomically (no backtracking into them; Python 3.10 has no possessive quantifiers).
_TOKENS_BACKWARDS = rb'"(?=((?:\\\\)*))\1(?!\\)(?:(?=([^"]+))\2|"\\(?=((?:\\\\)*))\3(?!\\))*"|[{}\[\]]'


UTF8_PIECE = 1 << 16  # bytes of whole lines checked as UTF-8 at a time


def valid_utf8(data: bytes, ascii_first: bool = True) -> bool:
    """Whether the text is UTF-8, for the typed fast paths: msgspec does not check the
    bytes of fields it skips, and orjson (TD001) does.

    Checked in pieces of whole lines (a newline ends every sequence): one decode of it all
    would hold the text widened to its widest character (an emoji: four bytes each) and
    cost twice as much.  ``ascii_first``: an ASCII text is told in one pass first (a
    large session is seldom ASCII: that pass would only add to it)."""
    if ascii_first and data.isascii():
        return True
    view, find, start, size = memoryview(data), data.find, 0, len(data)
    try:
        while start < size:
            end = find(b"\n", start + UTF8_PIECE)
            end = size if end < 0 else end
            str(view[start:end], "utf-8")
            start = end + 1
    except UnicodeDecodeError:
        return False
    return True


def _line_of(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def sniff(path: str, data: bytes) -> Source:
    """Decide whether ``data`` is one JSON document or JSONL, or raise :class:`NotJson`.

    The suffix decides first (``.jsonl``/``.ndjson`` are lines); otherwise a text that
    parses as one value is a document, and a text whose first line parses is JSONL.
    """
    body = data[3:] if data.startswith(BOM) else data
    first = body.lstrip()[:1]
    lower = path.lower()
    if lower.endswith(JSONL_SUFFIXES):
        if first not in (b"{", b"[") and not re.compile(_JSONL_START).search(body, 0, 65536):
            raise NotJson("no line starts a JSON object or array")
        return Source(path, data, Container.JSONL)
    if first not in (b"{", b"["):
        raise NotJson("does not start with a JSON object or array")
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        nl = body.find(b"\n")
        if nl > 0 and body[nl + 1 :].strip():
            try:
                orjson.loads(body[:nl])
            except orjson.JSONDecodeError:
                pass
            else:
                return Source(path, data, Container.JSONL)
        return Source(path, data, Container.JSON)
    source = Source(path, data, Container.JSON)
    source.adopt(value)  # parsed once: a large document costs as much as all the rules
    return source
