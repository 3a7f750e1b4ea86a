"""Minimal byte edits on JSON texts and JSONL files, in the file's own style.

A fix never re-serialises a file.  Readers express repairs as operations on records and
values (remove this element, insert that one after it, strip this string); the editors
here turn them into splices of the original bytes, so every byte no operation names is
copied verbatim: untouched lines, indentation, key order, escapes, number spelling.

New values are serialised like their neighbours: compact or indented as the sibling they
join, with the sibling's separators and the file's escaping.  Every splice is logged with
the bytes it removed, which is what makes a fix report reversible.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, Final

from transcript_doctor import jsonspan
from transcript_doctor.jsonspan import Span
from transcript_doctor.plain import Mutable, Value
from transcript_doctor.source import Line, Source

SAMPLE = 16384
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_ESCAPE_UNIT = re.compile(r"\\u[0-9a-fA-F]{4}|\\.|[^\\]", re.DOTALL)


class EditError(Exception):
    """An edit that cannot be made without guessing (the fix is then not applied)."""


class Splice(Value):
    """Replace ``data[start:end]`` with ``new``."""

    __slots__ = ("end", "new", "start")
    start: Final[int]
    end: Final[int]
    new: Final[bytes]

    def __init__(self, start: int, end: int, new: bytes) -> None:
        self.start = start
        self.end = end
        self.new = new


def splice(data: bytes, splices: list[Splice]) -> bytes:
    """Apply non-overlapping splices (in any order) to ``data``."""
    out: list[bytes] = []
    pos = 0
    for item in sorted(splices, key=lambda s: (s.start, s.end)):
        if item.start < pos:
            raise EditError("overlapping edits")
        out.append(data[pos : item.start])
        out.append(item.new)
        pos = item.end
    out.append(data[pos:])
    return b"".join(out)


# -- style -------------------------------------------------------------------------


class Style(Value):
    """How a new value is written so that it looks like the values around it."""

    __slots__ = ("ensure_ascii", "indent", "item_sep", "key_sep", "newline")
    item_sep: Final[bytes]  # between items of a one-line container
    key_sep: Final[bytes]
    indent: Final[bytes | None]  # one indent unit, when siblings span several lines
    newline: Final[bytes]
    ensure_ascii: Final[bool]

    def __init__(
        self,
        item_sep: bytes = b",",
        key_sep: bytes = b":",
        indent: bytes | None = None,
        newline: bytes = b"\n",
        ensure_ascii: bool = False,
    ) -> None:
        self.item_sep = item_sep
        self.key_sep = key_sep
        self.indent = indent
        self.newline = newline
        self.ensure_ascii = ensure_ascii

    def dumps(self, value: Any, depth: int = 0) -> bytes:
        """``value`` serialised for a position ``depth`` levels deep."""
        indent = None if self.indent is None else self.indent.decode()
        separators = (self.item_sep.decode() if indent is None else ",", self.key_sep.decode())
        text = json.dumps(value, ensure_ascii=self.ensure_ascii, indent=indent, separators=separators)
        try:
            raw = text.encode()
        except UnicodeEncodeError:
            # A lone surrogate copied from a damaged record has no UTF-8 form: escape it,
            # as JSON.stringify does, rather than fail the repair.
            raw = json.dumps(value, ensure_ascii=True, indent=indent, separators=separators).encode()
        return raw if self.indent is None else reindent(raw, self.indent * depth, self.newline)


def reindent(raw: bytes, prefix: bytes, newline: bytes = b"\n") -> bytes:
    """Prefix every line after the first: JSON strings hold no raw newlines, so every
    newline in a JSON text is layout and re-indenting cannot change a value."""
    lines = raw.replace(b"\r\n", b"\n").split(b"\n")
    return newline.join([lines[0], *(prefix + line for line in lines[1:])])


def detect_escaping(data: bytes) -> bool:
    """``ensure_ascii`` as the file does it: raw UTF-8 seen means no escaping.

    Pure-ASCII files that escape non-ASCII text (Python ``json.dumps`` defaults) say so
    with ``\\u`` escapes of non-ASCII code points.
    """
    sample = data[: 1 << 20]
    if any(b >= 0x80 for b in sample[:65536]) or re.search(rb"[\x80-\xff]", sample):
        return False
    return (
        re.search(
            rb"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})", sample
        )
        is not None
    )


# -- one JSON text (a document, or one JSONL line) ---------------------------------


class _Container(Mutable):
    __slots__ = ("depth", "inserted", "removed", "span")
    span: Span
    depth: int
    removed: set[int]
    # New items keyed by the original index they go before (len = append at the end).
    inserted: dict[int, list[bytes]]

    def __init__(self, span: Span, depth: int) -> None:
        self.span = span
        self.depth = depth
        self.removed = set()
        self.inserted = {}


class Logged(Value):
    """One edit as the report shows it: what was there and what is there now."""

    __slots__ = ("action", "new", "old", "pointer")
    action: Final[str]
    pointer: Final[str]
    old: Final[bytes]
    new: Final[bytes]

    def __init__(self, action: str, pointer: str, old: bytes, new: bytes) -> None:
        self.action = action
        self.pointer = pointer
        self.old = old
        self.new = new


class JsonText:
    """Edits inside one JSON text ``data[start:end]`` (pointers relative to it)."""

    def __init__(
        self,
        data: bytes,
        start: int = 0,
        end: int | None = None,
        escaping: bool | None = None,
        log: list[Logged] | None = None,
        where: str = "",
    ) -> None:
        self.data = data
        self.start = start
        self.end = len(data) if end is None else end
        self.root = jsonspan.index(data, start, self.end)
        self.escaping = detect_escaping(data) if escaping is None else escaping
        self._containers: dict[str, _Container] = {}
        self._replaced: dict[str, tuple[Span, bytes]] = {}
        self._styles: dict[str, Style] = {}
        # One log in the order edits are made (shared with the file's Lines for a line).
        self.log: list[Logged] = [] if log is None else log
        self._where = where

    # -- reading -----------------------------------------------------------------

    def span(self, pointer: str) -> Span:
        try:
            return jsonspan.resolve(self.root, pointer)
        except (KeyError, IndexError, ValueError):
            raise EditError(f"no value at {pointer or '/'}") from None

    def raw(self, pointer: str) -> bytes:
        span = self.span(pointer)
        return self.data[span.start : span.end]

    def depth(self, pointer: str) -> int:
        return len(jsonspan.split(pointer))

    def style(self, container: str) -> Style:
        """The style of a new item of ``container``: that of its existing items.

        Items on their own lines take the indentation; one-line items inside an indented
        container (``[\n  {"role": …},\n  …]``) stay one-line like their siblings; an empty
        container follows the record around it.
        """
        if container not in self._styles:
            self._styles[container] = self._style(container)
        return self._styles[container]

    def _style(self, container: str) -> Style:
        span = self.span(container)
        children = _children(span)
        data = self.data
        newline = b"\r\n" if b"\r\n" in data[self.start : self.end] else b"\n"
        depth = self.depth(container)
        if children:
            first = children[0][1]
            lead = data[span.start + 1 : _start(span, first)]
            if b"\n" not in lead:
                return self._flat(data[span.start : span.end])
            if (first.items is not None or first.members is not None) and b"\n" not in data[
                first.start : first.end
            ]:
                return self._flat(data[first.start : first.end])
            indent = lead.rsplit(b"\n", 1)[1]
            unit = indent[: len(indent) // (depth + 1)] or None
            return Style(key_sep=b": ", indent=unit, newline=newline, ensure_ascii=self.escaping)
        parent = self._parent_bytes(container)
        unit = self._document_indent()
        if unit is None or b"\n" not in parent:
            return self._flat(parent)
        return Style(key_sep=b": ", indent=unit, newline=newline, ensure_ascii=self.escaping)

    def _flat(self, sample: bytes) -> Style:
        sample = sample[:SAMPLE]  # separators show in the first items; files can be huge
        return Style(item_sep=_item_sep(sample), key_sep=_key_sep(sample), ensure_ascii=self.escaping)

    def _parent_bytes(self, pointer: str) -> bytes:
        tokens = jsonspan.split(pointer)
        parent = self.span(jsonspan.join(*tokens[:-1])) if tokens else self.root
        return self.data[parent.start : parent.end]

    def _document_indent(self) -> bytes | None:
        """The indent unit as npm's json-parse-even-better-errors reads it."""
        found = re.match(rb"\s*[{\[]((?:\r?\n)+)([ \t]*)", self.data[self.start : self.end])
        return found.group(2) if found and found.group(2) else None

    # -- editing -----------------------------------------------------------------

    def remove(self, pointer: str) -> None:
        parent, index = self._locate(pointer)
        container = self._container(parent)
        if index not in container.removed:
            container.removed.add(index)
            self.log.append(Logged("remove", self._where + pointer, self.raw(pointer), b""))

    def insert(
        self, container_pointer: str, before: int, value: Any = None, raw: bytes | None = None
    ) -> None:
        """Insert before the original item ``before`` (its count appends at the end)."""
        container = self._container(container_pointer)
        if raw is None:
            raw = self.style(container_pointer).dumps(value, container.depth + 1)
        elif self.style(container_pointer).indent is not None:
            raw = _shift(
                raw, self.style(container_pointer).indent or b"", container.depth + 1, self._depth_of_raw(raw)
            )
        container.inserted.setdefault(before, []).append(raw)
        self.log.append(Logged("insert", f"{self._where}{container_pointer}/{before}", b"", raw))

    def set_member(self, pointer: str, key: str, value: Any) -> None:
        """Add ``key`` to the object at ``pointer`` (after its last member)."""
        span = self.span(pointer)
        if span.members is None:
            raise EditError(f"{pointer or '/'} is not an object")
        if key in span.members:
            self.replace(f"{pointer}{jsonspan.join(key)}", value)
            return
        style = self.style(pointer)
        member = json.dumps(key).encode() + style.key_sep + style.dumps(value, self.depth(pointer) + 1)
        container = self._container(pointer)
        container.inserted.setdefault(len(span.members), []).append(member)
        self.log.append(Logged("insert", f"{self._where}{pointer}{jsonspan.join(key)}", b"", member))

    def replace(self, pointer: str, value: Any = None, raw: bytes | None = None) -> None:
        span = self.span(pointer)
        if raw is None:
            raw = Style(ensure_ascii=self.escaping).dumps(value)
        self._replaced[pointer] = (span, raw)
        self.log.append(Logged("replace", self._where + pointer, self.data[span.start : span.end], raw))

    def strip_string(self, pointer: str) -> bool:
        """Strip the trailing whitespace of a string value, keeping every other escape."""
        span = self.span(pointer)
        token = self.data[span.start : span.end]
        if not _STRING.fullmatch(token):
            raise EditError(f"{pointer} is not a string")
        stripped = strip_string_token(token)
        if stripped == token:
            return False
        self._replaced[pointer] = (span, stripped)
        self.log.append(Logged("strip", self._where + pointer, token, stripped))
        return True

    # -- output ------------------------------------------------------------------

    def splices(self) -> list[Splice]:
        out: list[Splice] = []
        removed_spans = self._removed_spans()
        for span, raw in self._replaced.values():
            if not _inside(span, removed_spans):
                out.append(Splice(span.start, span.end, raw))
        for pointer, container in self._containers.items():
            if _inside(container.span, removed_spans, strict=True):
                continue
            out.extend(self._container_splices(pointer, container))
        return out

    @property
    def changed(self) -> bool:
        return bool(self.log)

    # -- internals ---------------------------------------------------------------

    def _locate(self, pointer: str) -> tuple[str, int]:
        tokens = jsonspan.split(pointer)
        if not tokens:
            raise EditError("cannot remove the root value")
        parent = jsonspan.join(*tokens[:-1])
        span = self.span(parent)
        if span.items is not None:
            index = int(tokens[-1])
            if not 0 <= index < len(span.items):
                raise EditError(f"no value at {pointer}")
            return parent, index
        if span.members is not None and tokens[-1] in span.members:
            return parent, list(span.members).index(tokens[-1])
        raise EditError(f"no value at {pointer}")

    def _container(self, pointer: str) -> _Container:
        if pointer not in self._containers:
            span = self.span(pointer)
            if span.items is None and span.members is None:
                raise EditError(f"{pointer or '/'} is not an array or object")
            if span.shadows:
                raise EditError(f"{pointer or '/'} holds a key twice: its members are not edited")
            self._containers[pointer] = _Container(span, self.depth(pointer))
        return self._containers[pointer]

    def _removed_spans(self) -> list[Span]:
        spans: list[Span] = []
        for container in self._containers.values():
            children = _children(container.span)
            spans.extend(children[i][1] for i in container.removed)
        return spans

    def _depth_of_raw(self, raw: bytes) -> int:
        lines = raw.split(b"\n")
        if len(lines) < 2:
            return 0
        closing = lines[-1]
        return len(closing) - len(closing.lstrip())

    def _container_splices(self, pointer: str, container: _Container) -> list[Splice]:
        """Minimal splices for one container: each run of removed and new items between
        two kept items becomes one splice, reusing the separator that followed the kept
        item before it, so kept items and their original spacing stay byte-identical."""
        data = self.data
        span = container.span
        children = _children(span)
        starts = [_start(span, child) for _, child in children]
        count = len(children)
        kept = [i for i in range(count) if i not in container.removed]
        style = self.style(pointer)
        sep = _separator(data, children, starts, style, container.depth)
        out: list[Splice] = []
        if not kept:
            news = [raw for i in range(count + 1) for raw in container.inserted.get(i, [])]
            open_end, close_start = span.start + 1, span.end - 1
            if not news:
                if count:
                    out.append(Splice(open_end, close_start, b""))
                return out
            if count:
                lead = data[open_end : starts[0]]
                tail = data[children[-1][1].end : close_start]
            elif style.indent is not None:
                lead = style.newline + style.indent * (container.depth + 1)
                tail = style.newline + style.indent * container.depth
            else:
                lead = tail = b""
            out.append(Splice(open_end, close_start, lead + sep.join(news) + tail))
            return out
        # Run before the first kept item.
        first = kept[0]
        news = [raw for i in range(first + 1) for raw in container.inserted.get(i, [])]
        if first > 0 or news:
            out.append(Splice(starts[0], starts[first], b"".join(raw + sep for raw in news)))
        # Runs between kept items.
        for left, right in itertools.pairwise(kept):
            news = [raw for i in range(left + 1, right + 1) for raw in container.inserted.get(i, [])]
            if right == left + 1 and not news:
                continue
            between = data[children[left][1].end : starts[left + 1]]
            out.append(
                Splice(
                    children[left][1].end, starts[right], between + b"".join(raw + between for raw in news)
                )
            )
        # Run after the last kept item.
        last = kept[-1]
        news = [raw for i in range(last + 1, count + 1) for raw in container.inserted.get(i, [])]
        if last < count - 1 or news:
            between = data[children[last][1].end : starts[last + 1]] if last + 1 < count else sep
            out.append(
                Splice(children[last][1].end, children[-1][1].end, b"".join(between + raw for raw in news))
            )
        return [s for s in out if s.start != s.end or s.new]


def _start(container: Span, child: Span) -> int:
    """Where an item begins: its key for an object member."""
    return child.key_start if container.members is not None else child.start


def _children(span: Span) -> list[tuple[str, Span]]:
    if span.items is not None:
        return [(str(i), child) for i, child in enumerate(span.items)]
    if span.members is not None:
        return list(span.members.items())
    return []


def _inside(span: Span, spans: list[Span], strict: bool = False) -> bool:
    for outer in spans:
        if outer.start <= span.start and span.end <= outer.end and (not strict or outer is not span):
            return True
    return False


def _separator(
    data: bytes, children: list[tuple[str, Span]], starts: list[int], style: Style, depth: int
) -> bytes:
    if len(children) >= 2:
        return data[children[0][1].end : starts[1]]
    if style.indent is not None:
        return b"," + style.newline + style.indent * (depth + 1)
    return style.item_sep


def _item_sep(sample: bytes) -> bytes:
    found = re.search(rb'[\]}"\d el],( ?)["\[{\d tfn-]', _blank_strings(sample))
    return b", " if found and found.group(1) else b","


def _key_sep(sample: bytes, pretty: bool = False) -> bytes:
    found = re.search(rb'"(:\s?)', _blank_strings(sample).replace(b'""', b'"x"'))
    if found:
        return b": " if found.group(1).startswith(b": ") else b":"
    return b": " if pretty else b":"


def _blank_strings(sample: bytes) -> bytes:
    """The text with every string's contents removed, so separators inside strings
    cannot be mistaken for the file's own."""
    return _STRING.sub(b'""', sample)


def _shift(raw: bytes, unit: bytes, depth: int, current: int) -> bytes:
    """Re-indent a moved multi-line value from its old depth to ``depth``."""
    lines = raw.split(b"\n")
    if len(lines) < 2 or not unit:
        return raw
    delta = len(unit) * depth - current
    shifted = [lines[0]]
    for line in lines[1:]:
        shifted.append(b" " * delta + line if delta >= 0 else line[-delta:])
    return b"\n".join(shifted)


def strip_string_token(token: bytes) -> bytes:
    """A JSON string token without its trailing whitespace (escaped or raw).

    Works on escape units so that ``\\\\n`` (a backslash and an ``n``) is never mistaken
    for an escaped newline, and every other escape keeps its spelling.
    """
    try:
        text = token[1:-1].decode("utf-8")
    except UnicodeDecodeError:  # a record Node reads with U+FFFD: its damaged text is not edited
        raise EditError("the string holds bytes that are not UTF-8") from None
    units = _ESCAPE_UNIT.findall(text)
    while units and json.loads(f'"{units[-1]}"' if units[-1] != '"' else '"\\""').isspace():
        units.pop()
    return b'"' + "".join(units).encode("utf-8") + b'"'


# -- JSONL files -------------------------------------------------------------------


class Lines:
    """Edits of a JSONL file: whole lines removed or added, or patched inside."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.data = source.data
        self.lines = source.lines
        self._removed: set[int] = set()
        self._inserted: dict[int, list[bytes]] = {}  # after line index (-1: before all)
        self._patches: dict[int, JsonText] = {}
        self._replaced: dict[int, bytes] = {}
        self._through: dict[int, int] = {}  # a replacement spanning lines: its last line
        self.escaping = detect_escaping(self.data)
        self.log: list[Logged] = []

    def line(self, index: int) -> Line:
        return self.lines[index]

    def text(self, index: int) -> JsonText:
        """The JSON text of one line, for edits inside it."""
        if index not in self._patches:
            line = self.lines[index]
            if self.source.torn(index):  # the index of a torn line would be anyone's guess
                raise EditError(f"line {line.number} does not parse")
            start = line.start + (3 if index == 0 and self.source.bom else 0)
            try:
                where = f"line {line.number} "
                self._patches[index] = JsonText(self.data, start, line.end, self.escaping, self.log, where)
            except ValueError:
                raise EditError(f"line {line.number} does not parse") from None
        return self._patches[index]

    def style(self, index: int) -> Style:
        """How a new line next to line ``index`` is written: like that line."""
        sample = self.data[
            self.lines[index].start : min(self.lines[index].end, self.lines[index].start + SAMPLE)
        ]
        return Style(item_sep=_item_sep(sample), key_sep=_key_sep(sample), ensure_ascii=self.escaping)

    def remove(self, index: int) -> None:
        if index not in self._removed:
            self._removed.add(index)
            line = self.lines[index]
            self.log.append(Logged("remove", f"line {line.number}", self.data[line.start : line.end], b""))

    def insert_after(self, index: int, value: Any = None, raw: bytes | None = None) -> None:
        """Add a record after line ``index`` (-1: before the first line)."""
        if raw is None:
            raw = self.style(max(index, 0)).dumps(value)
        self._inserted.setdefault(index, []).append(raw)
        after = self.lines[index].number if index >= 0 else 0
        self.log.append(Logged("insert", f"after line {after}", b"", raw))

    def replace(self, index: int, raw: bytes, through: int | None = None) -> None:
        """Replace line ``index`` (with ``through``: the lines from it to line ``through``,
        the bytes between them included) by ``raw``."""
        line = self.lines[index]
        self._replaced[index] = raw
        where = f"line {line.number}"
        end = line.end
        if through is not None and through > index:
            self._through[index] = through
            end = self.lines[through].end
            where = f"lines {line.number}-{self.lines[through].number}"
        self.log.append(Logged("replace", where, self.data[line.start : end], raw))

    @property
    def changed(self) -> bool:
        return bool(self.log)

    def splices(self) -> list[Splice]:
        data = self.data
        out: list[Splice] = []
        eol = b"\r\n" if self.lines and data[self.lines[0].end : self.lines[0].end + 2] == b"\r\n" else b"\n"
        for index in sorted(self._removed):
            line = self.lines[index]
            out.append(Splice(line.start, _line_stop(data, line), b""))
        for index, raw in self._replaced.items():
            if index not in self._removed:
                line = self.lines[index]
                out.append(Splice(line.start, self.lines[self._through.get(index, index)].end, raw))
        for index, text in self._patches.items():
            if index not in self._removed and index not in self._replaced:
                out.extend(text.splices())
        for index, raws in self._inserted.items():
            if index < 0:
                at = self.lines[0].start if self.lines else 0
                out.append(Splice(at, at, b"".join(raw + eol for raw in raws)))
                continue
            line = self.lines[index]
            stop = _line_stop(data, line)
            if stop == line.end:  # the last line has no newline: keep it that way
                out.append(Splice(stop, stop, b"".join(eol + raw for raw in raws)))
            else:
                out.append(Splice(stop, stop, b"".join(raw + eol for raw in raws)))
        return _merge_points(out)


def _line_stop(data: bytes, line: Line) -> int:
    """End of a line including its terminator."""
    if data[line.end : line.end + 2] == b"\r\n":
        return line.end + 2
    if data[line.end : line.end + 1] == b"\n":
        return line.end + 1
    return line.end


def _merge_points(splices: list[Splice]) -> list[Splice]:
    """Insertions at the end of a removed line fall at its stop offset: order them after
    the removal so the two splices do not overlap."""
    merged: dict[tuple[int, int], bytes] = {}
    for item in splices:
        key = (item.start, item.end)
        merged[key] = merged.get(key, b"") + item.new
    result = [Splice(s, e, new) for (s, e), new in merged.items()]
    result.sort(key=lambda s: (s.start, s.end))
    cleaned: list[Splice] = []
    for item in result:
        if (
            cleaned
            and item.start == item.end
            and cleaned[-1].end == item.start
            and cleaned[-1].start < item.start
        ):
            previous = cleaned.pop()
            cleaned.append(Splice(previous.start, previous.end, previous.new + item.new))
            continue
        cleaned.append(item)
    return cleaned
