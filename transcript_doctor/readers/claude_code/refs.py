"""Where each element of a Claude Code session lives: the lines and links a repair edits."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class LineRef:
    """One record of the file: ``index`` into ``source.lines``, its uuid and parent link."""

    index: int
    uuid: str
    parent: str | None


@dataclass(frozen=True, slots=True)
class MessageRef:
    """Every line a message was built from, in chain order.

    ``kind`` is ``assistant`` (one response: remove all lines, re-link the child of the last
    to the parent of the first), ``user`` (a run of merged user lines) or ``copy`` (a later
    byte-identical copy of a user line, TD403: delete it, nothing to re-link).
    """

    kind: str
    lines: tuple[LineRef, ...]


@dataclass(frozen=True, slots=True)
class RelinkRef:
    """TD404: the line to re-link and the nearest earlier line of its session and sidechain."""

    line: LineRef
    target: str | None


@dataclass(slots=True)
class FileRef:
    """Who names whom: what a fix must re-point when it removes or moves a line.

    Keys are uuids; values are record indices of the lines that name them as ``parentUuid``,
    ``logicalParentUuid`` (compact boundaries) or ``leafUuid`` (summary lines).
    ``versions``: every line of a uuid written more than once (byte copies and rewrites),
    which a fix must edit or remove together or an untouched copy takes the uuid back.
    ``path``: record indices of the lines on the raw ``parentUuid`` path from the resumed
    leaf to its root (progress lines included, recovered parallel branches not): where a
    line is inserted, only the child on this path is re-linked to it, so off-path
    branches such as 2.1.x results parented on their own ``tool_use`` line stay put.
    """

    children: dict[str, list[int]] = field(default_factory=dict)
    logical_children: dict[str, list[int]] = field(default_factory=dict)
    summaries: dict[str, list[int]] = field(default_factory=dict)
    versions: dict[str, list[int]] = field(default_factory=dict)
    path: frozenset[int] = frozenset()
    leaf: str | None = None
    leaf_time: str = ""  # the resumed leaf's ``timestamp``: a new line must not pass it
    sidechain: bool = False
