"""``lint`` and ``fix --out`` over fsspec URLs on a Dask cluster (the ``[fleet]`` extra).

Linting is a pure function of one file's bytes, so a bucket is a map over its files: the
client only lists names and sizes, workers read the files themselves (nothing is shipped
through the client), and each task takes one large file or a batch of small ones, as
``-j`` does.  Reports come back in the order of the listing, streamed as soon as every
earlier file is done, so outputs and exit codes are those of a local run.

A worker that dies takes its running tasks with it; the scheduler gives them to another
worker (Dask's ``allowed-failures``).  A batch that still fails is split into single
files, so that only the file that kills workers is lost, and it is reported as an error
line naming it: never a missing result.  Only cli.py imports this module, and only
when a path is a URL or ``--scheduler`` is given.
"""

from __future__ import annotations

import logging
import os
import posixpath
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from transcript_doctor import fixing, linting, output, progress, reporters, walk
from transcript_doctor.engine import FileReport, Options
from transcript_doctor.fixer import Outcome
from transcript_doctor.safetext import dumps, printable, printable_inline

if TYPE_CHECKING:
    from distributed import Client

R = TypeVar("R")
MISSING = "pip install 'transcript-doctor[fleet]'"


class FleetError(Exception):
    """The run cannot start: no fleet extra, no scheduler, a listing that fails."""


@dataclass(frozen=True, slots=True)
class Target:
    url: str  # what a worker opens
    path: str  # what reports show: the path or URL as the user spelled it
    size: int
    explicit: bool


# --- the client side ----------------------------------------------------------------


def lint(paths: list[str], options: Options, plan: linting.Plan, scheduler: str | None) -> linting.Result:
    """``lint`` on the cluster; a run that cannot start is one error line (exit 2)."""
    if plan.baseline is not None:
        _error("--baseline does not work with URLs or --scheduler yet")
        return linting.Result([], failed=True)
    options = linting.prepared(options, plan)
    try:
        targets, failed = _expand(paths, options, plan.force_exclude)
        with _client(scheduler, plan.jobs) as client:
            return _lint(client, targets, failed, options, plan)
    except FleetError as exc:
        _error(str(exc))
        return linting.Result([], failed=True)


def _lint(
    client: Client, targets: list[Target], failed: bool, options: Options, plan: linting.Plan
) -> linting.Result:
    stream = plan.output == "jsonl" and not plan.statistics
    machine = plan.output not in ("full", "concise") or plan.output_file is not None
    sizes = [t.size for t in targets]
    show = plan.progress and progress.wanted(len(targets), sum(sizes), machine)
    reports: list[FileReport] = []
    errors = int(failed)  # the listing's own failure
    with output.stream(plan.output_file) as out, progress.Bar(sizes, show, "checking") as bar:
        for target, report in zip(
            targets, _run(client, _lint_batch, targets, options, _lint_failed), strict=True
        ):
            bar.advance(target.size)
            reports.append(report)
            if report.error is not None:
                _error(report.error)
                errors += 1
            elif report.skipped is not None and target.explicit and not plan.quiet:
                _error(f"{target.path}: skipped, {report.skipped}")
            if stream:  # findings as they come, in the order a local run prints them
                reporters.get("jsonl")(reporters.Run([report]), out)
                out.flush()
        result = linting.result(reports, options, plan, errors)
        if plan.statistics:
            reporters.statistics(result, out, plan.output)
        elif not stream:
            reporters.get(plan.output)(result, out)
    return result


def fix(paths: list[str], out: str, options: Options, plan: fixing.Plan, scheduler: str | None) -> int:
    """``fix --out`` (or ``--diff``) on the cluster; returns the exit status of cli.md."""
    if plan.mode == "in-place":
        _error("--in-place works on local files only; with URLs or --scheduler use --out")
        return 2
    try:
        targets, failed = _expand(paths, options, plan.force_exclude)
        if plan.mode == "out" and (clash := _clash(out, targets, plan)) is not None:
            raise FleetError(clash)
        with _client(scheduler, plan.jobs) as client:
            where = out if plan.mode == "out" else None
            results = list(_run(client, _fix_batch, targets, (options, where), _fix_failed))
    except FleetError as exc:
        _error(str(exc))
        return 2
    for target, done in zip(targets, results, strict=True):
        failed = _show_fixed(target, done, plan) or failed
    kept = [r for r in results if r.error is None]
    tally = fixing.Tally(list[Outcome](kept), failed)
    failed = _write_report(kept, out, plan) or failed
    if not plan.quiet:
        fixing._summary(tally, sys.stderr if plan.mode == "diff" else sys.stdout, plan.mode == "diff")
    if failed:
        return 2
    if plan.mode == "diff" and any(r.changed for r in tally.outcomes):
        return 1
    left = (f.finding.rule.severity.rank >= plan.fail_on.rank for o in tally.outcomes for f, _ in o.remaining)
    return 1 if any(left) else 0


def _show_fixed(target: Target, done: Fixed, plan: fixing.Plan) -> bool:
    """Print what happened to one file as the local ``fix`` does; True if it failed."""
    if done.error is not None:
        _error(done.error)
        return True
    if done.skipped is not None and target.explicit and not plan.quiet:
        _error(f"{target.path}: skipped, {done.skipped}")
    if not done.changed:
        if plan.verbose and done.skipped is None:
            (sys.stderr if plan.mode == "diff" else sys.stdout).write(
                f"{printable(done.path)}: nothing to fix\n"
            )
        return False
    if plan.mode == "diff":
        color = output.wanted("auto", sys.stdout) if plan.color is None else plan.color
        sys.stdout.write(
            output.diff(printable_inline(done.diff) if sys.stdout.isatty() else done.diff, color)
        )
    if not plan.quiet:
        verb = "would fix" if plan.mode == "diff" else "fixed"
        rules = ", ".join(sorted({a.rule for a in done.applied}))
        messages = sys.stderr if plan.mode == "diff" else sys.stdout
        messages.write(f"{printable(done.path)}: {verb} {len(done.applied)} finding(s) ({rules})\n")
    return False


def _clash(out: str, targets: list[Target], plan: fixing.Plan) -> str | None:
    """Why the copies cannot all be written without overwriting an input, the report or
    each other (as the local ``fix --out`` refuses), before anything is written."""

    def where(name: str) -> str:
        bare = name.removeprefix("file://")
        return bare if "://" in bare else os.path.realpath(bare)

    inputs = {where(t.url): t.path for t in targets}
    report = str(plan.report) if plan.report is not None else _join(out, fixing.REPORT_NAME)
    taken = {where(report): "the report", where(posixpath.splitext(report)[0] + ".diff"): "the report's diff"}
    for target in targets:
        copy = where(mirror(out, target.path))
        if copy in inputs:
            return f"the copy of {target.path} would overwrite the input {inputs[copy]}; choose another --out"
        if copy in taken:
            return f"the copy of {target.path} would overwrite {taken[copy]}; choose another --out"
        taken[copy] = f"the copy of {target.path}"
    return None


def _write_report(results: list[Fixed], out: str, plan: fixing.Plan) -> bool:
    """The ``fix`` report, from the entries the workers made; True if it cannot be written."""
    import orjson

    from transcript_doctor import __version__

    target = str(plan.report) if plan.report is not None else None
    if target is None and plan.mode == "out" and any(r.changed for r in results):
        target = _join(out, fixing.REPORT_NAME)
    if target is None:
        return False
    document = {
        "tool": f"transcript-doctor {__version__}",
        "files": [r.entry for r in results if r.error is None and r.skipped is None],
    }
    diff = "".join(r.diff for r in results if r.error is None and r.changed)
    base, _ = posixpath.splitext(target)
    try:
        _write(target, dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
        _write(base + ".diff", diff.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        _error(f"cannot write the report {target}: {exc.strerror or exc}")
        return True
    return False


def _expand(paths: list[str], options: Options, force_exclude: bool) -> tuple[list[Target], bool]:
    """The files to check, listed by the client (names and sizes only); False when a
    named path cannot be listed (its error line is printed)."""
    try:
        import fsspec
    except ImportError:
        raise FleetError(f"URLs and --scheduler need the fleet extra: {MISSING}") from None
    excluded = options.excluded
    targets: list[Target] = []
    failed = False
    for given in paths:
        if given == "-":
            raise FleetError("standard input cannot be sent to a cluster")
        if "://" not in given:  # a local path: walked as a local run walks it
            for found in walk.expand([given], excluded, force_exclude):
                if isinstance(found, OSError):
                    _error(f"cannot read {found.filename}: {found.strerror}")
                    failed = True
                else:
                    path = found.path
                    targets.append(Target(os.path.abspath(path), path, linting._size(path), found.explicit))
            continue
        try:
            fs, root = fsspec.core.url_to_fs(given)
            if not fs.isdir(root):
                targets.append(Target(given, given, int(fs.info(root).get("size") or 0), True))
                continue
            listing = fs.find(root, detail=True)
        except FileNotFoundError:
            _error(f"cannot read {given}: No such file or directory")
            failed = True
            continue
        except (OSError, ValueError) as exc:
            _error(f"cannot list {given}: {exc}")
            failed = True
            continue
        base = given.rstrip("/")
        for name in sorted(listing):
            rel = posixpath.relpath(name, root.rstrip("/") or "/")
            if any(part.startswith(".") for part in rel.split("/")[:-1]):
                continue  # hidden folders, as the local walk skips them
            info = listing[name]
            targets.append(
                Target(fs.unstrip_protocol(name), f"{base}/{rel}", int(info.get("size") or 0), False)
            )
    return targets, failed


@contextmanager
def _client(scheduler: str | None, jobs: int | None) -> Iterator[Client]:
    """A client of the given scheduler, or of a local cluster of ``jobs`` processes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise FleetError(f"URLs and --scheduler need the fleet extra: {MISSING}") from None
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise FleetError(f"cannot reach the scheduler {scheduler}: {exc}") from None
        with client:
            yield client
        return
    workers = jobs or linting._jobs(None, 1 << 30, 0)
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def _run(
    client: Client,
    task: Callable[..., list[R]],
    targets: list[Target],
    shared: object,
    failed: Callable[[Target, BaseException], R],
) -> Iterator[R]:
    """``task`` over the targets in batches, results in target order as they complete."""
    from distributed import as_completed

    if not targets:
        return
    [arg] = client.scatter([shared], broadcast=True)  # sent once, not with every task
    slots = sum(client.nthreads().values()) or 1
    batches = {
        client.submit(task, [(targets[i].url, targets[i].path) for i in batch], arg, pure=False): batch
        for batch in linting._batches([t.size for t in targets], slots)
    }
    done: dict[int, R] = {}
    following = 0
    pending = as_completed(list(batches))
    for future in pending:
        batch = batches.pop(future)
        try:
            results = future.result()
        except Exception as exc:
            if len(batch) > 1:  # split it: only the file that fails is lost
                for index in batch:
                    single = client.submit(task, [(targets[index].url, targets[index].path)], arg, pure=False)
                    batches[single] = [index]
                    pending.add(single)
                continue
            results = [failed(targets[batch[0]], exc)]
        done.update(zip(batch, results, strict=True))
        while following in done:
            yield done.pop(following)
            following += 1


def _lint_failed(target: Target, exc: BaseException) -> FileReport:
    return FileReport(target.path, error=f"{target.path}: failed on the cluster: {exc!r}")


def _fix_failed(target: Target, exc: BaseException) -> Fixed:
    return Fixed(target.path, None, b"", b"", error=f"{target.path}: failed on the cluster: {exc!r}")


# --- the worker side ----------------------------------------------------------------


def _lint_batch(batch: list[tuple[str, str]], options: Options) -> list[FileReport]:
    reports: list[FileReport] = []
    for url, path in batch:
        data = _read(url, path)
        if isinstance(data, str):
            reports.append(FileReport(path, error=data))
        else:
            reports.append(linting.portable(linting.check_data(path, data, options)))
    return reports


@dataclass(slots=True)
class Fixed(Outcome):
    """What a worker sends back about one file: its outcome without the file's bytes,
    with the report entry and the diff made where the bytes were."""

    was_changed: bool = False
    entry: dict[str, Any] = field(default_factory=dict)  # the report's file entry
    diff: str = ""

    @property
    def changed(self) -> bool:
        return self.was_changed


def _fix_batch(batch: list[tuple[str, str]], shared: tuple[Options, str | None]) -> list[Fixed]:
    options, out = shared
    return [_fix_one(url, path, options, out) for url, path in batch]


def _fix_one(url: str, path: str, options: Options, out: str | None) -> Fixed:
    from transcript_doctor import fixer, fixreport

    data = _read(url, path)
    if isinstance(data, str):
        return Fixed(path, None, b"", b"", error=data)
    try:
        outcome = fixer.fix_bytes(path, data, options)
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        return Fixed(path, None, b"", b"", error=f"internal error while fixing {path}: {exc!r}")
    if outcome.error is not None:
        return Fixed(path, None, b"", b"", error=outcome.error)
    done = Fixed(
        path,
        outcome.reader,
        b"",
        b"",
        applied=outcome.applied,
        remaining=[(f.portable(), why) for f, why in outcome.remaining],
        introduced=[f.portable() for f in outcome.introduced],
        rolled_back=outcome.rolled_back,
        skipped=outcome.skipped,
        was_changed=outcome.changed,
        entry=fixreport.file_entry(outcome) if outcome.skipped is None else {},
        diff=fixreport.unified_diff(outcome) if outcome.changed else "",
    )
    if outcome.changed and out is not None:
        target = mirror(out, path)
        try:
            _write(target, outcome.after)
        except OSError as exc:
            return Fixed(path, None, b"", b"", error=f"cannot write {target}: {exc.strerror or exc}")
    return done


def mirror(out: str, path: str) -> str:
    """Where the repaired copy of ``path`` goes under ``out``: its whole path below it,
    the URL's scheme left out (``s3://b/s/a.jsonl`` -> ``OUT/b/s/a.jsonl``)."""
    bare = path.split("://", 1)[1] if "://" in path else path
    parts = [p for p in posixpath.normpath(bare.replace(os.sep, "/")).split("/") if p not in ("", ".", "..")]
    return _join(out, *parts)


def _join(base: str, *parts: str) -> str:
    if "://" in base:
        return "/".join([base.rstrip("/"), *parts])
    return os.path.join(base, *parts)


def _read(url: str, path: str) -> bytes | str:
    """The file's bytes, or the error line naming it.  A local path is read as the local
    run reads it (fsspec's local files must be seekable: no named pipes)."""
    if "://" not in url:
        try:
            with open(url, "rb") as handle:
                return handle.read()
        except OSError as exc:
            return f"cannot read {path}: {exc.strerror}"
    import fsspec

    try:
        with fsspec.open(url, "rb") as handle:
            data: bytes = handle.read()
            return data
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    except Exception as exc:  # a filesystem's own errors (credentials, bad URL)
        return f"cannot read {path}: {exc!r}"


def _write(target: str, data: bytes) -> None:
    """Atomically where the filesystem allows it: a local file through writer.write_new,
    an object store in one put (an object is never seen half written)."""
    if "://" not in target:
        from transcript_doctor import writer

        writer.write_new(target, data)
        return
    import fsspec

    fs, path = fsspec.core.url_to_fs(target)
    fs.makedirs(posixpath.dirname(path), exist_ok=True)
    fs.pipe_file(path, data)


def _error(message: str) -> None:
    sys.stderr.write(f"transcript-doctor: {printable(message)}\n")
