"""The ``fix`` command's run: which files, where results go, what is printed, exit status."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from transcript_doctor import (
    __version__,
    fixreport,
    interrupts,
    mirror,
    output,
    progress,
    reporters,
    reportfile,
    walk,
    writer,
)
from transcript_doctor.engine import Options
from transcript_doctor.fixer import Outcome, fix_bytes, read_companion
from transcript_doctor.model import Applicability, Severity
from transcript_doctor.safetext import printable, printable_inline

if TYPE_CHECKING:
    from transcript_doctor import fixpool

REPORT_NAME = "transcript-doctor-report.json"


@dataclass(frozen=True, slots=True)
class Plan:
    mode: str  # "out", "in-place" or "diff"
    out: Path
    report: Path | None
    fail_on: Severity
    quiet: bool
    force_exclude: bool = False
    # The ruff-style options: -j, the progress bar, --color (fixpool.py, progress.py, output.py).
    jobs: int | None = None
    progress: bool = True
    color: bool | None = None  # None: when standard output is a terminal
    verbose: bool = False
    hidden: bool = False
    stdin_filename: str | None = None
    backup: bool = True  # an SQLite database is backed up before its repair (dbfix.py)
    # ``--out`` was given: standard input's report goes there too.  ``fix -`` alone is a
    # filter (the repair goes to standard output) and leaves nothing in the current folder.
    out_named: bool = True


@dataclass(slots=True)
class Tally:
    outcomes: list[Outcome] = field(default_factory=list)
    failed: bool = False
    errors: int = 0  # paths that could not be read, fixed or written (each said on stderr)
    unwritten: list[Outcome] = field(default_factory=list)  # repaired, but the write failed
    vendor_folders: list[str] = field(default_factory=list)


def run(paths: list[str], options: Options, plan: Plan) -> int:
    """Fix every file; returns the exit status of cli.md."""
    stdin = paths == ["-"]
    # Looked up at each write: a progress bar on the terminal sets its own stream meanwhile.
    messages = cast(TextIO, output.Current("stderr" if stdin or plan.mode == "diff" else "stdout"))
    tally = Tally()
    excluded = options.excluded
    targets = list(walk.expand(paths, excluded, plan.force_exclude, plan.hidden, tally.vendor_folders))
    try:
        sink = _Sink.open(plan, stdin)
    except reportfile.ReportError as exc:
        _error(str(exc))
        return 2
    if plan.mode == "out":
        named = [t.path for t in targets if isinstance(t, walk.Target) and t.path != "-"]
        sink.clashes = mirror.clashes(named, plan.out, sink.reserved())
    interrupted: KeyboardInterrupt | None = None
    with interrupts.handled():
        try:
            with _ahead(targets, options, plan) as (prefetch, bar):
                for target in targets:
                    if isinstance(target, OSError):
                        _error(f"cannot read {target.filename}: {target.strerror}")
                        tally.failed = True
                        tally.errors += 1
                        continue
                    outcome = _fix_one(target, options, plan, messages, sink, prefetch)
                    if isinstance(outcome, Unwritten):
                        tally.unwritten.append(outcome.outcome)
                    bar.advance(_read(outcome))
                    if outcome is None or isinstance(outcome, Unwritten):
                        tally.failed = True
                        tally.errors += 1
                        continue
                    tally.outcomes.append(outcome)
        except KeyboardInterrupt as exc:
            interrupted = exc
        finally:  # even after a bug: the report of the files already written
            if not sink.finish():
                tally.failed = True
    if interrupted is not None:
        done = sum(1 for o in tally.outcomes if o.changed)
        _error(f"interrupted; {done} file(s) were repaired before it, every other file is as it was")
        return interrupts.status(interrupted)
    if not plan.quiet:
        _summary(tally, messages, plan.mode == "diff")
    if tally.failed:
        return 2
    changed = any(o.changed for o in tally.outcomes)
    left = any(
        located.finding.rule.severity.rank >= plan.fail_on.rank
        for o in tally.outcomes
        for located, _ in o.remaining
    )
    if plan.mode in ("in-place", "diff") and changed:
        return 1
    return 1 if left else 0


@contextmanager
def _ahead(
    expanded: list[walk.Target | OSError], options: Options, plan: Plan
) -> Iterator[tuple[fixpool.Prefetch | None, progress.Bar]]:
    """Workers computing repairs ahead (``-j``) and the progress bar, when they pay."""
    from transcript_doctor import linting

    targets = [t.path for t in expanded if isinstance(t, walk.Target)]
    sizes = [linting._size(path) for path in targets]
    jobs = 1 if "-" in targets else linting._jobs(plan.jobs, len(targets), sum(sizes))
    show = plan.progress and progress.wanted(len(targets), sum(sizes))
    with progress.Bar(sizes, show, "fixing") as bar:
        if jobs <= 1:
            yield None, bar
            return
        from transcript_doctor import fixpool  # a hook on a few files needs no pool

        with fixpool.Prefetch(targets, sizes, options, jobs) as prefetch:
            yield prefetch, bar


@dataclass(slots=True)
class _Released(Outcome):
    """An outcome whose bytes are written and let go (memory holds one file at a time);
    ``before`` and ``after`` are empty, ``changed`` remembers, ``read`` is how many bytes
    the file had."""

    was_changed: bool = False
    read: int = 0

    @property
    def changed(self) -> bool:
        return self.was_changed


@dataclass(frozen=True, slots=True)
class Unwritten:
    """A file repaired in memory whose repair could not be written: nothing was fixed."""

    outcome: _Released


def _read(result: _Released | Unwritten | None) -> int:
    if result is None:
        return 0
    return result.outcome.read if isinstance(result, Unwritten) else result.read


def _released(outcome: Outcome) -> _Released:
    fields = {f: getattr(outcome, f) for f in Outcome.__dataclass_fields__}
    return _Released(
        **{**fields, "before": b"", "after": b"", "companion": None},
        was_changed=outcome.changed,
        read=len(outcome.before),
    )


class _Sink:
    """Where the report's entries go: the report named by ``--report`` (its names taken
    before anything is read), or under ``--out`` the default report, taken when the first
    file changes; entries of unchanged files seen before then wait in memory."""

    def __init__(self, plan: Plan, files: reportfile.ReportFiles | None, stdin: bool = False) -> None:
        self.plan = plan
        self.files = files
        # The default report under --out, unless standard input alone is fixed to
        # standard output without naming --out.
        self.default = plan.mode == "out" and (plan.out_named or not stdin)
        self.waiting: list[dict[str, Any]] = []
        self.clashes: dict[str, str] = {}
        self.taken: dict[tuple[int, int], str] = {}

    @classmethod
    def open(cls, plan: Plan, stdin: bool = False) -> _Sink:
        sink = cls(plan, None, stdin)
        if plan.report is not None:
            sink.files = sink._reserve(str(plan.report))
        return sink

    def _reserve(self, wanted: str) -> reportfile.ReportFiles:
        files = reportfile.ReportFiles.reserve(wanted)
        if files.report != os.path.basename(wanted):
            _error(f"{wanted} exists and is kept; this run's report is {files.path}")
        for inode in files.inodes():
            self.taken[inode] = "the fix report"
        return files

    def reserved(self) -> list[str]:
        if self.plan.report is not None:
            assert self.files is not None
            return [os.path.join(self.files.folder or ".", n) for n in (self.files.report, self.files.diff)]
        return [str(self.plan.out / n) for n in reportfile.names(REPORT_NAME, 0)]

    @property
    def keeps(self) -> bool:
        """Whether entries go anywhere: a plain ``--in-place`` or ``--diff`` keeps none,
        and then no entry (two hashes of the file) nor diff is made for it; nor does
        ``fix -`` without ``--report`` or ``--out``."""
        return self.files is not None or self.default

    def add(self, entry: dict[str, Any], changed: bool, durable: bool) -> int | None:
        if self.files is None:
            if not self.default:
                return None
            if not changed:
                self.waiting.append(entry)
                return None
            os.makedirs(self.plan.out, exist_ok=True)
            self.files = self._reserve(str(self.plan.out / REPORT_NAME))
            for waiting in self.waiting:
                self.files.add(waiting, durable=False)
            self.waiting = []
        return self.files.add(entry, durable, pending=changed)

    def undo_record(self, entry: dict[str, Any], path: str, durable: bool) -> int | None:
        """``add`` a file about to change: a report that cannot take it refuses the write."""
        try:
            return self.add(entry, changed=True, durable=durable)
        except OSError as exc:
            raise writer.WriteRefused(
                f"cannot write the undo record for {path}: {exc.strerror}; not replaced"
            ) from None
        except reportfile.ReportError as exc:
            raise writer.WriteRefused(f"{exc}; {path} not written") from None

    def settle(self, number: int | None, state: str, diff: str = "") -> None:
        if self.files is not None and number is not None:
            self.files.settle(number, state)
            if state == reportfile.REPLACED and diff:
                self.files.add_diff(diff)

    def finish(self) -> bool:
        if self.files is None:
            return True
        try:
            self.files.finish(f"transcript-doctor {__version__}")
        except OSError as exc:
            _error(
                f"cannot write the report {self.files.path}: {exc.strerror}; "
                f"its journal {os.path.join(self.files.folder, self.files.journal)} holds every entry"
            )
            return False
        return True


def _fix_one(
    target: walk.Target,
    options: Options,
    plan: Plan,
    messages: TextIO,
    sink: _Sink,
    prefetch: fixpool.Prefetch | None = None,
) -> _Released | Unwritten | None:
    path = target.path
    original: writer.Original | None = None
    if path in sink.clashes:
        _error(sink.clashes[path])
        return None
    from transcript_doctor import dbfix, treefix

    if treefix.claims(path):  # a storage folder of JSON files: its files edited as one unit
        done = treefix.fix_target(path, target.explicit, options, plan, sink, messages)
        return None if done is None else _released(done)
    if dbfix.claims(path):  # an SQLite store: rows changed in transactions, not bytes
        found = dbfix.fix_target(path, target.explicit, options, plan, sink, messages)
        return None if found is None else _released(found)
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        elif plan.mode == "in-place":
            original, data = writer.Original.read(path)
        else:
            data = Path(path).read_bytes()
    except OSError as exc:
        _error(f"cannot read {path}: {exc.strerror}")
        return None
    companions = _Companions(plan.mode == "in-place")
    try:
        outcome = prefetch.take(path, data) if prefetch is not None else None
        if outcome is not None and not companions.same(outcome):
            outcome = None  # its companion file changed since the worker read it
        name = plan.stdin_filename if path == "-" and plan.stdin_filename else path
        # Standard input has no companion file beside it: repairs that need one are not made.
        outcome = outcome or fix_bytes(name, data, options, None if path == "-" else companions.read)
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        _error(f"internal error while fixing {path}: {exc!r}")
        return None
    del data
    if outcome.error is not None:
        _error(outcome.error)
        return None
    if outcome.skipped is not None and target.explicit and not plan.quiet and path != "-":
        _error(f"{path}: skipped, {outcome.skipped}")
    if not outcome.changed:
        if path == "-" and plan.mode != "diff":  # a filter passes what it need not change
            sys.stdout.buffer.write(outcome.after)
            sys.stdout.flush()
        if plan.verbose and outcome.skipped is None:
            messages.write(f"{printable(path)}: nothing to fix\n")
        if outcome.skipped is None and sink.keeps:
            sink.add(fixreport.file_entry(outcome), changed=False, durable=False)
        return _released(outcome)
    entry = fixreport.file_entry(outcome) if sink.keeps else {}
    companion = outcome.companion if outcome.companion is not None and outcome.companion.changed else None
    diff = fixreport.unified_diff(outcome) if sink.keeps or plan.mode == "diff" else ""
    number: int | None = None

    def record() -> None:
        """The undo record, on disk before the file changes."""
        nonlocal number
        number = sink.undo_record(entry, path, durable=plan.mode == "in-place")

    try:
        if plan.mode == "diff":  # of standard input too: a diff, not the repaired text
            record()
            color = output.wanted("auto", sys.stdout) if plan.color is None else plan.color
            # A patch file keeps the bytes; a terminal gets no escape sequence.
            sys.stdout.write(output.diff(printable_inline(diff) if sys.stdout.isatty() else diff, color))
        elif path == "-":
            record()
            sys.stdout.buffer.write(outcome.after)
            sys.stdout.flush()
        elif plan.mode == "in-place":
            assert original is not None
            settle = lambda: sink.settle(number, reportfile.REPLACED, diff)  # noqa: E731
            if companion is None:
                writer.replace(original, outcome.after, record, settle)
            else:  # the companion first: see writer.replace_pair
                first = companions.originals[companion.path]
                writer.replace_pair(
                    first, companion.before, companion.after, original, outcome.after, record, settle
                )
        else:
            record()
            if companion is not None:
                writer.write_copy(
                    str(plan.out),
                    mirror.parts(companion.path),
                    companion.after,
                    sink.taken,
                    f"the copy of {companion.path}",
                )
            writer.write_copy(
                str(plan.out), mirror.parts(path), outcome.after, sink.taken, f"the copy of {path}"
            )
    except (writer.WriteRefused, OSError) as exc:
        sink.settle(number, reportfile.NOT_REPLACED)
        _error(str(exc) if isinstance(exc, writer.WriteRefused) else f"cannot write {path}: {exc.strerror}")
        return Unwritten(_released(outcome))
    except Exception as exc:  # the undo record could not be made: the file was not touched
        sink.settle(number, reportfile.NOT_REPLACED)
        _error(f"internal error while writing {path}: {exc!r}")
        return Unwritten(_released(outcome))
    if plan.mode != "in-place" or path == "-":  # in place: settled inside the swap
        sink.settle(number, reportfile.REPLACED, diff)
    if not plan.quiet:
        rules = ", ".join(sorted({a.rule for a in outcome.applied}))
        verb = "would fix" if plan.mode == "diff" else "fixed"
        also = "" if companion is None else f"; {printable(companion.path)} kept in step"
        messages.write(f"{printable(path)}: {verb} {len(outcome.applied)} finding(s) ({rules}){also}\n")
    return _released(outcome)


class _Companions:
    """Reads the file a layout keeps beside a transcript (fixer.py), keeping what an
    in-place repair needs to replace it safely."""

    def __init__(self, in_place: bool) -> None:
        self.in_place = in_place
        self.originals: dict[str, writer.Original] = {}

    def read(self, path: str) -> bytes:
        if not self.in_place:
            return read_companion(path)
        original, data = writer.Original.read(path)
        self.originals[path] = original
        return data

    def same(self, outcome: Outcome) -> bool:
        """Whether a worker's outcome used the companion file as it is now."""
        companion = outcome.companion
        if companion is None:
            return True
        try:
            return self.read(companion.path) == companion.before
        except OSError:
            return False


def _summary(tally: Tally, out: TextIO, diff: bool = False) -> None:
    for outcome in tally.outcomes:
        for located, why in outcome.remaining:
            finding = located.finding
            out.write(
                f"{printable(outcome.path)}:{located.origin.line}: {finding.rule.code} "
                f"{printable(finding.message)} [not fixed: {printable(why)}]\n"
            )
        for note in outcome.rolled_back:
            if note.startswith("all:"):  # the others are said with the finding they concern
                out.write(f"{printable(outcome.path)}: rolled back {printable(note)}\n")
    # Numbers that are true: a repair that could not be written fixed nothing, and what
    # it would have fixed is still in the file.
    fixed = sum(len(o.applied) for o in tally.outcomes)
    files = sum(1 for o in tally.outcomes if o.changed)
    left = sum(len(o.remaining) for o in tally.outcomes)
    left += sum(len(o.applied) + len(o.remaining) for o in tally.unwritten)
    checked = sum(1 for o in tally.outcomes + tally.unwritten if o.skipped is None)
    skipped = sum(1 for o in tally.outcomes if o.skipped is not None)
    if not checked:
        out.write("No transcripts checked.\n")
    else:
        verb = "Would fix" if diff else "Fixed"
        out.write(f"{verb} {fixed} finding(s) in {files} file(s); {left} left.\n")
    if tally.errors:
        noun = "path" if tally.errors == 1 else "paths"
        out.write(f"{tally.errors} {noun} could not be read, fixed or written (see above).\n")
    hidden = sum(
        1
        for o in tally.outcomes
        for f, _ in o.remaining
        if f.applicability is Applicability.UNSAFE and not f.fixable
    )
    if hidden:
        what = "1 hidden fix" if hidden == 1 else f"{hidden} hidden fixes"
        out.write(f"{what} can be enabled with the `--unsafe-fixes` option.\n")
    for line in [*reporters.skipped_lines(skipped), *reporters.vendor_notes(tuple(tally.vendor_folders))]:
        out.write(line + "\n")


def _error(message: str) -> None:
    sys.stderr.write(f"transcript-doctor: {printable(message)}\n")
