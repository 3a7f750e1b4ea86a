"""Reader ``openai-chat``: OpenAI Chat Completions message lists.

Spec: shared/spec/formats/openai-chat.md.  No vendor writes these files, so detection is
by shape: every message has a Chat Completions role, and either something only that API
has (tool roles, ``tool_calls``, ``image_url`` parts…) or nothing only Anthropic has.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

from transcript_doctor.analysis.screen import OTHER, RESULT, Screen, Turn
from transcript_doctor.model import Conversation, Message, Part, PartKind, Role
from transcript_doctor.readers.base import FALLBACK, SHAPE, Detection, Reader
from transcript_doctor.readers.listing import (
    WHOLE,
    Cut,
    Element,
    Listing,
    built,
    chat_assistant_turn,
    chat_tool_calls,
    conversation_lines,
    listings,
    provable,
    sample,
    screened,
)
from transcript_doctor.source import Source, fingerprint

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
OPENAI_ONLY_ROLES = frozenset({"system", "developer", "tool", "function"})
PROMPT_ROLES = frozenset({"user", "system", "developer"})  # read as prompts: no rule reads them
OPENAI_ONLY_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
ANTHROPIC_ONLY_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use"}
)
MEDIA_PARTS = frozenset({"image_url", "input_audio", "file"})
KEYS = ("messages",)
# What a Cline / Roo Code message carries (``_anthropic_only``), and what only a message
# of this API does besides its role and content (``_openai_only``).
VENDOR_KEYS = frozenset({"ts", "modelInfo", "metrics"})
CALL_KEYS = frozenset({"tool_calls", "tool_call_id"})
IDENTITY_KEYS = frozenset({"id", "timestamp", "ts", "created_at", "created"})
# Messages with only these keys are read as at most one text part plus tool calls or a
# tool result; `name` (a participant's name) and `weight` (fine-tuning) change nothing.
PLAIN_KEYS = frozenset({"role", "content", "name", "weight", "tool_calls", "tool_call_id"})


def _is_message(item: Any) -> bool:
    if not isinstance(item, dict) or item.get("role") not in ROLES:
        return False
    content = item.get("content")
    if content is None or isinstance(content, (str, list)):
        return "content" in item or "tool_calls" in item or "function_call" in item
    return False


def _api_messages(items: list[Any]) -> bool | None:
    """Whether every item is a message of this API and of no other (``_is_message``, not
    ``_anthropic_only``; None when one is not), and one holds something only this API has
    (``_openai_only``).  The usual message (a string or null ``content``, no Cline/Roo key)
    is told without their calls: detection asks it of every message of a document."""
    openai = False
    for item in items:
        if item.__class__ is dict:
            role = item.get("role")
            content = item.get("content", _MISSING)
            if (
                role.__class__ is str
                and role in ROLES
                and (content is None or content.__class__ is str)
                and VENDOR_KEYS.isdisjoint(item)
            ):
                # ``_openai_only`` of such a message (its content is no list of parts)
                if not openai:
                    openai = role in OPENAI_ONLY_ROLES or content is None or not CALL_KEYS.isdisjoint(item)
                continue
        # a list (its blocks are asked), no content, or another value
        if not _is_message(item) or _anthropic_only(item):
            return None
        openai = openai or _openai_only(item)
    return openai


_MISSING = object()


def _openai_only(item: dict[str, Any]) -> bool:
    if item.get("role") in OPENAI_ONLY_ROLES or "tool_calls" in item or "tool_call_id" in item:
        return True
    if "content" in item and item["content"] is None:
        return True
    content = item.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") in OPENAI_ONLY_PARTS for b in content
    )


def _anthropic_only(item: dict[str, Any]) -> bool:
    content = item.get("content")
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind in ANTHROPIC_ONLY_BLOCKS or (kind == "image" and "source" in block):
                return True
            if isinstance(kind, str) and kind.endswith("_tool_result"):
                return True
    return isinstance(item.get("ts"), int) or "modelInfo" in item or "metrics" in item


class OpenAIChatReader(Reader):
    name = "openai-chat"
    # First record: a fine-tuning line's or document's messages, or the first message.
    first_keys = frozenset({"messages", "role"})
    summary = "OpenAI Chat Completions message lists (JSON array, {messages}, JSONL, fine-tuning JSONL)"

    def detect(self, source: Source) -> Detection | None:
        items, per_line = sample(source, KEYS)
        if not items:
            return None
        openai = _api_messages(items)
        if openai is None:
            return None
        shape = (
            "fine-tuning JSONL, one conversation per line" if per_line else "Chat Completions message list"
        )
        if openai:
            return self.claim(shape, SHAPE)
        return self.claim(f"{shape} (ambiguous: plain role/content messages)", FALLBACK)

    def read(self, source: Source) -> list[Conversation]:
        return self.read_screened(source, None)

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        per_line = conversation_lines(source, KEYS)
        cut: Cut | None = None
        if screen is not None:
            cut = _line_cut(screen) if per_line else (lambda items: screened(screen, _plain_turns(items)))
        proof = None
        if screen is not None and per_line and provable(source):
            from transcript_doctor.readers.openai_chat import fast  # msgspec: loaded on first use

            proof = fast.proof(screen, _plain_turns)
        return [built(found, self._conversation) for found in listings(source, KEYS, per_line, cut, proof)]

    def _conversation(self, listing: Listing) -> Conversation:
        messages: list[Message] = []
        legacy_calls: list[Part] = []  # function_call parts awaiting a `function` reply
        block: Message | None = None  # the run of tool messages being read, one API slot
        for element in listing.elements:
            item = element.value
            if not isinstance(item, dict):
                continue
            role = item.get("role")
            if role in ("tool", "function"):
                part = self._result(element, legacy_calls)
                if block is None:
                    block = Message(Role.USER, [], element.at())
                    messages.append(block)
                block.parts.append(part)
                continue
            block = None
            if role == "assistant":
                messages.append(self._assistant(element, legacy_calls))
            elif role in ("system", "developer"):
                messages.append(Message(Role.SYSTEM, _content_parts(element), element.at()))
            elif role == "user":
                messages.append(
                    Message(Role.USER, _content_parts(element), element.at(), dup_key=_identity(item))
                )
        return Conversation(messages, self.dialect, label=listing.label)

    def _assistant(self, element: Element, legacy_calls: list[Part]) -> Message:
        item = element.value
        parts = _content_parts(element)
        if isinstance(item.get("refusal"), str) and item["refusal"]:
            parts.append(Part(PartKind.OTHER, element.at("refusal")))
        if item.get("audio"):
            parts.append(Part(PartKind.MEDIA, element.at("audio")))
        parts.extend(chat_tool_calls(element))
        legacy = item.get("function_call")
        if isinstance(legacy, dict):
            name = legacy.get("name")
            part = Part(
                PartKind.TOOL_CALL,
                element.at("function_call"),
                call_id=f"function_call@{element.record}:{element.pointer}",
                name=name if isinstance(name, str) else None,
                paired_by="adjacency",
            )
            legacy_calls.append(part)
            parts.append(part)
        return Message(Role.ASSISTANT, parts, element.at())

    def _result(self, element: Element, legacy_calls: list[Part]) -> Part:
        item = element.value
        if item.get("role") == "tool":
            call_id = item.get("tool_call_id")
            return Part(
                PartKind.TOOL_RESULT,
                element.at(),
                call_id=call_id if isinstance(call_id, str) else None,
            )
        # Legacy `function` messages have no ids: answer the latest open call of that name.
        name = item.get("name")
        for index in range(len(legacy_calls) - 1, -1, -1):
            call = legacy_calls[index]
            if call.name == name:
                del legacy_calls[index]
                return Part(
                    PartKind.TOOL_RESULT,
                    element.at(),
                    call_id=call.call_id,
                    name=call.name,
                    paired_by="adjacency",
                )
        return Part(
            PartKind.TOOL_RESULT,
            element.at(),
            call_id=f"function@{element.record}:{element.pointer}",
            name=name if isinstance(name, str) else None,
            paired_by="adjacency",
        )


def _line_cut(screen: Screen) -> Cut:
    """The screen's cut of a fine-tuning line's conversation: one of prompts and string
    replies is asked of its replies alone (``Screen.doubted_replies``), as ``fast.proof``
    asks such a line, and built whole when doubted; any other through ``_plain_turns``."""

    def cut(items: list[Any]) -> tuple[int, frozenset[Hashable]] | None:
        texts: list[str] = []
        final = False  # whether the last message is a reply
        plain = PLAIN_KEYS.issuperset
        for item in items:
            if item.__class__ is not dict or not plain(item):
                break
            role = item.get("role")
            content = item.get("content")
            if role == "assistant" and item.get("tool_calls") is None and content.__class__ is str:
                texts.append(content)
                final = True
            elif role.__class__ is str and role in PROMPT_ROLES:
                final = False  # text, media or parts: no rule reads them
            else:
                break
        else:
            doubted = screen.doubted_replies(texts, {len(texts) - 1} if final else set())
            return WHOLE if doubted else None
        return screened(screen, _plain_turns(items))

    return cut


def _plain_turns(items: list[Any]) -> Iterator[Turn | None]:
    """The turns of a conversation of text messages and id-paired tool exchanges, one per
    message, read the way ``_conversation`` reads them, up to a message holding anything
    else (None).  Lazily: the screen stops reading at its first doubt."""
    plain = PLAIN_KEYS.issuperset
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not plain(item):
            yield None
            return
        role = item.get("role")
        if role == "user" or role == "system" or role == "developer":
            yield OTHER, None, (index,)  # text, media or parts: no rule reads them
        elif role == "assistant":
            turn = chat_assistant_turn(item)
            yield turn
            if turn is None:
                return
        elif role == "tool" and isinstance(call_id := item.get("tool_call_id"), str):
            yield RESULT, None, (call_id,)
        else:
            yield None
            return


def _identity(item: dict[str, Any]) -> bytes | None:
    """What tells a harness's copy of a user message from a prompt typed twice (TD403).

    Chat Completions messages carry no timestamp, and a person who asks again after an
    empty answer writes an identical element.  Only elements that carry an identity of
    their own (an id or timestamp key some exporters add) can be told to be copies.
    Deviation from openai-chat.md §7, which would flag any identical neighbours.
    """
    if IDENTITY_KEYS.isdisjoint(item):
        return None
    return fingerprint(item)


def _content_parts(element: Element) -> list[Part]:
    content = element.value.get("content")
    if isinstance(content, str):
        origin = element.at("content")
        return [Part(PartKind.TEXT, origin, text=content, ref=origin)]
    parts: list[Part] = []
    if isinstance(content, list):
        for index, block in enumerate(content):
            origin = element.at("content", index)
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(
                    Part(PartKind.TEXT, origin, text=block["text"], ref=element.at("content", index, "text"))
                )
            elif isinstance(kind, str) and kind in MEDIA_PARTS:
                parts.append(Part(PartKind.MEDIA, origin))
            else:
                parts.append(Part(PartKind.OTHER, origin))
    return parts


READER = OpenAIChatReader()
