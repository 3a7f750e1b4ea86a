"""Reader ``mistral-vibe``: Mistral Vibe's ``session_*/messages.jsonl``.

Spec: docs/formats/mistral-vibe.md (from files Mistral Vibe 2.18.4 wrote, fixtures/mistral-vibe/,
and its installed source).  Each line is one ``LLMMessage.model_dump(exclude_none=True)`` in
OpenAI chat shape; ``meta.json`` beside it holds ``total_messages``, the count Vibe appends
from on an interactive resume (why most repairs are refused: ``repair.py``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import Any

import orjson

from transcript_doctor.analysis.screen import OTHER, RESULT, Screen, Turn
from transcript_doctor.model import Conversation, Dialect, Message, Part, PartKind, Role
from transcript_doctor.readers.base import DEFINITIVE, SPECIFIC, Decided, Detection, Reader
from transcript_doctor.readers.listing import (
    Element,
    Listing,
    built,
    chat_assistant_turn,
    chat_tool_calls,
    lines_from,
    listings,
    screened,
)
from transcript_doctor.source import PYTHON, SYNTAX, Container, Line, ParseError, Source, fingerprint

# vibe/core/types.py Role: the roles LLMMessage accepts (any other fails the whole load).
ROLES = frozenset({"user", "assistant", "tool", "system"})
# The folder SessionLogger.save_folder makes: <session_prefix>_<UTC %Y%m%d_%H%M%S>_<8 chars of
# the session id>/messages.jsonl (session_logger.py, session_id.py).  The prefix is
# `session_logging.session_prefix`, "session" by default, so any prefix is accepted.
PATH = re.compile(r"(?:^|[\\/])[^\\/]+_\d{8}_\d{6}_[^\\/]+[\\/]messages\.jsonl$")
# openworker's conversation path (readers/openworker/reader.py PATH, held equal by
# tests/test_decide_roles.py): a Vibe session there is openworker's to claim too.
OPENWORKER_PATH = re.compile(r"(?:^|[\\/])conversations[\\/][^\\/]+\.jsonl$")
AT_PATH = "Mistral Vibe session messages (`injected` on every line, session_*/)"
VIBE = "Mistral Vibe session messages (`injected` on every line)"
# meta.json (session_logger.py save_interaction): the keys that tell it from other JSON.
META_KEYS = ("session_id", "total_messages", "system_prompt")
# The keys of a line the screen understands (analysis/screen.py): text, calls, results,
# Vibe's bookkeeping that no rule reads (`injected`, `message_id`, `reasoning_message_id`)
# and the reasoning of a turn (a thinking part that needs no signature: no rule flags it,
# and a turn the screen takes has text or calls beside it).  Anything else (`images`, …)
# is read by the full path.
PLAIN_KEYS = frozenset(
    {
        "role",
        "content",
        "injected",
        "message_id",
        "tool_calls",
        "tool_call_id",
        "name",
        "reasoning_content",
        "reasoning_message_id",
    }
)
# A whitespace-only line (CR counts: decode_safe turns CRLF into LF first), or whitespace
# after the last newline.  SessionLoader.load_session drops only one trailing "" after its
# split on "\n" and json.loads("") fails the whole load.  The definition: ``blank_lines``
# finds the same lines without searching the text (tests compare the two).
BLANK = rb"(?:^|\n)[ \t\r\f\v]*(?=\n)|\n[ \t\r\f\v]+\Z"
BLANK_MESSAGE = "a blank line: Mistral Vibe's loader reads it as a record and cannot load the session"


def _message(item: Any) -> bool:
    """A line LLMMessage validates: a known role (any ``content`` is made a string)."""
    if not isinstance(item, dict):
        return False
    role = item.get("role")
    return isinstance(role, str) and role in ROLES


def _vibe_line(item: dict[str, Any]) -> bool:
    """``injected`` is a field of Vibe's LLMMessage (bool, default False) that
    ``model_dump(exclude_none=True)`` always writes: every line of every recording has
    it, and no Chat Completions message or other vendor's layout carries it."""
    return isinstance(item.get("injected"), bool)


class MistralVibeReader(Reader):
    name = "mistral-vibe"
    summary = "Mistral Vibe session logs (session_*/messages.jsonl beside meta.json)"
    # SessionLoader.load_session: read_safe (UTF-8, else another codec: the file still
    # loads) then json.loads per line, which takes lone surrogates, NaN and 1e400.  A line
    # with invalid UTF-8 is still reported: Vibe then decodes the whole file in another
    # codec (vibe/core/utils/io.py decode_safe), which garbles every non-ASCII character.
    loader = PYTHON
    # Vibe appends the next prompt before it calls the model (AgentLoop.act): a final
    # assistant text is never sent as prefill.  Consecutive messages are sent as they are
    # (http500/requests-2.jsonl), so pairing does not coalesce.
    dialect = Dialect(final_text_is_prefill=False)

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSONL:
            return self._meta(source)
        head = source.head()
        if not head or not all(_message(item) for item in head):
            return None
        vibe = all(_vibe_line(item) for item in head)
        path = PATH.search(source.path) is not None
        if vibe and path:
            return self.claim(AT_PATH, DEFINITIVE)
        if vibe:
            return self.claim(VIBE, SPECIFIC)
        if path and any(_vibe_only_key(item) for item in head):
            # A file at Vibe's path without `injected`: an older release may not have
            # written it (unconfirmed), but `message_id` on a chat message is Vibe's.
            return self.claim("Mistral Vibe session messages (session_*/messages.jsonl)", SPECIFIC)
        return None

    def _meta(self, source: Source) -> Detection | None:
        value = source.value
        if (
            isinstance(value, dict)
            and isinstance(value.get("total_messages"), int)
            and all(key in value for key in META_KEYS)
        ):
            return self.claim("Mistral Vibe session metadata meta.json (not a transcript)", SPECIFIC, False)
        return None

    def decide(self, source: Source) -> Decided | None:
        """``detect``'s claim from the typed records the proof reads (``fast.vibe_lines``:
        every line a message with a boolean ``injected``, no other key a reader of the
        registry is shown files by), with no head parsed: the first line, parsed by
        orjson as the head parses it, makes the head non-empty.

        The readers keys cannot rule out: openworker claims such lines only at its path
        (no stamp, notice or sidecar is a plain key), Kimi CLI none (no control role, no
        ``type``)."""
        if source.container is not Container.JSONL:
            return None
        from transcript_doctor.readers.mistral_vibe import fast  # msgspec: loaded on first use

        if not fast.vibe_lines(source):
            return None
        data = source.data
        end = data.find(b"\n")
        try:
            first = orjson.loads(data[: end if end >= 0 else len(data)])
        except orjson.JSONDecodeError:
            return None  # not in the head (a number beyond a double): let the head tell
        path = source.path
        if PATH.search(path) is not None:
            return Decided(self.claim(AT_PATH, DEFINITIVE), first.keys(), fast.ABSENT, _KIMI)
        beaten = _KIMI if OPENWORKER_PATH.search(path) else _KIMI_OPENWORKER
        return Decided(self.claim(VIBE, SPECIFIC), first.keys(), fast.ABSENT, beaten)

    def read(self, source: Source) -> list[Conversation]:
        return self.read_screened(source, None)

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Nothing for a session the typed fast path proves clean (``fast``), else the
        conversation from where the screen's doubt allows."""
        if screen is not None and source.container is Container.JSONL:
            from transcript_doctor.readers.mistral_vibe import fast  # msgspec: loaded on first use

            proof = fast.prove(source.data, screen, source)
            if proof is True:
                return []
            if proof is None:  # every line a record, no blank line: the screen's cut holds
                return [built(lines_from(source, screen.cut, screen.before), self._conversation)]
        _report_blank_lines(source)
        cut = None if screen is None else (lambda items: screened(screen, _plain_turns(items)))
        return [built(found, self._conversation) for found in listings(source, (), False, cut)]

    def _conversation(self, listing: Listing) -> Conversation:
        messages: list[Message] = []
        block: Message | None = None  # the run of tool lines being read: one API slot
        for element in listing.elements:
            item = element.value
            if not isinstance(item, dict):
                continue
            role = item.get("role")
            if role == "tool":
                if block is None:
                    block = Message(Role.USER, [], element.at())
                    messages.append(block)
                block.parts.append(_result(element))
                continue
            block = None
            if role == "assistant":
                messages.append(_assistant(element))
            elif role == "user":
                messages.append(
                    Message(Role.USER, _user_parts(element), element.at(), dup_key=_identity(item))
                )
            # "system": SessionLoader.load_session drops system lines (the prompt lives in
            # meta.json), so they are never replayed.  Any other role fails LLMMessage
            # validation and the whole load; no rule names that, and the line is left out.
        return Conversation(messages, self.dialect, label=listing.label)


_KIMI = frozenset({"kimi_cli"})
_KIMI_OPENWORKER = frozenset({"kimi_cli", "openworker"})


def _report_blank_lines(source: Source) -> None:
    """TD001 at the first blank line Vibe's loader fails on (the JSONL layer skips blank
    lines, as every other vendor's loader does), with how many there are: one is enough
    to fail the load, and one finding per line would flood a report.  Not repaired: an
    edit addresses records, not the bytes between them."""
    if source.container is not Container.JSONL:
        return
    found = blank_lines(source.data, source.lines)
    if found is None:
        return
    number, count = found
    numbers = [line.number for line in source.lines]
    record = max(min(bisect.bisect_right(numbers, number), len(numbers) - 1), 0)  # the next record
    more = count - 1
    message = BLANK_MESSAGE + (f" ({more} more blank line{'s' if more > 1 else ''} after it)" if more else "")
    # Reported once however often the file is read (Source.report deduplicates).
    source.report(ParseError(number, record, message, kinds=frozenset({SYNTAX})))


def blank_lines(data: bytes, lines: list[Line]) -> tuple[int, int] | None:
    """The number of the first line ``BLANK`` matches and how many it matches, or None.

    Told from the source's lines instead of searching the text (a regex over every byte
    cost half a large session's lint): the lines skip exactly the segments between
    newlines that hold only ``[ \t\r\f\v]`` (the pattern's blanks), so with a newline
    in the text the blank lines are the numbers the lines skip, up to the last segment
    (an empty one after the final newline is no line).  Without a newline the pattern
    cannot match.  tests/readers/test_mistral_vibe.py compares both on random texts."""
    newlines = data.count(b"\n")
    if not newlines:
        return None
    count = newlines + (0 if data.endswith(b"\n") else 1) - len(lines)
    if not count:
        return None
    number = len(lines) + 1  # every line before the first blank has its own number
    for expected, line in enumerate(lines, 1):
        if line.number != expected:
            number = expected
            break
    return number, count


def _vibe_only_key(item: dict[str, Any]) -> bool:
    return "message_id" in item or "reasoning_message_id" in item


def _identity(item: dict[str, Any]) -> bytes | None:
    """A user line with a ``message_id`` is one message: the same id and content twice in a
    row is the count-based append writing it again (TD403), not a prompt typed twice
    (each prompt gets a fresh uuid4, LLMMessage._from_any)."""
    if not isinstance(item.get("message_id"), str):
        return None
    return fingerprint(item)


def _same_id(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Whether two user lines hold the same string ``message_id``: only then can their
    identities (``_identity``, the whole records) be equal."""
    known = first.get("message_id")
    return isinstance(known, str) and known == second.get("message_id")


def _result(element: Element) -> Part:
    item = element.value
    call_id = item.get("tool_call_id")
    name = item.get("name")
    return Part(
        PartKind.TOOL_RESULT,
        element.at(),
        call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else None,
    )


def _assistant(element: Element) -> Message:
    item = element.value
    parts: list[Part] = []
    reasoning = item.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        origin = element.at("reasoning_content")
        parts.append(Part(PartKind.THINKING, origin, text=reasoning, ref=origin))
    parts.extend(_content_parts(element))
    parts.extend(chat_tool_calls(element))
    return Message(Role.ASSISTANT, parts, element.at())


def _user_parts(element: Element) -> list[Part]:
    parts = _content_parts(element)
    images = element.value.get("images")
    if isinstance(images, list):  # LLMMessage.images; never seen on disk (unconfirmed)
        parts.extend(Part(PartKind.MEDIA, element.at("images", i)) for i in range(len(images)))
    return parts


def _content_parts(element: Element) -> list[Part]:
    """``content`` is a string in every recording.  A list is joined to one string by
    LLMMessage (``_content_before``: each part's ``text``, else ``str(part)``), so each
    element is read as text: a part without ``text`` is still text Vibe sends."""
    content = element.value.get("content")
    if isinstance(content, str):
        origin = element.at("content")
        return [Part(PartKind.TEXT, origin, text=content, ref=origin)]
    parts: list[Part] = []
    if isinstance(content, list):
        for index, block in enumerate(content):
            origin = element.at("content", index)
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                ref = element.at("content", index, "text")
                parts.append(Part(PartKind.TEXT, origin, text=block["text"], ref=ref))
            else:
                parts.append(Part(PartKind.OTHER, origin))
    return parts


def _plain_turns(items: list[Any]) -> Iterator[Turn | None]:
    """The turns of a session of text messages and id-paired tool exchanges, one per
    line, read the way ``_conversation`` reads them, up to a line holding anything else
    (None).  Two user lines in a row with the same string ``message_id`` are a doubt:
    TD403 compares their whole records (``_identity``), which the screen does not cover;
    with other ids (or none) their records differ and TD403 cannot fire."""
    plain = PLAIN_KEYS.issuperset
    previous: dict[str, Any] | None = None  # the line before, when it is a user's
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not plain(item):
            yield None
            return
        role = item.get("role")
        if role == "user":
            if not isinstance(item.get("content"), str) or (
                previous is not None and _same_id(previous, item)
            ):
                yield None
                return
            previous = item
            yield OTHER, None, (index,)
            continue
        previous = None
        if role == "assistant":
            turn = chat_assistant_turn(item)
            yield turn
            if turn is None:
                return
        elif role == "tool" and isinstance(call_id := item.get("tool_call_id"), str):
            yield RESULT, None, (call_id,)
        else:
            yield None
            return


READER = MistralVibeReader()
