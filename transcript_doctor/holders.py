"""Who else has a file open, so that ``fix --in-place`` never replaces a file under a writer.

A writer that keeps its file open (Codex keeps its rollout open with ``O_APPEND``) goes
on writing into the old inode after a rename: its records would vanish from the file at
the path.  On Linux a write lease (``fcntl F_SETLEASE``) is granted only while no other
descriptor is open on the file, and while it is held every open of the file waits for
the holder and tells it: taking one proves there is no writer, and keeps new ones out
until the replace is done.  Where a lease cannot be taken (not Linux, a file system
without leases, a file of another user without ``CAP_LEASE``), ``/proc/*/fd`` is read
instead; it shows only the processes this user may inspect.  Where neither exists
(macOS, Windows) the platform cannot tell, and only the size check after the rename
(``writer``) guards the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Protocol

try:
    import fcntl

    F_SETLEASE: int | None = getattr(fcntl, "F_SETLEASE", 1024)
    F_GETLEASE: int | None = getattr(fcntl, "F_GETLEASE", 1025)
except ImportError:  # Windows
    F_SETLEASE = F_GETLEASE = None

_LINUX = sys.platform.startswith("linux")
_RDLCK, _WRLCK, _UNLCK = 0, 1, 2  # fcntl.F_RDLCK etc. on Linux
ATTEMPTS = 12  # a writer that opens, appends and closes holds the file for microseconds


class Busy(Exception):
    """Another process has the file open; the message names it."""


@dataclass(frozen=True, slots=True)
class Holder:
    pid: int
    command: str
    writes: bool

    def __str__(self) -> str:
        how = "for writing" if self.writes else "for reading"
        return f"process {self.pid} ({self.command}) has it open {how}"


class Lease:
    """A held write lease: while held, nobody else opens the file without our knowing."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def opened_for_writing(self) -> bool:
        """Whether someone began opening the file for writing (or truncating it) since the
        lease was taken: their open waits for us and then writes into this inode.  An open
        for reading only downgrades the lease, which is harmless."""
        assert F_GETLEASE is not None
        try:
            return bool(fcntl.fcntl(self.fd, F_GETLEASE) == _UNLCK)
        except OSError:
            return True

    def release(self) -> None:
        assert F_SETLEASE is not None
        with contextlib.suppress(OSError):
            fcntl.fcntl(self.fd, F_SETLEASE, _UNLCK)


class NoLease:
    """No lease could be had; no other holder was seen."""

    def opened_for_writing(self) -> bool:
        return False

    def release(self) -> None:
        pass


class Reopenable(Protocol):
    """Our own descriptor on the file, which can be closed and opened again."""

    fd: int

    def reopen(self) -> None: ...


def exclusive(handle: Reopenable) -> Lease | NoLease:
    """A lease on the file ``reopen`` opens, or proof (as far as the platform shows) that no
    other process has it open for writing.  Raises :class:`Busy` naming the holders.

    ``handle.reopen`` closes and opens our own descriptor again between attempts: two ``fix``
    runs on one file would otherwise each hold a descriptor and keep the other's lease
    from ever being granted."""
    if F_SETLEASE is None or not _LINUX or threading.current_thread() is not threading.main_thread():
        return _scanned(handle.fd)
    _catch_lease_breaks()
    for attempt in range(ATTEMPTS):
        try:
            fcntl.fcntl(handle.fd, F_SETLEASE, _WRLCK)
            return Lease(handle.fd)
        except OSError as exc:
            if exc.errno != errno.EAGAIN:
                return _scanned(handle.fd)  # no leases here (EINVAL, ENOLCK) or not ours (EACCES)
        if attempt == ATTEMPTS // 2:
            holders = scan(handle.fd)
            if any(h.writes for h in holders):
                raise Busy(_named(holders))
            if holders:
                return NoLease()  # readers only: they cannot lose anything
        time.sleep(random.uniform(0.005, 0.04) * (1 + attempt // 4))
        handle.reopen()
    holders = scan(handle.fd)
    if not holders or any(h.writes for h in holders):
        raise Busy(_named(holders) or "another process has it open (one this user cannot inspect)")
    return NoLease()


def _scanned(fd: int) -> NoLease:
    holders = [h for h in scan(fd) if h.writes]
    if holders:
        raise Busy(_named(holders))
    return NoLease()


def _named(holders: list[Holder]) -> str:
    return "; ".join(str(h) for h in holders[:3]) + (
        f" (and {len(holders) - 3} more)" if len(holders) > 3 else ""
    )


def scan(fd: int) -> list[Holder]:
    """Other processes with the file of ``fd`` open, as far as ``/proc`` shows them."""
    try:
        info = os.fstat(fd)
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    me = os.getpid()
    found: list[Holder] = []
    for pid in pids:
        if int(pid) == me:
            continue
        folder = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:
            continue
        writes: bool | None = None
        for number in fds:
            try:
                other = os.stat(f"{folder}/{number}")
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                writes = bool(writes) or _writes(pid, number)
        if writes is not None:
            found.append(Holder(int(pid), _command(pid), writes))
    return found


def _writes(pid: str, number: str) -> bool:
    try:
        with open(f"/proc/{pid}/fdinfo/{number}", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & os.O_ACCMODE != os.O_RDONLY
    except (OSError, ValueError, IndexError):
        pass
    return True  # unknown: assume the worst


def _command(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="backslashreplace") as handle:
            return handle.read().strip() or "?"
    except OSError:
        return "?"


_installed = False


def _catch_lease_breaks() -> None:
    """A lease break is signalled with SIGIO, whose default action ends the process; the
    lease's state is read with F_GETLEASE instead, so the signal itself is ignored."""
    global _installed
    if not _installed:
        with contextlib.suppress(ValueError, OSError, AttributeError):
            signal.signal(signal.SIGIO, signal.SIG_IGN)
            _installed = True
