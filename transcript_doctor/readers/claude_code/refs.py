"""Where each element of a Claude Code session lives: the lines and links a repair edits."""

from __future__ import annotations

from typing import Final

from transcript_doctor.plain import Mutable, Value


class LineRef(Value):
    """One record of the file: ``index`` into ``source.lines``, its uuid and parent link."""

    __slots__ = ("index", "parent", "uuid")
    index: Final[int]
    uuid: Final[str]
    parent: Final[str | None]

    def __init__(self, index: int, uuid: str, parent: str | None) -> None:
        self.index = index
        self.uuid = uuid
        self.parent = parent


class MessageRef(Value):
    """Every line a message was built from, in chain order.

    ``kind`` is ``assistant`` (one response: remove all lines, re-link the child of the last
    to the parent of the first), ``user`` (a run of merged user lines) or ``copy`` (a later
    byte-identical copy of a user line, TD403: delete it, nothing to re-link).
    """

    __slots__ = ("kind", "lines")
    kind: Final[str]
    lines: Final[tuple[LineRef, ...]]

    def __init__(self, kind: str, lines: tuple[LineRef, ...]) -> None:
        self.kind = kind
        self.lines = lines


class RelinkRef(Value):
    """TD404: the line to re-link and the nearest earlier line of its session and sidechain."""

    __slots__ = ("line", "target")
    line: Final[LineRef]
    target: Final[str | None]

    def __init__(self, line: LineRef, target: str | None) -> None:
        self.line = line
        self.target = target


class FileRef(Mutable):
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

    __slots__ = (
        "children",
        "leaf",
        "leaf_time",
        "logical_children",
        "path",
        "sidechain",
        "summaries",
        "versions",
    )
    children: dict[str, list[int]]
    logical_children: dict[str, list[int]]
    summaries: dict[str, list[int]]
    versions: dict[str, list[int]]
    path: frozenset[int]
    leaf: str | None
    leaf_time: str  # the resumed leaf's ``timestamp``: a new line must not pass it
    sidechain: bool

    def __init__(
        self,
        children: dict[str, list[int]] | None = None,
        logical_children: dict[str, list[int]] | None = None,
        summaries: dict[str, list[int]] | None = None,
        versions: dict[str, list[int]] | None = None,
        path: frozenset[int] = frozenset(),
        leaf: str | None = None,
        leaf_time: str = "",
        sidechain: bool = False,
    ) -> None:
        self.children = {} if children is None else children
        self.logical_children = {} if logical_children is None else logical_children
        self.summaries = {} if summaries is None else summaries
        self.versions = {} if versions is None else versions
        self.path = path
        self.leaf = leaf
        self.leaf_time = leaf_time
        self.sidechain = sidechain
