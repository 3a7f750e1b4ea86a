"""Analyses computed once per conversation, and the exact bytes of an element.

Several rules and repairs ask the same question of one conversation (which calls are
answered, where the history ends); ``shared`` memoises the answer on the conversation.
``element_bytes`` is what fix safety compares: two elements are copies only when their
bytes are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from transcript_doctor.model import Conversation, Origin
from transcript_doctor.source import Container, Source

T = TypeVar("T")


def shared(analysis: Callable[[Conversation], T], conversation: Conversation, key: object = None) -> T:
    """Run an analysis once per conversation, however many rules and repairs read it.

    ``key`` names the analysis when ``analysis`` is a closure made per call.
    """
    memo = conversation.memo
    name = analysis if key is None else key
    if name not in memo:
        memo[name] = analysis(conversation)
    return memo[name]  # type: ignore[return-value]


def element_bytes(source: Source, origin: Origin) -> bytes | None:
    """The exact bytes of the element an origin names (a JSONL line, or the value at its
    pointer), or None when they cannot be told: what a fix's safety compares."""
    import transcript_doctor.jsonspan as jsonspan  # (see checks/__init__.py)

    try:
        if source.container is not Container.JSONL:
            if origin.pointer is None:
                return None
            span = source.locator().span(origin.pointer)  # no index of the whole document
        else:
            lines = source.lines
            line = lines[origin.record] if origin.record < len(lines) else None
            if line is None or line.number != origin.line:
                line = next((ln for ln in lines if ln.number == origin.line), None)
            if line is None:
                return None
            if origin.pointer is None:
                return source.line_bytes(line)
            span = jsonspan.line_span(source.data, line.start, line.end, origin.pointer)
    except (KeyError, IndexError, ValueError):
        return None
    return source.data[span.start : span.end]
