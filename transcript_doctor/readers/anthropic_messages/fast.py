"""Proof that the conversations of a fine-tuning file are clean, from its bytes.

A fine-tuning JSONL file (``{"system": …, "messages": […]}`` per line) holds thousands of
short conversations; parsing each line into dicts and walking them in Python cost five
times the parse.  msgspec decodes each line into the two keys ``_plain_turns`` reads of a
message (``role``, ``content``), in C, skipping the rest (``system``: no rule reads it).
The replies of the conversations of string contents are asked of the screen all at once
(``Screen.doubted_replies``), any other conversation through ``_plain_turns`` as the full
read asks it.

A line it does not prove is read in full (``listing.listings``): one that does not
decode (torn, not an object, a message that is not an object, ``messages`` not a list,
a ``content`` that is neither a string, a list of objects nor null), one without
``messages``, and every line of a file ``listing.typed_bytes`` turns down.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from transcript_doctor.analysis.screen import Screen, Turn
from transcript_doctor.readers.listing import Proof


class _Message(msgspec.Struct, gc=False):
    role: Any = None
    content: str | list[dict[str, Any]] | None = None


class _Line(msgspec.Struct, gc=False):
    messages: list[_Message] | None = None


_DECODER = msgspec.json.Decoder(_Line)


def proof(screen: Screen, plain_turns: Callable[[list[Any]], Iterator[Turn | None]]) -> Proof:
    """The proof, asking ``screen``; ``plain_turns`` is the reader's ``_plain_turns``."""

    def prove(segments: list[bytes]) -> set[int]:
        decode, clean = _DECODER.decode, screen.clean
        unproven: set[int] = set()
        texts: list[str] = []  # the replies of the conversations of string contents
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
            final = False  # whether the last user or assistant message is a reply
            for message in messages:
                role = message.role
                if role == "assistant" or role == "user":
                    content = message.content
                    if content.__class__ is not str:
                        del texts[first:]
                        turns = plain_turns([{"role": m.role, "content": m.content} for m in messages])
                        if not clean(turns, exact_end=True):
                            unproven.add(number)
                        break
                    if role == "assistant":
                        texts.append(content)
                    final = role == "assistant"
            else:
                owners.extend([number] * (len(texts) - first))
                if final:
                    finals.add(len(texts) - 1)
        unproven.update(owners[i] for i in screen.doubted_replies(texts, finals))
        return unproven

    return prove
