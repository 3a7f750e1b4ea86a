"""The contract between the engine and a format reader.

A reader knows one vendor layout: it recognises its files (:meth:`Reader.detect`), turns
them into vendor-neutral conversations (:meth:`Reader.read`) and, for ``fix``, turns
abstract actions into byte edits in the file's own style.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from transcript_doctor.model import Conversation, Dialect
from transcript_doctor.source import Source

# Detection scores: the highest claim wins, ties go to the reader listed first.
DEFINITIVE = 100  # the vendor's own envelope or header (session_meta, uuid chains…)
SPECIFIC = 50  # a generic shape plus a vendor-only feature (notice role, Cline keys…)
SHAPE = 20  # a generic API shape with a feature only that API has (tool_calls…)
FALLBACK = 10  # a plain role/content list any generic reader could take


@dataclass(frozen=True, slots=True)
class Detection:
    """A reader's claim on a file.  ``transcript=False``: a companion file to skip."""

    reader: str
    reason: str
    score: int
    transcript: bool = True


@dataclass(slots=True)
class Transcript:
    """A read file: its source bytes and the conversations it replays."""

    reader: Reader
    source: Source
    conversations: list[Conversation]


class Reader:
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for `transcript-doctor formats`
    dialect: ClassVar[Dialect] = Dialect()

    def detect(self, source: Source) -> Detection | None:
        raise NotImplementedError

    def read(self, source: Source) -> list[Conversation]:
        raise NotImplementedError

    def supports(self, action: object) -> bool:
        """Whether ``fix`` can apply this action to this reader's files."""
        return False

    def claim(self, reason: str, score: int, transcript: bool = True) -> Detection:
        return Detection(self.name, reason, score, transcript)


def records(source: Source) -> Iterator[tuple[int, int, Any]]:
    """``(line number, record index, value)`` of every JSONL record that parsed."""
    for line in source.lines:
        value = source.record(line)
        if value is not None:
            yield line.number, line.index, value
