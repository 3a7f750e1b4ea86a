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

# Below this much work, starting worker processes costs more than it saves (measured: 64
# files of 17 KB lint no faster with two workers than with one).
PARALLEL_MIN_FILES = 128
PARALLEL_MIN_BYTES = 8 << 20
BATCH_MAX_FILES = 32  # files one worker task takes at the most
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
        # Imported here: a hook on a few files needs no pool.
        from concurrent.futures import ProcessPoolExecutor, as_completed

        done: dict[int, FileReport] = {}
        following = 0  # the next report to give, in the order of the targets
        with ProcessPoolExecutor(jobs, initializer=_init, initargs=(options,)) as pool:
            batches = {
                pool.submit(_worker, [targets[i].path for i in batch]): batch
                for batch in _batches(sizes, jobs)
            }
            for future in as_completed(batches):
                done.update(zip(batches.pop(future), future.result(), strict=True))
                while following in done:
                    yield done.pop(following)
                    following += 1
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


def _worker(paths: list[str]) -> list[FileReport]:
    assert _OPTIONS is not None
    reports = [check(path, _OPTIONS) for path in paths]
    for report in reports:
        # Repair actions point into the worker's parsed model: reporters need none of it.
        report.findings = [replace(f, finding=replace(f.finding, action=None)) for f in report.findings]
    return reports


def _batches(sizes: list[int], jobs: int) -> list[list[int]]:
    """The files (indexes) each worker task takes, largest first: a large file alone, small
    ones together (a task costs a round trip), so no worker idles at the end while
    another still reads a large file it took late."""
    budget = max(1, sum(sizes) // (jobs * 16))
    batches: list[list[int]] = []
    batch: list[int] = []
    weight = 0
    for index in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        batch.append(index)
        weight += sizes[index]
        if weight >= budget or len(batch) == BATCH_MAX_FILES:
            batches.append(batch)
            batch, weight = [], 0
    if batch:
        batches.append(batch)
    return batches


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
