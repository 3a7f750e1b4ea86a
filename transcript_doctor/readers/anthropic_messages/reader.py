"""Reader ``anthropic-messages``: Anthropic Messages API lists, incl. Cline / Roo Code api_conversation_history.json.

Spec: shared/spec/formats/anthropic-messages.md.  The same ``MessageParam`` shape is written
by request dumps, exports and the Cline / Roo Code task histories, so detection needs a
feature only this API (or those writers) has; plain role/content lists stay with
``openai-chat``.  Cline answers native ``tool_use`` blocks with plain user text
(``[read_file for 'x'] Result:``) when it cannot map a call id: those are paired by
adjacency, or every call of such a history would look unanswered.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from functools import partial
from typing import Any, Final

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn
from transcript_doctor.model import Conversation, Message, Origin, Part, PartKind, Role
from transcript_doctor.plain import Value
from transcript_doctor.readers.anthropic_messages.cline import TEXT_RESULT
from transcript_doctor.readers.base import SPECIFIC, Detection, Reader
from transcript_doctor.readers.listing import (
    Element,
    Listing,
    built,
    conversation_lines,
    listings,
    provable,
    sample,
    screened,
)
from transcript_doctor.source import Container, Source

KEYS = ("messages",)
ROLES = frozenset({"user", "assistant"})
TEXT_KEYS = frozenset({"role", "content"})  # a message of these keys holds no vendor bookkeeping
ANTHROPIC_ONLY_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use"}
)
MEDIA_BLOCKS = frozenset({"image", "document"})
# Keys only Chat Completions messages carry: such a list is never a MessageParam list.
OPENAI_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call"})
CLINE_KEYS = frozenset({"modelInfo", "metrics"})
# Roo Code ApiMessage bookkeeping (src/core/task-persistence/apiMessages.ts).  `id`, `text`
# and `reasoning_content` are left out: OpenAI-compatible exports carry them too.
ROO_KEYS = frozenset(
    {"isSummary", "condenseId", "condenseParent", "truncationId", "truncationParent", "isTruncationMarker"}
)
BOOKKEEPING_KEYS = CLINE_KEYS | ROO_KEYS
UI_MESSAGE_TYPES = frozenset({"say", "ask"})
TASK_METADATA_KEYS = frozenset({"files_in_context", "model_usage", "environment_history"})


class Ref(Value):
    """Where a message or block sits, for ``fix``: message index in its list, block index.

    ``block`` is ``None`` for the message itself or a string ``content``.
    """

    __slots__ = ("block", "message")
    message: Final[int]
    block: Final[int | None]

    def __init__(self, message: int, block: int | None = None) -> None:
        self.message = message
        self.block = block


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shape(items: list[Any]) -> tuple[bool, bool] | None:
    """Whether a list of MessageParams (and Roo Code reasoning items) holds Cline / Roo Code
    bookkeeping (a Roo reasoning item, or a key of theirs next to a MessageParam), and
    whether one holds a block only Anthropic's API has (only until either is answered:
    bookkeeping settles the claim, and a Cline history of text-protocol results has no
    such block to find); None when an item is neither (no such role, a key only Chat
    Completions messages carry) or every one is a Roo reasoning item.  One pass, each
    question asked until it is answered: detection asks it of every message of a document."""
    vendor = anthropic = False
    messages = False  # an item that is not a Roo reasoning item
    for item in items:
        if item.__class__ is dict and item.keys() <= TEXT_KEYS and item.get("content").__class__ is not list:
            # The usual message (role and text): no bookkeeping, no block, only its role to ask.
            if item.get("role") not in ROLES:
                return None
            messages = True
            continue
        if not isinstance(item, dict):
            return None
        if "role" not in item:
            if item.get("type") == "reasoning":
                # a Roo Code reasoning item kept in the list: not a MessageParam, not replayed
                vendor = True
                continue
            return None
        if item["role"] not in ROLES or not OPENAI_KEYS.isdisjoint(item):
            return None
        messages = True
        if vendor:
            continue  # settled: only the roles are left to ask
        vendor = ("ts" in item and _int(item["ts"])) or not BOOKKEEPING_KEYS.isdisjoint(item)
        if not (anthropic or vendor):
            anthropic = _anthropic_only(item)
    return (vendor, anthropic) if messages else None


def _anthropic_block(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    kind = _str(block.get("type"))
    if kind in ANTHROPIC_ONLY_BLOCKS or (kind == "image" and "source" in block):
        return True
    return isinstance(kind, str) and kind.endswith("_tool_result")


def _anthropic_only(item: Any) -> bool:
    content = item.get("content") if isinstance(item, dict) else None
    return isinstance(content, list) and any(_anthropic_block(b) for b in content)


def _has_system(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("messages"), list) and "system" in record


def _top_level_system(source: Source, per_line: bool) -> bool:
    if source.container is Container.JSON:
        return _has_system(source.value)
    if not per_line:
        return False
    # Every record of the head holds a ``messages`` list (``sample`` found one on each).
    return any("system" in record for record in source.head())


def _companion(source: Source) -> str | None:
    """What a Cline / Roo Code sibling file is, if it is one (never a transcript)."""
    if source.container is not Container.JSON:
        return None
    value = source.value
    if isinstance(value, dict):
        files = value.get("files_in_context")
        if isinstance(files, list) and set(value) <= TASK_METADATA_KEYS:
            return "Cline/Roo task_metadata.json (files in context, not a conversation)"
        return None
    if not isinstance(value, list) or not value or not isinstance(value[0], dict):
        return None
    # The first item tells most lists apart before every item is checked to be an object.
    first = value[0]
    ui = first.get("type") in UI_MESSAGE_TYPES and _int(first.get("ts")) and "role" not in first
    if not (ui or (isinstance(first.get("task"), str) and _int(first.get("ts")) and "tokensIn" in first)):
        return None
    if not all(isinstance(i, dict) for i in value):
        return None
    if all(i.get("type") in UI_MESSAGE_TYPES and _int(i.get("ts")) and "role" not in i for i in value):
        return (
            "Cline/Roo ui_messages.json (display messages; the API history is api_conversation_history.json)"
        )
    if all(isinstance(i.get("task"), str) and _int(i.get("ts")) and "tokensIn" in i for i in value):
        return "Cline taskHistory.json (index of tasks, not a conversation)"
    return None


class AnthropicMessagesReader(Reader):
    name = "anthropic-messages"
    # First record: messages or a MessageParam (a Roo reasoning item: type), or a Cline companion's keys.
    first_keys = frozenset({"messages", "role", "type", "task", "files_in_context"})
    summary = "Anthropic Messages API lists, incl. Cline / Roo Code api_conversation_history.json"

    def detect(self, source: Source) -> Detection | None:
        companion = _companion(source)
        if companion is not None:
            return self.claim(companion, SPECIFIC, transcript=False)
        items, per_line = sample(source, KEYS)
        shape = _shape(items)
        if shape is None:
            return None
        vendor, anthropic = shape
        if vendor:
            return self.claim("Cline/Roo api_conversation_history", SPECIFIC)
        if anthropic or _top_level_system(source, per_line):
            return self.claim("Anthropic MessageParam list", SPECIFIC)
        return None

    def read(self, source: Source) -> list[Conversation]:
        return self.read_screened(source, None)

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        per_line = conversation_lines(source, KEYS)
        return [
            built(found, partial(_conversation, system=system, origin=origin, reader=self))
            for found, system, origin in _documents(source, per_line, screen)
        ]


def _documents(
    source: Source, per_line: bool, screen: Screen | None
) -> Iterator[tuple[Listing, Any, Origin]]:
    """Each conversation's elements with its top-level ``system`` (None if absent) and where
    that sits (a document's, or each line's in Bedrock-style fine-tuning JSONL);
    conversations ``screen`` proves clean are left out."""
    # The turns end where the list does: a partial suffix is asked of the final reply only.
    cut = None if screen is None else (lambda items: screened(screen, _plain_turns(items), exact_end=True))
    proof = None
    if screen is not None and per_line and provable(source):
        from transcript_doctor.readers.anthropic_messages import fast  # msgspec: loaded on first use

        proof = fast.proof(screen, _plain_turns)
    for listing in listings(source, KEYS, per_line, cut, proof):
        holder = listing.holder
        if holder is None:
            yield listing, None, Origin(0, 0)
            continue
        system = holder.value.get("system") if isinstance(holder.value, dict) else None
        yield listing, system, holder.at("system")


def _plain_turns(items: list[Any]) -> Iterator[Turn | None]:
    """The turns of a conversation of MessageParams holding text, thinking that needs no
    signature or has one, and id-paired tool blocks, read the way ``_conversation`` reads
    them, up to a message holding anything else (None: unsigned Claude thinking, other
    blocks).  Lazily: the screen stops reading at its first doubt.

    What ``_conversation`` makes no message of makes no turn: the top-level ``system`` (no
    rule reads system text), and entries that are no user or assistant MessageParam (Roo
    Code's reasoning items).  Keys beside ``role`` and ``content`` (Cline's ``ts`` and
    ``metrics``, Roo's condensing marks) are left out too: ``_conversation`` reads only
    those two.  Cline's text answers to the calls just made are results, paired as
    ``_pair_text_results`` pairs them.
    """
    calls: tuple[Hashable, ...] = ()  # the call ids of the message just read, if an assistant's
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        role, content = item.get("role"), item.get("content")
        if role == "assistant":
            turn = _assistant_turn(content)
            yield turn
            if turn is None:
                return
            calls = turn[2]
        elif role == "user":
            found = _user_turns(content, index, calls)
            calls = ()
            if found is None:
                yield None
                return
            yield from found


def _assistant_turn(content: Any) -> Turn | None:
    if isinstance(content, str):
        return ASSISTANT, content, ()
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    ids: list[str] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use" and isinstance(block.get("id"), str):
            ids.append(block["id"])
        elif not (
            kind == "redacted_thinking"
            or (kind == "thinking" and _signed(block))
            # Roo Code's thinking of other providers and kept Gemini signatures (``_block``):
            # thinking parts that need no signature, which no rule flags.
            or kind == "reasoning"
            or kind == "thoughtSignature"
        ):
            return None  # TD402, or a block the screen does not know
    return ASSISTANT, "".join(texts) if texts else None, tuple(ids)


def _signed(block: dict[str, Any]) -> bool:
    signature = block.get("signature")
    return isinstance(signature, str) and bool(signature)


def _user_turns(content: Any, index: int, calls: tuple[Hashable, ...]) -> list[Turn] | None:
    """The message's results (they all sit in this one message), then the message itself
    when it also holds a prompt (or nothing at all).

    ``calls`` are the ids of the calls of the assistant turn right before it: when the
    message holds no ``tool_result`` block, its texts that are Cline's text answers
    (``TEXT_RESULT``) answer them in order, one each, as ``_pair_text_results`` makes
    them results; the texts left over are the prompt."""
    if isinstance(content, str):
        if calls and TEXT_RESULT.match(content):
            return [(RESULT, None, (calls[0],))]  # an answer, and nothing else
        return [(OTHER, None, (index,))]
    if not isinstance(content, list):
        return None
    answers: list[Hashable] = []
    if calls:
        for block in content:  # a loop, not any(): asked of every user message
            if _result_block(block):
                break
        else:
            answers = list(calls)
            answers.reverse()  # popped from the end: the first call first
    turns: list[Turn] = []
    prompt = not content
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_result" and isinstance(block.get("tool_use_id"), str):
            turns.append((RESULT, None, (block["tool_use_id"],)))
        elif kind == "text":
            text = block.get("text")
            if answers and isinstance(text, str) and TEXT_RESULT.match(text):
                turns.append((RESULT, None, (answers.pop(),)))
            else:
                prompt = True
        elif kind == "image" or kind == "document":  # MEDIA_BLOCKS; `kind` may be unhashable
            prompt = True
        else:
            return None
    return [*turns, (OTHER, None, (index,))] if prompt else turns


def _result_block(block: Any) -> bool:
    """A block ``_block`` makes a TOOL_RESULT part of (whatever its id)."""
    return isinstance(block, dict) and block.get("type") == "tool_result"


def _conversation(listing: Listing, system: Any, origin: Origin, reader: Reader) -> Conversation:
    messages: list[Message] = []
    if system is not None:
        messages.append(Message(Role.SYSTEM, _system_parts(system, origin), origin))
    calls: list[Part] = []  # tool calls of the message just read, if it was an assistant turn
    for position, element in enumerate(listing.elements, listing.start):
        item = element.value
        if not isinstance(item, dict):
            continue
        role = item.get("role")
        if role == "assistant":
            message = Message(Role.ASSISTANT, _parts(element, position), element.at(), ref=Ref(position))
            calls = message.tool_calls
        elif role == "user":
            message = Message(Role.USER, _parts(element, position), element.at(), ref=Ref(position))
            if calls and not message.tool_results:
                _pair_text_results(message, calls)
            calls = []
        else:
            continue  # Roo reasoning items and unknown entries are not MessageParams
        messages.append(message)
    return Conversation(messages, reader.dialect, label=listing.label)


def _system_parts(system: Any, origin: Origin) -> list[Part]:
    if isinstance(system, str):
        return [Part(PartKind.TEXT, origin, text=system)]
    parts: list[Part] = []
    if isinstance(system, list):
        base = origin.pointer or ""
        for index, block in enumerate(system):
            text = block.get("text") if isinstance(block, dict) else None
            at = Origin(origin.line, origin.record, f"{base}/{index}")
            parts.append(Part(PartKind.TEXT, at, text=text if isinstance(text, str) else ""))
    return parts


def _parts(element: Element, position: int) -> list[Part]:
    content = element.value.get("content")
    if isinstance(content, str):
        return [Part(PartKind.TEXT, element.at("content"), text=content, ref=Ref(position))]
    if not isinstance(content, list):
        return []
    return [
        _block(block, element.at("content", index), Ref(position, index))
        for index, block in enumerate(content)
    ]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _block(block: Any, origin: Origin, ref: Ref) -> Part:
    if not isinstance(block, dict):
        return Part(PartKind.OTHER, origin, ref=ref)
    kind = _str(block.get("type"))
    if kind == "text":
        return Part(PartKind.TEXT, origin, text=_str(block.get("text")) or "", ref=ref)
    if kind == "tool_use":
        return Part(
            PartKind.TOOL_CALL, origin, call_id=_str(block.get("id")), name=_str(block.get("name")), ref=ref
        )
    if kind == "tool_result":
        return Part(
            PartKind.TOOL_RESULT,
            origin,
            call_id=_str(block.get("tool_use_id")),
            is_error=block.get("is_error") is True,
            ref=ref,
        )
    if kind == "thinking":
        return Part(
            PartKind.THINKING,
            origin,
            text=_str(block.get("thinking")) or "",
            signature=_str(block.get("signature")),
            needs_signature=True,
            ref=ref,
        )
    if kind == "redacted_thinking":
        # The encrypted `data` is the block's proof of origin: it plays the signature's part.
        return Part(PartKind.THINKING, origin, signature=_str(block.get("data")), ref=ref)
    if kind == "reasoning":  # Roo Code: reasoning of non-Anthropic providers, no signature demanded
        return Part(
            PartKind.THINKING,
            origin,
            text=_str(block.get("text")) or "",
            signature=_str(block.get("encrypted_content")),
            ref=ref,
        )
    if kind == "thoughtSignature":  # Roo Code: a Gemini signature kept as its own block
        return Part(PartKind.THINKING, origin, signature=_str(block.get("thoughtSignature")), ref=ref)
    if kind in MEDIA_BLOCKS:
        return Part(PartKind.MEDIA, origin, ref=ref)
    return Part(PartKind.OTHER, origin, ref=ref)  # server_tool_use, *_tool_result, …


def _pair_text_results(message: Message, calls: list[Part]) -> None:
    """Turn Cline's plain-text answers to the previous turn's calls into paired results.

    The k-th answer text answers the k-th call (Cline pushes them in call order); the
    calls and results are marked as paired by adjacency so that findings say so.
    """
    answers = [
        i for i, p in enumerate(message.parts) if p.kind is PartKind.TEXT and TEXT_RESULT.match(p.text)
    ]
    if not answers:
        return
    for call in calls:
        call.paired_by = "adjacency"
        if call.call_id is None:
            call.call_id = f"adjacency@{call.origin.record}:{call.origin.pointer}"
    for index, call in zip(answers, calls, strict=False):  # extra answers stay text
        text = message.parts[index]
        message.parts[index] = Part(
            PartKind.TOOL_RESULT,
            text.origin,
            text=text.text,
            call_id=call.call_id,
            name=call.name,
            paired_by="adjacency",
            ref=text.ref,
        )


READER = AnthropicMessagesReader()
