"""``formats PATH``: which reader claims each file and why, as ``lint`` decides it.

A reader forced by ``--reader`` or a ``readers`` glob is explained the way ``lint`` treats
it: it reads the file only where its own detection claims the layout, else TD002.
"""

from __future__ import annotations

import sys
from pathlib import Path

from transcript_doctor import dblint, engine, prescreen, readers, treelint, walk
from transcript_doctor.checks import unknown_layout
from transcript_doctor.safetext import printable
from transcript_doctor.source import Container, NotJson, sniff


def run(paths: list[str], options: engine.Options) -> int:
    """Print one line per file; returns the exit status (2 when a path cannot be read)."""
    failed = False
    for target in walk.expand(paths):
        if isinstance(target, OSError):
            _error(f"cannot read {printable(str(target.filename))}: {target.strerror}")
            failed = True
            continue
        # A storage folder of JSON files, or an SQLite store (asked through SQLite).
        database = treelint.explain(target.path, options) or dblint.explain(target.path, options)
        if database is not None:
            print(f"{printable(target.path)}: {printable(database)}")
            continue
        try:
            data = sys.stdin.buffer.read() if target.path == "-" else Path(target.path).read_bytes()
        except OSError as exc:
            _error(f"cannot read {printable(target.path)}: {exc.strerror}")
            failed = True
            continue
        print(f"{printable(target.path)}: {printable(explain(target.path, data, options))}")
    return 2 if failed else 0


def explain(path: str, data: bytes, options: engine.Options) -> str:
    options = options.for_path(path)
    why = prescreen.not_a_transcript(path, data) if options.reader is None else None
    if why is not None:
        return f"not a transcript ({why})"
    try:
        source = sniff(path, data)
    except NotJson as exc:
        return f"not a transcript ({exc})"
    choice, _companion = engine.choose(source, options)
    if isinstance(choice, engine.Mismatch):
        return unknown_layout.mismatch(options.forced_by, choice.forced, choice.claimed_by).message
    if source.container is Container.JSON and source.value is None:
        return "not valid JSON (TD001 where it looks like a conversation)"
    detection = readers.claim(choice, source) if choice is not None else None
    if detection is None:
        claim = readers.detect(source)  # a companion file, or nothing
        if claim is None:
            return "no reader recognises it"
        detection = claim[1]
    what = detection.reader if detection.transcript else f"{detection.reader}, skipped"
    forced = f", forced by {options.forced_by}" if options.reader is not None else ""
    return f"{what}{forced} ({detection.reason})"


def _error(message: str) -> None:
    sys.stderr.write(f"transcript-doctor: {message}\n")
