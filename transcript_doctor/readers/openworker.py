"""Reader ``openworker``: openworker conversation JSONL (OpenAI-shaped messages, notices, sidecars).

Spec: shared/spec/formats/openworker.md.  Confirmed in ``andrewyng/openworker`` @ 83ab5bd
(``coworker/conversations.py`` ``_append``: one ``json.dumps(m)`` per line;
``coworker/engine.py`` ``_outbound_messages``: the only provider feed).

The replayed history is what ``_outbound_messages`` builds: ``notice`` lines are dropped
(they stay here as NOTICE messages because TD101 reads them), and the display-only
sidecars ``ts``, ``source``, ``_display``, ``reasoning`` and ``usage`` are stripped, so
none of them becomes a part.  ``_anthropic.blocks`` is replayed verbatim to Anthropic
(``anthropic_provider.convert_messages``), so its thinking blocks are parts.  ``_openai.items``
repeat the turn's text and calls (same call ids) plus encrypted reasoning no rule reads, and
``_gemini`` signatures sit on the calls of the provider that made them: neither adds parts.

``ref`` slots, for ``fix``: every Message holds the 0-based line index of its record (a
run of ``tool`` lines is one Message whose ``ref`` is its first line); every TOOL_RESULT
part holds its own line index; every TOOL_CALL part holds the id exactly as stored (the
``tool_call_id`` an inserted result must carry).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from transcript_doctor.model import Conversation, Dialect, Message, Origin, Part, PartKind, Role
from transcript_doctor.readers.base import SPECIFIC, Detection, Reader
from transcript_doctor.source import Container, Line, Source

ROLES = frozenset({"system", "user", "assistant", "tool", "notice"})
SIDECARS = frozenset({"_anthropic", "_gemini", "_openai", "_display"})
MEDIA_PARTS = frozenset({"image_url", "file", "input_audio"})
# ConversationStore._file: <base>/conversations/<session_id>.jsonl
PATH = re.compile(r"(?:^|[\\/])conversations[\\/][^\\/]+\.jsonl$")
# engine._tool_error_message and _execute_sync write json.dumps({"error": …, …}).
ERROR_RESULT_PREFIX = '{"error": '


def _openworker_feature(item: dict[str, Any]) -> bool:
    if item.get("role") == "notice" or isinstance(item.get("ts"), float):
        return True
    return not SIDECARS.isdisjoint(item)


class OpenworkerReader(Reader):
    name = "openworker"
    summary = "openworker conversation JSONL (OpenAI-shaped messages, notices, sidecars)"
    # Anthropic and Gemini fold consecutive same-role messages, but a prompt between a call
    # and its results is still rejected (issue #331): pairing must not coalesce.  A turn
    # whose only content is `_anthropic` thinking is empty for every provider that strips
    # the sidecar, and the spec defines TD103 by `content` and `tool_calls` alone.
    dialect = Dialect(thinking_only_is_empty=True)

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSONL:
            return None
        head = source.head()
        if not head or not all(isinstance(i, dict) and i.get("role") in ROLES for i in head):
            return None
        if any(_openworker_feature(i) for i in head) or PATH.search(source.path):
            return self.claim("openworker message lines (`ts`, `notice`, provider sidecars)", SPECIFIC)
        return None

    def read(self, source: Source) -> list[Conversation]:
        return [_Builder(source).build(self.dialect)]


class _Builder:
    """Turns lines into messages in one pass, keeping only what the rules read."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.messages: list[Message] = []
        self.block: Message | None = None  # the run of `tool` lines being read: one API slot
        # Gemini synthesizes `call_<n>` per response (gemini_provider.stream), so ids repeat
        # across turns by design; every consumer (Gemini's id→name map, PR #350's repair)
        # answers the latest call with that id.  Pairing keys follow that scope.
        self.scope: dict[str, str] = {}
        self.used: set[str] = set()

    def build(self, dialect: Dialect) -> Conversation:
        # Unconfirmed: whether to lint messages before the compaction boundary.  It lives in
        # coworker.db (`sessions.compaction`), not in the JSONL, so the whole file is read.
        for line in self.source.lines:
            record = self.source.record(line)
            if isinstance(record, dict):
                self._add(line, record)
        return Conversation(self.messages, dialect)

    def _add(self, line: Line, item: dict[str, Any]) -> None:
        role = item.get("role")
        origin = Origin(line.number, line.index)
        if role == "notice":
            kind = item.get("kind")
            notice = kind if isinstance(kind, str) else None
            self.messages.append(Message(Role.NOTICE, [], origin, notice=notice, ref=line.index))
            return  # display-only: a run of results continues across it
        if role == "tool":
            self._result(line, item, origin)
            return
        self.block = None
        if role == "assistant":
            self.messages.append(self._assistant(line, item, origin))
        elif role == "system":
            parts = _content_parts(item.get("content"), line)
            self.messages.append(Message(Role.SYSTEM, parts, origin, ref=line.index))
        elif role == "user":
            parts = _content_parts(item.get("content"), line)
            key = _dup_key(item, self.source.line_bytes(line))
            self.messages.append(Message(Role.USER, parts, origin, dup_key=key, ref=line.index))

    def _assistant(self, line: Line, item: dict[str, Any], origin: Origin) -> Message:
        parts = _thinking_parts(item.get("_anthropic"), line)
        parts.extend(_content_parts(item.get("content"), line))
        calls = item.get("tool_calls")
        if isinstance(calls, list):
            declared: dict[str, str] = {}
            for index, call in enumerate(calls):
                parts.append(self._call(line, index, call, declared))
            self.scope.update(declared)
        return Message(Role.ASSISTANT, parts, origin, ref=line.index)

    def _call(self, line: Line, index: int, call: Any, declared: dict[str, str]) -> Part:
        raw = call.get("id") if isinstance(call, dict) else None
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        call_id: str | None = None
        if isinstance(raw, str):
            call_id = declared.get(raw)
            if call_id is None:
                call_id = raw if raw not in self.used else f"{raw} (line {line.number})"
                declared[raw] = call_id
                self.used.add(raw)
        return Part(
            PartKind.TOOL_CALL,
            Origin(line.number, line.index, f"/tool_calls/{index}"),
            call_id=call_id,
            name=name if isinstance(name, str) else None,
            ref=raw if isinstance(raw, str) else None,
        )

    def _result(self, line: Line, item: dict[str, Any], origin: Origin) -> None:
        raw = item.get("tool_call_id")
        content = item.get("content")
        part = Part(
            PartKind.TOOL_RESULT,
            origin,
            call_id=self.scope.get(raw, raw) if isinstance(raw, str) else None,
            is_error=isinstance(content, str) and content.startswith(ERROR_RESULT_PREFIX),
            ref=line.index,
        )
        if self.block is None:
            self.block = Message(Role.USER, [], origin, ref=line.index)
            self.messages.append(self.block)
        self.block.parts.append(part)


def _thinking_parts(sidecar: Any, line: Line) -> list[Part]:
    """Thinking blocks the Anthropic provider replays verbatim ahead of the turn's text.

    anthropic_provider stores ``{"type": "thinking", "thinking", "signature"}`` (the
    signature ``""`` when the API sent none) and ``{"type": "redacted_thinking", "data"}``.
    """
    blocks = sidecar.get("blocks") if isinstance(sidecar, dict) else None
    if not isinstance(blocks, list):
        return []
    parts: list[Part] = []
    for index, block in enumerate(blocks):
        origin = Origin(line.number, line.index, f"/_anthropic/blocks/{index}")
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "thinking":
            text = block.get("thinking")
            signature = block.get("signature")
            parts.append(
                Part(
                    PartKind.THINKING,
                    origin,
                    text=text if isinstance(text, str) else "",
                    signature=signature if isinstance(signature, str) else None,
                    needs_signature=True,
                )
            )
        elif kind == "redacted_thinking":
            parts.append(Part(PartKind.THINKING, origin))
        else:
            parts.append(Part(PartKind.OTHER, origin))
    return parts


def _content_parts(content: Any, line: Line) -> list[Part]:
    """Parts of a ``content`` string or OpenAI content-part list (text, image_url, file)."""
    if isinstance(content, str):
        return [Part(PartKind.TEXT, Origin(line.number, line.index, "/content"), text=content)]
    parts: list[Part] = []
    if isinstance(content, list):
        for index, block in enumerate(content):
            origin = Origin(line.number, line.index, f"/content/{index}")
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(Part(PartKind.TEXT, origin, text=block["text"]))
            elif kind in MEDIA_PARTS:
                parts.append(Part(PartKind.MEDIA, origin))
            else:
                parts.append(Part(PartKind.OTHER, origin))
    return parts


def _dup_key(item: dict[str, Any], raw: bytes) -> tuple[object, ...]:
    """What makes a user line a harness copy: same content and same ``ts``, or same bytes.

    ``ts`` is ``time.time()`` stamped once by ``engine.run``, so a prompt typed twice
    differs in it; PR #350's load-repair plus append-by-count re-appends the same dict.
    Digests keep large prompts (inline images) out of memory.
    """
    ts = item.get("ts")
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return ("ts", ts, _digest(repr(item.get("content")).encode("utf-8", "surrogatepass")))
    return ("line", _digest(raw))


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


READER = OpenworkerReader()
