"""Where a modelled element lives in an OpenCode database, for ``fix`` to find the row again."""

from __future__ import annotations

from typing import Final

from transcript_doctor.plain import Value


class RowRef(Value):
    """One row of the ``message`` or ``part`` table (an element of the export has none)."""

    __slots__ = ("id", "message", "session", "table")
    table: Final[str]  # "message" or "part"
    id: Final[str]
    session: Final[str]
    message: Final[str]  # the message id (the row's own for a message)

    def __init__(self, table: str, id: str, session: str, message: str) -> None:
        self.table = table
        self.id = id
        self.session = session
        self.message = message


class FileRef(Value):
    """One file of a legacy ``storage/`` tree: a message or part record with its ids."""

    __slots__ = ("id", "kind", "message", "path", "session")
    kind: Final[str]  # "message" or "part"
    path: Final[str]
    id: Final[str]
    session: Final[str]
    message: Final[str]  # the message id (the file's own for a message)

    def __init__(self, kind: str, path: str, id: str, session: str, message: str) -> None:
        self.kind = kind
        self.path = path
        self.id = id
        self.session = session
        self.message = message
