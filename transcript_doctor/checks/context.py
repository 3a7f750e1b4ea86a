"""What a check sees: one read file, the catalog, and analyses shared between rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from transcript_doctor.analysis.shared import element_bytes, shared
from transcript_doctor.catalog import Catalog
from transcript_doctor.model import Conversation, Origin
from transcript_doctor.transcript import Transcript

T = TypeVar("T")
EXCERPT = 40


class Context:
    __slots__ = ("catalog", "conversations", "redact", "transcript")

    def __init__(self, transcript: Transcript, catalog: Catalog, redact: bool = False) -> None:
        self.transcript = transcript
        self.catalog = catalog
        self.redact = redact
        # Every check loops over them: an attribute, not a property call each time (a
        # Context lives for one run of the rules over one read file).
        self.conversations: list[Conversation] = transcript.conversations

    def shared(self, analysis: Callable[[Conversation], T], conversation: Conversation) -> T:
        """``analysis.shared.shared``, its memo read here (the TD3 checks each ask it)."""
        memo = conversation.memo
        if analysis in memo:
            return memo[analysis]  # type: ignore[return-value]
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
