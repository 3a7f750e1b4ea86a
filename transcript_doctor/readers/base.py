"""The contract between the engine and a format reader.

A reader knows one vendor layout: it recognises its files (:meth:`Reader.detect`), turns
them into vendor-neutral conversations (:meth:`Reader.read`) and, for ``fix``, turns
abstract actions into byte edits in the file's own style.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from transcript_doctor.model import Conversation, Dialect
from transcript_doctor.source import STRICT, Container, Loader, Source
from transcript_doctor.transcript import Transcript

if TYPE_CHECKING:
    import sqlite3

    from transcript_doctor.actions import (
        Action,
        AddSignature,
        InsertResult,
        MoveResult,
        Relink,
        RemoveDuplicate,
        RemoveMessage,
        RemoveResult,
        RepairRecord,
        ReplaceArguments,
        StripTrailingWhitespace,
    )
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.dbsource import DatabaseSource, Rows
    from transcript_doctor.editing import EditError, JsonText, Lines, Splice
    from transcript_doctor.treesource import Files, TreeSource

    Edit = Lines | JsonText

_M = TypeVar("_M", bound=Callable[..., Any])

# Detection scores: the highest claim wins, ties go to the reader listed first.
DEFINITIVE = 100  # the vendor's own envelope or header (session_meta, uuid chains…)
SPECIFIC = 50  # a generic shape plus a vendor-only feature (notice role, Cline keys…)
SHAPE = 20  # a generic API shape with a feature only that API has (tool_calls…)
FALLBACK = 10  # a plain role/content list any generic reader could take


class Detection:
    """A reader's claim on a file.  ``transcript=False``: a companion file to skip.

    A plain value class, not a dataclass: a dataclass compiles its methods when its module
    is imported, and every lint imports this one (start-up)."""

    __slots__ = ("reader", "reason", "score", "transcript")
    reader: str
    reason: str
    score: int
    transcript: bool

    def __init__(self, reader: str, reason: str, score: int, transcript: bool = True) -> None:
        self.reader, self.reason, self.score, self.transcript = reader, reason, score, transcript

    def _key(self) -> tuple[str, str, int, bool]:
        return (self.reader, self.reason, self.score, self.transcript)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Detection) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Detection(reader={self.reader!r}, reason={self.reason!r}, score={self.score!r}, "
            f"transcript={self.transcript!r})"
        )


class Decided:
    """A claim made by ``Reader.decide``: the claim, keys one record of the file's head
    certainly holds, keys no record of it holds, and ``beaten``: the registry modules
    whose ``detect`` the decider has itself found unable to outscore the claim on this
    file (no claim, or one scoring lower than it from a reader listed before the decider,
    at most its score from one listed after it), where neither keys nor the registry's
    bound (``Registered.most``) rule them out.  Each such finding is the decider's
    reading of that reader's ``detect``; tests/test_decide_roles.py checks every one.
    ``first``: the head's first record, when the decider parsed it as the head does, for
    the other readers' ``refuses``."""

    __slots__ = ("absent", "beaten", "detection", "first", "keys")
    detection: Detection
    keys: Collection[str]
    absent: frozenset[str]
    beaten: frozenset[str]
    first: dict[str, Any] | None

    def __init__(
        self,
        detection: Detection,
        keys: Collection[str],
        absent: frozenset[str],
        beaten: frozenset[str] = frozenset(),
        first: dict[str, Any] | None = None,
    ) -> None:
        self.detection, self.keys, self.absent, self.beaten = detection, keys, absent, beaten
        self.first = first


class Reader:
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for `transcript-doctor formats`
    dialect: ClassVar[Dialect] = Dialect()
    # How the vendor's own program parses a record (source.Loader): what it reads is not
    # reported as unparseable, and a record it reads is never treated as missing.
    loader: ClassVar[Loader] = STRICT
    # Detection dispatch (``readers.detect``): keys of which ``detect`` requires the first
    # record to hold one before it claims a file; the first record is the first object of
    # a JSONL file's head, a JSON document that is an object, or a document array's first
    # item.  A file whose first record holds none of them is not shown to this reader.
    # None (the default): the reader is asked about every file.  Declare only what
    # ``detect`` itself requires (tests/test_fast_path.py checks every fixture).
    first_keys: ClassVar[frozenset[str] | None] = None

    def detect(self, source: Source) -> Detection | None:
        raise NotImplementedError

    def decide(self, source: Source) -> Decided | None:
        """Detection settled without the head (the registry asks a reader whose entry
        names a ``marker`` found in the file, before it parses the head), or None.

        A decision is ``detect``'s claim on the head, with what the head is known to show
        the registry: keys one of its records certainly holds, keys none of them holds,
        and the readers the decider found unable to outscore it (``Decided.beaten``).
        The registry takes it only when every other reader that could outscore it is
        ruled out (``readers._settled``); tests/test_registry.py and
        tests/test_decide_roles.py check every fixture and corpus file."""
        return None

    def refuses(self, first: dict[str, Any]) -> bool:
        """Whether ``detect`` claims no head whose first record is ``first``: asked by the
        registry for a decision that holds the head's first record (``Decided.first``) of
        a reader its keys do not rule out.  tests/test_decide_fast.py checks each reader
        that answers True on every file."""
        return False

    def read(self, source: Source) -> list[Conversation]:
        raise NotImplementedError

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """The conversations ``screen`` cannot prove clean (lint needs no others; None: all).

        Readers of message-list layouts skip building the rest (``analysis/screen.py``);
        the others read everything.
        """
        return self.read(source)

    @property
    def repair(self) -> Repair:
        """The layout's repairs: the ``repair`` module beside the reader, loaded on first
        use so that lint of a clean file never loads repair code."""
        return _repair_of(type(self).__module__.rpartition(".")[0])

    # A vendor's SQLite store (dbsource.py, dblint.py): a reader that reads one says so and
    # overrides these; the methods above stay for its JSON files.
    reads_databases: ClassVar[bool] = False

    def detect_database(self, connection: sqlite3.Connection) -> Detection | None:
        return None

    def read_database(self, source: DatabaseSource) -> list[Conversation]:
        raise NotImplementedError

    def read_sessions(self, source: DatabaseSource, sessions: list[str]) -> list[Conversation]:
        """The named sessions only (``fix`` re-reads each inside its transaction)."""
        raise NotImplementedError

    # A vendor's folder of JSON files (treesource.py, treelint.py, treefix.py): the same.
    reads_trees: ClassVar[bool] = False

    def detect_tree(self, root: str) -> Detection | None:
        return None

    def read_tree(self, source: TreeSource, sessions: list[str] | None = None) -> list[Conversation]:
        """The named sessions of a storage folder (all when None)."""
        raise NotImplementedError

    def claim(self, reason: str, score: int, transcript: bool = True) -> Detection:
        return Detection(self.name, reason, score, transcript)


def _edit_error(message: str) -> EditError:
    """``EditError(message)``: editing.py, like actions.py, is loaded when a repair is
    made or previewed, never by the lint of a clean file (start-up)."""
    from transcript_doctor.editing import EditError

    return EditError(message)


def __getattr__(name: str) -> Any:
    if name == "Edit":  # the repair modules' annotation of an editor (editing.py, loaded now)
        from transcript_doctor.editing import JsonText, Lines

        return Lines | JsonText
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _refused(method: _M) -> _M:
    method.refused = True  # type: ignore[attr-defined]
    return method


class Repair:
    """How one layout makes each repair action, in the file's own record shapes.

    One method per action (``Action.method`` names it); the defaults refuse, so a layout
    supports exactly the actions its subclass defines.  Each method edits only the records
    and values its action names, through ``edit``, and returns the report's verb; it
    raises :class:`~transcript_doctor.editing.EditError` when the repair would need a guess.
    """

    # A file beside the transcript that the layout keeps in step with it (its name in the
    # transcript's folder), or None.  A repair that ``needs_companion`` is made only when
    # ``fix`` can read that file, and then both are written (fixer.py, fixing.py).
    companion: ClassVar[str | None] = None

    def needs_companion(self, action: Action) -> str | None:
        """Why this repair must also change the companion file (words for a refusal when
        ``fix`` cannot see it), or None when the transcript alone changes."""
        return None

    def rewrite_companion(self, companion: bytes, repaired: Source) -> JsonText:
        """The companion's edit that matches the repaired transcript (an empty edit when it
        already does); raises EditError when it cannot be made without guessing."""
        raise _edit_error("this layout keeps no companion file")

    def supports(self, action: Action) -> bool:
        """Whether ``fix`` can make this repair in this layout (lint marks it fixable)."""
        method = getattr(type(self), action.method)
        return not getattr(method, "refused", False) and action.possible() and self.accepts(action)

    def accepts(self, action: Action) -> bool:
        """A refusal known before editing, for one finding (a call with no result shape)."""
        return True

    def refusal(self, action: Action) -> str | None:
        """Why this layout withholds a repair the rule offers, in words for the finding's
        "no fix" note, or None (then the finding just has no repair here)."""
        return None

    def apply(self, transcript: Transcript, action: Action, edit: Edit) -> str:
        verb: str = getattr(self, action.method)(transcript, action, edit)
        return verb

    def apply_rows(self, transcript: Transcript, action: Action, rows: Rows) -> str:
        """A repair made as row changes inside a database's transaction (dbfix.py): only
        layouts whose reader reads databases override it."""
        raise _edit_error("this layout cannot repair a database")

    def apply_files(self, transcript: Transcript, action: Action, files: Files) -> str:
        """A repair made as edits of the files of a storage folder (treefix.py): only
        layouts whose reader reads such folders override it."""
        raise _edit_error("this layout cannot repair a storage folder")

    def repair_record(self, transcript: Transcript, action: RepairRecord, edit: Edit) -> str:
        """TD001 in any JSONL layout: drop a torn final line, or cut a glued stub off."""
        from transcript_doctor.editing import Lines

        if not isinstance(edit, Lines):
            raise _edit_error("only a JSONL line can be repaired on its own")
        error = action.error
        if error.repair == "drop":
            edit.remove(error.record)
            return "remove"
        if error.repair == "split":
            line = edit.line(error.record)
            edit.replace(error.record, edit.data[line.start + error.keep_from : line.end])
            return "replace"
        raise _edit_error("this record cannot be repaired without guessing")

    @_refused
    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        raise _edit_error("this layout cannot remove a turn")

    @_refused
    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        raise _edit_error("this layout cannot strip a text")

    @_refused
    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        raise _edit_error("this layout cannot insert a result")

    @_refused
    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        raise _edit_error("this layout cannot remove a result")

    @_refused
    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        raise _edit_error("this layout cannot move a result")

    @_refused
    def add_signature(self, transcript: Transcript, action: AddSignature, edit: Edit) -> str:
        raise _edit_error("this layout has no thought signatures")

    @_refused
    def replace_arguments(self, transcript: Transcript, action: ReplaceArguments, edit: Edit) -> str:
        raise _edit_error("this layout stores no arguments text")

    @_refused
    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        raise _edit_error("this layout cannot remove a copied turn")

    @_refused
    def relink(self, transcript: Transcript, action: Relink, edit: Edit) -> str:
        raise _edit_error("this layout has no parent links")


@cache
def _repair_of(package: str) -> Repair:
    name = f"{package}.repair"
    try:
        module = import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        return Repair()  # a read-only layout: only torn JSONL lines are repaired
    repair: Repair = module.REPAIR
    return repair


def editor(source: Source) -> Edit:
    """The editor for a file's container: lines of JSONL, or the one JSON document."""
    from transcript_doctor.editing import JsonText, Lines

    if source.container is Container.JSONL:
        return Lines(source)
    return JsonText(source.data, 3 if source.bom else 0)


def preview(transcript: Transcript, action: Action) -> list[Splice] | None:
    """The splices one repair would make on the file as it is (for SARIF fixes).  None
    for a repair that changes a companion file too: its splices alone would not be it."""
    from transcript_doctor.editing import EditError

    if transcript.reader.repair.needs_companion(action) is not None:
        return None
    edit = editor(transcript.source)
    try:
        transcript.reader.repair.apply(transcript, action, edit)
        return edit.splices()
    except EditError:
        return None
