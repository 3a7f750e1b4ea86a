"""Session stores kept as a folder of JSON files: the folder is one source, not its files.

OpenCode before 1.2 (``opencode-ai`` 1.1.65 recorded, fixtures/opencode-legacy) kept each
session as files under ``$XDG_DATA_HOME/opencode/storage``::

    session/<projectID>/<ses_…>.json      the session
    message/<ses_…>/<msg_…>.json          one message (the record with its ids)
    part/<msg_…>/<prt_…>.json             one part
    project/, session_diff/, migration    beside them (not transcripts)

A session is spread over many files, none of which is a transcript alone: the walk yields
the storage folder (the *root*) as one target, like an SQLite database whose ``-wal`` and
``-shm`` are parts of it (dbsource.py).  A file inside a root named on the command line is
a part of it (a note names the folder to lint), except a session file, which stands for its
session alone.  ``linting``/``fixing`` ask :func:`unit` first and hand such a path to
``treelint``/``treefix``.

A folder is a root only when it holds ``session``, ``message`` and ``part`` folders *and* a
session file under ``session/<projectID>/`` is an object whose ``id`` is the file's name and
whose ``projectID`` is its folder's: folders of JSON files named like ids are not claimed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import orjson

from transcript_doctor.source import JSONL_SUFFIXES, Container, ParseError, Source

if TYPE_CHECKING:  # editing.py is loaded by a repair only: linting loads this module for every path
    from transcript_doctor.editing import JsonText

FOLDERS = ("session", "message", "part")
SESSION_PREFIX = "ses_"
SUFFIX = ".json"
PROBES = 8  # session files a root check reads at most before giving up
_NAMED = frozenset((*FOLDERS, "project", "session_diff"))  # a unit's file lies in one of these
_UNPLAIN = frozenset(("", ".", ".."))  # folder names ``abspath`` would normalise away


def _session_file_ok(path: str, project: str, name: str) -> bool:
    try:
        with open(path, "rb") as handle:
            value = orjson.loads(handle.read(1 << 20))
    except (OSError, orjson.JSONDecodeError):
        return False
    return (
        isinstance(value, dict)
        and value.get("id") == name[: -len(SUFFIX)]
        and value.get("projectID") == project
    )


def is_root(folder: str, subfolders: list[str] | None = None) -> bool:
    """Whether ``folder`` is a storage root (``subfolders``: its folders, when the walk
    has them: a folder without the three names costs no further look)."""
    names = subfolders if subfolders is not None else _folders(folder)
    if not all(name in names for name in FOLDERS):
        return False
    sessions = os.path.join(folder, "session")
    probes = 0
    for project in _folders(sessions):
        try:
            files = sorted(os.listdir(os.path.join(sessions, project)))
        except OSError:
            continue
        for name in files:
            if name.startswith(SESSION_PREFIX) and name.endswith(SUFFIX):
                if _session_file_ok(os.path.join(sessions, project, name), project, name):
                    return True
                probes += 1
                if probes >= PROBES:
                    return False
    return False


def _folders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if e.is_dir())
    except OSError:
        return []


class Unit:
    """What a path names in a storage tree: the whole ``root``, one ``session`` of it, or
    a ``part`` of it (a file that is not linted on its own).

    A plain value class, not a dataclass: a dataclass compiles its methods when its module
    is imported, and every lint imports this one (start-up)."""

    __slots__ = ("kind", "root", "session")
    root: str
    kind: str  # "root", "session" or "member"
    session: str | None

    def __init__(self, root: str, kind: str, session: str | None = None) -> None:
        self.root, self.kind, self.session = root, kind, session

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unit) and (self.root, self.kind, self.session) == (
            other.root,
            other.kind,
            other.session,
        )

    def __hash__(self) -> int:
        return hash((self.root, self.kind, self.session))

    def __repr__(self) -> str:
        return f"Unit(root={self.root!r}, kind={self.kind!r}, session={self.session!r})"


def unit(path: str) -> Unit | None:
    """The storage unit ``path`` names, or None (the byte or database path reads it).

    Cheap for ordinary files: only a folder, or a ``.json`` file whose parent folders
    carry the storage names, is looked at on disk."""
    if path == "-" or path.lower().endswith(JSONL_SUFFIXES):  # a JSONL file costs no system call
        return None
    if not path.endswith(SUFFIX):
        if os.path.isdir(path) and is_root(path):
            return Unit(path, "root")
        if os.path.basename(path) == "migration":  # the storage's migration counter
            parent = os.path.dirname(path) or "."
            return Unit(parent, "member") if is_root(parent) else None
        return None
    # Most JSON files lie in no storage folder: told from the two folder names written in
    # the path, when they are plain (``abspath``, a look at the working folder and a
    # normalisation per file, changes nothing after its last ``..``).
    written = path.rsplit(os.sep, 3)
    if len(written) > 2 and (os.altsep is None or os.altsep not in path):
        names = written[-3:-1]
        if _NAMED.isdisjoint(names) and _UNPLAIN.isdisjoint(names):
            return None
    parent = os.path.dirname(os.path.abspath(path))
    above = os.path.dirname(parent)
    levels = [(os.path.basename(above), os.path.dirname(above)), (os.path.basename(parent), above)]
    for level, (name, root) in enumerate(levels):
        if name in _NAMED and is_root(root):
            shown = _shown(path, root)
            if level == 0 and name == "session" and os.path.basename(path).startswith(SESSION_PREFIX):
                return Unit(shown, "session", os.path.basename(path)[: -len(SUFFIX)])
            return Unit(shown, "member")
    return None


def root_above(folder: str) -> str | None:
    """The storage root a folder lies inside (``storage/part``, ``storage/part/msg_…``,
    ``storage/session/global``…), as the user would name it; None when it is in none."""
    here = os.path.abspath(folder)
    for _ in range(2):
        here = os.path.dirname(here)
        if is_root(here):
            return _shown(folder, here)
    return None


def _shown(path: str, root: str) -> str:
    """The root as the user would name it: relative when ``path`` was."""
    if os.path.isabs(path):
        return root
    return os.path.relpath(root) or "."


class TreeSource(Source):
    """A storage folder as the engine's source: no bytes of its own, files instead.

    Origins are those of the database reader (``line`` 0, ``record`` the file's position in
    read order, ``pointer`` naming it: ``/session/<id>/message/<id>/part/<id>``).
    ``overrides`` replaces the bytes of some files (``fix`` verifies a repair before it
    writes anything)."""

    def __init__(self, root: str, overrides: dict[str, bytes] | None = None) -> None:
        super().__init__(root, b"", Container.JSON)
        self.root = root
        self.overrides = overrides or {}
        self.files: dict[str, bytes] = {}  # every file read, by path
        self._parsed = True

    def read(self, path: str) -> bytes:
        data = self.overrides.get(path)
        if data is None:
            with open(path, "rb") as handle:
                data = handle.read()
        self.files[path] = data
        return data

    def line_at(self, pointer: str) -> int:
        return 0

    def unreadable(self, record: int, pointer: str, why: str) -> None:
        """A file that does not parse: TD001 (never repaired: nothing to guess from)."""
        self.report(ParseError(0, record, f"{pointer}: {why}"))


class Files:
    """A storage folder's "edit": byte edits of some of its files (each one JSON text,
    edited through :class:`~transcript_doctor.editing.JsonText`, so every other byte of
    the file stays), made on the bytes the lint read."""

    def __init__(self, source: TreeSource) -> None:
        self.source = source
        self.texts: dict[str, JsonText] = {}

    def text(self, path: str) -> JsonText:
        from transcript_doctor.editing import EditError, JsonText

        if path not in self.texts:
            data = self.source.files.get(path)
            if data is None:
                raise EditError(f"{path} was not read")
            self.texts[path] = JsonText(data)
        return self.texts[path]

    def changed(self) -> dict[str, bytes]:
        """The new bytes of each edited file, by path."""
        from transcript_doctor.editing import splice

        return {path: splice(text.data, text.splices()) for path, text in self.texts.items() if text.changed}
