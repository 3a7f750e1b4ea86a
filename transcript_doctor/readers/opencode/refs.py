"""Where a modelled element lives in an OpenCode database, for ``fix`` to find the row again."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RowRef:
    """One row of the ``message`` or ``part`` table (an element of the export has none)."""

    table: str  # "message" or "part"
    id: str
    session: str
    message: str  # the message id (the row's own for a message)


@dataclass(frozen=True, slots=True)
class FileRef:
    """One file of a legacy ``storage/`` tree: a message or part record with its ids."""

    kind: str  # "message" or "part"
    path: str
    id: str
    session: str
    message: str  # the message id (the file's own for a message)
