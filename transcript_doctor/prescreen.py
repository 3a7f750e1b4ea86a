"""Decide that a large JSON document is not a transcript without parsing all of it.

Parsing a 100 MB JSON export only to skip it costs about ten times its size in memory
(orjson builds every object) and seconds.  Where the layout allows it, a few bytes decide:

- a top-level array: every reader's array layout wants *every* item to be an object with
  one of ``ITEM_KEYS`` (a message's ``role``; ``type`` for Gemini CLI's prompt log and
  Cline's UI messages; ``task`` for Cline's task history), and TD002's hint wants half of
  the first 50 items to look like messages.  The first items, parsed from the first MB,
  can rule out both.
- a top-level object: every reader's object layout, and the hint, want one of
  ``DOCUMENT_KEYS`` as a key; a byte search over the whole file (no parse) rules them out.

Only a file that could not be a finding either is decided here: one whose first 64 KB hold
none of the keys that make an unparseable document TD001.  Anything unsure is parsed as
before.  A reader that accepts other array items or object keys must add them here.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from transcript_doctor.readers import LIST_KEYS, message_like
from transcript_doctor.source import BOM, JSONL_SUFFIXES

LARGE = 8 << 20  # smaller documents parse faster than this decides
PREFIX = 1 << 20  # the bytes the first array items are parsed from
HEAD = 65536  # where the keys of a conversation are looked for (TD001 of a broken document too)
HINT_SAMPLE = 50  # readers.conversation_hint's sample
ITEM_KEYS = frozenset({"role", "type", "task"})
DOCUMENT_KEYS = (*LIST_KEYS, "clientHistory", "files_in_context")  # + gemini-checkpoint /restore
CONVERSATION_BYTES = (b'"role"', b'"messages"', b'"parts"', b'"content"', b'"history"')
_WHITESPACE = " \t\r\n"


def conversation_bytes(data: bytes) -> bool:
    """Whether the head of ``data`` names a conversation's keys: a document that does not
    parse is then TD001, else not a transcript."""
    head = data[:HEAD]
    return any(key in head for key in CONVERSATION_BYTES)


def not_a_transcript(path: str, data: bytes) -> str | None:
    """Why ``data`` cannot be a transcript nor a finding, or None when it must be parsed."""
    if len(data) < LARGE or path.lower().endswith(JSONL_SUFFIXES):
        return None
    body = data[3:] if data.startswith(BOM) else data  # one copy at most, of a rare BOM
    head = body[:HEAD]
    start = len(head) - len(head.lstrip())
    if start >= len(head) or conversation_bytes(head) or _jsonl(body):
        return None
    if head[start:].startswith(b"{"):
        if any(b'"' + key.encode() + b'"' in body for key in DOCUMENT_KEYS):
            return None
        return "no reader recognises it (it has none of the keys a conversation object has)"
    if head[start:].startswith(b"["):
        items = _first_items(body[start : start + PREFIX])
        if items is None or not items:
            return None
        if all(isinstance(item, dict) and not ITEM_KEYS.isdisjoint(item) for item in items):
            return None  # every item could still be a message (or a companion's record)
        unlike = sum(1 for item in items if not message_like(item))
        if 2 * unlike <= HINT_SAMPLE:  # half of the sample could still look like messages
            return None
        return f"no reader recognises it (decided from its first {len(items)} records)"
    return None


def _jsonl(body: bytes) -> bool:
    """Whether the text may read as JSONL (its first line a whole value, more lines after):
    those go to the JSONL readers, which this does not know."""
    newline = body.find(b"\n")
    if newline < 0 or not body[newline + 1 : newline + 1 + HEAD].strip():
        return False  # one line, or one and blank ones (a trailing newline)
    if newline > PREFIX:
        return True  # a first line longer than the prefix: do not guess
    try:
        orjson.loads(body[:newline])
    except orjson.JSONDecodeError:
        return False
    return True


def _first_items(prefix: bytes) -> list[Any] | None:
    """Up to HINT_SAMPLE items of an array that goes on past ``prefix``; None if it ends
    within it (then the whole file is small) or the bytes are not UTF-8."""
    cut = len(prefix)
    for _ in range(4):  # the prefix may end inside a character
        try:
            text = prefix[:cut].decode("utf-8")
            break
        except UnicodeDecodeError as exc:
            if exc.start < cut - 3:
                return None
            cut = exc.start
    else:
        return None
    decoder = json.JSONDecoder()
    items: list[Any] = []
    pos = _skip(text, 1)
    while len(items) < HINT_SAMPLE:
        if pos >= len(text) or text[pos] == "]":
            return None if pos < len(text) else items
        try:
            value, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return items  # cut off by the prefix (or damaged): what was read decides
        items.append(value)
        pos = _skip(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip(text, pos + 1)
        elif pos < len(text):
            return None if text[pos] == "]" else items
    return items


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos
