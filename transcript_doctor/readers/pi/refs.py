"""What a Pi repair needs to find its records again (opaque ``ref`` slots of the model)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class EntryRef:
    """One entry line: ``index`` into ``source.lines``, its ``id`` and ``parentId``."""

    index: int
    id: str
    parent: str | None


@dataclass(frozen=True, slots=True)
class RelinkRef:
    """TD404: the entry to re-link and the id of the entry written just before it (or None)."""

    entry: EntryRef
    target: str | None


@dataclass(slots=True)
class FileRef:
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

    children: dict[str, list[int]] = field(default_factory=dict)
    versions: dict[str, list[int]] = field(default_factory=dict)
    path: frozenset[int] = frozenset()
    tails: dict[int, EntryRef] = field(default_factory=dict)
    ids: frozenset[str] = frozenset()
    order: list[tuple[int, str]] = field(default_factory=list)
    leaf: int | None = None
