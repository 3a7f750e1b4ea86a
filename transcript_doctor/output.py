"""Where a report goes (``--output-file``) and whether it is coloured (``--color``)."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

ANSI = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


class OutputError(Exception):
    """The output file cannot be written: one line naming it."""


@contextmanager
def stream(path: Path | None) -> Iterator[TextIO]:
    """Standard output, or ``path`` written whole when the run ends (folders created, as
    ruff does); an unwritable file is an error before any linting happens elsewhere."""
    if path is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    from io import StringIO

    buffer = StringIO()
    yield buffer
    try:
        if path.parent != Path():
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(buffer.getvalue(), encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise OutputError(f"cannot write the output file {path}: {exc.strerror}") from None


class Current(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` as it is at each write, not as it was when taken."""

    def __init__(self, name: str) -> None:
        self.name = name

    def write(self, text: str) -> int:
        stream: TextIO = getattr(sys, self.name)
        return stream.write(text)

    def flush(self) -> None:
        getattr(sys, self.name).flush()


def wanted(choice: str, out: TextIO) -> bool:
    """``--color``: ``always``, ``never``, or ``auto``: a terminal, unless ``NO_COLOR`` is
    set (or ``FORCE_COLOR`` asks for colour anyway), as https://no-color.org describes."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(out, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"


def paint(text: str, *styles: str, on: bool = True) -> str:
    """ANSI styles around ``text`` (the plain formats colour without importing rich)."""
    if not on or not styles:
        return text
    codes = ";".join(ANSI[style] for style in styles)
    return f"\x1b[{codes}m{text}\x1b[0m"


def diff(text: str, on: bool) -> str:
    """A unified diff with git's colours: headers bold, hunks cyan, removals red, additions green."""
    if not on:
        return text
    lines = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        end = line[len(body) :]
        if line.startswith(("--- ", "+++ ")):
            lines.append(paint(body, "bold") + end)
        elif line.startswith("@@"):
            lines.append(paint(body, "cyan") + end)
        elif line.startswith("-"):
            lines.append(paint(body, "red") + end)
        elif line.startswith("+"):
            lines.append(paint(body, "green") + end)
        else:
            lines.append(line)
    return "".join(lines)
