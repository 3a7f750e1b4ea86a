"""Codex ResponseItems regrouped into vendor-neutral messages (reader ``codex``).

A rollout stores one Responses API item per line.  The model's turn is the run of
assistant-side items (reasoning, assistant messages, calls) between two input items, so
that run is one assistant message; consecutive outputs are one user message of tool
results; prompts are user messages; injected context (developer messages, AGENTS.md,
``<environment_context>``, ``<turn_aborted>`` markers) is system-like context.

Codex records context *while* a tool runs (the developer note ``Approved command prefix
saved: …`` lands between a call and its output) and sends it that way, so such context is
held back behind the outputs that follow it: context never separates an output from its
call, only a real prompt or another model turn does (TD304).
"""

from __future__ import annotations

from typing import Any, Final

from transcript_doctor.jsonspan import join
from transcript_doctor.model import Message, Origin, Part, PartKind, Role
from transcript_doctor.plain import Value
from transcript_doctor.source import Line, Source

# User messages Codex injects itself (`is_contextual_user_fragment`: one fragment makes the
# whole message context).  Matched case-insensitively on the start of an input_text.
CONTEXT_OPENERS = (
    "# agents.md instructions for ",
    "<environment_context>",
    "<user_instructions>",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagents>",
    "<subagent_notification>",
)
TEXT_CONTENT = frozenset({"input_text", "output_text", "text"})
MEDIA_CONTENT = frozenset({"input_image", "image"})
RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
ASSISTANT_OTHER = frozenset({"web_search_call", "agent_message"})  # Unconfirmed: agent_message shape
CONTEXT_ITEMS = frozenset({"compaction", "compaction_summary"})


class ItemRef(Value):
    """Where one item lives, for a later fix (``Part.ref``; ``Message.ref`` lists them).

    ``record`` is the 0-based record index of its line; ``history`` the index inside that
    line's ``compacted.replacement_history``; ``content`` the index in the item's content
    list for a text part.  ``kind`` is the item's ``type`` (the shape a fix must write).
    """

    __slots__ = ("content", "history", "kind", "record")
    record: Final[int]
    kind: Final[str]
    history: Final[int | None]
    content: Final[int | None]

    def __init__(
        self, record: int, kind: str, history: int | None = None, content: int | None = None
    ) -> None:
        self.record = record
        self.kind = kind
        self.history = history
        self.content = content


class At(Value):
    """Where an item is being read: its line, and the JSON Pointer of the item in it.

    ``item`` is None when the item is the whole record (a finding then names the line);
    ``inner`` prefixes pointers into the item (``/payload`` for an envelope line).
    ``line`` is None for items inside a replacement_history (no own timestamp or bytes).
    """

    __slots__ = ("history", "inner", "item", "line", "number", "record")
    number: Final[int]
    record: Final[int]
    item: Final[str | None]
    inner: Final[str]
    line: Final[Line | None]
    history: Final[int | None]

    def __init__(
        self,
        number: int,
        record: int,
        item: str | None,
        inner: str,
        line: Line | None,
        history: int | None = None,
    ) -> None:
        self.number = number
        self.record = record
        self.item = item
        self.inner = inner
        self.line = line
        self.history = history

    def origin(self, *tokens: str | int) -> Origin:
        if not tokens:
            return Origin(self.number, self.record, self.item)
        return Origin(self.number, self.record, self.inner + join(*tokens))

    def ref(self, kind: str, content: int | None = None) -> ItemRef:
        return ItemRef(self.record, kind, self.history, content)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _texts(value: Any, key: str) -> list[str]:
    if not isinstance(value, list):
        return []
    return [b[key] for b in value if isinstance(b, dict) and isinstance(b.get(key), str)]


def _is_context(content: Any) -> bool:
    return any(t.lstrip()[:40].lower().startswith(CONTEXT_OPENERS) for t in _texts(content, "text"))


def _content_parts(content: Any, at: At, kind: str) -> list[Part]:
    if isinstance(content, str):  # not what Codex writes, but readable
        return [Part(PartKind.TEXT, at.origin("content"), text=content, ref=at.ref(kind))]
    parts: list[Part] = []
    if not isinstance(content, list):
        return parts
    for index, block in enumerate(content):
        origin = at.origin("content", index)
        ref = at.ref(kind, index)
        block_type = _str(block.get("type")) if isinstance(block, dict) else None
        if block_type in TEXT_CONTENT and isinstance(block.get("text"), str):
            parts.append(Part(PartKind.TEXT, origin, text=block["text"], ref=ref))
        elif block_type in MEDIA_CONTENT:
            parts.append(Part(PartKind.MEDIA, origin, ref=ref))
        else:
            parts.append(Part(PartKind.OTHER, origin, ref=ref))
    return parts


def _blank(parts: list[Part]) -> bool:
    """An assistant message item with nothing but empty or whitespace text."""
    return all(p.kind is PartKind.TEXT and not p.text.strip() for p in parts)


class History:
    """Builds the replayed messages item by item, streaming (nothing parsed is kept)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.reset()

    def reset(self) -> None:
        """Forget everything: a compacted line replaces the history rebuilt so far."""
        self.messages: list[Message] = []
        self.run: Message | None = None  # the open assistant turn
        self.results: Message | None = None  # the open run of outputs
        self.held: list[Message] = []  # context waiting behind outputs
        self.names: dict[str, str] = {}  # call id -> tool name, to name results
        self.voiced = False  # the open turn has an assistant message (its origin)
        self.calls = False  # the open turn has tool calls

    def append(self, message: Message) -> None:
        self._flush()
        self.run = self.results = None
        self.messages.append(message)

    def rollback(self, turns: int) -> None:
        """``thread_rolled_back``: the newest ``turns`` user turns leave the history.

        Codex replays it as ``drop_last_n_user_turns``: everything from the n-th last real
        prompt on goes (all prompts when there are fewer); context before them stays.
        """
        self._flush()
        cut: int | None = None
        seen = 0
        for index in range(len(self.messages) - 1, -1, -1):
            if seen >= turns:
                break
            message = self.messages[index]
            if message.role is Role.USER and message.is_prompt:
                cut = index
                seen += 1
        if cut is not None:
            del self.messages[cut:]
            self.run = self.results = None

    def finish(self) -> list[Message]:
        self._flush()
        return self.messages

    def add(self, item: Any, at: At) -> None:
        """One ResponseItem; anything not understood is left out (never an error)."""
        if not isinstance(item, dict):
            return
        kind = _str(item.get("type"))
        if kind == "message":
            self._message(item, at)
        elif kind == "reasoning":
            self._reasoning(item, at)
        elif kind in ("function_call", "custom_tool_call"):
            self._call(at, kind, item.get("call_id"), item.get("name"))
        elif kind == "local_shell_call":
            self._call(at, kind, item.get("call_id"), "local_shell")
        elif kind == "tool_search_call":
            # Unconfirmed: server-executed searches carry their output in the same response.
            if item.get("execution") == "server":
                self._assistant_part(Part(PartKind.OTHER, at.origin(), ref=at.ref(kind)), at)
            else:
                self._call(at, kind, item.get("call_id"), "tool_search")
        elif kind in RESULT_ITEMS:
            self._output(item, at, kind)
        elif kind == "tool_search_output":
            if item.get("execution") == "server":
                self._assistant_part(Part(PartKind.OTHER, at.origin(), ref=at.ref(kind)), at)
            else:
                self._output(item, at, kind)
        elif kind in ASSISTANT_OTHER:
            self._assistant_part(Part(PartKind.OTHER, at.origin(), ref=at.ref(kind)), at)
        elif kind == "image_generation_call":
            self._assistant_part(Part(PartKind.MEDIA, at.origin(), ref=at.ref(kind)), at)
        elif kind in CONTEXT_ITEMS:
            part = Part(PartKind.OTHER, at.origin(), ref=at.ref(kind))
            self._context(Message(Role.SYSTEM, [part], at.origin(), ref=[at.ref(kind)]))
        # ghost_snapshot (undo snapshots) and unknown newer kinds are not messages.

    # -- input side ------------------------------------------------------------------

    def _message(self, item: dict[str, Any], at: At) -> None:
        role = item.get("role")
        content = item.get("content")
        if role == "assistant":
            self._assistant_message(content, at)
            return
        parts = _content_parts(content, at, "message")
        refs = [at.ref("message")]
        if role == "user" and not _is_context(content):
            self.append(Message(Role.USER, parts, at.origin(), dup_key=self._dup_key(at), ref=refs))
        else:
            self._context(Message(Role.SYSTEM, parts, at.origin(), ref=refs))

    def _dup_key(self, at: At) -> bytes | None:
        """An exact byte copy of a prompt line is a harness duplicate (TD403).

        Each line carries its own timestamp, so a prompt typed twice never matches; items
        inside a replacement_history have no timestamp and cannot tell.
        """
        if at.line is None:
            return None
        import hashlib  # OpenSSL's start-up is paid only by files that need a digest

        return hashlib.blake2b(self.source.line_bytes(at.line), digest_size=16).digest()

    def _context(self, message: Message) -> None:
        """Context ends the model's turn, but waits behind any outputs that follow it."""
        self.run = None
        self.held.append(message)

    def _output(self, item: dict[str, Any], at: At, kind: str) -> None:
        call_id = _str(item.get("call_id"))
        output = item.get("output")
        part = Part(
            PartKind.TOOL_RESULT,
            at.origin(),
            call_id=call_id,
            name=self.names.get(call_id) if call_id is not None else None,
            # Unconfirmed: older builds may store a failed output as {content, success: false}.
            is_error=isinstance(output, dict) and output.get("success") is False,
            ref=at.ref(kind),
        )
        if self.results is None:
            self.results = Message(Role.USER, [], at.origin(), ref=[])
            self.messages.append(self.results)
        self.run = None
        self.results.parts.append(part)
        self._refs(self.results).append(at.ref(kind))

    def _flush(self) -> None:
        if self.held:
            self.messages.extend(self.held)
            self.held = []
            self.results = None

    # -- assistant side --------------------------------------------------------------

    def _turn(self, at: At) -> Message:
        self._flush()
        if self.run is None:
            self.run = Message(Role.ASSISTANT, [], at.origin(), ref=[])
            self.messages.append(self.run)
            self.results = None
            self.voiced = self.calls = False
        return self.run

    def _assistant_part(self, part: Part, at: At) -> None:
        turn = self._turn(at)
        turn.parts.append(part)
        self._refs(turn).append(part.ref)

    def _call(self, at: At, kind: str, call_id: Any, name: Any) -> None:
        call_id = _str(call_id)
        if kind == "local_shell_call" and call_id is None:
            # Without a call_id Codex expects no output for it (Chat Completions era).
            self._assistant_part(Part(PartKind.OTHER, at.origin(), ref=at.ref(kind)), at)
            return
        tool = _str(name)
        if call_id is not None and tool is not None:
            self.names[call_id] = tool
        self._assistant_part(
            Part(PartKind.TOOL_CALL, at.origin(), call_id=call_id, name=tool, ref=at.ref(kind)), at
        )
        self.calls = True

    def _reasoning(self, item: dict[str, Any], at: At) -> None:
        text = "\n".join(_texts(item.get("summary"), "text") + _texts(item.get("content"), "text"))
        # Encrypted reasoning is opaque content the model gets back, like a signature.
        signature = _str(item.get("encrypted_content")) or None
        part = Part(PartKind.THINKING, at.origin(), text=text, signature=signature, ref=at.ref("reasoning"))
        self._assistant_part(part, at)

    def _assistant_message(self, content: Any, at: At) -> None:
        parts = _content_parts(content, at, "message")
        if _blank(parts) and not (self.run is not None and self.calls):
            # The empty item is its own turn, so TD103 names it and a fix removes just it;
            # reasoning before it stays a turn of its own (not empty: it is content).
            self.append(Message(Role.ASSISTANT, parts, at.origin(), ref=[at.ref("message")]))
            return
        turn = self._turn(at)
        if not self.voiced:
            turn.origin = at.origin()  # turn-level findings name the assistant message
            self.voiced = True
        turn.parts.extend(parts)
        self._refs(turn).append(at.ref("message"))

    @staticmethod
    def _refs(message: Message) -> list[object]:
        refs = message.ref
        assert isinstance(refs, list)
        return refs
