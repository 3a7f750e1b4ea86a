"""Where the messages of a plain message-list file sit.

The generic API layouts (Chat Completions, Anthropic Messages, Gemini ``Content[]``) and
NeuroLink exports all come as a bare JSON array, an object holding the array, or JSONL
with one message (or one whole conversation) per line.  This module finds the lists and
gives each element its origin, so those readers only convert messages.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from transcript_doctor.analysis.numbers import may_overflow
from transcript_doctor.analysis.screen import ASSISTANT, Screen, Turn, crosses
from transcript_doctor.jsonspan import join, split
from transcript_doctor.model import Conversation, Message, Origin, Part, PartKind, Role
from transcript_doctor.plain import Value
from transcript_doctor.source import HEAD_RECORDS, Container, Line, Source, valid_utf8
from transcript_doctor.transcript import Transcript

if TYPE_CHECKING:
    from transcript_doctor.editing import JsonText, Lines


class Element(Value):
    """One message object and where it sits."""

    __slots__ = ("line", "pointer", "record", "value")
    value: Final[Any]
    line: Final[int]  # 0 in a single-document file (resolved from the pointer when needed)
    record: Final[int]
    pointer: Final[str]  # "" for a whole JSONL line

    def __init__(self, value: Any, line: int, record: int, pointer: str) -> None:
        self.value = value
        self.line = line
        self.record = record
        self.pointer = pointer

    def at(self, *tokens: str | int) -> Origin:
        pointer = self.pointer + join(*tokens)
        return Origin(self.line, self.record, pointer or None)


class Listing(Value):
    """One conversation's elements; ``label`` names it when a file holds several.

    ``holder`` is the document or line that holds the list (None for a file of message
    lines), for what sits beside the list (Anthropic's top-level ``system``).  When a
    screen cut the conversation, ``elements`` start at the cut, ``before`` holds the call
    ids of the elements left out and ``whole`` gives all of them (see :func:`built`).
    """

    __slots__ = ("before", "elements", "holder", "label", "start", "whole")
    elements: Final[list[Element]]
    label: Final[str | None]
    holder: Final[Element | None]
    start: Final[int]  # the index of the first element in the list
    before: Final[frozenset[Hashable]]
    whole: Final[Callable[[], list[Element]] | None]

    def __init__(
        self,
        elements: list[Element],
        label: str | None = None,
        holder: Element | None = None,
        start: int = 0,
        before: frozenset[Hashable] = frozenset(),
        whole: Callable[[], list[Element]] | None = None,
    ) -> None:
        self.elements = elements
        self.label = label
        self.holder = holder
        self.start = start
        self.before = before
        self.whole = whole


# What a screen makes of a conversation's message objects: None when it proves them
# clean, else the first element to build from and the call ids of those before it.
Cut = Callable[[list[Any]], tuple[int, frozenset[Hashable]] | None]
WHOLE: tuple[int, frozenset[Hashable]] = (0, frozenset())  # build every element


def screened(
    screen: Screen, turns: Iterable[Turn | None] | None, exact_end: bool = False
) -> tuple[int, frozenset[Hashable]] | None:
    """What a screen makes of a conversation's turns, as a :data:`Cut` says it
    (``exact_end``: see ``Screen.clean``)."""
    return None if screen.clean(turns, exact_end) else (screen.cut, screen.before)


def built(listing: Listing, make: Callable[[Listing], Conversation]) -> Conversation:
    """The conversation of a listing, built again from all its elements when the part
    after a cut names a call id of the part before it (see ``analysis.screen``)."""
    conversation = make(listing)
    if listing.whole is not None and crosses(conversation, listing.before):
        conversation = make(Listing(listing.whole(), listing.label, listing.holder))  # from the start
    return conversation


def document_list(value: Any, keys: Sequence[str]) -> tuple[list[Any], str] | None:
    """The message list of a document: the root array, or the array under one of ``keys``."""
    if isinstance(value, list):
        return value, ""
    if isinstance(value, dict):
        for key in keys:
            items = value.get(key)
            if isinstance(items, list):
                return items, _pointer(key)
    return None


@cache
def _pointer(key: str) -> str:
    return join(key)  # asked again for every line of a fine-tuning file


def sample(source: Source, keys: Sequence[str]) -> tuple[list[Any], bool]:
    """Message objects to detect on, and whether each JSONL line is a whole conversation.
    A JSONL file's answer is kept on the source (``_SAMPLED``): the message-list readers
    each ask it, and ``conversation_lines`` again when the file is read."""
    if source.container is Container.JSON:
        found = document_list(source.value, keys)
        return (found[0] if found else []), False
    kept = source.typed.get(_SAMPLED)
    if kept is not None and kept[0] == keys:
        return kept[1], kept[2]
    head = source.head()
    # Asked of every JSONL file by several readers: stop at the first line that holds no list.
    answer: tuple[list[Any], bool] = (head, False)
    if head:
        gathered: list[Any] = []
        for record in head:  # objects only (``Source.head``)
            messages = _nested(record, keys)
            if messages is None:
                break
            gathered += messages
        else:
            answer = (gathered, True)
    source.typed[_SAMPLED] = (keys, *answer)
    return answer


# Kept on a JSONL source (``Source.typed``): ``sample``'s keys and answer.
_SAMPLED = "listing: sample"


def conversation_lines(source: Source, keys: Sequence[str]) -> bool:
    """``sample``'s second answer alone (whether each JSONL line is a whole conversation),
    without gathering the head's messages when detection did not sample them."""
    if source.container is Container.JSON:
        return False
    kept = source.typed.get(_SAMPLED)
    if kept is not None and kept[0] == keys:
        return bool(kept[2])
    head = source.head()
    return bool(head) and all(isinstance(r, dict) and _nested(r, keys) is not None for r in head)


def _nested(record: dict[str, Any], keys: Sequence[str]) -> list[Any] | None:
    """``document_list`` of a record, without its pointer (the usual one key: one look-up)."""
    if len(keys) == 1:
        items = record.get(keys[0])
        return items if isinstance(items, list) else None
    found = document_list(record, keys)
    return found[0] if found else None


def listings(
    source: Source, keys: Sequence[str], per_line: bool, cut: Cut | None = None, proof: Proof | None = None
) -> Iterator[Listing]:
    """The conversations of a file: one per document, per line, or one of all lines.

    ``cut`` screens each conversation's message objects: those it proves clean are left
    out, the others start where it says.  In a file of one conversation per line,
    ``proof`` (with ``cut``) may prove a line clean from its bytes first (see ``Proof``;
    given only for a file ``provable`` says it pays for).
    """
    if source.container is Container.JSON:
        found = document_list(source.value, keys)
        if found is not None:
            items, base = found
            verdict = cut(items) if cut is not None else WHOLE
            if verdict is not None:
                yield _listing(items, verdict, base, None, Element(source.value, 0, 0, ""))
        return
    if per_line:
        # One key (the usual ``messages``) is looked up here: this runs once per line.
        key, base = (keys[0], _pointer(keys[0])) if len(keys) == 1 else (None, "")
        records = source.records()
        if proof is not None and cut is not None and key is not None:
            segments = source.data.split(b"\n")
            unproven = proof(segments)
            records = source.records(_lines_at(segments, unproven) if unproven else [])
        for line, record in records:
            if not isinstance(record, dict):
                continue
            if key is not None:
                value = record.get(key)
                if not isinstance(value, list):
                    continue
                items = value
            else:
                found = document_list(record, keys)
                if found is None:
                    continue
                items, base = found
            verdict = cut(items) if cut is not None else WHOLE
            if verdict is not None:
                label = f"conversation on line {line.number}"
                holder = Element(record, line.number, line.index, "")
                yield _listing(items, verdict, base, label, holder, line.number, line.index)
        return
    read = [(line, record) for line, record in source.records() if record is not None]
    verdict = cut([record for _, record in read]) if cut is not None else WHOLE
    if verdict is not None:
        start, before = verdict

        def whole(start: int = 0) -> list[Element]:
            return [Element(record, line.number, line.index, "") for line, record in read[start:]]

        yield Listing(whole(start), start=start, before=before, whole=whole if start else None)


# A typed proof of a file of conversation lines, from its segments between newlines: the
# numbers of the lines (1-based, every segment counted, as ``Line.number``) it leaves to
# the full read, which parses, screens and builds them as without a proof (a blank
# segment is no line: it is never left).  Every other line decodes (so orjson parses it to
# an object, given ``typed_bytes``) and the screen proves the conversation of its list
# under the listing's one key clean.
Proof = Callable[[list[bytes]], set[int]]
_BLANK = frozenset(b" \t\r\f\v")  # the bytes a blank line is made of, besides newlines
_JUDGED = 1 << 16  # the first bytes whose lines ``provable`` judges the file by
# Above this many bytes a line on average, a proof costs what it saves: its checks of the
# whole file (``typed_bytes``, ~1.3 ns a byte) cost what parsing the fields it skips does,
# and the Python per line it saves is spread over more bytes (OpenAI fine-tuning lines
# with their ``tools``, 4.3 KB a line: the same time either way).
_LONG_LINE = 2048
# A file of fewer lines was parsed for detection already, or nearly (``Source.head``).
_FEW_LINES = 2 * HEAD_RECORDS


def provable(source: Source) -> bool:
    """Whether a typed proof of a file of conversation lines (``Proof``) pays for itself
    (judged from the lines of its first piece: counting every newline of a large file
    costs a quarter of a nanosecond a byte) and is exact (``typed_bytes``)."""
    data = source.data
    head = min(len(data), _JUDGED)
    lines = data.count(b"\n", 0, head) + 1
    return lines > _FEW_LINES and head <= _LONG_LINE * lines and typed_bytes(source)


def _lines_at(segments: list[bytes], numbers: set[int]) -> list[Line]:
    """The lines ``Source.lines`` has of these segment numbers, without splitting the file
    into lines again (a proof leaves few): as ``source._split_lines`` makes them, a line is
    a segment that is not blank, its index counts the lines before it, and its end leaves
    out a carriage return before the newline."""
    found: list[Line] = []
    last = max(numbers)
    position = index = 0
    for number, raw in enumerate(segments, 1):
        size = len(raw)
        if size and (raw[0] not in _BLANK or raw.strip()):
            if number in numbers:
                found.append(Line(index, number, position, position + size - (raw[-1] == 0x0D)))
            index += 1
        if number == last:
            break
        position += size + 1
    return found


def typed_bytes(source: Source) -> bool:
    """Whether a line of this file that msgspec decodes is one orjson parses: no BOM, UTF-8
    throughout (msgspec does not check the bytes of fields it skips) and no number beyond
    a double (msgspec skips one; orjson refuses it: TD001).  NUL bytes, lone surrogate
    escapes, NaN and torn lines fail msgspec's decoding as they fail orjson's."""
    data = source.data
    if source.bom:
        return False
    if not valid_utf8(data):
        return False
    return not may_overflow(data)


def lines_from(source: Source, start: int, before: frozenset[Hashable]) -> Listing:
    """The listing ``listings`` makes of a file of message lines whose screen cut it at
    ``start`` with ``before``, for a file whose every line is known to be a record (a
    typed proof decoded them all): only the lines from the cut on are parsed."""
    lines = source.lines

    def whole(start: int = 0) -> list[Element]:
        read = source.records(lines[start:])
        return [Element(record, line.number, line.index, "") for line, record in read if record is not None]

    return Listing(whole(start), start=start, before=before, whole=whole if start else None)


def _listing(
    items: list[Any],
    verdict: tuple[int, frozenset[Hashable]],
    base: str,
    label: str | None,
    holder: Element,
    line: int = 0,
    record: int | None = None,
) -> Listing:
    """The listing of one message list, from where the screen's verdict says.

    Elements of a JSONL line share its line and record; a document's elements are
    records of their own, numbered by their index."""
    start, before = verdict

    def whole(start: int = 0) -> list[Element]:
        return [
            Element(v, line, i if record is None else record, f"{base}/{i}")
            for i, v in enumerate(items[start:], start)
        ]

    return Listing(whole(start), label, holder, start, before, whole if start else None)


# -- edits on elements (for ``fix``) -----------------------------------------------
# editing.py is loaded by these, not by reading: lint of a clean file never needs it.


def _where(edit: Lines | JsonText, origin: Origin) -> tuple[JsonText | None, str]:
    """The JSON text holding an element and its pointer there; ``None`` for a whole line."""
    from transcript_doctor.editing import JsonText

    if isinstance(edit, JsonText):
        return edit, origin.pointer or ""
    if origin.pointer is None:
        return None, ""
    return edit.text(origin.record), origin.pointer


def remove(edit: Lines | JsonText, origin: Origin) -> None:
    from transcript_doctor.editing import Lines

    text, pointer = _where(edit, origin)
    if text is None:
        assert isinstance(edit, Lines)
        edit.remove(origin.record)
    else:
        text.remove(pointer)


def insert_after(edit: Lines | JsonText, origin: Origin, value: Any = None, raw: bytes | None = None) -> None:
    """A new element right after the element at ``origin`` (in its list, or its line)."""
    from transcript_doctor.editing import Lines

    text, pointer = _where(edit, origin)
    if text is None:
        assert isinstance(edit, Lines)
        edit.insert_after(origin.record, value, raw)
        return
    tokens = split(pointer)
    text.insert(join(*tokens[:-1]), int(tokens[-1]) + 1, value, raw)


def raw(edit: Lines | JsonText, origin: Origin) -> bytes:
    """The original bytes of an element, to move it elsewhere unchanged."""
    from transcript_doctor.editing import Lines

    text, pointer = _where(edit, origin)
    if text is None:
        assert isinstance(edit, Lines)
        line = edit.line(origin.record)
        return edit.data[line.start : line.end]
    return text.raw(pointer)


def strip(edit: Lines | JsonText, origin: Origin) -> None:
    """Strip the trailing whitespace of the string at ``origin``."""
    text, pointer = _where(edit, origin)
    if text is None:
        from transcript_doctor.editing import EditError

        raise EditError("a whole record is not a string")
    text.strip_string(pointer)


def next_message(transcript: Transcript, message: Message) -> Message | None:
    """The message after ``message`` in its conversation (display-only notices skipped)."""
    conversation, index = transcript.locate(message)
    return next((m for m in conversation.messages[index + 1 :] if m.role is not Role.NOTICE), None)


def result_slot(transcript: Transcript, call_message: Message) -> Message | None:
    """The message right after a call turn (notices skipped) when it holds only results:
    where that turn's further results go."""
    following = next_message(transcript, call_message)
    if following is None or not following.parts:
        return None
    return following if all(p.kind is PartKind.TOOL_RESULT for p in following.parts) else None


def reply_end(transcript: Transcript, call_message: Message) -> Origin:
    """Where the results of a call turn end: its block of tool messages, or the turn
    (where a moved or inserted Chat Completions result goes)."""
    slot = result_slot(transcript, call_message)
    return slot.parts[-1].origin if slot is not None else call_message.origin


def chat_tool_calls(element: Element) -> list[Part]:
    """The ``tool_calls`` of a Chat Completions assistant message, each where it sits."""
    calls = element.value.get("tool_calls")
    parts: list[Part] = []
    if not isinstance(calls, list):
        return parts
    for index, call in enumerate(calls):
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        call_id = call.get("id")
        parts.append(
            Part(
                PartKind.TOOL_CALL,
                element.at("tool_calls", index),
                call_id=call_id if isinstance(call_id, str) else None,
                name=name if isinstance(name, str) else None,
            )
        )
    return parts


def chat_assistant_turn(item: dict[str, Any]) -> Turn | None:
    """A Chat Completions assistant message as a screen turn: text (or none beside calls)
    and the ids of its calls; None when it holds anything else."""
    content = item.get("content")
    calls = item.get("tool_calls")
    ids: tuple[str, ...] = ()
    if calls is not None:
        if not isinstance(calls, list):
            return None
        found: list[str] = []
        for call in calls:  # a loop, not all() over a generator: asked of every turn
            call_id = call.get("id") if isinstance(call, dict) else None
            if not isinstance(call_id, str):
                return None
            found.append(call_id)
        ids = tuple(found)
    if not (content is None and ids) and not isinstance(content, str):
        return None
    return ASSISTANT, content, ids
