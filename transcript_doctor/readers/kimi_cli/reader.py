"""Reader ``kimi-cli``: Kimi CLI ``context.jsonl`` session histories.

Spec: docs/formats/kimi-cli.md (confirmed from files Kimi CLI 1.51.0 wrote,
fixtures/kimi-cli/, and from its installed source).  Each line is a control record
(``_system_prompt``, ``_checkpoint``, ``_usage``) or one kosong message.  The control records
are no turns: they are skipped, kept byte for byte, and only the messages make the
conversation, as ``Context.restore`` rebuilds it.  Tool messages are paired with the
assistant's ``tool_calls`` by id.  ``wire.jsonl`` beside it is the UI event log, not
replayed: a companion.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from transcript_doctor.analysis.arguments import malformed
from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn, from_cut
from transcript_doctor.model import Conversation, Dialect, Message, Origin, Part, PartKind, Role
from transcript_doctor.readers.base import DEFINITIVE, SPECIFIC, Decided, Detection, Reader
from transcript_doctor.readers.kimi_cli import records
from transcript_doctor.source import CONTROL, Container, Line, Loader, Source

# Context.restore: aiofiles text mode with errors="replace" (invalid UTF-8 becomes U+FFFD)
# and json.loads(line, strict=False) (raw control characters inside strings are read).
# Lone surrogates, NaN and 1e400 json.loads reads too, but the message then fails to be
# serialised for the request (a lone surrogate: PydanticSerializationError, tried with
# kosong 1.51.0) or is no valid JSON for the API: still reported (unconfirmed for NaN
# and 1e400).  A NUL inside a string json.loads(strict=False) would read as well; NUL
# records are reported in every layout (crash damage), here too (unconfirmed corner).
KIMI = Loader("json.loads(strict=False)", frozenset({CONTROL}), replaces_invalid_utf8=True)
CONTEXT = "Kimi CLI context.jsonl (_system_prompt/_checkpoint/_usage records)"
# The keys the registry shows the JSONL readers listed before this one files by (and
# Qwen Code's ``unless``): a decision proves absent those no record of the head holds
# (tests/test_decide_roles.py holds this to the registry).
REGISTRY_KEYS = frozenset(
    {
        "projectHash",
        "$set",
        "$rewindTo",
        "uuid",
        "userType",
        "toolUseResult",
        "leafUuid",
        "snapshot",
        "operation",
        "payload",
        "id",
        "ts",
        "parentId",
    }
)
# openworker and Mistral Vibe claim only heads whose every record has a role of their
# ``ROLES``, none of them a control record's: a control record rules both out (``decide``).
_BEATEN = frozenset({"openworker", "mistral_vibe"})


class KimiCliReader(Reader):
    name = "kimi-cli"
    summary = "Kimi CLI session histories (~/.kimi/sessions/<md5(work dir)>/<session>/context.jsonl)"
    loader: ClassVar[Loader] = KIMI
    # Kimi sends the stored history after appending the next prompt: its final assistant
    # text is never a prefill (TD102 does not apply).  normalize_history merges adjacent
    # user messages only (kimi_cli/soul/dynamic_injection.py), never assistant or tool
    # messages, so pairing reads the messages as stored.
    # Each call's ``function.arguments`` is stored as the model streamed it and sent back
    # verbatim on every later request (kosong's ``_convert_message`` dumps the message as
    # stored; fixtures/kimi-cli/bad-args/requests-2.jsonl): text that does not parse makes
    # the servers that parse it answer 400 for good (kimi-cli#2165, #1171).  TD405.
    dialect: ClassVar[Dialect] = Dialect(final_text_is_prefill=False, replays_arguments_text=True)

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSONL:
            return None
        head = source.head()
        if not head:
            return None
        if any(map(records.is_control, head)):
            return self.claim(CONTEXT, DEFINITIVE) if records.mostly_known(head) else None
        if _wire_log(head):
            return self.claim(
                "Kimi CLI wire.jsonl UI event log (not replayed: the model history is context.jsonl beside it)",
                DEFINITIVE,
                transcript=False,
            )
        if _kimi_code_wire(head):
            # Said, not read: Kimi Code replays this file, but no file of it was recorded, so
            # its layout has no reader.  SPECIFIC: a future kimi-code reader outranks this.
            return self.claim(
                "Kimi Code wire.jsonl (Kimi Code's own session history: no reader for its layout yet, "
                "nothing in it was checked)",
                SPECIFIC,
                transcript=False,
            )
        return None

    def decide(self, source: Source) -> Decided | None:
        """``detect``'s claim on a context.jsonl, made without asking the readers listed
        before this one (the registry asks only a file that starts with Kimi's system
        prompt, ``readers._MODULES``).  The head is parsed as detection parses it: the
        read takes its records over (``Source.records``), so it costs nothing a head
        search would not; what is saved is the other readers' detection.

        Only the context claim is decided: it needs a control record in the head, whose
        role is none of those openworker and Mistral Vibe claim every record by
        (``_BEATEN``); Codex and Pi, shown a file by the ``id`` of a ``_checkpoint``, are
        ruled out by their ``refuses`` of its first record (a system prompt:
        ``Decided.first``); the others by keys no record of the head holds
        (``REGISTRY_KEYS``) or by scoring lower than DEFINITIVE."""
        if source.container is not Container.JSONL:
            return None
        head = source.head()
        if not (head and any(map(records.is_control, head)) and records.mostly_known(head)):
            return None
        keys = head[0].keys() if len(head) == 1 else set().union(*head)
        return Decided(
            self.claim(CONTEXT, DEFINITIVE), keys, REGISTRY_KEYS.difference(keys), _BEATEN, first=head[0]
        )

    def read(self, source: Source) -> list[Conversation]:
        return [_build(source, self.dialect)]

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Lines are streamed to the screen first; the model is built only if it doubts,
        from the line it cuts at (those lines are parsed again)."""
        if screen is None:
            return self.read(source)
        if screen.clean(_turns(source)):
            return []
        return [from_cut(screen, lambda start: _build(source, self.dialect, start))]


def _replayed(source: Source, lines: list[Line] | None = None) -> Iterator[tuple[Line, dict[str, Any]]]:
    """The records ``Context.restore`` turns into history: the system prompt and the
    messages kosong loads.  What it skips is left out here too, reported when it is damage
    (TD001: the source reports lines that do not parse; this, the others)."""
    check_cr = b"\r" in source.data
    for line, record in source.records(lines):
        if record is None:
            continue  # TD001, recorded by the source; Kimi skips it too
        if check_cr and records.broken_by_cr(source.line_bytes(line)):
            source.reject(
                line,
                "a raw carriage return (CR) inside the record: Kimi CLI reads the file with "
                "universal newlines, ends the line there and skips both halves",
            )
            continue
        role = record.get("role")
        if role == "_system_prompt" and isinstance(record.get("content"), str):
            yield line, record
            continue
        if not isinstance(role, str) or role not in records.MESSAGE_ROLES:
            # Control records are no turns; an unknown role (a newer release's record,
            # or another layout's) is skipped by Kimi too (role validation fails).
            continue
        why = records.unloadable(record)
        if why is not None:
            source.reject(line, f"Kimi CLI cannot load this message ({why}): resume leaves it out")
            continue
        yield line, record


def _build(source: Source, dialect: Dialect, start: int = 0) -> Conversation:
    """The conversation from line ``start`` on (a screen's cut; 0: all of it)."""
    messages: list[Message] = []
    block: Message | None = None  # the run of tool messages being read (one API slot)
    for line, record in _replayed(source, source.lines[start:] if start else None):
        role = record["role"]
        if role == "_system_prompt":
            origin = Origin(line.number, line.index, "/content")
            messages.append(
                Message(Role.SYSTEM, [Part(PartKind.TEXT, origin, text=record["content"])], _at(line))
            )
        elif role == "tool":
            if block is None:
                block = Message(Role.USER, [], _at(line))
                messages.append(block)
            block.parts.append(_result(line, record))
            continue
        elif role == "assistant":
            messages.append(Message(Role.ASSISTANT, _assistant_parts(line, record), _at(line)))
        else:
            kind = Role.USER if role == "user" else Role.SYSTEM
            messages.append(Message(kind, _content_parts(line, record), _at(line)))
        block = None  # control lines between tool lines do not end the run: they are not here
    return Conversation(messages, dialect)


def _turns(source: Source) -> Iterator[Turn | None]:
    """The replayed records as the screen's turns, read the way ``_build`` reads them: an
    assistant of text parts and calls, a tool result by id, anything else a prompt (no
    rule reads a Kimi prompt: no identity for TD403, no Gemini fusing)."""
    for line, record in _replayed(source):
        role = record["role"]
        if role == "assistant":
            yield _assistant_turn(record)
        elif role == "tool":
            call_id = record.get("tool_call_id")
            yield (RESULT, None, (call_id,)) if isinstance(call_id, str) else None
        else:
            yield OTHER, None, (line.index,)


def _assistant_turn(record: dict[str, Any]) -> Turn | None:
    """Text (string content or text parts only) and call ids, or None for anything else
    (think or media parts: the full path reads them)."""
    content = record["content"]
    if isinstance(content, list):
        texts = []
        for part in content:
            if part["type"] != "text":
                return None
            texts.append(part["text"])
        content = "".join(texts) if texts else None
    calls = record.get("tool_calls")
    if not calls:
        return ASSISTANT, content, ()
    ids = []  # loops, not generators: one is made per turn otherwise
    for call in calls:
        if malformed(call["function"].get("arguments")):
            return None  # TD405: the full path reads the arguments (the screen excludes them)
        ids.append(call["id"])
    return ASSISTANT, content, tuple(ids)


def _wire_log(head: list[Any]) -> bool:
    """Kimi CLI's ``wire.jsonl``: a metadata line, then ``{"timestamp", "message": {"type",
    "payload"}}`` events (fixtures/kimi-cli/*/session/wire.jsonl).  Kimi Code's wire.jsonl
    (the TypeScript successor, which replays it) has typed top-level records instead and
    is not claimed here (no file of it was recorded)."""
    first, events = head[0], head[1:]
    if first.get("type") != "metadata" or not isinstance(first.get("protocol_version"), str) or not events:
        return False
    return all(
        isinstance(e.get("timestamp"), (int, float))
        and isinstance(e.get("message"), dict)
        and isinstance(e["message"].get("type"), str)
        and "type" not in e
        for e in events
    )


def _at(line: Line) -> Origin:
    return Origin(line.number, line.index, None)


# Kimi Code record types that hold the model history (new-vendors.md §3, from its
# packages/agent-core/src/agent/records/types.ts; unconfirmed by a recording).
_KIMI_CODE_HISTORY = frozenset({"context.append_message", "context.append_loop_event"})


def _kimi_code_wire(head: list[Any]) -> bool:
    """Kimi Code's ``wire.jsonl``: a metadata line, then records typed at the top level
    (``turn.prompt``, ``context.append_message`` …), some of them the history."""
    first, records_ = head[0], head[1:]
    if first.get("type") != "metadata" or not isinstance(first.get("protocol_version"), str):
        return False
    types = [r.get("type") for r in records_]
    return (
        bool(types)
        and all(isinstance(t, str) and "." in t for t in types)
        and not _KIMI_CODE_HISTORY.isdisjoint(types)
    )


def _content_parts(line: Line, record: dict[str, Any]) -> list[Part]:
    """A string is one text part (kosong's serializer writes a lone text part so); a list
    holds text, think, media and unknown parts."""
    content = record.get("content")
    if isinstance(content, str):
        origin = Origin(line.number, line.index, "/content")
        return [Part(PartKind.TEXT, origin, text=content, ref=origin)]
    parts: list[Part] = []
    for index, part in enumerate(content or ()):
        origin = Origin(line.number, line.index, f"/content/{index}")
        kind = part.get("type")
        if kind == "text":
            ref = Origin(line.number, line.index, f"/content/{index}/text")
            parts.append(Part(PartKind.TEXT, origin, text=part["text"], ref=ref))
        elif kind == "think":
            # Moonshot's reasoning_content; ``encrypted`` is the signature field of other
            # providers (always null in the recordings): Kimi demands none.
            encrypted = part.get("encrypted")
            parts.append(
                Part(
                    PartKind.THINKING,
                    origin,
                    text=part["think"],
                    signature=encrypted if isinstance(encrypted, str) else None,
                )
            )
        elif kind in records.MEDIA_PARTS:
            parts.append(Part(PartKind.MEDIA, origin))
        else:
            parts.append(Part(PartKind.OTHER, origin))
    return parts


def _assistant_parts(line: Line, record: dict[str, Any]) -> list[Part]:
    parts = _content_parts(line, record)
    for index, call in enumerate(record.get("tool_calls") or ()):
        parts.append(
            Part(
                PartKind.TOOL_CALL,
                Origin(line.number, line.index, f"/tool_calls/{index}"),
                call_id=call["id"],
                name=call["function"]["name"],
                # A string or None (records.unloadable skips other types, as kosong does).
                arguments=call["function"].get("arguments"),
            )
        )
    return parts


def _result(line: Line, record: dict[str, Any]) -> Part:
    content = record.get("content")
    first = (
        content
        if isinstance(content, str)
        else next((p.get("text") for p in content or () if p.get("type") == "text"), None)
    )
    return Part(
        PartKind.TOOL_RESULT,
        _at(line),
        call_id=record.get("tool_call_id"),  # None: kosong allows it; no call matches it
        is_error=isinstance(first, str) and first.startswith(records.ERROR_PREFIX),
    )


READER = KimiCliReader()
