"""Helpers shared by the tests: lint a file or text through the engine, run the CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from transcript_doctor import catalog, engine, plain
from transcript_doctor.checks import Selection
from transcript_doctor.fixer import Outcome
from transcript_doctor.reporters import record

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# The fixture folders these outputs are pinned over; real users' files under fixtures/wild
# have their own pinning test (their findings change with every reader that learns more).
SHIPPED = tuple(f"fixtures/{p.name}" for p in sorted(FIXTURES.iterdir()) if p.is_dir() and p.name != "wild")
# The shared corpus beside the checkout (absent in a clean clone: the tests over it then
# cover the fixtures alone).
SHARED = ROOT.parent / "shared" / "corpus"
SUFFIXES = (".json", ".jsonl", ".ndjson")


@contextmanager
def fed_pipe(path: Path, data: bytes) -> Iterator[Path]:
    """A named pipe at ``path`` that a thread feeds ``data`` 4 KiB at a time while the block
    runs, as a script feeds a path: its size says 0 and its bytes come in pieces."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "wb", buffering=0) as writer:
            for start in range(0, len(data), 4096):
                writer.write(data[start : start + 4096])

    feeding = threading.Thread(target=feed)
    feeding.start()
    try:
        yield path
    finally:
        feeding.join()


def json_files(root: Path) -> list[Path]:
    """Every JSON or JSONL file under ``root``, sorted (none when it is absent)."""
    return sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES) if root.is_dir() else []


def corpus_id(path: Path) -> str:
    """A fixture's or shared corpus file's test id."""
    return path.relative_to(FIXTURES if FIXTURES in path.parents else SHARED.parent).as_posix()


@cache
def _catalog() -> catalog.Catalog:
    return catalog.load()


def lint_bytes(
    name: str, data: bytes, reader: str | None = None, select: tuple[str, ...] = ("ALL",)
) -> engine.FileReport:
    # A reader named here reads the text past its detection (as fix re-reads its own edits):
    # reader tests feed it foreign shapes on purpose.  The CLI's --reader checks the layout.
    options = engine.Options(Selection.build(select), _catalog(), reader, pinned=reader is not None)
    return engine.lint_bytes(name, data, options)


def records(
    path: Path | str, reader: str | None = None, select: tuple[str, ...] = ("ALL",)
) -> list[dict[str, object]]:
    """The ``-o json`` objects for one file."""
    path = Path(path)
    report = lint_bytes(str(path), path.read_bytes(), reader, select)
    assert report.error is None, report.error
    return [record(report, f) for f in report.findings]


def findings(
    path: Path | str, reader: str | None = None, select: tuple[str, ...] = ("ALL",)
) -> list[tuple[str, int, str | None]]:
    """``(rule, line, pointer)`` of every finding: what most tests assert exactly."""
    return [(str(r["rule"]), int(r["line"]), r["pointer"]) for r in records(path, reader, select)]  # type: ignore[arg-type]


def text_findings(name: str, text: str, reader: str | None = None) -> list[tuple[str, int, str | None]]:
    report = lint_bytes(name, text.encode(), reader)
    assert report.error is None, report.error
    return [(f.finding.rule.code, f.origin.line, f.origin.pointer) for f in report.findings]


def detected(path: Path | str) -> str | None:
    from transcript_doctor import readers
    from transcript_doctor.source import NotJson, sniff

    path = Path(path)
    try:
        claim = readers.detect(sniff(str(path), path.read_bytes()))
    except NotJson:
        return None
    return claim[1].reader if claim else None


def detected_bytes(name: str, data: bytes) -> str | None:
    from transcript_doctor import readers
    from transcript_doctor.source import NotJson, sniff

    try:
        claim = readers.detect(sniff(name, data))
    except NotJson:
        return None
    return claim[1].reader if claim else None


def cli(*args: str, stdin: bytes | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run the installed CLI for real: exit codes and streams as a user sees them."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb"}
    return subprocess.run(
        [sys.executable, "-m", "transcript_doctor", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )


def fix(
    path: Path | str, reader: str | None = None, select: tuple[str, ...] = ("ALL",), unsafe: bool = True
) -> Outcome:
    """Fix one file through the engine and check the promises every fix keeps.

    The repaired bytes must lint clean of fixable findings, a second fix must change
    nothing (also when the next run detects the layout itself), and undoing the report's
    steps must give back the original exactly.  ``unsafe``: with ``--unsafe-fixes`` (the
    repair mechanics most tests check); the default-mode tests pass False.
    """
    from transcript_doctor import fixer

    path = Path(path)
    data = path.read_bytes()
    options = engine.Options(
        Selection.build(select), _catalog(), reader, unsafe_fixes=unsafe, pinned=reader is not None
    )
    outcome = fixer.fix_bytes(path.name, data, options)
    assert outcome.error is None, outcome.error
    assert fixer.undo(outcome.after, outcome.steps) == data
    assert_accounted(outcome)
    again = fixer.fix_bytes(path.name, outcome.after, options)
    assert again.after == outcome.after, "a second fix changed the file"
    if reader is None:
        assert detected_bytes(path.name, outcome.after) == detected_bytes(path.name, data)
    left = engine.lint_bytes(
        path.name, outcome.after, plain.replace(options, reader=reader or outcome.reader)
    )
    assert [f.finding.rule.code for f in left.findings if f.fixable] == []
    return outcome


SEPARATORS = re.compile(rb"[\s,\[\]{}:]*")


def assert_accounted(outcome: Outcome) -> None:
    """Every byte a fix removed or wrote belongs to a record its report names (or is
    the JSON punctuation and layout between records)."""
    olds = sorted({e.old for a in outcome.applied for e in a.edits if e.old}, key=len, reverse=True)
    news = sorted({e.new for a in outcome.applied for e in a.edits if e.new}, key=len, reverse=True)
    for step in outcome.steps:
        for side, reported in ((step.old, olds), (step.new, news)):
            rest = side
            for chunk in reported:
                rest = rest.replace(chunk, b"")
            assert SEPARATORS.fullmatch(rest), f"bytes outside the reported records changed: {rest[:80]!r}"
