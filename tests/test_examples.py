"""The examples of the README run and do what they say (pyarrow comes with [test])."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support import FIXTURES, ROOT, cli

import transcript_doctor as td

pq = pytest.importorskip("pyarrow.parquet")
pc = pytest.importorskip("pyarrow.compute")
EXAMPLE = ROOT / "examples" / "parquet_findings.py"


def test_parquet_table_of_a_folder_holds_every_finding(tmp_path: Path) -> None:
    out = tmp_path / "findings.parquet"
    folder = FIXTURES / "claude-code"
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), str(out), str(folder)], capture_output=True, text=True, check=False
    )
    expected = [f.to_dict() for f in td.lint_path(folder)]
    assert (run.returncode, run.stdout, run.stderr) == (0, f"{out}: {len(expected)} finding(s)\n", "")
    table = pq.read_table(out)
    assert table.column_names == ["path", "reader", "rule", "name", "severity", "line", "record", "pointer",
                                  "message", "fixable", "fix_applicability"]  # fmt: skip
    rows = table.to_pylist()
    assert rows == expected and len(rows) > 10
    # What a data team asks of it: findings per rule, errors only.
    errors = table.filter(pc.equal(table["severity"].cast("string"), "error"))
    counted = {r["values"]: r["counts"] for r in pc.value_counts(errors["rule"]).to_pylist()}
    assert counted == Counter(f["rule"] for f in expected if f["severity"] == "error")


def test_parquet_table_from_the_cli_jsonl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "findings.parquet"
    lint = cli("lint", "fixtures/openai-chat", "-o", "jsonl")
    assert lint.returncode == 1
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), str(out)],
        input=lint.stdout,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert pq.read_table(out).to_pylist() == [f.to_dict() for f in td.lint_path("fixtures/openai-chat")] != []
