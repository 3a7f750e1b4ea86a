"""SQLite session stores (OpenCode, Kilo): a database is a source, but not a byte file.

A live store keeps most of its rows in ``NAME-wal`` beside a small ``NAME``: it is read
through SQLite (``mode=ro``: the WAL is applied and a running program is never locked out;
never ``immutable=1``, which ignores the WAL, and never the file's bytes).  ``-wal``,
``-shm`` and ``-journal`` are parts of the database, not files to lint.

The pipeline's seam: ``linting``, ``api`` and ``fixing`` ask :func:`is_database` /
:func:`part_of` first and hand such a path to ``dblint`` (lint) or ``dbfix`` (repairs as
row changes in transactions), else the byte path reads it.  A reader that reads a store
implements ``Reader.detect_database``/``read_database``/``read_sessions``; rules see its
sessions as conversations like any other, with origins ``line`` 0, ``record`` the row's
position and ``pointer`` naming the row (``/session/<id>/message/<id>/part/<id>``).  Its
``Repair.apply_rows`` makes repairs through :class:`Rows`, never byte splices.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from transcript_doctor.editing import EditError
from transcript_doctor.source import TEXT_SUFFIXES, Container, ParseError, Source

MAGIC = b"SQLite format 3\x00"
PARTS = ("-wal", "-shm", "-journal")
BACKUP_SUFFIX = ".td-backup"  # fix's backup of a database (dbfix): not linted again
BUSY_MS = 200  # how long a reader waits for a lock before giving up


def is_database(path: str) -> bool:
    """Whether ``path`` is an SQLite database file (16 header bytes read; text suffixes
    are never databases, so the transcripts of a walk cost no extra read)."""
    if path == "-" or path.lower().endswith(TEXT_SUFFIXES):
        return False
    try:
        with open(path, "rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def from_bytes(path: str) -> str:
    """Why SQLite bytes read from standard input or a URL are refused (exit 2): a store is
    read through SQLite from its own file, its ``-wal`` beside it (which may hold most of
    its rows), and repaired where it lives; its main file's bytes alone can say neither."""
    return (
        f"{path}: an SQLite database (an OpenCode or Kilo session store?) is read from its own "
        "file, with the -wal beside it, not from standard input or a URL: name the local file"
    )


def part_of(path: str) -> str | None:
    """The database a ``-wal``/``-shm``/``-journal`` file belongs to, if it is one."""
    for suffix in PARTS:
        if path.endswith(suffix) and is_database(path[: -len(suffix)]):
            return path[: -len(suffix)]
    return None


def uri(path: str, mode: str) -> str:
    return f"file:{quote(os.path.abspath(path))}?mode={mode}"


def connect(path: str, mode: str = "ro", busy_ms: int = BUSY_MS) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly).

    Read-only, the ``-shm`` index is opened read-only too (SQLite's ``readonly_shm``: a
    lint changes no byte of any of the database's files, and a live writer's index is
    still used); only where there is none to open (a ``-wal`` copied without its
    ``-shm``) does SQLite create one, as every reader does."""
    if mode == "ro":
        try:
            return _open(uri(path, mode) + "&readonly_shm=1", busy_ms)
        except sqlite3.OperationalError:
            pass
    return _open(uri(path, mode), busy_ms)


def _open(address: str, busy_ms: int) -> sqlite3.Connection:
    connection = sqlite3.connect(address, uri=True, timeout=busy_ms / 1000, isolation_level=None)
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the WAL now
    except BaseException:
        connection.close()
        raise
    return connection


class DatabaseSource(Source):
    """A database as the engine's source: no bytes, rows instead of lines.

    Every origin's ``line`` is 0 (no line to point at); ``record`` is the row's position
    in read order and ``pointer`` names the row.  Rules that compare raw bytes get none.
    """

    def __init__(self, path: str, connection: sqlite3.Connection) -> None:
        super().__init__(path, b"", Container.JSON)
        self.connection = connection
        self._parsed = True  # no document to parse

    def line_at(self, pointer: str) -> int:
        return 0

    def spans(self) -> Any:
        raise ValueError("a database has no byte spans")

    def unreadable(self, record: int, pointer: str, why: str) -> None:
        """A row whose JSON does not parse: TD001 (never repaired: nothing to guess from)."""
        self.report(ParseError(0, record, f"row {pointer}: {why}"))


@dataclass(slots=True)
class RowChange:
    """One row a repair changed: every column before, and after (None: deleted)."""

    table: str
    id: str
    pointer: str
    before: dict[str, Any]
    after: dict[str, Any] | None


class Rows:
    """A database's "edit": the row changes of one repair transaction, made at once
    through its connection and logged whole, so that the report can undo them."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.log: list[RowChange] = []

    def row(self, table: str, key: str) -> dict[str, Any]:
        cursor = self.connection.execute(f"SELECT * FROM `{table}` WHERE id = ?", (key,))
        found = cursor.fetchone()
        if found is None:
            raise EditError(f"the {table} row {key} is gone")
        if any(isinstance(value, bytes) for value in found):
            raise EditError(f"the {table} row {key} holds binary data the report could not restore")
        return {column[0]: value for column, value in zip(cursor.description, found, strict=True)}

    def update(self, table: str, key: str, pointer: str, **values: Any) -> None:
        before = self.row(table, key)
        assigned = ", ".join(f"`{column}` = ?" for column in values)
        self.connection.execute(f"UPDATE `{table}` SET {assigned} WHERE id = ?", (*values.values(), key))
        self.log.append(RowChange(table, key, pointer, before, self.row(table, key)))

    def delete(self, table: str, key: str, pointer: str) -> None:
        before = self.row(table, key)
        self.connection.execute(f"DELETE FROM `{table}` WHERE id = ?", (key,))
        self.log.append(RowChange(table, key, pointer, before, None))
