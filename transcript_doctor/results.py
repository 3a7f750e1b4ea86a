"""The public result objects of the Python API: frozen, plain, and serialisable.

They copy what they need out of the engine's objects instead of wrapping them, so that
a caller can keep, compare, pickle or send them anywhere, and so that the engine can
change its internals without changing what users see.  ``to_dict`` gives the CLI's
machine forms: a finding as one object of ``lint -o json``, a fix as one file entry of
the ``fix --report`` document (shared/spec/cli.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class CheckError(Exception):
    """A transcript that could not be checked at all (the CLI's error line, exit 2)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule violation, field for field the CLI's ``-o json`` object.

    ``path`` is the name given (``None`` for an in-memory message list); ``line`` is the
    1-based line of the file (``None`` for a message list, where ``pointer`` is what
    locates it: ``/3/content/1`` is part 1 of message 3).
    """

    path: str | None
    reader: str | None
    rule: str
    name: str
    severity: str  # "error", "warning" or "info"
    message: str
    line: int | None
    record: int
    pointer: str | None
    fixable: bool  # a repair applies under the settings (safe, or unsafe when asked)
    fix_applicability: str | None = None  # "safe" or "unsafe" whatever the settings; None: no repair

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "reader": self.reader,
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "line": self.line,
            "record": self.record,
            "pointer": self.pointer,
            "fixable": self.fixable,
            "fix_applicability": self.fix_applicability,
        }


@dataclass(frozen=True, slots=True)
class Edit:
    """One edited record: the exact text that was at ``pointer`` and the text now there."""

    action: str
    pointer: str
    old: bytes
    new: bytes


@dataclass(frozen=True, slots=True)
class Repair:
    """One repaired finding: its rule, what was done, and every byte it took out."""

    rule: str
    line: int | None
    message: str
    action: str  # remove, insert, replace, move, strip
    edits: tuple[Edit, ...]
    applicability: str = "safe"  # "unsafe": it may have removed real model or tool output
    safety: str = ""  # what the repair keeps or destroys


@dataclass(frozen=True, slots=True)
class Unfixed:
    """A finding the repair left, and why (no fix for the rule, rolled back, …)."""

    finding: Finding
    why: str


@dataclass(frozen=True, slots=True)
class Step:
    """One splice in the order it was made: at ``offset`` of the bytes at that moment,
    ``old`` became ``new``.  Undone in reverse order, the steps give the original back."""

    offset: int
    old: bytes
    new: bytes


@dataclass(frozen=True, slots=True)
class FixResult:
    """What ``fix`` made of one transcript; ``data`` is ``original`` when nothing changed."""

    name: str
    reader: str | None
    original: bytes = field(repr=False)
    data: bytes = field(repr=False)
    applied: tuple[Repair, ...] = ()
    unfixed: tuple[Unfixed, ...] = ()
    introduced: tuple[Finding, ...] = ()  # findings the repairs exposed (review them)
    steps: tuple[Step, ...] = ()
    rolled_back: tuple[str, ...] = ()
    skipped: str | None = None  # why this is not a transcript (nothing was checked)
    # The ``fix --report`` entry, computed by the same code as the CLI's report.
    report: str = field(default="{}", repr=False, compare=False)

    @property
    def changed(self) -> bool:
        return self.data != self.original

    def undo(self) -> bytes:
        """The original bytes, rebuilt from ``data`` and the steps alone."""
        data = self.data
        for step in reversed(self.steps):
            data = data[: step.offset] + step.old + data[step.offset + len(step.new) :]
        return data

    def to_dict(self) -> dict[str, Any]:
        """One file entry of the ``fix --report`` document."""
        import orjson

        entry: dict[str, Any] = orjson.loads(self.report)
        return entry
