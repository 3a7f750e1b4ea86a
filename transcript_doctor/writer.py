"""Writing a repaired file: atomically, never losing a byte someone else wrote.

``--in-place``: the repair is written to a temp file beside the original, flushed, given
the original's owner, mode, ACLs and extended attributes, and renamed over it; before
the rename the original is opened again and checked to be what was read, nobody may
hold it open for writing (``holders``), and the caller's undo record is written.  The
descriptor kept on the original sees every byte written to it after the rename: if it
grew, or someone began opening it for writing, the original (a second name kept for
that moment) is put back, appended bytes and all.  On any failure the temp file is
removed and the original is left as it was (conventions.md section 6).  SIGINT and
SIGTERM wait while the names are being swapped.

``--out``: each copy is written under OUT through descriptors, one folder at a time,
never following a symbolic link below OUT.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import signal
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from transcript_doctor import holders, metadata, tempnames

_CHUNK = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

# Test hooks: called with a point's name ("before-rename", "after-rename") while a file is
# being replaced, so that tests can race a writer against exact moments.
HOOK: Callable[[str, str], None] | None = None


class WriteRefused(Exception):
    """The file could not be replaced safely; the message says why, the original is intact."""


@dataclass(slots=True)
class Original:
    """A file as it was read for an in-place repair: replaced only if it still is."""

    path: str  # as named
    target: str  # the file itself (a symlink's target: the link is kept)
    info: os.stat_result
    sha256: bytes

    @classmethod
    def read(cls, path: str) -> tuple[Original, bytes]:
        target = os.path.realpath(path)
        fd = os.open(target, os.O_RDONLY | _CLOEXEC)
        try:
            with open(fd, "rb", closefd=False) as handle:
                data = handle.read()
            info = os.fstat(fd)
        finally:
            os.close(fd)
        return cls(path, target, info, hashlib.sha256(data).digest()), data


class _Kept:
    """Our descriptor on the original during the replace (see ``holders.exclusive``)."""

    def __init__(self, original: Original, folder_fd: int, name: str) -> None:
        self.original = original
        self.folder_fd = folder_fd
        self.name = name
        self.fd = -1
        self.reopen()

    def reopen(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self.fd = os.open(self.name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=self.folder_fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def replace(
    original: Original,
    data: bytes,
    before: Callable[[], None] = lambda: None,
    after: Callable[[], None] = lambda: None,
) -> None:
    """Atomically replace ``original.target`` with ``data``; ``before`` runs (the undo
    record is written) once nothing can stop the replace but a crash, and ``after`` (the
    record says the file was replaced) before an interrupt held during the swap arrives."""
    target = original.target
    info = original.info
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused(f"{target} is not a regular file; not replaced")
    folder, name = os.path.split(target)
    if info.st_nlink > 1:
        left = _leftover_name(folder, info)
        if left is not None:
            raise WriteRefused(
                f"{target} has a second name, {left}, left by an interrupted fix; "
                "remove that and run fix again"
            )
        raise WriteRefused(f"{target} has other hard links; replacing it would split them")
    try:
        folder_fd = os.open(folder or ".", os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise WriteRefused(f"cannot write beside {target}: {exc.strerror}") from None
    temp: str | None = None
    kept: _Kept | None = None
    try:
        try:
            temp, temp_fd = create_temp(folder_fd, name, "tmp", 0o600)
        except OSError as exc:
            raise WriteRefused(f"cannot write beside {target}: {exc.strerror}") from None
        try:
            write_all(temp_fd, data)
            kept = _Kept(original, folder_fd, name)
            metadata.copy(kept.fd, info, temp_fd, target)
            os.fsync(temp_fd)
            lease = holders.exclusive(kept)
            try:
                _check_unchanged(kept, target)
                before()
                renaming, temp = temp, None
                trouble = _swap(kept, lease, folder_fd, renaming, temp_fd, len(data), target, after)
            finally:
                lease.release()  # before our own open below, which would wait for it
            if trouble is not None:
                message, late = trouble
                if late:
                    _append(folder_fd, name, late)
                raise WriteRefused(message)
        finally:
            os.close(temp_fd)
    except holders.Busy as exc:
        raise WriteRefused(f"{target} is open in another process: {exc}; not replaced") from None
    except metadata.NotKept as exc:
        raise WriteRefused(f"{exc}; not replaced") from None
    except OSError as exc:
        raise WriteRefused(f"cannot replace {target}: {exc.strerror}") from None
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder_fd)
        if kept is not None:
            kept.close()
        os.close(folder_fd)


def replace_pair(
    first: Original,
    first_before: bytes,
    first_data: bytes,
    second: Original,
    second_data: bytes,
    before: Callable[[], None] = lambda: None,
    after: Callable[[], None] = lambda: None,
) -> None:
    """Replace two files that must agree, each atomically, ``first`` then ``second``:
    two renames are never one step, so the caller picks the order whose halfway state is
    safe (fixing.py: a layout's companion file first).  ``before`` runs before the first
    rename, ``after`` after the second.  If ``second`` cannot be replaced, ``first`` is
    put back as it was (``first_before``), unless someone changed it meanwhile."""
    replace(first, first_data, before)
    try:
        replace(second, second_data, after=after)
    except WriteRefused as exc:
        try:
            now, data = Original.read(first.path)
            if data != first_data:
                raise WriteRefused(f"{first.target} changed meanwhile")
            replace(now, first_before)
        except (WriteRefused, OSError) as back:
            why = back if isinstance(back, WriteRefused) else back.strerror
            raise WriteRefused(
                f"{exc}; {first.target} was already replaced and not put back ({why}): run fix again"
            ) from None
        raise WriteRefused(f"{exc}; {first.target} put back as it was") from None


def _leftover_name(folder: str, info: os.stat_result) -> str | None:
    """A ``.NAME.XXXXXXXX.old`` beside the file that is the file itself (a fix killed
    during its swap left it)."""
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return None
    for other in names:
        if other.endswith(".old") and tempnames.is_temp(other):
            with contextlib.suppress(OSError):
                found = os.stat(os.path.join(folder, other), follow_symlinks=False)
                if (found.st_dev, found.st_ino) == (info.st_dev, info.st_ino):
                    return os.path.join(folder, other)
    return None


def _check_unchanged(kept: _Kept, target: str) -> None:
    original = kept.original
    now = os.fstat(kept.fd)
    same = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) == (
        original.info.st_dev,
        original.info.st_ino,
        original.info.st_size,
        original.info.st_mtime_ns,
    )
    if not same or _digest(kept.fd) != original.sha256:
        raise WriteRefused(f"{target} changed while it was being fixed; not replaced")


def _swap(
    kept: _Kept,
    lease: holders.Lease | holders.NoLease,
    folder_fd: int,
    temp: str,
    temp_fd: int,
    written: int,
    target: str,
    after: Callable[[], None],
) -> tuple[str, bytes] | None:
    """Rename the repair over the original, then make sure nobody wrote to the original
    meanwhile.  If someone did, the original (appended bytes and all) is put back, and
    the refusal comes back with the bytes written to the repair in the meantime."""
    name = kept.name
    with _signals_held():
        backup: str | None = None
        try:
            with contextlib.suppress(OSError):
                backup = _link(folder_fd, name)  # no hard links here: a restore copies
            _hook("before-rename", target)
            os.replace(temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder_fd)
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup, dir_fd=folder_fd)
            raise
        try:
            _sync(folder_fd)
            _hook("after-rename", target)
            now = os.fstat(kept.fd)
            grown = now.st_size - kept.original.info.st_size
            opened = lease.opened_for_writing()
            if not grown and now.st_mtime_ns == kept.original.info.st_mtime_ns and not opened:
                after()
                return None
            _restore(kept, folder_fd, backup)
            backup = None
            late = os.pread(temp_fd, max(os.fstat(temp_fd).st_size - written, 0), written)
            what = (
                f"{grown} byte(s) were appended to it"
                if grown > 0
                else "another process opened it for writing"
                if opened
                else "another process wrote to it"
            )
            return (
                f"{target}: {what} while it was being replaced; put back as it was, "
                "with everything written to it, and not fixed (run fix again)",
                late,
            )
        finally:
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup, dir_fd=folder_fd)


def _restore(kept: _Kept, folder_fd: int, backup: str | None) -> None:
    """Put the original inode back under its name, or where there was no second name for
    it, a copy of everything it holds now."""
    name = kept.name
    if backup is not None:
        os.replace(backup, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    else:
        copy, copy_fd = create_temp(folder_fd, name, "tmp", 0o600)
        try:
            offset = 0
            while chunk := os.pread(kept.fd, _CHUNK, offset):
                write_all(copy_fd, chunk)
                offset += len(chunk)
            metadata.copy(kept.fd, os.fstat(kept.fd), copy_fd, name)
            os.fsync(copy_fd)
            os.replace(copy, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(copy, dir_fd=folder_fd)
            raise
        finally:
            os.close(copy_fd)
    _sync(folder_fd)


def _append(folder_fd: int, name: str, late: bytes) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_APPEND | _NOFOLLOW | _CLOEXEC, dir_fd=folder_fd)
    try:
        write_all(fd, late)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_copy(
    out: str, parts: tuple[str, ...], data: bytes, taken: dict[tuple[int, int], str], label: str
) -> str:
    """Write a repaired copy at ``out``/``parts`` (``--out``), atomically, without following
    any symbolic link below ``out``.  ``taken`` names the files this run must not
    overwrite (its inputs, the copies it wrote: two names can be one file on a
    case-insensitive file system); the new copy joins them as ``label``."""
    where = os.path.join(out, *parts)
    os.makedirs(out, exist_ok=True)
    folder_fd = os.open(out, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for depth, part in enumerate(parts[:-1]):
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=folder_fd)
            try:
                inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=folder_fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    below = os.path.join(out, *parts[: depth + 1])
                    raise WriteRefused(
                        f"{below} is not a folder (a symbolic link is never followed under --out); {where} not written"
                    ) from None
                raise
            os.close(folder_fd)
            folder_fd = inner
        name = parts[-1]
        try:
            existing = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None:
            if not stat.S_ISREG(existing.st_mode):
                raise WriteRefused(f"{where} exists and is not a regular file; not written")
            if (existing.st_dev, existing.st_ino) in taken:
                what = taken[(existing.st_dev, existing.st_ino)]
                raise WriteRefused(f"{where} is {what}; not overwritten")
        info = _replace_new(folder_fd, name, data)
        taken[(info.st_dev, info.st_ino)] = label
        _sync(folder_fd)
    finally:
        os.close(folder_fd)
    return where


def write_new(path: str, data: bytes) -> None:
    """Write a file of the tool's own (a baseline) atomically: a crash leaves no half file."""
    folder, name = os.path.split(path)
    os.makedirs(folder or ".", exist_ok=True)
    folder_fd = os.open(folder or ".", os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        _replace_new(folder_fd, name, data)
        _sync(folder_fd)
    finally:
        os.close(folder_fd)


def _replace_new(folder_fd: int, name: str, data: bytes) -> os.stat_result:
    """Write ``data`` to a temp file beside ``name`` (the umask applies, as for any new
    file), fsync it and rename it over ``name``: a crash leaves the old file or the new
    one, never half of it, and no temp file."""
    temp, temp_fd = create_temp(folder_fd, name, "tmp", 0o644)
    try:
        try:
            write_all(temp_fd, data)
            os.fsync(temp_fd)
            info = os.fstat(temp_fd)
        finally:
            os.close(temp_fd)
        os.replace(temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder_fd)
        raise
    return info


def create_temp(folder_fd: int, name: str, kind: str, mode: int) -> tuple[str, int]:
    """A new file beside ``name`` under one of the tool's own temp names (never an
    existing file's: the walker skips these names and a user's files keep theirs)."""
    limit = tempnames.name_limit(folder_fd)
    for _ in range(100):
        temp = tempnames.make(name, kind, limit)
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC  # read back: _swap
            return temp, os.open(temp, flags, mode, dir_fd=folder_fd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def _link(folder_fd: int, name: str) -> str:
    limit = tempnames.name_limit(folder_fd)
    for _ in range(100):
        backup = tempnames.make(name, "old", limit)
        try:
            os.link(name, backup, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
            return backup
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[: 1 << 30]) :]


def _digest(fd: int) -> bytes:
    digest = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, _CHUNK, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.digest()


def _sync(folder_fd: int) -> None:
    try:
        os.fsync(folder_fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise


def _hook(point: str, target: str) -> None:
    if HOOK is not None:
        HOOK(point, target)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM arrive after the names are swapped (and checked), not between."""
    held = {signal.SIGINT, signal.SIGTERM}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
