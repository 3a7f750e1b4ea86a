"""Proof that a fine-tuning line's conversation is clean, from its bytes.

OpenAI's fine-tuning JSONL (``{"messages": […]}`` per line) holds thousands of short
conversations; parsing each line into dicts and walking them in Python cost five times
the parse.  msgspec decodes each line into the keys ``_plain_turns`` allows a message
(``PLAIN_KEYS``), in C; a message with any other key does not decode (the screen does
not cover it).  A conversation of prompts and string replies is asked of the screen as
its replies, with every other such conversation's at once (``Screen.doubted_replies``),
any other through ``_plain_turns`` as the full read asks it.

A line it does not prove is read in full (``listing.listings``): one that does not
decode (torn, not an object, a message that is not an object or holds another key,
``messages`` not a list), one without ``messages``, and every line of a file
``listing.typed_bytes`` turns down.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from transcript_doctor.analysis.screen import Screen, Turn
from transcript_doctor.readers.listing import Proof


class _Message(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A message of ``reader.PLAIN_KEYS`` only (a test holds them equal); a missing key
    reads as None, as ``dict.get`` does."""

    role: Any = None
    content: Any = None
    name: Any = None
    weight: Any = None
    tool_calls: Any = None
    tool_call_id: Any = None


class _Line(msgspec.Struct, gc=False):
    messages: list[_Message] | None = None


_DECODER = msgspec.json.Decoder(_Line)
_PROMPTS = frozenset({"user", "system", "developer"})


def proof(screen: Screen, plain_turns: Callable[[list[Any]], Iterator[Turn | None]]) -> Proof:
    """The proof, asking ``screen``; ``plain_turns`` is the reader's ``_plain_turns``."""

    def prove(segments: list[bytes]) -> set[int]:
        decode, clean = _DECODER.decode, screen.clean
        unproven: set[int] = set()
        texts: list[str] = []  # the replies of the conversations of prompts and replies
        owners: list[int] = []  # the line number of each
        finals: set[int] = set()  # the replies that end their conversation
        for number, raw in enumerate(segments, 1):
            try:
                messages = decode(raw).messages
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                if raw.strip():  # (a blank segment is no line: ``_split_lines``)
                    unproven.add(number)
                continue
            if messages is None:
                unproven.add(number)
                continue
            first = len(texts)
            final = False  # whether the last message is a reply
            for message in messages:
                role = message.role
                if role == "assistant" and message.tool_calls is None and message.content.__class__ is str:
                    texts.append(message.content)
                    final = True
                elif role.__class__ is str and role in _PROMPTS:
                    final = False  # text, media or parts: no rule reads them
                else:
                    # calls, results, or what the screen does not cover: as the full read asks
                    del texts[first:]
                    if not clean(plain_turns([_fields(m) for m in messages])):
                        unproven.add(number)
                    break
            else:
                owners.extend([number] * (len(texts) - first))
                if final:
                    finals.add(len(texts) - 1)
        unproven.update(owners[i] for i in screen.doubted_replies(texts, finals))
        return unproven

    return prove


def _fields(message: _Message) -> dict[str, Any]:
    """The message as ``_plain_turns`` reads it (with ``get``: None for a missing key)."""
    return {
        "role": message.role,
        "content": message.content,
        "tool_calls": message.tool_calls,
        "tool_call_id": message.tool_call_id,
    }
