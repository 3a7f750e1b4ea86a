"""The reader registry and detection.

Every reader is asked about every file (except those whose ``first_keys`` the file's first
record lacks); the highest-scoring claim wins and ties go to the reader listed first
(vendor layouts before the generic API layouts).
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from importlib import import_module
from typing import Any

from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Container, Source

_MODULES = (
    "gemini_cli",
    "gemini_checkpoint",
    "qwen_code",
    "claude_code",
    "codex",
    "pi",
    "copilot_cli",
    "openworker",
    "neurolink",
    "mistral_vibe",
    "kimi_cli",
    "opencode",
    "anthropic_messages",
    "openai_chat",
)


@cache
def all_readers() -> tuple[Reader, ...]:
    return tuple(import_module(f"{__name__}.{name}").READER for name in _MODULES)


def by_name(name: str) -> Reader | None:
    for reader in all_readers():
        if reader.name == name:
            return reader
    return None


def names() -> tuple[str, ...]:
    return tuple(reader.name for reader in all_readers())


def claim(reader: Reader, source: Source) -> Detection | None:
    """``reader``'s claim on the file, if its detection makes one."""
    try:
        return reader.detect(source)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None  # malformed look-alike: this reader does not understand it


def detect(source: Source, every: bool = False) -> tuple[Reader, Detection] | None:
    """The best claim on ``source``.  A reader that declares ``first_keys`` is asked only
    when the file's first record holds one of them (``every``: ask every reader)."""
    keys = None if every else first_keys(source)
    best: tuple[Reader, Detection] | None = None
    for reader in all_readers():
        wanted = reader.first_keys
        if keys is not None and wanted is not None and wanted.isdisjoint(keys):
            continue  # its detect could not claim this file
        found = claim(reader, source)
        if found is not None and (best is None or found.score > best[1].score):
            best = (reader, found)
    return best


def first_keys(source: Source) -> Collection[str]:
    """The keys of the file's first record (``Reader.first_keys``); none when it has no
    object there."""
    if source.container is Container.JSONL:
        head = source.head()
        first = head[0] if head else None
    else:
        value = source.value
        first = value[0] if isinstance(value, list) and value else value
    return first.keys() if isinstance(first, dict) else ()


SPEAKER_KEYS = frozenset({"role", "type", "from", "author", "sender", "speaker", "source"})
CONTENT_KEYS = frozenset({"content", "message", "parts", "text", "value", "payload", "data"})
LIST_KEYS = ("messages", "history", "conversation", "conversations", "events", "items", "contents")


def message_like(item: Any) -> bool:
    return isinstance(item, dict) and not SPEAKER_KEYS.isdisjoint(item) and not CONTENT_KEYS.isdisjoint(item)


def conversation_hint(source: Source) -> str | None:
    """Why an unclaimed file still looks like a conversation (TD002), or None.

    Records need both a speaker-like key and a content-like key, so that configuration
    files pre-commit passes along (``package.json``) are never mistaken for transcripts.
    """
    if source.container is Container.JSONL:
        items = source.head()
        what = "JSONL records"
    else:
        value = source.value
        items = value if isinstance(value, list) else []
        what = "a JSON array of records"
        if isinstance(value, dict):
            for key in LIST_KEYS:
                if isinstance(value.get(key), list):
                    items, what = value[key], f"a {key!r} list of records"
                    break
    sample = items[:50]
    if not sample:
        return None
    like = sum(1 for item in sample if message_like(item))
    if like * 2 < len(sample):
        return None
    keys = sorted({k for item in sample if isinstance(item, dict) for k in item})[:6]
    return f"{what} with keys {', '.join(keys)}"
