"""Writing a repaired file: atomically, never touching anything else.

The original is replaced only by a complete, flushed copy written beside it, after
checking that nobody changed it since it was read; on any failure the temp file is
removed and the original is left as it was (conventions.md §6).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from dataclasses import dataclass


class WriteRefused(Exception):
    """The file could not be replaced safely; the message says why, the original is intact."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a file was when it was read: replaced only if it still is."""

    target: str
    ino: int
    size: int
    mtime_ns: int
    mode: int

    @classmethod
    def take(cls, path: str) -> Snapshot:
        target = os.path.realpath(path)  # replace the link's target, keep the link
        info = os.stat(target)
        return cls(target, info.st_ino, info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode))

    def unchanged(self) -> bool:
        try:
            info = os.stat(self.target)
        except OSError:
            return False
        return (info.st_ino, info.st_size, info.st_mtime_ns) == (self.ino, self.size, self.mtime_ns)


def replace(snapshot: Snapshot, data: bytes, original: bytes) -> None:
    """Atomically replace ``snapshot.target`` with ``data``."""
    target = snapshot.target
    folder = os.path.dirname(target) or "."
    if os.stat(target).st_nlink > 1:
        raise WriteRefused(f"{target} has other hard links; replacing it would split them")
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
    except OSError as exc:
        raise WriteRefused(f"cannot write beside {target}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, snapshot.mode)
        if not snapshot.unchanged() or _read(target) != original:
            raise WriteRefused(f"{target} changed while it was being fixed; not replaced")
        os.replace(temp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise WriteRefused(f"cannot replace {target}: {exc.strerror}") from None
        raise
    _sync_folder(folder)


def write_new(path: str, data: bytes) -> None:
    """Write a repaired copy (``--out``): also atomic, so a crash leaves no half file."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o644 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _sync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)
