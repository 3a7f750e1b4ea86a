"""Reader ``opencode``: OpenCode (and Kilo) sessions, from the SQLite store or an export.

Spec: docs/formats/opencode.md (OpenCode 1.18.33 and Kilo 7.7.9 recorded against a fake
model, fixtures/opencode).  The store (``opencode.db``, ``kilo.db``) is read through SQLite
(``transcript_doctor.database``): one conversation per ``session`` row.  ``opencode export``
writes the same records as one JSON document ``{"info", "messages": [{"info", "parts"}]}``.
The legacy ``storage/`` tree of OpenCode < 1.2 (``tree.py``, recorded with 1.1.65 in
fixtures/opencode-legacy) is read as one source (``treesource``): one conversation per
session file, with the database's pointers.

The store is repaired as rows (``repair.py``: ``Repair.apply_rows``, updates in a
transaction), the storage folder as its files (``Repair.apply_files``); an export is not
repaired: ``opencode import`` skips rows whose ids exist, so a repaired export could not
replace a broken session.

``ref`` slots: in a database every message and part holds a ``refs.RowRef``, in a storage
folder a ``refs.FileRef``; an export's elements hold none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from transcript_doctor import treesource
from transcript_doctor.model import Conversation, Origin
from transcript_doctor.readers.base import DEFINITIVE, Detection, Reader
from transcript_doctor.readers.opencode import history, screening, store, tree
from transcript_doctor.readers.opencode.history import Record
from transcript_doctor.source import NODE, Container, Source

if TYPE_CHECKING:
    import sqlite3  # annotations only: linting a transcript loads no SQLite

if TYPE_CHECKING:
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.dbsource import DatabaseSource
    from transcript_doctor.treesource import TreeSource

SESSION_PREFIX = "ses_"


def _export_shape(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    info, messages = value.get("info"), value.get("messages")
    if not isinstance(info, dict) or not isinstance(messages, list):
        return False
    if not str(info.get("id", "")).startswith(SESSION_PREFIX):
        return False
    return all(
        isinstance(m, dict) and isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list)
        for m in messages[:20]
    )


class OpenCodeReader(Reader):
    name = "opencode"
    summary = "OpenCode / Kilo sessions: the SQLite store (opencode.db, kilo.db) and `opencode export` JSON"
    dialect = history.DIALECT
    loader = NODE  # Bun: JSON.parse
    reads_databases: ClassVar[bool] = True
    reads_trees: ClassVar[bool] = True

    # -- `opencode export` ---------------------------------------------------------

    def detect(self, source: Source) -> Detection | None:
        if source.container is Container.JSON and _export_shape(source.value):
            return self.claim("an `opencode export` session (info, messages[].info/parts)", DEFINITIVE)
        return None

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """Nothing for an export the screen proves clean as parsed (``screening``), else all."""
        if screen is not None and screen.clean(screening.turns(source.value["messages"])):
            return []
        return self.read(source)

    def read(self, source: Source) -> list[Conversation]:
        value = source.value
        records: list[tuple[Record, list[Record]]] = []
        for index, item in enumerate(value["messages"]):
            where = f"/messages/{index}"
            parts = item.get("parts") if isinstance(item, dict) else None
            info = item.get("info") if isinstance(item, dict) else None
            records.append(
                (
                    Record(info if isinstance(info, dict) else None, Origin(0, index, where)),
                    [
                        Record(p if isinstance(p, dict) else None, Origin(0, index, f"{where}/parts/{j}"))
                        for j, p in enumerate(parts if isinstance(parts, list) else [])
                    ],
                )
            )
        return [history.conversation(records, None)]

    # -- the SQLite store ----------------------------------------------------------

    def detect_database(self, connection: sqlite3.Connection) -> Detection | None:
        if not store.is_store(connection):
            return None
        vendor = "a Kilo" if store.is_kilo(connection) else "an OpenCode"
        return self.claim(f"{vendor} session store (tables session, message, part)", DEFINITIVE)

    def read_database(self, source: DatabaseSource) -> list[Conversation]:
        return self.read_sessions(source, store.session_ids(source.connection))

    def read_sessions(self, source: DatabaseSource, sessions: list[str]) -> list[Conversation]:
        """The named sessions, one conversation each (``fix`` re-reads one at a time)."""
        conversations = []
        record = 0
        errors: list[tuple[int, str, str]] = []
        for sid in sessions:
            messages, record = store.session(source.connection, sid, record, errors)
            conversations.append(history.conversation(messages, f"session {sid}", sid))
        for where in errors:
            source.unreadable(*where)
        return conversations

    # -- the legacy storage/ tree (OpenCode < 1.2) -----------------------------------

    def detect_tree(self, root: str) -> Detection | None:
        if not treesource.is_root(root):
            return None
        return self.claim(
            "an OpenCode storage folder (session/, message/, part/ JSON files; OpenCode < 1.2)", DEFINITIVE
        )

    def read_tree(self, source: TreeSource, sessions: list[str] | None = None) -> list[Conversation]:
        return tree.read(source, sessions)


READER = OpenCodeReader()
