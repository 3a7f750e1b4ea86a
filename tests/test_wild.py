"""Real users' transcripts (fixtures/wild): what lint reports and what fix does, pinned.

Every error and warning pinned here was read against the records it names and is real
damage (fixtures/wild/README.md says why, per rule).  A change to these snapshots is a
change to what the tool tells real users about their files: a new finding here is a
false alarm until someone has read the records and shown otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES, ROOT, fix, lint_bytes

from transcript_doctor.model import Applicability
from transcript_doctor.reporters import record

WILD = FIXTURES / "wild"
FILES = sorted(p for p in WILD.rglob("*") if p.suffix in (".json", ".jsonl"))


def _id(path: Path) -> str:
    return path.relative_to(WILD).as_posix()


def test_every_vendor_folder_is_here() -> None:
    assert sorted({p.relative_to(WILD).parts[0] for p in FILES}) == [
        "claude-code", "codex", "gemini-checkpoint", "gemini-cli", "openai-ft", "qwen-code",
    ]  # fmt: skip


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_findings(path: Path, snapshot: object) -> None:
    report = lint_bytes(path.relative_to(ROOT).as_posix(), path.read_bytes())
    assert report.error is None, report.error
    assert [record(report, f) for f in report.findings] == snapshot


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_default_fix_applies_only_safe_repairs(path: Path, snapshot: object) -> None:
    """Default ``fix`` deletes or replaces no real model or tool output: every repair it
    applies is of the safe class (catalog placeholders, byte copies, torn bytes, added
    results or signatures), and what it did to each file is pinned."""
    outcome = fix(path, unsafe=False)
    assert {a.applicability for a in outcome.applied} <= {Applicability.SAFE}
    assert [(a.rule, a.line, a.action) for a in outcome.applied] == snapshot


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_unsafe_fix_keeps_its_promises(path: Path) -> None:
    """With ``--unsafe-fixes`` the rest is repaired, and the repair still verifies,
    undoes byte for byte and is idempotent (``support.fix`` asserts all three)."""
    fix(path, unsafe=True)
