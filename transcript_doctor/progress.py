"""A progress bar on standard error for long runs of ``lint`` and ``fix``, or nothing.

It measures bytes, not files: a walk finds a few large sessions among many small ones, the
workers take the large ones first, and a bar that counted files would sit near zero while
they are read.  It is drawn from the start of the run, so it shows movement from the first
finished file on.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

# Below this much work a run ends before a bar would help.
MIN_FILES = 200
MIN_BYTES = 200 << 20
# The bar is redrawn ten times a second: a file's advance is handed to it at most every
# TICK seconds (an update a file, under rich's lock, cost a tenth of a small file's lint).
TICK = 0.05


def wanted(files: int, size: int, machine_output: bool = False) -> bool:
    """Only for a person watching a long run: never in pipes, CI or machine output."""
    if machine_output or os.environ.get("CI") or not sys.stderr.isatty():
        return False
    return files >= MIN_FILES or size >= MIN_BYTES


class Bar:
    """``with Bar(sizes, show, "checking") as bar: ... bar.advance(size)``."""

    def __init__(self, sizes: list[int], show: bool, verb: str) -> None:
        self.total = sum(max(size, 1) for size in sizes)
        self.files = len(sizes)
        self.show = show
        self.verb = verb
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._done = 0
        self._pending = 0  # advanced since the bar was last updated
        self._due = 0.0  # when the next update is due (time.monotonic)

    def __enter__(self) -> Bar:
        if self.show:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                transient=True,
                console=Console(file=sys.stderr),
                # What the run prints meanwhile goes above the bar, on the same terminal;
                # a redirected standard output keeps its bytes (rich would send them here).
                redirect_stdout=sys.stdout.isatty(),
            )
            self._bar.start()
            self._task = self._bar.add_task(self._describe(), total=self.total)
            self._bar.refresh()  # drawn now, not at the first refresh tick
        return self

    def _describe(self) -> str:
        return f"{self.verb} {self._done}/{self.files} files"

    def advance(self, size: int, files: int = 1) -> None:
        if self._bar is not None:
            self._done += files
            self._pending += max(size, files)
            now = time.monotonic()
            if now >= self._due:
                self._due = now + TICK
                self._update()

    def _update(self) -> None:
        assert self._bar is not None and self._task is not None
        self._bar.update(self._task, advance=self._pending, description=self._describe())
        self._pending = 0

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._update()
            self._bar.stop()
