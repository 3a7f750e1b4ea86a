"""The ``lint`` command's run: walk, check files (in parallel when it pays), report."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from transcript_doctor import engine, reporters, walk
from transcript_doctor.engine import FileReport, Options

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

# Below this much work, starting worker processes costs more than it saves.
PARALLEL_MIN_FILES = 8
PARALLEL_MIN_BYTES = 8 << 20
PROGRESS_MIN_FILES = 200
PROGRESS_MIN_BYTES = 200 << 20


@dataclass(frozen=True, slots=True)
class Plan:
    output: str
    statistics: bool = False
    quiet: bool = False
    progress: bool = True
    jobs: int | None = None
    force_exclude: bool = False


@dataclass(frozen=True, slots=True)
class Result(reporters.Run):
    failed: bool = False


def run(paths: list[str], options: Options, plan: Plan) -> Result:
    if plan.output == "sarif":
        options = replace(options, with_edits=True)
    excluded = options.config.excluded if options.config is not None else None
    targets: list[walk.Target] = []
    failed = False
    for target in walk.expand(paths, excluded, plan.force_exclude):
        if isinstance(target, OSError):
            _error(f"cannot read {target.filename}: {target.strerror}")
            failed = True
        else:
            targets.append(target)
    reports = list(_check_all(targets, options, plan))
    for target, report in zip(targets, reports, strict=True):
        if report.error is not None:
            _error(report.error)
            failed = True
        elif report.skipped is not None and target.explicit and not plan.quiet:
            _error(f"{target.path}: skipped, {report.skipped}")
    result = Result(reports, quiet=plan.quiet, statistics=plan.statistics, failed=failed)
    if plan.statistics:
        reporters.statistics(result, sys.stdout, plan.output)
    else:
        reporters.get(plan.output)(result, sys.stdout)
    sys.stdout.flush()
    return result


def _check_all(targets: list[walk.Target], options: Options, plan: Plan) -> Iterator[FileReport]:
    sizes = [_size(t.path) for t in targets]
    jobs = _jobs(plan.jobs, len(targets), sum(sizes))
    show = plan.progress and _progress_wanted(plan.output, len(targets), sum(sizes))
    with _Progress(len(targets), show) as progress:
        if jobs <= 1 or any(t.path == "-" for t in targets):
            for target in targets:
                yield check(target.path, options)
                progress.advance()
            return
        from concurrent.futures import ProcessPoolExecutor  # a hook on a few files needs no pool

        paths = [t.path for t in targets]
        chunk = max(1, min(32, len(paths) // (jobs * 4)))
        with ProcessPoolExecutor(jobs, initializer=_init, initargs=(options,)) as pool:
            for report in pool.map(_worker, paths, chunksize=chunk):
                yield report
                progress.advance()


def check(path: str, options: Options) -> FileReport:
    """Lint one path; an unreadable file or a bug in a reader is that file's error only."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        return FileReport(path, error=f"cannot read {path}: {exc.strerror}")
    try:
        return engine.lint_bytes(path, data, options)
    except RecursionError:
        return FileReport(path, error=f"{path}: nested too deeply to check")
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        return FileReport(path, error=f"internal error while checking {path}: {exc!r}")


_OPTIONS: Options | None = None


def _init(options: Options) -> None:
    global _OPTIONS
    _OPTIONS = options


def _worker(path: str) -> FileReport:
    assert _OPTIONS is not None
    report = check(path, _OPTIONS)
    # Repair actions point into the worker's parsed model: reporters need none of it.
    report.findings = [replace(f, finding=replace(f.finding, action=None)) for f in report.findings]
    return report


def _jobs(asked: int | None, files: int, size: int) -> int:
    if asked is not None:
        return asked
    if files < PARALLEL_MIN_FILES and size < PARALLEL_MIN_BYTES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, files))


def _size(path: str) -> int:
    try:
        return os.path.getsize(path) if path != "-" else 0
    except OSError:
        return 0


def _progress_wanted(output: str, files: int, size: int) -> bool:
    """Only for a person watching a long run: never in pipes, CI or machine output."""
    if output not in ("full", "concise") or os.environ.get("CI") or not sys.stderr.isatty():
        return False
    return files >= PROGRESS_MIN_FILES or size >= PROGRESS_MIN_BYTES


class _Progress:
    """A rich progress bar on standard error, or nothing."""

    def __init__(self, total: int, show: bool) -> None:
        self.total = total
        self.show = show
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> _Progress:
        if self.show:
            from rich.console import Console
            from rich.progress import Progress

            self._bar = Progress(transient=True, console=Console(file=sys.stderr))
            self._bar.start()
            self._task = self._bar.add_task("checking", total=self.total)
        return self

    def advance(self) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def _error(message: str) -> None:
    sys.stderr.write(f"transcript-doctor: {message}\n")
