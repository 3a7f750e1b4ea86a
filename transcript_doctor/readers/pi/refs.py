"""What a Pi repair needs to find its records again (opaque ``ref`` slots of the model)."""

from __future__ import annotations

from typing import Final

from transcript_doctor.plain import Mutable, Value


class EntryRef(Value):
    """One entry line: ``index`` into ``source.lines``, its ``id`` and ``parentId``."""

    __slots__ = ("id", "index", "parent")
    index: Final[int]
    id: Final[str]
    parent: Final[str | None]

    def __init__(self, index: int, id: str, parent: str | None) -> None:
        self.index = index
        self.id = id
        self.parent = parent


class RelinkRef(Value):
    """TD404: the entry to re-link and the id of the entry written just before it (or None)."""

    __slots__ = ("entry", "target")
    entry: Final[EntryRef]
    target: Final[str | None]

    def __init__(self, entry: EntryRef, target: str | None) -> None:
        self.entry = entry
        self.target = target


class FileRef(Mutable):
    """Who names whom, and what Pi replays: what a fix must re-point when it edits the tree.

    ``children``: id -> record indices of the entries whose ``parentId`` is that id.
    ``versions``: every line written with an id seen more than once (Pi's ``byId`` map keeps
    the last; a fix removing one must remove all, or an older copy takes the id back).
    ``path``: record indices of the entries on the replayed path (leaf to root).  Where a
    line is inserted, only the child on this path is re-linked to it; off-path branches
    (``/tree``, ``/fork`` leftovers) stay where they are.
    ``tails``: for an assistant entry on the path, the last ``toolResult`` entry of the run
    that directly follows it (where Pi would have appended a missing result).
    ``ids``: every id in the file, so a new entry never takes one.
    ``order``: record indices and ids of the entry lines with an id, in file order; the last
    is the leaf Pi resumes from (``leaf``), so a repair that removes it must leave a last
    line that continues the same path.
    """

    __slots__ = ("children", "ids", "leaf", "order", "path", "tails", "versions")
    children: dict[str, list[int]]
    versions: dict[str, list[int]]
    path: frozenset[int]
    tails: dict[int, EntryRef]
    ids: frozenset[str]
    order: list[tuple[int, str]]
    leaf: int | None

    def __init__(self) -> None:
        self.children = {}
        self.versions = {}
        self.path = frozenset()
        self.tails = {}
        self.ids = frozenset()
        self.order = []
        self.leaf = None
