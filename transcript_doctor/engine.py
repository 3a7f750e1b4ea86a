"""Lint one file: detect its layout, read it, run the selected rules, locate findings."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from transcript_doctor import checks, guard, plain, prescreen, readers
from transcript_doctor.analysis import holds
from transcript_doctor.analysis.screen import Screen
from transcript_doctor.catalog import Catalog
from transcript_doctor.checks import Selection, unknown_layout
from transcript_doctor.checks.context import Context
from transcript_doctor.config import Config
from transcript_doctor.model import Applicability, Finding, Origin
from transcript_doctor.plain import Mutable, Value
from transcript_doctor.readers.base import Detection, Reader, Repair, preview
from transcript_doctor.source import NOT_OBJECT, Container, NotJson, Source, sniff
from transcript_doctor.transcript import Transcript

if TYPE_CHECKING:
    from transcript_doctor.editing import Splice


class Options(Value):
    """What a run asks of each file.  (A plain class, as ``FileReport``: a dataclass
    compiles its methods when the module is imported, at every start-up.)"""

    __slots__ = (
        "catalog",
        "config",
        "forced_by",
        "pinned",
        "reader",
        "redact",
        "screen",
        "selection",
        "unsafe_fixes",
        "with_edits",
    )
    selection: Final[Selection]
    catalog: Final[Catalog]
    reader: Final[str | None]  # forced reader name
    redact: Final[bool]
    config: Final[Config | None]
    with_edits: Final[bool]  # attach each fixable finding's splices (SARIF fixes)
    # The fast paths: conversations proven clean are not built, detection is dispatched on
    # the first record's keys (off: everything is built and every reader asked; tests compare).
    screen: Final[bool]
    unsafe_fixes: Final[bool]  # repairs that may destroy real output count as fixable
    # Where the forced reader comes from, for the TD002 that reports a mismatch.
    forced_by: Final[str]
    # The reader was chosen by this run itself (fix re-reading its own edits): not checked.
    pinned: Final[bool]

    def __init__(
        self,
        selection: Selection,
        catalog: Catalog,
        reader: str | None = None,
        redact: bool = False,
        config: Config | None = None,
        with_edits: bool = False,
        screen: bool = True,
        unsafe_fixes: bool = False,
        forced_by: str = "--reader",
        pinned: bool = False,
    ) -> None:
        self.selection, self.catalog, self.reader, self.redact = selection, catalog, reader, redact
        self.config, self.with_edits, self.screen = config, with_edits, screen
        self.unsafe_fixes, self.forced_by, self.pinned = unsafe_fixes, forced_by, pinned

    @property
    def excluded(self) -> Callable[[str], bool] | None:
        """The configuration's ``exclude`` test for the walk, if it excludes anything."""
        return self.config.excluded if self.config is not None and self.config.exclude else None

    def for_path(self, path: str) -> Options:
        """The options for one file: per-file-ignores and reader globs applied."""
        if self.config is None or path == "-":
            return self
        ignored = self.config.ignored(path)
        forced_by = self.forced_by
        reader = self.reader
        if reader is None:
            rule = self.config.reader_rule(path)
            if rule is not None:
                where = self.config.path.name if self.config.path is not None else "configuration"
                reader, forced_by = rule[1], f"the readers glob {rule[0]!r} in {where}"
        if not ignored and reader == self.reader:
            return self
        return plain.replace(
            self, selection=self.selection.without(ignored), reader=reader, forced_by=forced_by
        )


class Located(Mutable):
    """A finding with its origin resolved to a line, as reporters print it."""

    __slots__ = (
        "applicability",
        "blocked",
        "edits",
        "finding",
        "fingerprint",
        "fix_lines",
        "fixable",
        "origin",
    )
    finding: Finding
    origin: Origin
    # A repair is available and applies under the run's settings (ruff's meaning): safe,
    # or unsafe with ``--unsafe-fixes``.  ``fix`` repairs exactly these.
    fixable: bool
    edits: list[Splice] | None
    fingerprint: str | None  # set for --baseline (baseline.py)
    # The class of the available repair whatever the settings; None: no repair.
    applicability: Applicability | None
    # Why a repair that exists is withheld (a pairing contradiction), else None.
    blocked: str | None
    # With edits: the first and last line of the file the repair would change.
    fix_lines: tuple[int, int] | None

    def __init__(
        self,
        finding: Finding,
        origin: Origin,
        fixable: bool,
        edits: list[Splice] | None = None,
        fingerprint: str | None = None,
        applicability: Applicability | None = None,
        blocked: str | None = None,
        fix_lines: tuple[int, int] | None = None,
    ) -> None:
        self.finding, self.origin, self.fixable, self.edits = finding, origin, fixable, edits
        self.fingerprint, self.applicability, self.blocked = fingerprint, applicability, blocked
        self.fix_lines = fix_lines

    def portable(self) -> Located:
        """The finding without its repair action, to send back from a worker process: the
        action points into the worker's parsed model, and reporters need none of it."""
        return plain.replace(self, finding=plain.replace(self.finding, action=None))


class FileReport(Mutable):
    __slots__ = ("error", "findings", "path", "reader", "skipped")
    path: str
    reader: str | None
    findings: list[Located]
    skipped: str | None  # why this is not a transcript (not a finding)
    error: str | None  # the file could not be read or checked (exit 2)

    def __init__(
        self,
        path: str,
        reader: str | None = None,
        findings: list[Located] | None = None,
        skipped: str | None = None,
        error: str | None = None,
    ) -> None:
        self.path = path
        self.reader = reader
        self.findings = [] if findings is None else findings
        self.skipped = skipped
        self.error = error


def warm() -> None:
    """Import every reader now: before worker processes fork, so that each does not."""
    readers.all_readers()


def lint_bytes(path: str, data: bytes, options: Options) -> FileReport:
    # The collector is off until what was read is freed (see _NoGc), here without a
    # context manager's object and two method calls per file.
    if not gc.isenabled():
        return _inspect(path, data, options)[0]
    gc.disable()
    try:
        return _inspect(path, data, options)[0]
    finally:
        _freeze_imports()
        gc.enable()


_IMPORTED = [0]  # how many modules there were when the last file was done


def _freeze_imports() -> None:
    """Freeze what lives now when the file just read imported modules (readers, rules and
    repairs load on first use): they live as long as the process, as those imported at
    start-up (frozen by ``__main__``), and the collections after the file would walk all
    their objects, twice (~15 ms in a run over a tree of every layout).  What else is
    frozen with them is the file's report, kept to the end, and what its reading freed
    already; at most a cycle it made and let go stays, once per import."""
    count = len(sys.modules)
    if count != _IMPORTED[0]:
        _IMPORTED[0] = count
        gc.freeze()


def inspect(path: str, data: bytes, options: Options) -> tuple[FileReport, Transcript | None]:
    """Lint one file and keep what was read, for ``fix`` to plan its edits on."""
    with _no_gc():
        return _inspect(path, data, options)


def _inspect(path: str, data: bytes, options: Options) -> tuple[FileReport, Transcript | None]:
    """``inspect`` with the collector already off (lint_bytes and inspect turn it off)."""
    if options.config is not None:
        options = options.for_path(path)
    # (prescreen decides only large documents: the call is skipped for every small file)
    if options.reader is None and len(data) >= prescreen.LARGE:
        why = prescreen.not_a_transcript(path, data)  # a large export: not parsed to be skipped
        if why is not None:
            return FileReport(path, skipped=f"not a transcript: {why}"), None
    try:
        source = sniff(path, data)
    except NotJson as exc:
        return FileReport(path, skipped=f"not a transcript: {exc}"), None
    reader, skipped = choose(source, options)
    if isinstance(reader, Mismatch):
        return _mismatch(source, options, reader), None
    if reader is None:
        return _unclaimed(source, options, skipped), None
    source.loader = reader.loader  # before any record is read past detection
    # A Screen per file: it holds the state of the conversation it judges (a fleet's
    # worker may lint files in threads).
    screen = Screen(options.catalog) if options.screen and _screenable(options.selection) else None
    try:
        conversations = reader.read_screened(source, screen)
    except RecursionError:
        if screen is None:
            raise  # the full read cannot check it either: "nested too deeply" (linting)
        # A fast path's decoder (msgspec) stops at a depth the full read reports as a
        # finding (TD001): the file is read as with the screen off, from fresh bytes.
        source = sniff(path, data)
        source.loader = reader.loader
        conversations = reader.read_screened(source, None)
    transcript = Transcript(reader, source, conversations)
    # Every conversation proven clean and nothing unparseable: no rule can find anything
    # (only the FILE rules run on a file with no conversation, and they report the
    # source's parse errors; tests/test_engine.py checks that no other FILE rule exists).
    found = run(transcript, options) if conversations or source.errors else []
    return FileReport(path, reader.name, found), transcript


_SCREENABLE: list[tuple[Selection, bool]] = []  # the last selection asked, and its answer


def _screenable(selection: Selection) -> bool:
    """``checks.screenable`` of a run's selection, told by identity (its cache hashes the
    selection in Python, once per file)."""
    last = _SCREENABLE[0] if _SCREENABLE else None
    if last is not None and last[0] is selection:
        return last[1]
    answer = checks.screenable(selection)
    _SCREENABLE[:] = [(selection, answer)]
    return answer


class _NoGc:
    """Readers build many small objects and no cycles: the collector only costs time
    (it halves reading speed on large files) and frees nothing.  Once back, its first
    pass walks every object still alive: a lint frees what it read first.  A class, not
    a generator: entered once per file."""

    __slots__ = ("enabled",)

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *_: object) -> None:
        if self.enabled:
            _freeze_imports()
            gc.enable()


_no_gc = _NoGc


def run(transcript: Transcript, options: Options) -> list[Located]:
    """Every selected rule over one read file, sorted by position."""
    ctx = Context(transcript, options.catalog, options.redact)
    found: list[Located] = []
    conversations = transcript.conversations
    chosen = (
        checks.applicable(options.selection, holds.held(conversations))
        if conversations
        else checks.selected(options.selection, False)
    )
    repair: Repair | None = None  # the layout's repairs, looked up once per file (a module import)
    for _, check in chosen:
        for finding in check(ctx):
            if repair is None and finding.action is not None:
                repair = transcript.reader.repair
            found.append(_locate(repair, finding, ctx, options.unsafe_fixes))
    guard.withhold_contradictions(transcript, found, ctx)
    if options.with_edits:  # SARIF fixes, --show-fixes
        for located in found:
            action = located.finding.action
            if located.applicability is not None and action is not None:
                located.edits = preview(transcript, action)
            if located.edits:
                located.fix_lines = _lines_changed(transcript.source.data, located.edits)
    found.sort(key=lambda f: (f.origin.line, f.origin.record, f.finding.rule.code, f.origin.pointer or ""))
    return found


_SEPARATORS = b", \t\r\n"


def _lines_changed(data: bytes, edits: list[Splice]) -> tuple[int, int]:
    """The first and last line whose content a repair changes (the separators around a
    removed element are not its content)."""
    points: list[int] = []
    for edit in edits:
        old = data[edit.start : edit.end]
        lead = len(old) - len(old.lstrip(_SEPARATORS))
        kept = len(old.rstrip(_SEPARATORS))
        points += [edit.start + lead, edit.start + kept - 1] if kept > lead else [edit.start]
    return data.count(b"\n", 0, min(points)) + 1, data.count(b"\n", 0, max(points)) + 1


def _locate(repair: Repair | None, finding: Finding, ctx: Context, unsafe_fixes: bool) -> Located:
    """``repair``: the file's reader's (set when the finding has an action)."""
    origin = finding.origin
    if origin.line == 0:
        origin = Origin(ctx.line(origin) if origin.pointer else 1, origin.record, origin.pointer)
    if finding.action is None:
        return Located(finding, origin, False)
    assert repair is not None
    if not repair.supports(finding.action):
        return Located(finding, origin, False, blocked=repair.refusal(finding.action))
    applicability = finding.safety.applicability
    fixable = applicability is Applicability.SAFE or unsafe_fixes
    return Located(finding, origin, fixable, applicability=applicability)


class Mismatch:
    """A forced reader whose detection does not claim the file.  (A plain class: a
    dataclass compiles its methods when the module is imported, at every start-up.)"""

    __slots__ = ("claimed_by", "forced")
    forced: str
    claimed_by: tuple[Reader, Detection] | None

    def __init__(self, forced: str, claimed_by: tuple[Reader, Detection] | None) -> None:
        self.forced, self.claimed_by = forced, claimed_by

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mismatch) and (self.forced, self.claimed_by) == (
            other.forced,
            other.claimed_by,
        )

    def __hash__(self) -> int:
        return hash((self.forced, self.claimed_by))

    def __repr__(self) -> str:
        return f"Mismatch(forced={self.forced!r}, claimed_by={self.claimed_by!r})"


def choose(source: Source, options: Options) -> tuple[Reader | Mismatch | None, str | None]:
    """The reader that reads ``source`` (or the forced one's mismatch), else the reason a
    companion file is skipped: ``lint``, ``fix`` and ``formats`` all decide here."""
    unparsed = source.container is Container.JSON and source.value is None
    if options.reader is not None and not unparsed:
        forced = readers.by_name(options.reader)
        assert forced is not None, "the CLI validates reader names"
        if options.pinned:
            return forced, None
        # A reader made to read another layout finds bogus damage (and fix acts on it) or
        # none at all: it only chooses among the readers whose detection claims the file.
        own = readers.claim(forced, source)
        if own is None:
            return Mismatch(forced.name, readers.detect(source)), None
        return (forced, None) if own.transcript else (None, own.reason)
    if unparsed:
        return None, None  # does not parse: TD001 if it looks like a conversation
    claim = readers.detect(source, every=not options.screen)  # off: every reader is asked
    if claim is None:
        return None, None
    reader, detection = claim
    if not detection.transcript:
        return None, detection.reason
    return reader, None


def _mismatch(source: Source, options: Options, mismatch: Mismatch) -> FileReport:
    finding = unknown_layout.mismatch(options.forced_by, mismatch.forced, mismatch.claimed_by)
    if unknown_layout.RULE not in options.selection:
        # Never a silent pass: without TD002 the file is skipped, and said to be.
        return FileReport(source.path, skipped=finding.message)
    return FileReport(source.path, None, [Located(finding, finding.origin, False)])


def _unclaimed(source: Source, options: Options, companion: str | None) -> FileReport:
    path = source.path
    if companion is not None:
        return FileReport(path, skipped=companion)
    if source.container is Container.JSONL and not source.head():
        for line in source.lines:  # nothing parses: diagnose every line
            source.record(line)
    if source.errors and all(NOT_OBJECT in e.kinds for e in source.errors):
        return FileReport(path, skipped="not a transcript: no line is a JSON object")
    if source.errors:
        # A document that does not parse: a finding only if it smells like a conversation.
        if not prescreen.conversation_bytes(source.data):
            return FileReport(path, skipped="not a transcript: not valid JSON")
        rule = checks.find("TD001")
        located = [
            Located(Finding(rule, Origin(e.line, e.record), e.message), Origin(e.line, e.record), False)
            for e in source.errors
            if rule is not None and rule in options.selection
        ]
        return FileReport(path, None, located)
    hint = readers.conversation_hint(source)
    if hint is None:
        return FileReport(path, skipped="not a transcript: no reader recognises it")
    if unknown_layout.RULE not in options.selection:
        return FileReport(path)
    finding = unknown_layout.finding(hint)
    return FileReport(path, None, [Located(finding, finding.origin, False)])


def fingerprint_ids(findings: list[Located], kind: bytes) -> None:
    """Key each finding of a store of records (a database's rows, a storage folder's
    files) on the ids its pointer names, which no later write moves (``kind``: the
    store's kind, so a row and a file with one pointer differ)."""
    import hashlib  # (OpenSSL: loaded by a --baseline run only)

    for located in findings:
        subject = located.origin.pointer or located.finding.message
        digest = hashlib.sha256(kind + b"\0" + subject.encode("utf-8", "surrogatepass"))
        located.fingerprint = digest.hexdigest()[:16]
