"""The ``lint`` command's run: walk, check files (in parallel when it pays), report."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from transcript_doctor import engine, output, plain, progress, reporters, treelint, walk
from transcript_doctor.engine import FileReport, Options
from transcript_doctor.plain import Value
from transcript_doctor.source import TEXT_SUFFIXES

if TYPE_CHECKING:
    from pathlib import Path

    from transcript_doctor import baseline  # loaded only with --baseline (start-up)

# Below this much work, starting worker processes costs more than it saves (measured: 64
# files of 17 KB lint no faster with two workers than with one).
PARALLEL_MIN_FILES = 128
PARALLEL_MIN_BYTES = 8 << 20
BATCH_MAX_FILES = 32  # files one worker task takes at the most
SQLITE = b"SQLite format 3\x00"  # dbsource.MAGIC, without importing SQLite for every file


class Plan(Value):
    __slots__ = (
        "baseline",
        "color",
        "force_exclude",
        "hidden",
        "jobs",
        "output",
        "output_file",
        "progress",
        "quiet",
        "show_fixes",
        "statistics",
        "stdin_filename",
        "verbose",
        "write_baseline",
    )
    output: Final[str]
    statistics: Final[bool]
    quiet: Final[bool]
    progress: Final[bool]
    jobs: Final[int | None]
    force_exclude: Final[bool]
    # The ruff-style options (cli.py groups them): see baseline.py and output.py.
    baseline: Final[Path | None]
    write_baseline: Final[bool]
    output_file: Final[Path | None]
    color: Final[bool | None]  # None: when the output is a terminal
    verbose: Final[bool]
    show_fixes: Final[bool]
    hidden: Final[bool]
    stdin_filename: Final[str | None]

    def __init__(
        self,
        output: str,
        statistics: bool = False,
        quiet: bool = False,
        progress: bool = True,
        jobs: int | None = None,
        force_exclude: bool = False,
        baseline: Path | None = None,
        write_baseline: bool = False,
        output_file: Path | None = None,
        color: bool | None = None,
        verbose: bool = False,
        show_fixes: bool = False,
        hidden: bool = False,
        stdin_filename: str | None = None,
    ) -> None:
        self.output = output
        self.statistics = statistics
        self.quiet = quiet
        self.progress = progress
        self.jobs = jobs
        self.force_exclude = force_exclude
        self.baseline = baseline
        self.write_baseline = write_baseline
        self.output_file = output_file
        self.color = color
        self.verbose = verbose
        self.show_fixes = show_fixes
        self.hidden = hidden
        self.stdin_filename = stdin_filename


class Result(reporters.Run):
    __slots__ = ("failed",)
    failed: Final[bool]

    def __init__(
        self,
        reports: list[FileReport],
        quiet: bool = False,
        statistics: bool = False,
        color: bool | None = None,
        baselined: int = 0,
        stale: int = 0,
        unsafe_fixes: bool = False,
        show_fixes: bool = False,
        errors: int = 0,
        vendor_folders: tuple[str, ...] = (),
        failed: bool = False,
    ) -> None:
        super().__init__(
            reports,
            quiet,
            statistics,
            color,
            baselined,
            stale,
            unsafe_fixes,
            show_fixes,
            errors,
            vendor_folders,
        )
        self.failed = failed


def prepared(options: Options, plan: Plan) -> Options:
    """The options a run checks with: SARIF and --show-fixes need each repair's splices."""
    if plan.output == "sarif" or plan.show_fixes:
        return plain.replace(options, with_edits=True)
    return options


def result(
    reports: list[FileReport],
    options: Options,
    plan: Plan,
    errors: int,
    applied: baseline.Applied | None = None,
    vendor_folders: tuple[str, ...] = (),
) -> Result:
    """What the reporters print, the same for a local run and one on a cluster."""
    return Result(
        reports,
        quiet=plan.quiet,
        statistics=plan.statistics,
        # A file gets no colour unless asked (rich and FORCE_COLOR would colour it).
        color=plan.color if plan.color is not None or plan.output_file is None else False,
        baselined=applied.suppressed if applied else 0,
        stale=applied.stale if applied else 0,
        unsafe_fixes=options.unsafe_fixes,
        show_fixes=plan.show_fixes,
        errors=errors,
        vendor_folders=vendor_folders,
        failed=errors > 0,
    )


def run(paths: list[str], options: Options, plan: Plan) -> Result:
    options = prepared(options, plan)
    excluded = options.excluded
    targets: list[walk.Target] = []
    vendor_folders: list[str] = []
    errors = 0
    for target in walk.expand(paths, excluded, plan.force_exclude, plan.hidden, vendor_folders):
        if isinstance(target, OSError):
            _error(f"cannot read {target.filename}: {target.strerror}")
            errors += 1
        else:
            targets.append(target)
    known = _baseline(plan)
    started = time.perf_counter()
    reports = list(_check_all(targets, options, plan))
    for target, report in zip(targets, reports, strict=True):
        if report.error is not None:
            _error(report.error)
            errors += 1
        elif report.skipped is not None and target.explicit and not plan.quiet:
            _error(f"{target.path}: skipped, {report.skipped}")
        if plan.verbose:
            _error(f"checked {target.path}: {_verdict(report)}")
    if plan.verbose:
        _error(f"checked {len(reports)} file(s) in {time.perf_counter() - started:.2f}s")
    if plan.write_baseline:
        assert plan.baseline is not None, "the CLI asks for --baseline with --write-baseline"
        return _write_baseline(plan.baseline, reports, errors > 0)
    applied = known.apply(reports) if known is not None else None
    done = result(reports, options, plan, errors, applied, tuple(vendor_folders))
    with output.stream(plan.output_file) as out:
        if plan.statistics:
            reporters.statistics(done, out, plan.output)
        else:
            reporters.get(plan.output)(done, out)
    return done


def _baseline(plan: Plan) -> baseline.Baseline | None:
    """The baseline to apply, read before the run so that a bad one fails fast."""
    if plan.baseline is None or plan.write_baseline:
        return None
    from transcript_doctor import baseline

    return baseline.load(plan.baseline)


def _write_baseline(path: Path, reports: list[FileReport], failed: bool) -> Result:
    from transcript_doctor import baseline

    count = baseline.write(path, reports)
    _error(f"wrote {count} finding(s) to the baseline {path}", prefix=False)
    for report in reports:
        report.findings = []
    return Result(reports, failed=failed)


def _verdict(report: FileReport) -> str:
    if report.error is not None:
        return "error"
    if report.skipped is not None:
        return f"skipped ({report.skipped})"
    count = len(report.findings)
    return f"{report.reader or 'no reader'}, {count} finding{'' if count == 1 else 's'}"


def _check_all(targets: list[walk.Target], options: Options, plan: Plan) -> Iterator[FileReport]:
    # The sizes choose the workers and drive the bar: neither with -j 1 and no progress.
    quiet = plan.jobs == 1 and not plan.progress
    sizes = [0] * len(targets) if quiet else [_size(t.path) for t in targets]
    jobs = _jobs(plan.jobs, len(targets), sum(sizes))
    machine = plan.output not in ("full", "concise") or plan.output_file is not None
    show = plan.progress and progress.wanted(len(targets), sum(sizes), machine)
    fingerprints = plan.baseline is not None
    with progress.Bar(sizes, show, "checking") as bar:
        if jobs <= 1 or any(t.path == "-" for t in targets):
            for target, size in zip(targets, sizes, strict=True):
                yield check(target.path, options, fingerprints, plan.stdin_filename)
                bar.advance(size)
            return
        # Imported here: a hook on a few files needs no pool.
        from concurrent.futures import ProcessPoolExecutor, as_completed

        engine.warm()  # the workers fork with what they would each import

        done: dict[int, FileReport] = {}
        following = 0  # the next report to give, in the order of the targets
        with ProcessPoolExecutor(jobs, initializer=_init, initargs=(options, fingerprints)) as pool:
            batches = {
                pool.submit(_worker, [targets[i].path for i in batch]): batch
                for batch in _batches(sizes, jobs)
            }
            for future in as_completed(batches):
                batch = batches.pop(future)
                done.update(zip(batch, future.result(), strict=True))
                # The bar counts files as they finish, not as they can be given in order:
                # the largest files go first, and the first of the walk may finish last.
                bar.advance(sum(sizes[i] for i in batch), len(batch))
                while following in done:
                    yield done.pop(following)
                    following += 1


def check(
    path: str, options: Options, fingerprints: bool = False, stdin_filename: str | None = None
) -> FileReport:
    """Lint one path; an unreadable file or a bug in a reader is that file's error only.

    Standard input is reported (and configured) as ``stdin_filename`` when given."""
    found = treelint.check(path, options, fingerprints)  # a storage folder (or a file in one)
    if found is not None:
        return found
    if not path.lower().endswith(TEXT_SUFFIXES):  # a transcript costs no SQLite import
        from transcript_doctor import dblint

        found = dblint.check(path, options, fingerprints)  # an SQLite store is read through SQLite
        if found is not None:
            return found
    try:
        data = sys.stdin.buffer.read() if path == "-" else _read(path)
    except OSError as exc:
        return FileReport(path, error=f"cannot read {path}: {exc.strerror}")
    if path == "-" and stdin_filename:
        path = stdin_filename
    return check_data(path, data, options, fingerprints)


def _read(path: str) -> bytes:
    """A file's bytes, through the descriptor: ``open`` builds a file object and a buffer
    for one read, a third of a small file's cost of reading (a Path per file costs as
    much again).  A file that fits in ``_SMALL`` is read with no ``fstat`` (its result
    object costs more than a read): the read that returns nothing tells its end, as it
    does for a pipe.  A larger file is read again from its start in one read of the size
    ``fstat`` gives (no chunks joined: a copy would double the peak memory), and to its
    end if it grows while it is read."""
    fd = os.open(path, _READ_FLAGS)
    try:
        data = os.read(fd, _SMALL)
        if len(data) == _SMALL and _rewound(fd):
            size = os.fstat(fd).st_size
            data = os.read(fd, size + 1)
            if len(data) == size:
                return data  # its end, where fstat said
        chunks = [data]
        while chunk := os.read(fd, _SMALL):
            chunks.append(chunk)
        return data if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
_SMALL = 1 << 16  # most transcripts' size, at most: read whole in one call


def _rewound(fd: int) -> bool:
    """Back at the start of a file that can seek (not of a pipe, read as it comes)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        return False
    return True


def check_data(path: str, data: bytes, options: Options, fingerprints: bool = False) -> FileReport:
    """Lint bytes read elsewhere (the fleet's workers read URLs); errors as in check."""
    if data.startswith(SQLITE):  # standard input or a URL: not a file SQLite can open
        from transcript_doctor import dbsource

        return FileReport(path, error=dbsource.from_bytes(path))
    try:
        report = engine.lint_bytes(path, data, options)
        if fingerprints:
            from transcript_doctor import baseline

            baseline.fingerprint_all(path, data, report.findings)
        return report
    except RecursionError:
        return FileReport(path, error=f"{path}: nested too deeply to check")
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        return FileReport(path, error=f"internal error while checking {path}: {exc!r}")


_OPTIONS: Options | None = None
_FINGERPRINTS = False


def _init(options: Options, fingerprints: bool = False) -> None:
    global _OPTIONS, _FINGERPRINTS
    _OPTIONS = options
    _FINGERPRINTS = fingerprints


def _worker(paths: list[str]) -> list[FileReport]:
    assert _OPTIONS is not None
    return [portable(check(path, _OPTIONS, _FINGERPRINTS)) for path in paths]


def portable(report: FileReport) -> FileReport:
    """A report to send back from a worker: repair actions point into the worker's parsed
    model, and reporters need none of it."""
    report.findings = [f.portable() for f in report.findings]
    return report


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


def _error(message: str, prefix: bool = True) -> None:
    from transcript_doctor.safetext import printable

    message = printable(message)
    sys.stderr.write(f"transcript-doctor: {message}\n" if prefix else f"{message}\n")
