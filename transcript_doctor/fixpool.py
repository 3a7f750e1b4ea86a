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
from dataclasses import replace
from pathlib import Path

from transcript_doctor.engine import Located, Options
from transcript_doctor.fixer import Outcome, fix_bytes

AHEAD = 4  # files submitted per worker ahead of the one being written: bounded memory


class Prefetch:
    """Outcomes computed ahead, in order: ``take(path, data)`` after reading each file."""

    def __init__(self, paths: list[str], options: Options, jobs: int) -> None:
        self._paths = deque(paths)
        self._options = options
        self._jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[tuple[str, Future[Outcome | None]]] = deque()

    def __enter__(self) -> Prefetch:
        self._pool = ProcessPoolExecutor(self._jobs, initializer=_init, initargs=(self._options,))
        self._fill()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def _fill(self) -> None:
        assert self._pool is not None
        while self._paths and len(self._pending) < self._jobs * AHEAD:
            path = self._paths.popleft()
            self._pending.append((path, self._pool.submit(_worker, path)))

    def take(self, path: str, data: bytes) -> Outcome | None:
        """The outcome for ``path`` if a worker computed it from ``data``, else None."""
        while self._pending and self._pending[0][0] != path:
            self._pending.popleft()[1].cancel()  # a target the caller skipped
        if not self._pending:
            return None
        _path, future = self._pending.popleft()
        self._fill()
        try:
            outcome = future.result()
        except Exception:  # a worker that died: the main process does the work itself
            return None
        return outcome if outcome is not None and outcome.before == data else None


_OPTIONS: Options | None = None


def _init(options: Options) -> None:
    global _OPTIONS
    _OPTIONS = options


def _worker(path: str) -> Outcome | None:
    assert _OPTIONS is not None
    try:
        data = Path(path).read_bytes()
        return _portable(fix_bytes(path, data, _OPTIONS))
    except Exception:  # RecursionError, a reader's bug: the main process reports it
        return None


def _portable(outcome: Outcome) -> Outcome:
    """The outcome without repair actions (they point into the worker's parsed model)."""
    stripped: dict[int, Located] = {}

    def strip(located: Located) -> Located:
        if id(located) not in stripped:
            stripped[id(located)] = replace(located, finding=replace(located.finding, action=None))
        return stripped[id(located)]

    outcome.remaining = [(strip(f), why) for f, why in outcome.remaining]
    outcome.introduced = [strip(f) for f in outcome.introduced]
    return outcome
