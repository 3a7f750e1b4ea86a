"""The fix report on disk: the undo record exists before the file it undoes changes.

The report's names are taken (created empty, exclusively) before the first file is
written, so a report path that is a folder, unwritable or missing stops ``fix`` before
it changes anything.  An existing report is never overwritten: the new one goes beside
it (``r.json`` -> ``r.1.json``, ``r.2.json``...) and a note says where, so a hook that
passes the same ``--report`` every time keeps every undo record.  While ``fix`` runs,
each file's entry (the bytes every repair removed and the steps that undo them) is
appended to ``REPORT.journal`` and flushed to disk before that file is replaced; at the
end the report is written from the journal, one entry at a time, and the journal is
removed.  A ``fix`` killed outright leaves the journal: one JSON object a line, an entry
``{"n": N, "file": {...}}`` per file (its ``sha256_before``/``sha256_after`` tell whether
the file on disk is the repaired one) and ``{"n": N, "state": ...}`` once known.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import Any

import orjson

from transcript_doctor import writer

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
REPLACED, NOT_REPLACED = "replaced", "not replaced"


class ReportError(Exception):
    """The report cannot be written where it was asked for; nothing was changed."""


def names(name: str, number: int) -> tuple[str, str, str]:
    """The report, diff and journal names for the ``number``-th report of that name."""
    stem, suffix = os.path.splitext(name)
    if number:
        stem = f"{stem}.{number}"
    report = stem + suffix
    diff = stem + ".diff" if stem + ".diff" != report else report + ".diff"
    return report, diff, report + ".journal"


class ReportFiles:
    """A report being written: its reserved names, its journal and its diff."""

    def __init__(self, folder: str, folder_fd: int, chosen: tuple[str, str, str], fds: list[int]) -> None:
        self.folder = folder
        self.folder_fd = folder_fd
        self.report, self.diff, self.journal = chosen
        self._report_fd, self._diff_fd, self._journal_fd = fds
        self._count = 0
        self._pending: set[int] = set()  # entries of files whose change is not yet done

    @property
    def path(self) -> str:
        return os.path.join(self.folder, self.report)

    def inodes(self) -> list[tuple[int, int]]:
        """The reserved files, which no repaired copy may replace."""
        return [
            (i.st_dev, i.st_ino) for i in map(os.fstat, (self._report_fd, self._diff_fd, self._journal_fd))
        ]

    @classmethod
    def reserve(cls, wanted: str) -> ReportFiles:
        """Take the report's names beside ``wanted`` (numbered if it exists)."""
        folder, name = os.path.split(wanted)  # folder "" stays "": names are shown as given
        if not name or name in (".", ".."):
            raise ReportError(f"cannot write the report {wanted}: not a file name")
        try:
            if stat.S_ISDIR(os.stat(wanted).st_mode):
                raise ReportError(f"cannot write the report {wanted}: it is a folder")
        except OSError:
            pass
        try:
            folder_fd = os.open(folder or ".", os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        except OSError as exc:
            raise ReportError(f"cannot write the report {wanted}: {exc.strerror}") from None
        try:
            for number in range(1000):
                chosen = names(name, number)
                if any(_exists(folder_fd, n) for n in chosen):
                    continue
                fds: list[int] = []
                try:
                    for n in chosen:
                        fds.append(os.open(n, _CREATE, 0o644, dir_fd=folder_fd))
                except FileExistsError:
                    _drop(folder_fd, chosen[: len(fds)], fds)
                    continue
                except OSError as exc:
                    _drop(folder_fd, chosen[: len(fds)], fds)
                    raise ReportError(f"cannot write the report {wanted}: {exc.strerror}") from None
                files = cls(folder, folder_fd, chosen, fds)
                files._line({"journal": "transcript-doctor fix", "report": chosen[0]}, durable=True)
                return files
        except BaseException:
            os.close(folder_fd)
            raise
        os.close(folder_fd)
        raise ReportError(f"cannot write the report {wanted}: 1000 reports of that name exist")

    def add(self, entry: dict[str, Any], durable: bool, pending: bool = False) -> int:
        """Journal a file's entry; ``durable`` flushes it to disk (before a replace).  A
        ``pending`` entry reaches the report only once settled as replaced."""
        number = self._count
        self._line({"n": number, "file": portable(entry)}, durable)
        self._count += 1
        if pending:
            self._pending.add(number)
        return number

    def settle(self, number: int, state: str) -> None:
        self._line({"n": number, "state": state}, durable=False)
        if state == REPLACED:
            self._pending.discard(number)

    def add_diff(self, text: str) -> None:
        writer.write_all(self._diff_fd, text.encode("utf-8", "surrogateescape"))

    def finish(self, tool: str) -> None:
        """Write the report from the journal, then drop the journal."""
        os.fsync(self._journal_fd)
        os.fsync(self._diff_fd)
        dropped = self._pending
        temp, fd = writer.create_temp(self.folder_fd, self.report, "tmp", 0o644)
        try:
            writer.write_all(fd, b'{\n  "tool": ' + orjson.dumps(tool) + b',\n  "files": [')
            first = True
            for number, entry in self._entries():
                if number in dropped:
                    continue
                body = orjson.dumps(entry, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    ")
                writer.write_all(fd, (b"\n    " if first else b",\n    ") + body)
                first = False
            writer.write_all(fd, b"]\n}\n" if first else b"\n  ]\n}\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, self.report, src_dir_fd=self.folder_fd, dst_dir_fd=self.folder_fd)
        with contextlib.suppress(OSError):
            os.fsync(self.folder_fd)
        os.unlink(self.journal, dir_fd=self.folder_fd)
        self.close()

    def close(self) -> None:
        for fd in (self._report_fd, self._diff_fd, self._journal_fd, self.folder_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._report_fd = self._diff_fd = self._journal_fd = self.folder_fd = -1

    def _line(self, value: dict[str, Any], durable: bool) -> None:
        writer.write_all(self._journal_fd, orjson.dumps(value) + b"\n")
        if durable:
            os.fsync(self._journal_fd)

    def _lines(self) -> Iterator[bytes]:
        fd = os.open(self.journal, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=self.folder_fd)
        with open(fd, "rb") as handle:
            yield from handle

    def _entries(self) -> Iterator[tuple[int, Any]]:
        for line in self._lines():
            if line.startswith(b'{"n":') and b',"file":' in line[:40] and line.endswith(b"\n"):
                value = orjson.loads(line)
                yield value["n"], value["file"]


def portable(value: Any) -> Any:
    """``value`` with every string JSON can carry: a file name that is not UTF-8 is kept
    as ``path_base64`` (its exact bytes) beside a readable ``path``; lone surrogates in
    messages are spelled out as ``\\udXXX``."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "path" and isinstance(item, str) and not _utf8(item):
                out[key] = _readable(item)
                out["path_base64"] = base64.b64encode(os.fsencode(item)).decode("ascii")
            else:
                out[key] = portable(item)
        return out
    if isinstance(value, list):
        return [portable(item) for item in value]
    if isinstance(value, str) and not _utf8(value):
        return _readable(value)
    return value


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _readable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _exists(folder_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError as exc:
        return exc.errno != errno.ENOENT
    return True


def _drop(folder_fd: int, created: tuple[str, ...], fds: list[int]) -> None:
    for name, fd in zip(created, fds, strict=False):
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=folder_fd)
