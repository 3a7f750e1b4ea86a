"""SIGTERM treated like Ctrl-C while ``fix`` runs, so that both clean up after themselves.

Python turns SIGINT into ``KeyboardInterrupt``, which unwinds through the writer's
clean-up (the temp file goes) and lets ``fix`` finish the report of the files it did;
SIGTERM's default action ends the process on the spot, leaving the temp file behind.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived."""


def status(interrupt: KeyboardInterrupt) -> int:
    """The exit status a shell expects after the signal: 128 + its number."""
    return 128 + (signal.SIGTERM if isinstance(interrupt, Terminated) else signal.SIGINT)


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextlib.contextmanager
def handled() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
