"""``fix -j N``: repairs planned in worker processes while the main process writes.

The main process keeps everything that touches the files it changes: it snapshots and
reads each file, decides and writes, in the walk's order.  Workers only compute: each
reads a file, repairs it in memory and sends the outcome back.  An outcome is used only if
it was computed from exactly the bytes the main process read after its snapshot;
otherwise (the file changed in between) the main process computes it again, so a worker
can never make ``--in-place`` write a repair of other bytes.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from transcript_doctor.engine import Located, Options
from transcript_doctor.fixer import Outcome, fix_bytes, read_companion

AHEAD = 3  # batches submitted per worker ahead of the one being written: bounded memory
BATCH_MAX_FILES = 32  # a task costs a round trip: small files travel together...
BATCH_BYTES = 4 << 20  # ...up to this much of them


class Prefetch:
    """Outcomes computed ahead, in order: ``take(path, data)`` after reading each file."""

    def __init__(self, paths: list[str], sizes: list[int], options: Options, jobs: int) -> None:
        self._batches = deque(_batches(paths, sizes))
        self._options = options
        self._jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[tuple[list[str], Future[list[Outcome | None]]]] = deque()
        self._ready: deque[tuple[str, Outcome | None]] = deque()

    def __enter__(self) -> Prefetch:
        self._pool = ProcessPoolExecutor(self._jobs, initializer=_init, initargs=(self._options,))
        self._fill()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def _fill(self) -> None:
        assert self._pool is not None
        while self._batches and len(self._pending) < self._jobs * AHEAD:
            batch = self._batches.popleft()
            self._pending.append((batch, self._pool.submit(_worker, batch)))

    def take(self, path: str, data: bytes) -> Outcome | None:
        """The outcome for ``path`` if a worker computed it from ``data``, else None."""
        while True:
            if not self._ready:
                if not self._pending:
                    return None
                batch, future = self._pending.popleft()
                self._fill()
                try:
                    outcomes = future.result()
                except Exception:  # a worker that died: the main process does the work itself
                    outcomes = [None] * len(batch)
                self._ready.extend(zip(batch, outcomes, strict=True))
            found, outcome = self._ready.popleft()
            if found == path:  # else a target the caller skipped: go on
                return outcome if outcome is not None and outcome.before == data else None


def _batches(paths: list[str], sizes: list[int]) -> list[list[str]]:
    """Consecutive runs of paths (the main process writes in the walk's order)."""
    batches: list[list[str]] = []
    batch: list[str] = []
    weight = 0
    for path, size in zip(paths, sizes, strict=True):
        batch.append(path)
        weight += size
        if weight >= BATCH_BYTES or len(batch) == BATCH_MAX_FILES:
            batches.append(batch)
            batch, weight = [], 0
    if batch:
        batches.append(batch)
    return batches


_OPTIONS: Options | None = None


def _init(options: Options) -> None:
    global _OPTIONS
    _OPTIONS = options


def _worker(paths: list[str]) -> list[Outcome | None]:
    return [_one(path) for path in paths]


def _one(path: str) -> Outcome | None:
    assert _OPTIONS is not None
    from transcript_doctor import dbfix, treesource

    if dbfix.claims(path) or treesource.unit(path) is not None:
        return None  # a database or storage folder is repaired by the main process
    try:
        data = Path(path).read_bytes()
        return _portable(fix_bytes(path, data, _OPTIONS, read_companion))
    except Exception:  # RecursionError, a reader's bug: the main process reports it
        return None


def _portable(outcome: Outcome) -> Outcome:
    """The outcome without repair actions (they point into the worker's parsed model)."""
    stripped: dict[int, Located] = {}

    def strip(located: Located) -> Located:
        if id(located) not in stripped:
            stripped[id(located)] = located.portable()
        return stripped[id(located)]

    outcome.remaining = [(strip(f), why) for f, why in outcome.remaining]
    outcome.introduced = [strip(f) for f in outcome.introduced]
    return outcome
