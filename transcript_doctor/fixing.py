"""The ``fix`` command's run: which files, where results go, what is printed, exit status."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

import orjson

from transcript_doctor import __version__, fixreport, output, progress, walk, writer
from transcript_doctor.engine import Options
from transcript_doctor.fixer import Outcome, fix_bytes
from transcript_doctor.model import Applicability, Severity

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


@dataclass(slots=True)
class Tally:
    outcomes: list[Outcome] = field(default_factory=list)
    failed: bool = False


def run(paths: list[str], options: Options, plan: Plan) -> int:
    """Fix every file; returns the exit status of cli.md."""
    stdin = paths == ["-"]
    # Looked up at each write: a progress bar on the terminal sets its own stream meanwhile.
    messages = cast(TextIO, output.Current("stderr" if stdin or plan.mode == "diff" else "stdout"))
    tally = Tally()
    excluded = options.config.excluded if options.config is not None else None
    expanded = list(walk.expand(paths, excluded, plan.force_exclude))
    with _ahead(expanded, options, plan) as (prefetch, bar):
        for target in expanded:
            if isinstance(target, OSError):
                _error(f"cannot read {target.filename}: {target.strerror}")
                tally.failed = True
                continue
            outcome = _fix_one(target, options, plan, messages, prefetch)
            bar.advance(len(outcome.before) if outcome is not None else 0)
            if outcome is None:
                tally.failed = True
                continue
            tally.outcomes.append(outcome)
            if stdin:
                sys.stdout.buffer.write(outcome.after)
                sys.stdout.flush()
    _write_report(tally, plan)
    if not plan.quiet:
        _summary(tally, messages)
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


def _fix_one(
    target: walk.Target,
    options: Options,
    plan: Plan,
    messages: TextIO,
    prefetch: fixpool.Prefetch | None = None,
) -> Outcome | None:
    path = target.path
    try:
        if path == "-":
            data, snapshot = sys.stdin.buffer.read(), None
        else:
            snapshot = writer.Snapshot.take(path) if plan.mode == "in-place" else None
            data = Path(path).read_bytes()
    except OSError as exc:
        _error(f"cannot read {path}: {exc.strerror}")
        return None
    try:
        outcome = prefetch.take(path, data) if prefetch is not None else None
        outcome = outcome or fix_bytes(path, data, options)
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        _error(f"internal error while fixing {path}: {exc!r}")
        return None
    if outcome.error is not None:
        _error(outcome.error)
        return None
    if outcome.skipped is not None and target.explicit and not plan.quiet and path != "-":
        _error(f"{path}: skipped, {outcome.skipped}")
    if not outcome.changed:
        if plan.verbose and outcome.skipped is None:
            messages.write(f"{path}: nothing to fix\n")
        return outcome
    try:
        if path == "-":
            pass  # the caller writes the repaired transcript to standard output
        elif plan.mode == "diff":
            color = output.wanted("auto", sys.stdout) if plan.color is None else plan.color
            sys.stdout.write(output.diff(fixreport.unified_diff(outcome), color))
        elif plan.mode == "in-place":
            assert snapshot is not None
            writer.replace(snapshot, outcome.after, data)
        else:
            writer.write_new(str(_mirror(plan.out, path)), outcome.after)
    except (writer.WriteRefused, OSError) as exc:
        _error(str(exc) if isinstance(exc, writer.WriteRefused) else f"cannot write {path}: {exc.strerror}")
        return None
    if not plan.quiet:
        rules = ", ".join(sorted({a.rule for a in outcome.applied}))
        verb = "would fix" if plan.mode == "diff" else "fixed"
        messages.write(f"{path}: {verb} {len(outcome.applied)} finding(s) ({rules})\n")
    return outcome


def _mirror(out: Path, path: str) -> Path:
    """Where a repaired copy of ``path`` goes under ``out``: the same relative path."""
    parts = [p for p in Path(os.path.normpath(path)).parts if p not in ("/", "..", ".")]
    return out.joinpath(*parts)


def _write_report(tally: Tally, plan: Plan) -> None:
    target = plan.report
    if target is None and plan.mode == "out" and any(o.changed for o in tally.outcomes):
        target = plan.out / REPORT_NAME
    if target is None:
        return
    document = {
        "tool": f"transcript-doctor {__version__}",
        "files": [fixreport.file_entry(o) for o in tally.outcomes if o.skipped is None],
    }
    diff = "".join(fixreport.unified_diff(o) for o in tally.outcomes if o.changed)
    try:
        writer.write_new(str(target), orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
        writer.write_new(str(target.with_suffix(".diff")), diff.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        _error(f"cannot write the report {target}: {exc.strerror}")
        tally.failed = True


def _summary(tally: Tally, out: TextIO) -> None:
    for outcome in tally.outcomes:
        for located, why in outcome.remaining:
            finding = located.finding
            out.write(
                f"{outcome.path}:{located.origin.line}: {finding.rule.code} {finding.message} [not fixed: {why}]\n"
            )
        for note in outcome.rolled_back:
            if note.startswith("all:"):  # the others are said with the finding they concern
                out.write(f"{outcome.path}: rolled back {note}\n")
    fixed = sum(len(o.applied) for o in tally.outcomes)
    files = sum(1 for o in tally.outcomes if o.changed)
    left = sum(len(o.remaining) for o in tally.outcomes)
    out.write(f"Fixed {fixed} finding(s) in {files} file(s); {left} left.\n")
    hidden = sum(
        1
        for o in tally.outcomes
        for f, _ in o.remaining
        if f.applicability is Applicability.UNSAFE and not f.fixable
    )
    if hidden:
        what = "1 hidden fix" if hidden == 1 else f"{hidden} hidden fixes"
        out.write(f"{what} can be enabled with the `--unsafe-fixes` option.\n")


def _error(message: str) -> None:
    sys.stderr.write(f"transcript-doctor: {message}\n")
