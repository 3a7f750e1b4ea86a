"""The legacy ``storage/`` tree of OpenCode before 1.2 (treesource.py has the layout).

Confirmed with ``opencode-ai`` 1.1.65 (fixtures/opencode-legacy, its README): every file
is ``JSON.stringify(record, null, 2)`` (no final newline) of the record the database
keeps in ``message.data``/``part.data`` plus its ids (``id``, ``sessionID``, and a part's
``messageID``).  Read order is 1.1.65's (its bundled ``MessageV2.stream``/``parts``):
messages by file name (``Storage.list`` sorts the keys; a name is the message id), parts by
id.  Sessions are taken in creation order (``time.created``, then id), as the database
reader does.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from transcript_doctor.model import Conversation, Origin
from transcript_doctor.readers.opencode import history
from transcript_doctor.readers.opencode.history import Record, escape
from transcript_doctor.readers.opencode.refs import FileRef
from transcript_doctor.treesource import SESSION_PREFIX, SUFFIX, TreeSource


class BadFile(Exception):
    """A file whose content is not a JSON object (TD001)."""


def parse(data: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadFile(f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise BadFile("not a JSON object")
    return value


def _names(folder: str, prefix: str) -> list[str]:
    """The record files of ``folder`` (``<prefix>….json``), by name; none if it is absent."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if n.startswith(prefix) and n.endswith(SUFFIX))


def session_files(root: str) -> dict[str, str]:
    """Every session's file by id, in creation order (``time.created``, then id); a file
    that does not parse sorts first, so that its TD001 is not lost."""
    found: list[tuple[int, str, str]] = []
    base = os.path.join(root, "session")
    for project in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        folder = os.path.join(base, project)
        for name in _names(folder, SESSION_PREFIX):
            path = os.path.join(folder, name)
            created = 0
            try:
                with open(path, "rb") as handle:
                    time = parse(handle.read()).get("time")
                value = time.get("created") if isinstance(time, dict) else None
                created = value if isinstance(value, int) else 0
            except (OSError, BadFile):
                pass
            found.append((created, name[: -len(SUFFIX)], path))
    found.sort()
    return {sid: path for _, sid, path in found}


def read(source: TreeSource, sessions: list[str] | None = None) -> list[Conversation]:
    """The named sessions (all when None), one conversation each."""
    files = session_files(source.root)
    wanted = list(files) if sessions is None else [s for s in sessions if s in files]
    conversations = []
    record = 0
    errors: list[tuple[int, str, str]] = []
    for sid in wanted:
        # A session file OpenCode cannot parse hides the session from it (1.1.65's
        # Session.list skips it): TD001, and its messages are still read.
        _value(source, files[sid], record, f"/session/{escape(sid)}", errors)
        messages, record = _session(source, sid, record, errors)
        conversations.append(history.conversation(messages, f"session {sid}", sid))
    for where in errors:
        source.unreadable(*where)
    return conversations


def _session(
    source: TreeSource, sid: str, first: int, errors: list[tuple[int, str, str]]
) -> tuple[list[tuple[Record, list[Record]]], int]:
    out: list[tuple[Record, list[Record]]] = []
    record = first
    base = f"/session/{escape(sid)}"
    folder = os.path.join(source.root, "message", sid)
    for name in _names(folder, ""):
        mid = name[: -len(SUFFIX)]
        path = os.path.join(folder, name)
        pointer = f"{base}/message/{escape(mid)}"
        info = Record(
            _value(source, path, record, pointer, errors),
            Origin(0, record, pointer),
            FileRef("message", path, mid, sid, mid),
        )
        record += 1
        parts = []
        part_folder = os.path.join(source.root, "part", mid)
        for part_name in _names(part_folder, ""):
            pid = part_name[: -len(SUFFIX)]
            part_path = os.path.join(part_folder, part_name)
            where = f"{pointer}/part/{escape(pid)}"
            parts.append(
                Record(
                    _value(source, part_path, record, where, errors),
                    Origin(0, record, where),
                    FileRef("part", part_path, pid, sid, mid),
                )
            )
            record += 1
        out.append((info, parts))
    return out, record


def _value(
    source: TreeSource, path: str, record: int, pointer: str, errors: list[tuple[int, str, str]]
) -> dict[str, Any] | None:
    try:
        return parse(source.read(path))
    except OSError as exc:
        errors.append((record, pointer, f"cannot read {os.path.basename(path)}: {exc.strerror}"))
    except BadFile as exc:
        errors.append((record, pointer, f"{os.path.basename(path)} is {exc}"))
    return None
