"""Expectations as data: one test for every vendor's fixtures.

Each fixture folder's expectations (``tests/expectations/<folder>.json``, kept out of the
folder so that the fixtures stay what the vendors wrote) say, per file the CLI would lint, which reader
claims it, its exact findings (``"LINE CODE CLASS"``, the class being the repair's
applicability or ``-``), and the exact bytes ``fix`` writes by default and with
``--unsafe-fixes``, as unified diffs, one line per item (``[]``: unchanged).  Fixing the fixed bytes again
must change nothing, undoing the report's steps must give the original back, every
changed byte must belong to a reported record, and no repair may be left.  A new reader adds its fixtures and their expectations, not a copy
of this test (start the file as ``{}``).  ``TD_UPDATE_EXPECTATIONS=1 pytest tests/test_expectations.py`` rewrites the files
from what the code does now: read their diff before committing it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import FIXTURES, ROOT, assert_accounted, detected_bytes

import transcript_doctor as td
from transcript_doctor import api, dbfix, dblint, engine, fixer, treefix, treelint, treesource, walk

EXPECTATIONS = ROOT / "tests" / "expectations"
PROSE = frozenset({".md", ".txt"})  # provenance notes beside the fixtures
FOLDERS = sorted(FIXTURES / path.stem for path in EXPECTATIONS.glob("*.json"))
UPDATE = os.environ.get("TD_UPDATE_EXPECTATIONS") == "1"


def _files(folder: Path) -> list[Path]:
    """What ``transcript-doctor lint FOLDER`` reads there (its own excludes apply)."""
    options = api.settings(None, (), None, None)
    found = []
    for target in walk.expand([str(folder)], options.excluded):
        assert not isinstance(target, OSError), target
        path = Path(target.path)
        if path.suffix not in PROSE:
            found.append(path)
    return sorted(found)


def _diff(path: Path, before: bytes, after: bytes) -> list[str]:
    old = before.decode("utf-8", "backslashreplace").split("\n")
    new = after.decode("utf-8", "backslashreplace").split("\n")
    return list(difflib.unified_diff(old, new, path.name, path.name + " (fixed)", n=1, lineterm=""))


def observe(path: Path) -> dict[str, Any]:
    if treefix.claims(str(path)):
        return observe_tree(path)
    if dbfix.claims(str(path)):
        return observe_database(path)
    data = path.read_bytes()
    report = engine.lint_bytes(str(path), data, api.settings(None, (), None, None))
    entry: dict[str, Any] = {"reader": report.reader}
    if report.skipped is not None:
        entry["skipped"] = report.skipped
    if report.error is not None:
        entry["error"] = report.error
        return entry
    entry["findings"] = [f"{f.line} {f.rule} {f.fix_applicability or '-'}" for f in api.findings(report)]
    if report.skipped is None:
        for key, unsafe in (("fix", False), ("unsafe_fix", True)):
            fixed, companion = _fix(path, data, unsafe)
            again, _ = _fix(path, fixed.data, unsafe)
            assert again.data == fixed.data, f"{path}: a second fix changed the file"
            _keeps_its_promises(path, data, fixed, again)
            entry[key] = _diff(path, data, fixed.data)
            if companion is not None and companion.changed:  # the file a layout keeps in step
                name = Path(companion.path)
                assert fixer.undo(companion.after, list(companion.steps)) == companion.before, name
                entry[key] += _diff(name, companion.before, companion.after)
    return entry


def _fix(path: Path, data: bytes, unsafe: bool) -> tuple[td.FixResult, fixer.Companion | None]:
    """``fix`` of the named file as the CLI makes it: with the companion file beside it
    that its layout rewrites with it (readers/base.py ``Repair.companion``)."""
    options = api.with_unsafe(api.settings(None, (), None, None), unsafe)
    outcome = api.fix_outcome(str(path), data, options, fixer.read_companion)
    return api.fixed(outcome), outcome.companion


def observe_database(path: Path) -> dict[str, Any]:
    """An SQLite store: its findings and the row changes ``fix --diff`` shows (dbfix)."""
    options = api.settings(None, (), None, None)
    report = dblint.check(str(path), options)
    assert report is not None
    entry: dict[str, Any] = {"reader": report.reader}
    if report.skipped is not None:
        entry["skipped"] = report.skipped
        return entry
    entry["findings"] = [f"{f.line} {f.rule} {f.fix_applicability or '-'}" for f in api.findings(report)]
    for key, unsafe in (("fix", False), ("unsafe_fix", True)):
        planned = dbfix.preview(str(path), api.with_unsafe(options, unsafe))
        changes = [c for s in planned.sessions if s.rolled_back is None for c in s.changes]
        entry[key] = [line for c in changes for line in dbfix.row_diff(path.name, c).split("\n") if line]
    return entry


def observe_tree(path: Path) -> dict[str, Any]:
    """A storage folder (treefix): its findings and the diff of each file ``fix`` changes.
    The promises: undoing each file's steps gives it back, and the folder read with the
    repaired bytes has no repair left (a second fix changes nothing)."""
    options = api.settings(None, (), None, None)
    report = treelint.check(str(path), options)
    assert report is not None
    entry: dict[str, Any] = {"reader": report.reader}
    if report.skipped is not None:
        entry["skipped"] = report.skipped
        return entry
    entry["findings"] = [f"{f.line} {f.rule} {f.fix_applicability or '-'}" for f in api.findings(report)]
    for key, unsafe in (("fix", False), ("unsafe_fix", True)):
        chosen = api.with_unsafe(options, unsafe)
        planned = treefix.preview(str(path), chosen)
        lines: list[str] = []
        for changed in planned.files:
            name = Path(os.path.relpath(changed.path, path))
            assert fixer.undo(changed.after, changed.steps) == changed.before, changed.path
            lines += _diff(name, changed.before, changed.after)
        found = treesource.unit(str(path))
        assert found is not None
        overrides = {c.path: c.after for c in planned.files}
        left = treelint.inspect(found, chosen, str(path), overrides)[0].findings
        assert [f.finding.rule.code for f in left if f.fixable] == [], f"{path}: a repair is left"
        entry[key] = lines
    return entry


def _keeps_its_promises(path: Path, data: bytes, fixed: td.FixResult, again: td.FixResult) -> None:
    """What every fix promises besides its bytes (the per-reader fix tests' ``support.fix``
    checks these too): the report's steps give the original back, every changed byte
    belongs to a reported record, no repair it could make is left (as a second fix sees
    the file: a repair lint offers may need a companion file that is not there), and the
    repaired file is still claimed by the same reader."""
    assert fixed.undo() == data, f"{path}: undoing the report's steps does not give the original"
    assert_accounted(fixed)  # duck-typed: FixResult has the applied edits and steps it reads
    assert [u.finding.rule for u in again.unfixed if u.finding.fixable] == [], f"{path}: a repair is left"
    assert detected_bytes(str(path), fixed.data) == detected_bytes(str(path), data), path


def _observed(folder: Path) -> dict[str, Any]:
    return {path.relative_to(folder).as_posix(): observe(path) for path in _files(folder)}


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_fixtures_do_what_their_expectations_say(folder: Path) -> None:
    expected_file = EXPECTATIONS / f"{folder.name}.json"
    observed = _observed(folder)
    if UPDATE:
        expected_file.write_bytes(orjson.dumps(observed, option=orjson.OPT_INDENT_2) + b"\n")
    expected = orjson.loads(expected_file.read_bytes())
    assert sorted(expected) == sorted(observed), "files added or removed: update the expectations"
    for name in expected:
        assert observed[name] == expected[name], name
