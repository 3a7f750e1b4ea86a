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
``tool_call_id`` an inserted result must carry); every TEXT part holds the JSON Pointer
of its string inside the line (``/content`` or ``/content/<n>/text``).

``fix`` follows spec §7: lines carry no links, so a repair deletes, adds or moves whole
lines (TD102 alone edits inside one).  Synthetic results copy PR #350's shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from transcript_doctor.analysis.screen import ASSISTANT, NOTICE, OTHER, RESULT, Screen, Turn, from_cut
from transcript_doctor.model import Conversation, Dialect, Message, Origin, Part, PartKind, Role
from transcript_doctor.readers.base import SPECIFIC, Decided, Detection, Reader
from transcript_doctor.readers.openworker.callids import CallIds
from transcript_doctor.source import PYTHON, Container, Line, Source

ROLES = frozenset({"system", "user", "assistant", "tool", "notice"})
SIDECARS = frozenset({"_anthropic", "_gemini", "_openai", "_display"})
MEDIA_PARTS = frozenset({"image_url", "file", "input_audio"})
# ConversationStore._file: <base>/conversations/<session_id>.jsonl
PATH = re.compile(r"(?:^|[\\/])conversations[\\/][^\\/]+\.jsonl$")
REASON = "openworker message lines (`ts`, `notice`, provider sidecars)"
# The readers a decision finds unable to outscore it (``decide``).
_BEATEN = frozenset({"codex", "mistral_vibe", "kimi_cli"})
# engine._tool_error_message and _execute_sync write json.dumps({"error": …, …}).
ERROR_RESULT_PREFIX = '{"error": '


def _openworker_feature(item: dict[str, Any]) -> bool:
    if item.get("role") == "notice" or isinstance(item.get("ts"), float):
        return True
    return not SIDECARS.isdisjoint(item)


class OpenworkerReader(Reader):
    name = "openworker"
    # First record: every head record is a message.
    first_keys = frozenset({"role"})
    summary = "openworker conversation JSONL (OpenAI-shaped messages, notices, sidecars)"
    # ConversationStore._read_jsonl: read_text(encoding="utf-8") then json.loads per line.
    loader = PYTHON
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
            return self.claim(REASON, SPECIFIC)
        return None

    def decide(self, source: Source) -> Decided | None:
        """``detect``'s claim from the typed records the proof reads (``fast.candidates``:
        every line a message of ``ROLES``, none a key another reader is shown files by),
        with no head parsed: a line with an openworker feature among the first lines, or
        at openworker's path the first line, parsed by orjson as the head parses it.
        However short the conversation: the proof takes the records, so each line is
        decoded once and none parsed (a short one detected from its head and streamed
        cost a quarter more).

        The readers keys cannot rule out: Codex claims no head whose first record holds a
        ``role`` (none of its layouts has one), Mistral Vibe's DEFINITIVE claim needs
        ``injected``, and Kimi CLI claims no head of chat roles without a
        ``protocol_version``."""
        if source.container is not Container.JSONL:
            return None
        from transcript_doctor.readers.openworker import fast  # msgspec: loaded on first use
        from transcript_doctor.readers.typed_lines import segments

        found = fast.candidates(source)
        if found is None:
            return None
        at_path = PATH.search(source.path) is not None
        for raw in segments(source.data, [0] if at_path else found):
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # not in the head (a number beyond a double)
            if at_path or _openworker_feature(record):
                return Decided(self.claim(REASON, SPECIFIC), record.keys(), fast.ABSENT, _BEATEN)
        return None

    def read(self, source: Source) -> list[Conversation]:
        return [_Builder(source).build(self.dialect)]

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Lines are decoded for the screen first (the typed proof, ``fast``; streamed
        from parsed lines when it cannot decode them); the model is built only if it
        doubts, from the line it cuts at (those lines are parsed again).

        Built from a cut, a call id used before it is not renamed (``CallIds``): such
        a conversation names a call id of the part before it and is built whole.
        """
        if screen is None:
            return self.read(source)
        from transcript_doctor.readers.openworker import fast  # msgspec: loaded on first use

        proof = fast.prove(source.data, screen, source)  # None: doubted, the cut the full read's
        if proof is True or (proof is False and screen.clean(_turns(source))):
            return []
        return [from_cut(screen, lambda start: _Builder(source).build(self.dialect, start))]


def _turns(source: Source) -> Iterator[Turn | None]:
    """The lines as the screen's turns, read the way ``_Builder`` reads them."""
    previous = None  # the role of the last line that is replayed
    stamp: object = None  # its `ts`, when it is a prompt
    ids = CallIds()
    for line, item in source.records():
        if not isinstance(item, dict):
            continue
        role = item.get("role")
        if role == "notice":
            kind = item.get("kind")
            yield NOTICE, kind if isinstance(kind, str) else None, ()
            continue
        if role == "tool":
            call_id = item.get("tool_call_id")
            yield (RESULT, None, (ids.answered(call_id),)) if isinstance(call_id, str) else None
        elif role == "assistant":
            turn = _assistant_turn(item)
            yield None if turn is None else (ASSISTANT, turn[0], tuple(ids.turn(line.number, turn[1])))
        elif role == "system":
            yield OTHER, None, (line.index,)
        elif role == "user":
            # TD403 compares neighbouring prompts: different stamps are never copies.
            ts = item.get("ts")
            ts = ts if isinstance(ts, (int, float)) and not isinstance(ts, bool) else None
            yield (
                None
                if previous == "user" and (ts is None or stamp is None or ts == stamp)
                else (OTHER, None, (line.index,))
            )
            stamp = ts
        else:
            yield None  # an unknown role
        previous = role


def _assistant_turn(item: dict[str, Any]) -> tuple[str | None, list[str | None]] | None:
    """The text and call ids of a turn of text, calls with ids and signed ``_anthropic``
    thinking, or None if it holds anything else."""
    sidecar = item.get("_anthropic")
    blocks = sidecar.get("blocks") if isinstance(sidecar, dict) else None
    for block in blocks if isinstance(blocks, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        signature = block.get("signature") if kind == "thinking" else None
        if kind != "redacted_thinking" and not (isinstance(signature, str) and signature):
            return None
    content = item.get("content")
    if isinstance(content, list):
        if not all(
            isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            for b in content
        ):
            return None
        content = "".join(b["text"] for b in content) if content else None
    elif content is not None and not isinstance(content, str):
        return None
    calls = item.get("tool_calls")
    if calls is None:
        return content, []
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("id"), str) for c in calls
    ):
        return None
    return content, [c["id"] for c in calls]


def _raw_id(call: Any) -> str | None:
    raw = call.get("id") if isinstance(call, dict) else None
    return raw if isinstance(raw, str) else None


class _Builder:
    """Turns lines into messages in one pass, keeping only what the rules read."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.messages: list[Message] = []
        self.block: Message | None = None  # the run of `tool` lines being read: one API slot
        self.ids = CallIds()

    def build(self, dialect: Dialect, start: int = 0) -> Conversation:
        """The conversation from line ``start`` on (a screen's cut; 0: all of it)."""
        # Unconfirmed: whether to lint messages before the compaction boundary.  It lives in
        # coworker.db (`sessions.compaction`), not in the JSONL, so the whole file is read.
        for line, record in self.source.records(self.source.lines[start:]):
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
            raws = [_raw_id(call) for call in calls]
            for index, (call, raw, call_id) in enumerate(
                zip(calls, raws, self.ids.turn(line.number, raws), strict=True)
            ):
                function = call.get("function") if isinstance(call, dict) else None
                name = function.get("name") if isinstance(function, dict) else None
                parts.append(
                    Part(
                        PartKind.TOOL_CALL,
                        Origin(line.number, line.index, f"/tool_calls/{index}"),
                        call_id=call_id,
                        name=name if isinstance(name, str) else None,
                        ref=raw,
                    )
                )
        return Message(Role.ASSISTANT, parts, origin, ref=line.index)

    def _result(self, line: Line, item: dict[str, Any], origin: Origin) -> None:
        raw = item.get("tool_call_id")
        content = item.get("content")
        part = Part(
            PartKind.TOOL_RESULT,
            origin,
            call_id=self.ids.answered(raw) if isinstance(raw, str) else None,
            is_error=isinstance(content, str) and content.startswith(ERROR_RESULT_PREFIX),
            ref=line.index,
        )
        if self.block is None:
            self.block = Message(Role.USER, [], origin, ref=line.index)
            self.messages.append(self.block)
        self.block.parts.append(part)


# -- fix ------------------------------------------------------------------------------------


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
        origin = Origin(line.number, line.index, "/content")
        return [Part(PartKind.TEXT, origin, text=content, ref="/content")]
    parts: list[Part] = []
    if isinstance(content, list):
        for index, block in enumerate(content):
            origin = Origin(line.number, line.index, f"/content/{index}")
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(kind, str):
                kind = None
            if kind == "text" and isinstance(block.get("text"), str):
                ref = f"/content/{index}/text"
                parts.append(Part(PartKind.TEXT, origin, text=block["text"], ref=ref))
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
    import hashlib  # OpenSSL's start-up is paid only by files that need a digest

    return hashlib.blake2b(data, digest_size=16).digest()


READER = OpenworkerReader()
