"""OpenCode's SQLite store, read through SQLite (the WAL applied), never as bytes.

Tables and read order from docs/formats/opencode.md §2 (1.18.33 schema; Kilo 7.7.9 the
same): messages by ``(time_created, id)``, parts by ``(message_id, id)`` (``MessageV2``
hydrate).  ``data`` holds the record's JSON without its ids, which are columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from transcript_doctor.model import Origin
from transcript_doctor.readers.opencode.history import Record, escape
from transcript_doctor.readers.opencode.refs import RowRef

if TYPE_CHECKING:
    import sqlite3  # annotations only: linting a transcript loads no SQLite

# The columns this reader reads; a database without them is not OpenCode's.
NEEDED = {
    "session": {"id", "time_created"},
    "message": {"id", "session_id", "time_created", "data"},
    "part": {"id", "message_id", "session_id", "data"},
}


def columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info(`{table}`)")}


def is_store(connection: sqlite3.Connection) -> bool:
    return all(need <= columns(connection, table) for table, need in NEEDED.items())


def is_kilo(connection: sqlite3.Connection) -> bool:
    """Kilo adds its own tables beside OpenCode's (fixtures/opencode/kilo-kill-tool)."""
    return bool(columns(connection, "kilo_board"))


def session_ids(connection: sqlite3.Connection) -> list[str]:
    return [row[0] for row in connection.execute("SELECT id FROM session ORDER BY time_created, id")]


class BadRow(Exception):
    """A row whose ``data`` is not a JSON object (TD001)."""


def parse(data: Any) -> dict[str, Any]:
    if isinstance(data, bytes | str):
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise BadRow(f"its data is not valid JSON ({exc})") from None
        if isinstance(value, dict):
            return value
        raise BadRow("its data is not a JSON object")
    raise BadRow(f"its data is {type(data).__name__}, not JSON text")


def session(
    connection: sqlite3.Connection, sid: str, first: int, errors: list[tuple[int, str, str]]
) -> tuple[list[tuple[Record, list[Record]]], int]:
    """Each message of a session with its parts, as records numbered from ``first`` in
    read order (a message row, then its part rows), and the next record number;
    unreadable rows go to ``errors`` as ``(record, pointer, why)`` with no value."""
    parts: dict[str, list[tuple[str, Any]]] = {}
    query = (
        "SELECT id, message_id, data FROM part WHERE message_id IN "
        "(SELECT id FROM message WHERE session_id = ?) ORDER BY message_id, id"
    )
    for pid, mid, data in connection.execute(query, (sid,)):
        parts.setdefault(mid, []).append((pid, data))
    out: list[tuple[Record, list[Record]]] = []
    record = first
    base = f"/session/{escape(sid)}"
    query = "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id"
    for mid, data in connection.execute(query, (sid,)).fetchall():
        pointer = f"{base}/message/{escape(mid)}"
        info = Record(
            _value(data, record, pointer, errors),
            Origin(0, record, pointer),
            RowRef("message", mid, sid, mid),
        )
        record += 1
        found = []
        for pid, pdata in parts.get(mid, ()):
            where = f"{pointer}/part/{escape(pid)}"
            found.append(
                Record(
                    _value(pdata, record, where, errors),
                    Origin(0, record, where),
                    RowRef("part", pid, sid, mid),
                )
            )
            record += 1
        out.append((info, found))
    return out, record


def _value(data: Any, record: int, pointer: str, errors: list[tuple[int, str, str]]) -> dict[str, Any] | None:
    try:
        return parse(data)
    except BadRow as exc:
        errors.append((record, pointer, str(exc)))
        return None
