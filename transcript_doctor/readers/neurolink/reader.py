"""Reader ``neurolink``: NeuroLink conversation exports (Redis conversation object, ChatMessage[]).

Spec: shared/spec/formats/neurolink.md.  NeuroLink writes no transcript files; users get
the Redis value (``serializeConversation`` = compact ``JSON.stringify``) or a
``ChatMessage[]`` (``getConversationHistory``, ``neurolink memory history --format json``).
One stored turn is ``user`` -> every ``tool_call`` -> every ``tool_result`` -> ``assistant``,
so the calls of a batch form one assistant turn and the result run one user message.
``Message.ref`` / ``Part.ref`` are the row's index in the message list;
``Conversation.ref`` is the list's JSON Pointer (``/messages`` or ``""``).

``fix`` (spec §7, placement and row shapes in ``repair``) edits only the rows a
repair names: a compact Redis value stays one line, the CLI's 2-space export keeps its
indentation.  A synthetic ``tool_result`` gets a UUID v4-shaped id derived from its
call (reproducible bytes) and the preceding row's timestamp.

Deviation from §7 (TD303, lead's decision): when one result of a call is NeuroLink's own
compaction placeholder (content exactly ``[Tool result unavailable - conversation was
compacted]`` or ``[Tool result unavailable]``; the vendor's rows also carry a
``repair-result-`` id and ``metadata.truncated``) and another is real output, the
placeholder is removed and the real output kept, even when the placeholder comes first.
In the PR #1280 defect it does come first, so "keep the first" would delete the only
real data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn
from transcript_doctor.model import Conversation, Message, Part, PartKind, Role
from transcript_doctor.readers.base import DEFINITIVE, SPECIFIC, Detection, Reader
from transcript_doctor.readers.listing import (
    Element,
    Listing,
    built,
    conversation_lines,
    listings,
    screened,
)
from transcript_doctor.readers.neurolink.pairing import AdjacencyPairing
from transcript_doctor.source import NODE, Container, Source

KEYS = ("messages",)
ROLES = frozenset({"user", "assistant", "system", "tool_call", "tool_result"})
TOOL_ROLES = frozenset({"tool_call", "tool_result"})
# What ``deserializeConversation`` (src/lib/utils/redis.ts) requires besides ``messages``.
ENVELOPE = ("title", "sessionId", "userId", "createdAt", "updatedAt")
ENVELOPE_SET = frozenset(ENVELOPE)
ENVELOPE_KEYS = frozenset({"id", *ENVELOPE})
TOOL_EVENTS = frozenset({"tool:start", "tool:end"})


def _is_chat_message(item: Any) -> bool:
    """The row check ``deserializeConversation`` applies to every message."""
    return isinstance(item, dict) and item.get("role") in ROLES and isinstance(item.get("content"), str)


def _stamped(item: dict[str, Any]) -> bool:
    return isinstance(item.get("id"), str) and isinstance(item.get("timestamp"), str)


def _any_foreign(items: list[Any]) -> bool:
    """Whether a row is one no NeuroLink version writes: another API's role or block
    content (a loop, not a call per row: asked of every row of a conversation object)."""
    for item in items:
        if isinstance(item, dict):
            role = item.get("role")  # (a loader makes no subclass of str or list)
            if (role.__class__ is str and role not in ROLES) or item.get("content").__class__ is list:
                return True
    return False


def _detect_object(value: dict[str, Any]) -> tuple[str, int] | None:
    items = value.get("messages")
    if not isinstance(items, list) or len(ENVELOPE_KEYS.intersection(value)) < 2:
        return None
    reason = "NeuroLink conversation object"
    if value.keys() >= ENVELOPE_SET and not _any_foreign(items):
        return reason, DEFINITIVE  # the Redis value's own envelope; damaged rows are read leniently
    if items and all(_is_chat_message(i) for i in items):
        return reason, SPECIFIC
    return None


def _detect_list(value: list[Any]) -> tuple[str, int] | None:
    """Every item a ChatMessage (``_is_chat_message``), and one a tool row or each one
    stamped (``_stamped``): one loop, asked of every item of a JSON array."""
    if not value:
        return None
    tools = False
    stamped = True
    for item in value:
        if not isinstance(item, dict):
            return None
        role = item.get("role")
        if role not in ROLES or not isinstance(item.get("content"), str):
            return None
        if not tools:
            tools = role in TOOL_ROLES
            if not tools and stamped:
                stamped = _stamped(item)
    if tools or stamped:
        return "NeuroLink ChatMessage list", SPECIFIC
    return None  # plain role/content rows: indistinguishable from openai-chat


def _replay_start(value: Any, items: list[Any]) -> int:
    """Index of the first replayed row.

    ``buildContextFromPointer`` (src/lib/utils/conversationMemory.ts) sends a summary plus
    the rows after ``summarizedUpToMessageId`` when both it and ``summarizedMessage`` are
    set and the id is found; otherwise every row.  The summary is a user row built at read
    time ahead of all others, so no rule could name it: it is not modelled.
    """
    if not isinstance(value, dict):
        return 0
    pointer = value.get("summarizedUpToMessageId")
    if not (isinstance(pointer, str) and pointer and value.get("summarizedMessage")):
        return 0
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get("id") == pointer:
            return index + 1
    return 0


def _tool_activity(item: dict[str, Any]) -> bool:
    """``messageHasToolActivity``: an empty assistant row kept on purpose for a tool-only turn."""
    if item.get("tool") or item.get("args") or item.get("result"):
        return True
    events = item.get("events")
    return isinstance(events, list) and any(
        isinstance(e, dict) and isinstance(e.get("type"), str) and e["type"] in TOOL_EVENTS for e in events
    )


def _name(item: dict[str, Any]) -> str | None:
    tool = item.get("tool")
    return tool if isinstance(tool, str) and tool else None


def _call_id(item: dict[str, Any]) -> str | None:
    # Unconfirmed: ``toolCallId`` on both rows is described by PR #1280/#1285 (2026-08),
    # after the pinned commit; its exact placement is not in the stored source.
    value = item.get("toolCallId")
    return value if isinstance(value, str) and value else None


def _is_error(item: dict[str, Any]) -> bool:
    result = item.get("result")
    return isinstance(result, dict) and (result.get("success") is False or bool(result.get("error")))


def _positional(items: list[Any], start: int) -> tuple[int, int] | None:
    """The id-less batch of calls at ``start`` and the run of results right after it, when
    each result names the tool of the call in its place and a message (or the list's end)
    follows the run: how many calls, and the index after the run; else None.

    A pairing with no call open pairs such a segment position by position (each result
    takes the first open call of its name in the batch: the one in its place), and the
    message after it ends the stretch (``AdjacencyPairing.boundary``), leaving no call open
    and nothing answered: what a new pairing holds."""
    end = len(items)
    # Stricter than ``_call_id`` and ``_name``, never looser: no ``toolCallId`` key at all,
    # and the same ``tool`` value (the same name) in each place.
    tools: list[Any] = []
    index = start
    while index < end:
        item = items[index]
        if item.__class__ is not dict or item.get("role") != "tool_call":
            break
        if "toolCallId" in item:
            return None
        tools.append(item.get("tool"))
        index += 1
    after = index + len(tools)
    if after > end:
        return None
    for tool in tools:
        item = items[index]
        if (
            item.__class__ is not dict
            or item.get("role") != "tool_result"
            or "toolCallId" in item
            or item.get("tool") != tool
        ):
            return None
        index += 1
    if after < end:
        item = items[after]
        if not (
            item.__class__ is dict
            and item.get("role") in ("user", "assistant", "system")
            and isinstance(item.get("content"), str)
        ):
            return None
    return len(tools), after


def _turns(items: list[Any], document: Any, positional: bool = True) -> Iterator[Turn | None]:
    """The replayed rows as the screen's turns, grouped and paired the way ``_Builder``
    groups and pairs them (with the same pairing, so id-less rows get the same keys).

    Until the pairing is needed, each id-less batch that ``_positional`` pairs by place
    is paired so without it (``positional``; tests/readers/test_neurolink.py compares both
    ways): the usual stored turn, whose pairing objects cost more than the rest."""
    pairing: AdjacencyPairing | None = None  # made at the first row the short way leaves
    batch: list[str] = []  # the calls of the batch being read: one assistant turn
    prompt: object = None  # the previous message's TD403 key, if it was a user prompt
    skip = 0  # rows before this index were turned already (a positional segment)
    for index in range(_replay_start(document, items), len(items)):
        if index < skip:
            continue
        item = items[index]
        if not isinstance(item, dict):
            continue
        role, content = item.get("role"), item.get("content")
        if role == "tool_call":
            call_id = _call_id(item)
            if call_id is None:
                if pairing is None:
                    segment = _positional(items, index) if positional and not batch else None
                    if segment is not None:
                        count, skip = segment
                        calls = tuple(f"adjacency@{at}" for at in range(index, index + count))
                        yield ASSISTANT, None, calls
                        for call in calls:
                            yield RESULT, None, (call,)
                        prompt = None
                        continue
                    pairing = AdjacencyPairing()
                call_id = pairing.call(index, _name(item)).call_id
            batch.append(call_id)
            continue
        text = content if isinstance(content, str) else None
        if role != "tool_result" and (text is None or role not in ("user", "assistant", "system")):
            continue  # not a row the reader reads: the batch goes on
        if batch:
            yield ASSISTANT, None, tuple(batch)
            batch, prompt = [], None
        if role == "tool_result":
            call_id = _call_id(item)
            if call_id is None:
                if pairing is None:
                    pairing = AdjacencyPairing()
                call_id = pairing.result(index, _name(item))[0]
            yield RESULT, None, (call_id,)
            prompt = None
            continue
        if pairing is not None:
            pairing.boundary()
        if role == "user":
            key = (text, item.get("id"), item.get("timestamp"))
            identified = key[1] is not None or key[2] is not None
            yield None if identified and key == prompt else (OTHER, None, (index,))
            prompt = key if identified else None
        elif role == "system":
            yield OTHER, None, (index,)
            prompt = None
        elif text is not None and (text.strip() or not _tool_activity(item)):
            yield ASSISTANT, text, ()  # (an empty row with tool activity is dropped)
            prompt = None
    if batch:
        yield ASSISTANT, None, tuple(batch)


class _Builder:
    """Groups rows into provider messages while walking the list once."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.pairing = AdjacencyPairing()
        self._batch: Message | None = None
        self._run: Message | None = None

    def add(self, element: Element, position: int) -> None:
        """One row; ``position`` (its index in the list) names id-less calls, since rows of
        one JSONL line share their ``record``."""
        item = element.value
        if not isinstance(item, dict):
            return
        role = item.get("role")
        if role == "tool_call":
            self._tool_call(element, item, position)
        elif role == "tool_result":
            self._tool_result(element, item, position)
        elif role in ("user", "assistant", "system") and isinstance(item.get("content"), str):
            self._batch = self._run = None
            self.pairing.boundary()
            self._plain(element, item, role)

    def _tool_call(self, element: Element, item: dict[str, Any], position: int) -> None:
        self._run = None
        origin = element.at()
        if self._batch is None:
            self._batch = Message(Role.ASSISTANT, [], origin, ref=element.record)
            self.messages.append(self._batch)
        name = _name(item)
        call_id = _call_id(item)
        paired_by = "id"
        if call_id is None:
            call_id, paired_by = self.pairing.call(position, name).call_id, "adjacency"
        part = Part(
            PartKind.TOOL_CALL,
            origin,
            call_id=call_id,
            name=name,
            paired_by=paired_by,
            ref=element.record,
        )
        self._batch.parts.append(part)

    def _tool_result(self, element: Element, item: dict[str, Any], position: int) -> None:
        self._batch = None
        origin = element.at()
        if self._run is None:
            self._run = Message(Role.USER, [], origin, ref=element.record)
            self.messages.append(self._run)
        name = _name(item)
        call_id = _call_id(item)
        paired_by = "id"
        if call_id is None:
            call_id, name = self.pairing.result(position, name)
            paired_by = "adjacency"
        part = Part(
            PartKind.TOOL_RESULT,
            origin,
            call_id=call_id,
            name=name,
            paired_by=paired_by,
            is_error=_is_error(item),
            ref=element.record,
        )
        self._run.parts.append(part)

    def _plain(self, element: Element, item: dict[str, Any], role: str) -> None:
        content: str = item["content"]
        if role == "assistant" and not content.strip() and _tool_activity(item):
            return  # tool-only turn marker: every replay path drops empty assistant text
        text = Part(PartKind.TEXT, element.at("content"), text=content, ref=element.record)
        if role == "user":
            dup = (content, item.get("id"), item.get("timestamp"))
            has_identity = dup[1] is not None or dup[2] is not None
            message = Message(
                Role.USER, [text], element.at(), dup_key=dup if has_identity else None, ref=element.record
            )
        else:
            kind = Role.ASSISTANT if role == "assistant" else Role.SYSTEM
            message = Message(kind, [text], element.at(), ref=element.record)
        self.messages.append(message)


class NeurolinkReader(Reader):
    name = "neurolink"
    # First record: the conversation object's messages, or a ChatMessage list's first row.
    first_keys = frozenset({"messages", "role"})
    summary = "NeuroLink conversation exports (Redis conversation object, ChatMessage[])"
    # A TypeScript SDK: JSON.parse (how it reads the bytes: not verified).
    loader = NODE

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSON:
            return None  # both shapes are single JSON documents
        value = source.value
        found = None
        if isinstance(value, dict):
            found = _detect_object(value)
        elif isinstance(value, list):
            found = _detect_list(value)
        return self.claim(*found) if found else None

    def read(self, source: Source) -> list[Conversation]:
        return self.read_screened(source, None)

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        per_line = conversation_lines(source, KEYS)
        value = source.value if source.container is Container.JSON else None
        cut = None if screen is None else (lambda items: screened(screen, _turns(items, value)))
        return [
            built(found, lambda listing: self._conversation(listing, value))
            for found in listings(source, KEYS, per_line, cut)
        ]

    def _conversation(self, listing: Listing, document: Any) -> Conversation:
        """The replayed rows; a listing cut by the screen starts after the summary cut
        already (the screen reads only replayed rows)."""
        elements = listing.elements
        start = 0 if listing.start else _replay_start(document, [e.value for e in elements])
        builder = _Builder()
        for position in range(start, len(elements)):
            builder.add(elements[position], listing.start + position)
        base = elements[0].pointer.rsplit("/", 1)[0] if elements else ""
        return Conversation(builder.messages, self.dialect, label=listing.label, ref=base)


READER = NeurolinkReader()
