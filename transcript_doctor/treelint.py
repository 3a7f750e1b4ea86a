"""Lint a session store kept as a folder of JSON files (treesource.py): its sessions as
conversations, through the engine's rules, reported under the folder's path.

``linting`` and ``api`` call :func:`check` for every path first; a path that names no
storage unit costs a suffix test (and a folder test for paths without ``.json``).
"""

from __future__ import annotations

from transcript_doctor import engine, plain, readers
from transcript_doctor.engine import FileReport, Options
from transcript_doctor.model import Origin
from transcript_doctor.readers.base import Reader
from transcript_doctor.transcript import Transcript
from transcript_doctor.treesource import TreeSource, Unit, unit


def tree_readers() -> list[Reader]:
    return [r for r in readers.all_readers() if r.reads_trees]


def member_note(found: Unit) -> str:
    return f"part of the OpenCode storage folder {found.root} (lint that folder)"


def check(path: str, options: Options, fingerprints: bool = False) -> FileReport | None:
    """Lint ``path`` if it names a storage unit; None: another path reads it."""
    found = unit(path)
    if found is None:
        return None
    if found.kind == "member":
        return FileReport(path, skipped=member_note(found))
    try:
        report = inspect(found, options, path)[0]
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        return FileReport(path, error=f"internal error while checking {path}: {exc!r}")
    if fingerprints:
        engine.fingerprint_ids(report.findings, b"tree")
    return report


def inspect(
    found: Unit, options: Options, path: str | None = None, overrides: dict[str, bytes] | None = None
) -> tuple[FileReport, Transcript | None]:
    """Lint the unit (the whole folder, or one session of it) as ``path`` (default: the
    root); ``overrides`` replaces some files' bytes (``fix`` verifies before writing)."""
    shown = path or found.root
    options = options.for_path(shown)
    chosen = next(
        (
            r
            for r in tree_readers()
            if options.reader in (None, r.name) and r.detect_tree(found.root) is not None
        ),
        None,
    )
    if chosen is None:
        return FileReport(shown, skipped=f"a storage folder the reader {options.reader} does not read"), None
    source = TreeSource(found.root, overrides)
    source.path = shown
    sessions = None if found.session is None else [found.session]
    with engine._no_gc():
        transcript = Transcript(chosen, source, chosen.read_tree(source, sessions))
        located = engine.run(transcript, plain.replace(options, with_edits=False))
    for item in located:  # files of a folder have no line of the folder: 0 everywhere
        item.origin = Origin(0, item.origin.record, item.origin.pointer)
    located.sort(key=lambda f: (f.origin.record, f.finding.rule.code, f.origin.pointer or ""))
    return FileReport(shown, chosen.name, located), transcript


def explain(path: str, options: Options) -> str | None:
    """``formats``: which reader claims a storage unit and why (None: not one)."""
    found = unit(path)
    if found is None:
        return None
    if found.kind == "member":
        return f"{member_note(found)}, skipped"
    options = options.for_path(path)
    for reader in tree_readers():
        if options.reader in (None, reader.name):
            claim = reader.detect_tree(found.root)
            if claim is not None:
                what = f"session {found.session} of " if found.session else ""
                return f"{claim.reader} ({what}{claim.reason})"
    return f"not a transcript (a storage folder the reader {options.reader} does not read)"
