"""Lint an SQLite session store: its sessions as conversations, through the engine's rules.

See ``dbsource`` for how a database is read; ``linting``, ``api`` and ``dbfix`` call
:func:`check`/:func:`inspect` for a path :func:`dbsource.is_database` accepts.
"""

from __future__ import annotations

import os
import sqlite3

from transcript_doctor import engine, plain, readers
from transcript_doctor.dbsource import BACKUP_SUFFIX, DatabaseSource, connect, is_database, part_of
from transcript_doctor.engine import FileReport, Options
from transcript_doctor.model import Origin
from transcript_doctor.readers.base import Reader
from transcript_doctor.transcript import Transcript


def database_readers() -> list[Reader]:
    return [r for r in readers.all_readers() if r.reads_databases]


def check(path: str, options: Options, fingerprints: bool = False) -> FileReport | None:
    """Lint ``path`` if it is a database or a part of one; None: the byte path reads it.

    ``fingerprints`` (``--baseline``): a row's finding is keyed on the row's id, which no
    later write moves (the pointer names it; a TD001 names it in its message)."""
    if path == "-":
        return None
    main = part_of(path)
    if main is not None:
        return FileReport(
            path, skipped=f"part of the SQLite database {os.path.basename(main)} beside it (lint that file)"
        )
    if not is_database(path):
        return None
    try:
        report = inspect(path, options)[0]
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        return FileReport(path, error=f"internal error while checking {path}: {exc!r}")
    if fingerprints:
        engine.fingerprint_ids(report.findings, b"row")
    return report


def explain(path: str, options: Options) -> str | None:
    """``formats``: which reader claims a database and why (None: not a database path)."""
    if path == "-":
        return None
    main = part_of(path)
    if main is not None:
        return f"part of the SQLite database {os.path.basename(main)} beside it, skipped"
    if not is_database(path):
        return None
    if path.endswith(BACKUP_SUFFIX):
        return "a backup `fix` made of a database, skipped"
    options = options.for_path(path)
    try:
        connection = connect(path)
        try:
            for reader in database_readers():
                if options.reader in (None, reader.name):
                    claim = reader.detect_database(connection)
                    if claim is not None:
                        return f"{claim.reader} ({claim.reason})"
        finally:
            connection.close()
    except sqlite3.Error as exc:
        return f"an SQLite database that cannot be read ({_why(exc)})"
    return "not a transcript (an SQLite database no reader recognises)"


def inspect(path: str, options: Options) -> tuple[FileReport, Transcript | None]:
    """Lint a database through a read-only connection of its own, closed again (the
    transcript, for ``fix``, then holds a closed connection: it is never read again)."""
    options = options.for_path(path)
    if path.endswith(BACKUP_SUFFIX):
        return FileReport(path, skipped="a backup `fix` made of a database before repairing it"), None
    try:
        connection = connect(path)
        try:
            return _inspect(path, options, connection)
        finally:
            connection.close()
    except sqlite3.Error as exc:
        return FileReport(path, error=f"cannot read {path} as an SQLite database: {_why(exc)}"), None


def _inspect(
    path: str, options: Options, connection: sqlite3.Connection
) -> tuple[FileReport, Transcript | None]:
    chosen = next(
        (
            r
            for r in database_readers()
            if (options.reader is None or r.name == options.reader) and r.detect_database(connection)
        ),
        None,
    )
    if chosen is None:
        if options.reader is not None:
            return FileReport(
                path, skipped=f"an SQLite database the reader {options.reader} does not read"
            ), None
        return FileReport(path, skipped="not a transcript: an SQLite database no reader recognises"), None
    reader = chosen
    source = DatabaseSource(path, connection)
    with engine._no_gc():  # as for a file: many small objects, no cycles (a third faster)
        transcript = Transcript(reader, source, reader.read_database(source))
        found = engine.run(transcript, plain.replace(options, with_edits=False))  # rows: no byte edits
    for located in found:  # rows have no line: 0 everywhere, also where a rule gave none
        origin = located.origin
        located.origin = Origin(0, origin.record, origin.pointer)
    found.sort(key=lambda f: (f.origin.record, f.finding.rule.code, f.origin.pointer or ""))
    return FileReport(path, reader.name, found), transcript


def _why(exc: sqlite3.Error) -> str:
    text = str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]
