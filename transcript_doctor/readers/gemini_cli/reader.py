"""Reader ``gemini-cli``: Gemini CLI chat recordings (JSONL stream and legacy session .json).

Spec: shared/spec/formats/gemini-cli.md.  The JSONL file is a log of edits, not a list of
messages: a repeated ``id`` replaces a message in place, ``$set.messages`` resets the whole
list, ``$rewindTo`` cuts it.  The reader replays those edits the way the CLI's loader does
(``loadConversationRecord``) and then derives the history the way resume does
(``convertSessionToClientHistory``), so findings describe what the model is sent, and
point at the record that actually defines each message — which is also the record
``fix`` edits (``repair``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Turn, from_cut
from transcript_doctor.model import Conversation, Dialect, Message, Origin, Part, PartKind, Role
from transcript_doctor.plain import Plain, replace
from transcript_doctor.readers import gemini_content
from transcript_doctor.readers.base import DEFINITIVE, Detection, Reader
from transcript_doctor.readers.gemini_cli.refs import MessageRef, StreamRef
from transcript_doctor.source import HEAD_RECORDS, NODE, Container, Line, Source, fingerprint

if TYPE_CHECKING:
    from transcript_doctor.analysis.screen import Screen

NOTICE_TYPES = frozenset({"info", "error", "warning"})
MESSAGE_TYPES = frozenset({"user", "gemini"}) | NOTICE_TYPES
# isIgnoredUserContent (sessionUtils.ts): slash commands, `?` help and injected context.
IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")
# client.ts `sendMessageStream`: after an empty or malformed model response the CLI sends
# this as a user turn (`continueOnFailedApiCall`) and records it: the harness asking the
# model to go on, not a prompt (TD104 must not read it as one).
CONTINUE_NUDGE = "System: Please continue."
# core/logger.ts: `logs.json`, and its backups `logs.json.<reason>.<ms>.bak`.
PROMPT_LOG_NAME = re.compile(r"logs\.json(\.[A-Za-z_]+\.\d+\.bak)?$")
PROMPT_LOG_KEYS: dict[str, type | tuple[type, ...]] = {
    "sessionId": str,
    "messageId": (int, float),
    "type": str,
    "message": str,
    "timestamp": str,
}
# partToString(…, {verbose: true}) summaries of non-text parts (after videoMetadata and thought).
VERBOSE_PARTS = (
    ("codeExecutionResult", "[Code Execution Result]"),
    ("executableCode", "[Executable Code]"),
    ("fileData", "[File Data]"),
    ("functionCall", "[Function Call]"),
    ("functionResponse", "[Function Response]"),
    ("inlineData", "[Media]"),
)

# The CLI merges consecutive same-role Contents before sending, and a tool-response
# turn followed by a prompt is fused into one user turn on replay (TD104).
DIALECT = Dialect(coalesce_roles=True, fuses_tool_response=True, final_text_is_prefill=False)
# A stream of fewer records than detection parses (``source.head``) was parsed whole:
# replayed from those records, not decoded again (``fast``).
_SHORT = HEAD_RECORDS


class _Entry(Plain):
    """One surviving message record, converted the way resume reads it."""

    __slots__ = ("base", "checkpoint_index", "dup_key", "kind", "message_id", "origin", "parts", "results")
    message_id: str
    kind: str  # "user" | "gemini" | "skip" (notices, ignored user text, unknown types)
    origin: Origin
    base: str
    checkpoint_index: int | None
    parts: list[Part]
    # toolCalls[].result parts, grouped per call: (call id, parts) — the CLI's `_response` turn.
    results: list[tuple[str, list[Part]]]
    dup_key: object

    def __init__(
        self, message_id: str, kind: str, origin: Origin, base: str, checkpoint_index: int | None
    ) -> None:
        self.message_id = message_id
        self.kind = kind
        self.origin = origin
        self.base = base
        self.checkpoint_index = checkpoint_index
        self.parts = []
        self.results = []
        self.dup_key = None


def _js_truthy(value: Any) -> bool:
    if value is None or value is False or value == "":
        return False
    return not (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0)


def _part_string(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    if "videoMetadata" in part:
        return "[Video Metadata]"
    if "thought" in part:
        return f"[Thought: {part['thought']}]"
    for key, summary in VERBOSE_PARTS:
        if key in part:
            return summary
    text = part.get("text")
    return text if isinstance(text, str) else ""


def _content_string(content: Any) -> str:
    """What ``partListUnionToString`` makes of a content (only its trimmed start matters)."""
    if not _js_truthy(content):
        return ""
    if isinstance(content, list):
        return "".join(_part_string(p) for p in content)
    return _part_string(content)


def _ignored_user_text(content: Any) -> bool:
    text = _content_string(content).strip()
    return not text or text.startswith(IGNORED_PREFIXES)


def _content_parts(content: Any, line: int, index: int, base: str) -> list[Part]:
    """Parts of a ``content`` PartListUnion (a string, one Part, or a list)."""
    pointer = base + "/content"
    if isinstance(content, list):
        return gemini_content.parts(content, lambda j: Origin(line, index, f"{pointer}/{j}"))
    return gemini_content.parts(content, lambda _j: Origin(line, index, pointer))


class _Converter:
    """Turns one message record into an :class:`_Entry`, the way resume reads it.

    ``line``, ``index`` and ``base`` say where the message object is (``Origin``'s
    line and record, its pointer): each part's pointer is the base and the part's own
    tokens, built where the part is (one string per part, no call per token)."""

    def __init__(self, record: dict[str, Any], line: int, index: int, base: str) -> None:
        self.record = record
        self.line, self.index, self.base = line, index, base
        items = record.get("toolCalls")
        self.tool_calls = (
            [(k, c) for k, c in enumerate(items) if isinstance(c, dict)] if isinstance(items, list) else []
        )

    def user(self) -> tuple[str, list[Part]]:
        content = self.record.get("content")
        if _ignored_user_text(content):
            return "skip", []
        return "user", _content_parts(content, self.line, self.index, self.base)

    def gemini(self) -> tuple[list[Part], list[tuple[str, list[Part]]]]:
        content = self.record.get("content")
        if content.__class__ is str:  # the usual model message: its text (none if "")
            origin = Origin(self.line, self.index, self.base + "/content")
            text = [Part(PartKind.TEXT, origin, text=content)] if content else []
            return self.thoughts() + text + self.calls(), self.results()
        stored = _content_parts(content, self.line, self.index, self.base) if _js_truthy(content) else []
        raw = content if isinstance(content, list) else [content]
        if any(
            isinstance(p, dict) and (_js_truthy(p.get("functionCall")) or _js_truthy(p.get("thought")))
            for p in raw
        ):
            # Content is the source of truth: these are stored API parts, so the first
            # call's thoughtSignature belongs in the file and its absence is real (TD401).
            first = next((p for p in stored if p.kind is PartKind.TOOL_CALL), None)
            if first is not None:
                first.needs_signature = True
            return stored, self.results()
        # Rebuilt on resume from thoughts[], content and toolCalls[]: the CLI never records
        # signatures there by design and re-signs the calls itself when it sends them.
        built = self.thoughts() + stored + self.calls()
        return built, self.results()

    def thoughts(self) -> list[Part]:
        items = self.record.get("thoughts")
        found: list[Part] = []
        if not isinstance(items, list):
            return found
        line, record, base = self.line, self.index, self.base
        for index, thought in enumerate(items):
            if not isinstance(thought, dict):
                continue
            subject, description = thought.get("subject"), thought.get("description")
            text = description if isinstance(description, str) else ""
            if isinstance(subject, str) and subject:
                text = f"**{subject}** {text}"
            found.append(Part(PartKind.THINKING, Origin(line, record, f"{base}/thoughts/{index}"), text=text))
        return found

    def _call_id(self, index: int, call: dict[str, Any]) -> tuple[str, str]:
        """The call's id and how it pairs; an id-less record pairs with its own result."""
        call_id = call.get("id")
        if isinstance(call_id, str):
            return call_id, "id"
        return f"toolCalls@{self.index}:{self.base}/toolCalls/{index}", "adjacency"

    def calls(self) -> list[Part]:
        found: list[Part] = []
        line, record, base = self.line, self.index, self.base
        for index, call in self.tool_calls:
            call_id, paired_by = self._call_id(index, call)
            name = call.get("name")
            found.append(
                Part(
                    PartKind.TOOL_CALL,
                    Origin(line, record, f"{base}/toolCalls/{index}"),
                    call_id=call_id,
                    name=name if isinstance(name, str) else None,
                    paired_by=paired_by,
                )
            )
        return found

    def results(self) -> list[tuple[str, list[Part]]]:
        found: list[tuple[str, list[Part]]] = []
        for index, call in self.tool_calls:
            result = call.get("result")
            if not _js_truthy(result):
                continue
            call_id, paired_by = self._call_id(index, call)
            name = call.get("name")
            name = name if isinstance(name, str) else None
            pointer = f"{self.base}/toolCalls/{index}/result"
            if isinstance(result, str):
                origin = Origin(self.line, self.index, pointer)
                parts = [Part(PartKind.TOOL_RESULT, origin, call_id=call_id, name=name)]
            else:
                parts = gemini_content.parts(result, self._result_at(pointer, isinstance(result, list)))
            found.append((call_id, _own_results(parts, call_id, paired_by)))
        return found

    def _result_at(self, pointer: str, listed: bool) -> gemini_content.At:
        line, record = self.line, self.index
        if listed:
            return lambda j: Origin(line, record, f"{pointer}/{j}")
        return lambda _j: Origin(line, record, pointer)


def _own_results(parts: list[Part], call_id: str, paired_by: str) -> list[Part]:
    """The parts of one call's ``result`` that answer that call.

    The CLI's masking sync stores the whole user turn in every call's ``result``
    (chatRecordingService ``updateMessagesFromHistory``), so a result can hold its
    siblings' responses too: those are copies, not answers to this call.
    """
    own: list[Part] = []
    for part in parts:
        if part.kind is PartKind.TOOL_RESULT:
            if part.call_id is None:
                part.call_id, part.paired_by = call_id, paired_by
            elif part.call_id != call_id:
                continue
        own.append(part)
    return own


def _convert(record: dict[str, Any], message_id: str, line: int, index: int, base: str, dup: bool) -> _Entry:
    """``line``, ``index``: the message's ``Origin`` line and record (a document's line is
    0: the engine finds it from the pointer); ``base``: its pointer there."""
    origin = Origin(line, index, base or None)
    converter = _Converter(record, line, index, base)
    kind = record.get("type")
    entry = _Entry(message_id, "skip", origin, base, _checkpoint_index(base))
    if kind == "user":
        entry.kind, entry.parts = converter.user()
        if dup and entry.kind == "user" and any(p.kind is not PartKind.TOOL_RESULT for p in entry.parts):
            stamp = record.get("timestamp")
            if isinstance(stamp, str):
                entry.dup_key = (stamp, _identity(record.get("content")))
    elif kind == "gemini":
        entry.kind = "gemini"
        entry.parts, entry.results = converter.gemini()
    for part in entry.parts:
        part.ref = (part.origin.pointer or "")[len(base) :]
    for _, parts in entry.results:
        for part in parts:
            part.ref = (part.origin.pointer or "")[len(base) :]
    return entry


def _identity(content: Any) -> object:
    """Comparable bytes of a content (records stdlib had to parse included)."""
    return fingerprint(content)


def _checkpoint_index(base: str) -> int | None:
    if base.startswith("/$set/messages/"):
        return int(base.rsplit("/", 1)[1])
    return None


class _Replay:
    """The loader's ordered map of messages, with where each one is defined.

    Upserts keep the first position, ``$set.messages`` clears and rebuilds, ``$rewindTo``
    cuts the list at an id (or clears it when the id is unknown).  Positions are kept in
    a list with an index so that a cut costs only what it removes.  Only where each
    message is defined is kept (line index and pointer): the survivors are converted at
    the end, so superseded versions and parsed records cost nothing.
    """

    def __init__(self) -> None:
        self.order: list[str] = []
        self.position: dict[str, int] = {}
        self.slots: dict[str, tuple[int, str]] = {}
        self.carrying: dict[str, list[int]] = {}
        self.rewinds: list[tuple[int, str]] = []

    def upsert(self, key: str, line_index: int, base: str) -> None:
        if key not in self.position:
            self.position[key] = len(self.order)
            self.order.append(key)
        self.slots[key] = (line_index, base)
        lines = self.carrying.get(key)
        if lines is None:
            self.carrying[key] = [line_index]
        elif lines[-1] != line_index:
            lines.append(line_index)

    def clear(self) -> None:
        self.order.clear()
        self.position.clear()
        self.slots.clear()
        self.carrying.clear()

    def rewind(self, target: str, line_index: int) -> None:
        self.rewinds.append((line_index, target))
        start = self.position.get(target)
        if start is None:
            self.clear()
            return
        for key in self.order[start:]:
            del self.position[key], self.slots[key], self.carrying[key]
        del self.order[start:]

    def survivors(
        self,
        source: Source,
        lines: Mapping[int, Line] | None = None,
        records: Mapping[int, Any] | None = None,
    ) -> list[_Survivor]:
        """The surviving message objects in order, each with its id, line and pointer; each
        defining line is parsed once more (``lines``: the survivors' lines, when the file
        was not split), unless its record was kept (``records``: each line's record)."""
        by_line: dict[int, list[tuple[int, str, str]]] = {}
        for position, key in enumerate(self.order):
            line_index, base = self.slots[key]
            by_line.setdefault(line_index, []).append((position, key, base))
        found: list[_Survivor | None] = [None] * len(self.order)
        for line_index, wanted in by_line.items():
            line = (source.lines if lines is None else lines)[line_index]
            record = source.record(line) if records is None else records[line_index]
            for position, key, base in wanted:
                found[position] = (_at_pointer(record, base), key, line, base)
        return [survivor for survivor in found if survivor is not None]


# A surviving message: its object, its id, the line that defines it and its pointer there.
_Survivor = tuple[dict[str, Any], str, Line, str]


def _entries(survivors: list[_Survivor]) -> list[_Entry]:
    """The surviving messages, converted.  A checkpoint's timestamps are the rebuild's,
    not the prompt's: no TD403 identity for them."""
    return [
        _convert(value, key, line.number, line.index, base, not base.startswith("/$set/"))
        for value, key, line, base in survivors
    ]


def _at_pointer(record: dict[str, Any], base: str) -> dict[str, Any]:
    """The message object at ``""``, ``/$set/messages/<i>`` or ``/messages/<i>`` of a record."""
    if not base:
        return record
    *path, index = base[1:].split("/")
    value: Any = record
    for token in path:
        value = value[token]
    item = value[int(index)]
    assert isinstance(item, dict)
    return item


def _message_id(value: Any) -> str | None:
    if isinstance(value, dict):
        key = value.get("id")
        if isinstance(key, str):
            return key
    return None


def _stream_record(replay: _Replay, record: Any, line: Line) -> None:
    """Apply one JSONL record, tested in the loader's order."""
    if not isinstance(record, dict):
        return
    if isinstance(record.get("$rewindTo"), str):
        replay.rewind(record["$rewindTo"], line.index)
        return
    key = _message_id(record)
    if key is not None:
        replay.upsert(key, line.index, "")
        return
    update = record.get("$set")
    if isinstance(update, (dict, list)):  # JS `typeof … === 'object'`: arrays count too
        messages = update.get("messages") if isinstance(update, dict) else None
        if isinstance(messages, list):
            replay.clear()
            _upsert_all(replay, messages, line.index, "/$set/messages")
        return
    if isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
        messages = record.get("messages")
        if isinstance(messages, list):  # a whole legacy record on one line
            _upsert_all(replay, messages, line.index, "/messages")


def _typed_record(replay: _Replay, record: Any, index: int, fast: Any) -> None:
    """``_stream_record`` of a typed record (``fast._Record``, line ``index``): the same
    tests, in the same order (a raw field's value is decoded only here: rare lines)."""
    if isinstance(record.rewind, str):
        replay.rewind(record.rewind, index)
        return
    if isinstance(record.id, str):
        replay.upsert(record.id, index, "")
        return
    update = record.update
    if update is not None and update is not fast.UNSET:  # an object (the decoder refuses the rest)
        if update.messages is not fast.ABSENT:
            found = fast.ids(update.messages)
            if found is not None:
                replay.clear()
                _upsert_ids(replay, found, index, "/$set/messages")
        return
    if isinstance(record.sessionId, str) and isinstance(record.projectHash, str):
        found = fast.ids(record.messages) if record.messages is not fast.ABSENT else None
        if found is not None:  # a whole legacy record on one line
            _upsert_ids(replay, found, index, "/messages")


def _upsert_ids(replay: _Replay, ids: list[Any], line_index: int, base: str) -> None:
    for index, key in enumerate(ids):
        if isinstance(key, str):
            replay.upsert(key, line_index, f"{base}/{index}")


def _upsert_all(replay: _Replay, messages: list[Any], line_index: int, base: str) -> None:
    for index, item in enumerate(messages):
        key = _message_id(item)
        if key is not None:
            replay.upsert(key, line_index, f"{base}/{index}")


def _recorded_results(entries: list[_Entry], start: int) -> set[str]:
    """Call ids answered by recorded user messages in the user run starting at ``start``."""
    found: set[str] = set()
    index = start
    while index < len(entries) and entries[index].kind == "user":
        parts = entries[index].parts
        found.update(p.call_id for p in parts if p.kind is PartKind.TOOL_RESULT and p.call_id)
        index += 1
    return found


def _ref(entry: _Entry, lines: tuple[int, ...]) -> MessageRef:
    return MessageRef(
        entry.message_id or None, entry.origin.record, entry.base, entry.checkpoint_index, lines
    )


def _messages(entries: list[_Entry], carrying: dict[str, list[int]]) -> list[Message]:
    """The replayed history: what ``convertSessionToClientHistory`` sends on resume.

    A call's result is stored twice by design since PR #26939 (``toolCalls[].result`` and
    the recorded ``functionResponse`` user message that follows): the recorded message
    carries it and the ``result`` copy is left out, so the pair counts as one result.
    """
    live = [e for e in entries if e.kind != "skip"]
    messages: list[Message] = []
    for index, entry in enumerate(live):
        ref = _ref(entry, tuple(carrying.get(entry.message_id, ())))
        if entry.kind == "user":
            nudge = "".join(p.text for p in entry.parts if p.kind is PartKind.TEXT).strip() == CONTINUE_NUDGE
            messages.append(
                Message(
                    Role.USER,
                    entry.parts,
                    entry.origin,
                    harness_written=nudge,
                    dup_key=entry.dup_key,
                    ref=ref,
                )
            )
            continue
        messages.append(Message(Role.ASSISTANT, entry.parts, entry.origin, ref=ref))
        if not entry.results:
            continue
        recorded = _recorded_results(live, index + 1)
        parts = [p for call_id, group in entry.results if call_id not in recorded for p in group]
        if parts:
            origin = replace(entry.origin, pointer=entry.base + "/toolCalls")
            messages.append(Message(Role.USER, parts, origin, ref=replace(ref, results=True)))
    gemini_content.sign_active_loop(messages)
    return messages


def _plain_turns(records: Iterable[tuple[int, Any]]) -> list[Turn] | None:
    """The screen's turns of these message records in order (each record with its
    position, where a build may start; an item that is no object is no message), read
    without building them, or None where only the built conversation tells
    (``gemini_content.screen_turns`` then judges it).  Exactly ``screen_turns`` of what
    ``_convert`` and ``_messages`` build (``tests/test_fast_path.py`` compares them on
    every fixture and corpus file), for the records those plain turns come from: prompts
    of text and media, model messages rebuilt from ``thoughts``, text ``content`` and
    ``toolCalls`` with string ids, their results, and recorded responses with ids; but a
    prompt's turn holds its record's position (the screen's cut), ``screen_turns``' none."""
    # Per live message: (position, None, result ids) for a user message (ids None: a
    # prompt, where a build may start), (text, call ids, own results per answered call)
    # for a model message.
    live: list[tuple[Any, Any, Any]] = []
    for position, record in records:
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "user":
            content = record.get("content")
            texts = _texts(content)
            if texts is not None:  # the usual prompt: text alone
                text = "".join(texts).strip()
                if text and not text.startswith(IGNORED_PREFIXES):
                    live.append((position, None, None))
                continue
            ids = _response_ids(content)
            if ids is not None:  # the usual recorded tool response
                live.append((position, None, ids))
                continue
            if _ignored_user_text(content):
                continue
            parts = gemini_content.plain(content)
            if not parts:
                return None
            if all(p[0] is PartKind.TEXT or p[0] is PartKind.MEDIA for p in parts):
                live.append((position, None, None))
            elif all(p[0] is PartKind.TOOL_RESULT and p[2] is not None for p in parts):
                live.append((position, None, [p[2] for p in parts]))
            else:
                return None
        elif kind == "gemini":
            model = _plain_model(record)
            if model is None:
                return None
            live.append(model)
    turns: list[Turn] = []
    user = prompt = False  # the last message was a user message, a prompt
    for index, (first, calls, results) in enumerate(live):
        if calls is None:  # a user message (``first``: its position)
            if user and (prompt or results is None):
                return None  # TD104, TD403: the built conversation tells
            if results is None:
                turns.append((OTHER, None, (first,)))
            else:
                for i in results:  # appends, not a generator: one per message
                    turns.append((RESULT, None, (i,)))
            user, prompt = True, results is None
            continue
        turns.append((ASSISTANT, first, tuple(calls)))  # ``first``: its text
        user = prompt = False
        if results:  # the CLI's `_response` turn, less what recorded responses answer
            recorded: set[str] = set()
            following = index + 1
            while following < len(live) and live[following][1] is None:  # the user messages after it
                recorded.update(live[following][2] or ())
                following += 1
            made = len(turns)
            for call_id, own in results:
                if call_id not in recorded:
                    for i in own:
                        turns.append((RESULT, None, (i,)))
            user = len(turns) > made
    return turns + gemini_content.closing(DIALECT)


def _plain_model(record: dict[str, Any]) -> tuple[str | None, list[str], list[tuple[str, list[str]]]] | None:
    """A model message rebuilt on resume (``_Converter.gemini``) as its text, call ids and
    each answered call's own result ids; None for stored API parts or id-less calls."""
    content = record.get("content")
    if isinstance(content, str):  # the usual model message: its text alone, or ""
        text = content or None
    else:
        raw = content if isinstance(content, list) else [content]
        if any(
            isinstance(p, dict) and (_js_truthy(p.get("functionCall")) or _js_truthy(p.get("thought")))
            for p in raw
        ):
            return None  # stored API parts: signatures matter (TD401)
        stored = gemini_content.plain(content) if _js_truthy(content) else []
        if stored is None:
            return None
        texts: list[str] = []
        for kind, part_text, _, _ in stored:
            if kind is PartKind.TEXT:
                texts.append(part_text)
            elif kind is not PartKind.THINKING:
                return None
        text = "".join(texts) if texts else None
    items = record.get("toolCalls")
    calls: list[str] = []
    results: list[tuple[str, list[str]]] = []
    for call in items if isinstance(items, list) else ():
        if not isinstance(call, dict):
            continue
        call_id = call.get("id")
        if not isinstance(call_id, str):
            return None  # paired by adjacency: the built conversation tells
        calls.append(call_id)
        result = call.get("result")
        if isinstance(result, list):  # the usual result: its parts (a list is JS-truthy)
            own = _own_responses(result, call_id)
        elif not _js_truthy(result):
            continue
        elif isinstance(result, str):
            results.append((call_id, [call_id]))
            continue
        else:
            own = _own_responses([result], call_id)
        if own is None:
            return None
        results.append((call_id, own))
    return text, calls, results


def _texts(content: Any) -> list[str] | None:
    """The texts of a content made of text alone (a string, or ``{"text": …}`` objects
    with no other key), or None: what ``_content_string`` and ``gemini_content.plain``
    both make of it then is its texts."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    for item in content:
        text = item.get("text") if isinstance(item, dict) and len(item) == 1 else None
        if not isinstance(text, str):
            return None
        texts.append(text)
    return texts


def _response_ids(content: Any) -> list[str] | None:
    """The ids of a content made of responses with ids alone (``{"functionResponse":
    {"id": …}}`` objects with no other key), or None: a recorded tool response, never
    ignored (``_content_string`` summarises each part), whose ``gemini_content.plain``
    parts are those responses."""
    if not isinstance(content, list) or not content:
        return None
    ids: list[str] = []
    for item in content:
        response = item.get("functionResponse") if isinstance(item, dict) and len(item) == 1 else None
        call_id = response.get("id") if isinstance(response, dict) else None
        if not isinstance(call_id, str):
            return None
        ids.append(call_id)
    return ids


def _own_responses(items: list[Any], call_id: str) -> list[str] | None:
    """What ``gemini_content.plain`` makes of a call's ``result`` parts, as
    ``_plain_model`` reads it: the call's id once per response that answers it (an
    id-less response, or one with its id), or None when a part is not a response (what
    is stored beside one included).  Items that are no part (not an object, ``{}``) are
    skipped, as ``plain`` skips them."""
    own: list[str] = []
    for item in items:
        if isinstance(item, dict):
            if not item:
                continue
            response = item.get("functionResponse")
            if isinstance(item.get("functionCall"), dict) or not isinstance(response, dict):
                return None
            answered = response.get("id")
            if answered == call_id or not isinstance(answered, str):
                own.append(call_id)
        elif isinstance(item, str):
            return None
    return own


def _prompt_log(value: Any, path: str) -> bool:
    if not isinstance(value, list):
        return False
    if not value:
        return PROMPT_LOG_NAME.search(path) is not None
    return all(
        isinstance(item, dict)
        and all(
            isinstance(item.get(k), t) and not isinstance(item.get(k), bool)
            for k, t in PROMPT_LOG_KEYS.items()
        )
        for item in value
    )


def _legacy(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if not (isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str)):
        return False
    messages = value.get("messages")
    return isinstance(messages, list) and all(
        isinstance(m, dict) and m.get("type") in MESSAGE_TYPES for m in messages
    )


def _stream_head(head: list[Any]) -> bool:
    first = next((r for r in head if isinstance(r, dict)), None)
    if (
        first is not None
        and isinstance(first.get("sessionId"), str)
        and isinstance(first.get("projectHash"), str)
        and "uuid" not in first
    ):
        return True
    return any(
        isinstance(r, dict)
        and "uuid" not in r
        and (isinstance(r.get("$set"), dict) or isinstance(r.get("$rewindTo"), str))
        for r in head
    )


class GeminiCliReader(Reader):
    name = "gemini-cli"
    summary = "Gemini CLI chat recordings (JSONL stream and legacy session .json)"
    # loadConversationRecord(): readline over a byte stream (UTF-8 with U+FFFD), JSON.parse.
    loader = NODE
    dialect = DIALECT

    def detect(self, source: Source) -> Detection | None:
        if source.container is Container.JSONL:
            if _stream_head(source.head()):
                return self.claim("Gemini CLI JSONL header / $set records", DEFINITIVE)
            return None
        value = source.value
        if _legacy(value):
            return self.claim("Gemini CLI legacy session object", DEFINITIVE)
        if _prompt_log(value, source.path):
            return self.claim(
                "Gemini CLI prompt log logs.json (not a transcript)", DEFINITIVE, transcript=False
            )
        return None

    def read(self, source: Source) -> list[Conversation]:
        if source.container is Container.JSONL:
            return [self._stream(source)]
        value = source.value
        if not isinstance(value, dict):
            return []  # a prompt log read with --reader gemini-cli: nothing to replay
        messages = value.get("messages")
        if isinstance(messages, list):
            return [self._document(messages)]
        return [Conversation([], self.dialect, ref=StreamRef(legacy=True))]

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Nothing for a conversation the screen proves clean.  The stream is replayed
        from typed records (``fast``; a line that does not decode is read alone, the
        reader's way), or, when detection parsed every line (a short stream), from those
        records as the full read replays them; the surviving messages are screened from
        their records (``_plain_turns``; a doubted conversation is built from the
        screen's cut) and, where those do not tell, from the built conversation
        (``gemini_content.screen_turns``): the rules cost more than the build, and the
        build more than the plain turns.  A file with a TD001 error is built whole."""
        if screen is None:
            return self.read(source)
        if source.container is Container.JSONL:
            short = len(source.head()) < _SHORT
            replayed = self._replayed(source, keep=True) if short else self._typed(source)
            if replayed is not None:
                replay, survivors = replayed

                def build(start: int) -> Conversation:
                    return self._conversation(_entries(survivors[start:]), replay)

                if source.errors:
                    return [build(0)]  # TD001 beside it: read as the full read does
                turns = _plain_turns(enumerate(value for value, *_ in survivors))
                return _screened(screen, turns, build)
        elif not source.errors:
            value = source.value
            messages = value.get("messages") if isinstance(value, dict) else None
            if isinstance(messages, list):
                turns = _plain_turns(enumerate(messages))
                return _screened(screen, turns, lambda start: self._document(messages, start))
        conversations = self.read(source)
        if source.errors:
            return conversations  # TD001 beside them: read as the full read does
        return [c for c in conversations if not screen.clean(gemini_content.screen_turns(c))]

    def _typed(self, source: Source) -> tuple[_Replay, list[_Survivor]] | None:
        """The stream replayed from typed records, and its surviving messages; None where
        only the full read is exact."""
        from transcript_doctor.readers.gemini_cli import fast  # msgspec: loaded on first use

        typed = fast.records(source.data)
        if typed is None:
            return None
        replay = _Replay()
        upsert = replay.upsert
        set_class, absent = fast.Set, fast.ABSENT
        failed = typed.lines(set(typed.failed))  # read as the full read reads them
        try:
            for index, record in enumerate(typed.records):
                if record is None:
                    line = failed[index]
                    _stream_record(replay, source.record(line), line)
                    continue
                key, update = record.id, record.update
                if record.rewind is None:
                    if key.__class__ is str:
                        upsert(key, index, "")  # a message line: the common case first
                        continue
                    if update.__class__ is set_class and update.messages is absent:
                        continue  # `{"$set": {"lastUpdated": …}}`: nothing to replay
                _typed_record(replay, record, index, fast)
        except fast.Refused:
            return None  # a raw value msgspec refuses (1e400): the full read
        lines = typed.lines({line for line, _ in replay.slots.values()})
        return replay, replay.survivors(source, lines)

    def _stream(self, source: Source) -> Conversation:
        replay, survivors = self._replayed(source, keep=False)
        return self._conversation(_entries(survivors), replay)

    def _replayed(self, source: Source, keep: bool) -> tuple[_Replay, list[_Survivor]]:
        """The stream replayed from its parsed records, and its surviving messages.
        ``keep``: the records are kept for the survivors (a short stream, whose lines
        detection parsed: parsing them once more, or decoding them typed, costs more than
        replaying what is parsed); else each survivor's line is parsed once more (a long
        stream: every line's record kept would hold the whole file's objects at once)."""
        replay = _Replay()
        kept: dict[int, Any] | None = {} if keep else None
        for line, record in source.records():
            if kept is not None:
                kept[line.index] = record
            _stream_record(replay, record, line)
        return replay, replay.survivors(source, records=kept)

    def _conversation(self, entries: list[_Entry], replay: _Replay) -> Conversation:
        messages = _messages(entries, replay.carrying)
        return Conversation(messages, self.dialect, ref=StreamRef(False, tuple(replay.rewinds)))

    def _document(self, items: list[Any], start: int = 0) -> Conversation:
        """A legacy document is used as stored: no upserts, the list is the history
        (from the message at ``start``: a screen's cut)."""
        entries: list[_Entry] = []
        for index, item in enumerate(items[start:], start):
            if isinstance(item, dict):
                key = _message_id(item)
                base = f"/messages/{index}"
                entries.append(_convert(item, key or "", 0, index, base, dup=True))
        return Conversation(_messages(entries, {}), self.dialect, ref=StreamRef(legacy=True))


def _screened(
    screen: Screen, turns: list[Turn] | None, build: Callable[[int], Conversation]
) -> list[Conversation]:
    """The conversation unless the screen proves it clean, from its plain turns when it
    has them (a doubted one built from the screen's cut: the prompt after which the
    doubt lies, ``analysis.screen.from_cut``), else from the built conversation."""
    if turns is not None:
        return [] if screen.clean(turns) else [from_cut(screen, build)]
    conversation = build(0)
    return [] if screen.clean(gemini_content.screen_turns(conversation)) else [conversation]


READER = GeminiCliReader()
