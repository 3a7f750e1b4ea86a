"""What a check sees: one read file, the catalog, and analyses shared between rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from transcript_doctor.catalog import Catalog
from transcript_doctor.model import Conversation, Origin
from transcript_doctor.readers.base import Transcript
from transcript_doctor.source import Container, Source

T = TypeVar("T")
EXCERPT = 40


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
    from transcript_doctor import jsonspan

    try:
        if source.container is Container.JSONL:
            lines = source.lines
            line = lines[origin.record] if origin.record < len(lines) else None
            if line is None or line.number != origin.line:
                line = next((ln for ln in lines if ln.number == origin.line), None)
            if line is None:
                return None
            if origin.pointer is None:
                return source.line_bytes(line)
            root = jsonspan.index(source.data, line.start, line.end)
        elif origin.pointer is None:
            return None
        else:
            root = source.spans()
        span = jsonspan.resolve(root, origin.pointer)
    except (KeyError, IndexError, ValueError):
        return None
    return source.data[span.start : span.end]


class Context:
    def __init__(self, transcript: Transcript, catalog: Catalog, redact: bool = False) -> None:
        self.transcript = transcript
        self.catalog = catalog
        self.redact = redact

    @property
    def conversations(self) -> list[Conversation]:
        return self.transcript.conversations

    def shared(self, analysis: Callable[[Conversation], T], conversation: Conversation) -> T:
        return shared(analysis, conversation)

    def line(self, origin: Origin) -> int:
        """The line of an origin, resolving single-document pointers on demand."""
        if origin.line or origin.pointer is None:
            return origin.line
        return self.transcript.source.line_at(origin.pointer)

    def raw(self, origin: Origin) -> bytes | None:
        return element_bytes(self.transcript.source, origin)

    def same_bytes(self, one: Origin, other: Origin) -> bool:
        """Whether two elements are byte for byte the same (False when unknown)."""
        first = self.raw(one)
        return first is not None and first == self.raw(other)

    def place(self, origin: Origin) -> str:
        """How a message refers to another element: its line, and where inside a JSONL line."""
        if origin.pointer:
            line = self.line(origin)
            return f"line {line} at {origin.pointer}" if line else origin.pointer  # 0: a row
        return f"line {origin.line}"

    def quote(self, text: str) -> str:
        """A short, visibly truncated excerpt: sessions hold secrets, findings get shared."""
        if self.redact:
            return "(redacted)"
        flat = " ".join(text.split())
        if len(flat) > EXCERPT:
            flat = flat[: EXCERPT - 1] + "…"
        return '"' + flat + '"'

    def where(self, conversation: Conversation) -> str:
        """A suffix naming the conversation when a file holds several."""
        return f" ({conversation.label})" if conversation.label else ""
