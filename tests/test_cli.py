"""The command line as users and other tools see it: exit codes, streams, the json contract."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import FIXTURES, ROOT, cli

from transcript_doctor import checks, linting

DAMAGED = "fixtures/openai-chat/damaged-turns.json"
CLEAN = "fixtures/openai-chat/clean-parallel-tools.json"


def test_version_is_fast_and_imports_nothing_heavy() -> None:
    code = (
        "import sys; from transcript_doctor.__main__ import main; main(['--version']);"
        "heavy = [m for m in ('rich', 'jsonschema', 'typer', 'orjson') if m in sys.modules];"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["transcript-doctor 0.1.0", "HEAVY []"]


def test_a_hook_run_on_a_clean_file_imports_nothing_it_does_not_use() -> None:
    """pre-commit starts the tool for every commit: rich only colours findings, and the
    process pool only pays on many files."""
    code = (
        "import sys; from transcript_doctor.__main__ import main\n"
        f"try: main(['lint', '{CLEAN}'])\n"
        "except SystemExit as exc: print('EXIT', exc.code)\n"
        "heavy = [m for m in ('rich', 'jsonschema', 'concurrent.futures.process') if m in sys.modules]\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.splitlines()[-2:] == ["EXIT 0", "HEAVY []"]


def test_version_flag() -> None:
    result = cli("--version")
    assert (result.returncode, result.stdout) == (0, "transcript-doctor 0.1.0\n")


def test_findings_exit_1_and_clean_exit_0() -> None:
    assert cli("lint", DAMAGED).returncode == 1
    assert cli("lint", CLEAN).returncode == 0


def test_exit_zero_and_fail_on() -> None:
    assert cli("lint", "--exit-zero", DAMAGED).returncode == 0
    pending = "fixtures/openai-chat/pending-tool-call.jsonl"  # only TD306 (info)
    assert cli("lint", pending).returncode == 0
    assert cli("lint", "--fail-on", "info", pending).returncode == 1
    assert cli("lint", "--fail-on", "error", "--select", "TD403", DAMAGED).returncode == 0


def test_select_and_ignore() -> None:
    result = cli(
        "lint", "-o", "concise", "-q", "--select", "TD1,placeholder-reply", "--ignore", "TD102", DAMAGED
    )
    rules = [line.split()[1] for line in result.stdout.splitlines()]
    assert rules == ["TD103", "TD201"]


def test_unknown_selector_is_a_usage_error() -> None:
    result = cli("lint", "--select", "TD999", DAMAGED)
    assert result.returncode == 2
    assert "TD999" in result.stderr


def test_unreadable_path_is_reported_and_the_run_goes_on() -> None:
    result = cli("lint", "-o", "concise", "-q", "no/such/file.jsonl", DAMAGED)
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "transcript-doctor: cannot read no/such/file.jsonl: No such file or directory"
    )
    assert "TD201" in result.stdout


def test_json_output_fields_match_the_contract() -> None:
    result = cli("lint", "-o", "json", DAMAGED)
    data = json.loads(result.stdout)
    assert list(data[0]) == [
        "path",
        "reader",
        "rule",
        "name",
        "severity",
        "message",
        "line",
        "record",
        "pointer",
        "fixable",
        "fix_applicability",
    ]
    first = data[0]
    assert first["path"] == DAMAGED
    assert (first["reader"], first["rule"], first["name"], first["severity"]) == (
        "openai-chat",
        "TD103",
        "empty-turn",
        "error",
    )
    assert (first["line"], first["record"], first["pointer"]) == (4, 1, "/messages/1")
    assert isinstance(first["fixable"], bool)


def test_json_output_is_an_empty_array_when_clean() -> None:
    result = cli("lint", "-o", "json", CLEAN)
    assert (result.returncode, json.loads(result.stdout)) == (0, [])


def test_stdin() -> None:
    data = (ROOT / DAMAGED).read_bytes()
    result = cli("lint", "-o", "concise", "-q", "-", stdin=data)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("-:4: TD103 ")


def test_non_transcript_named_explicitly_gets_a_note(tmp_path) -> None:
    package = tmp_path / "package.json"
    package.write_text('{"name": "x", "version": "1.0.0"}')
    result = cli("lint", "-o", "concise", str(package))
    assert result.returncode == 0
    assert (
        result.stderr == f"transcript-doctor: {package}: skipped, not a transcript: no reader recognises it\n"
    )
    assert "Skipped 1 file that are not transcripts." not in result.stdout
    assert result.stdout.endswith("Skipped 1 file that is not a transcript.\n")
    assert cli("lint", "-q", str(package)).stderr == ""


def test_conversation_of_unknown_layout_is_td002(tmp_path) -> None:
    path = tmp_path / "chat.json"
    path.write_text('[{"speaker": "bot", "text": "hi"}, {"speaker": "me", "text": "yo"}]')
    result = cli("lint", "-o", "json", str(path))
    assert result.returncode == 1
    (item,) = json.loads(result.stdout)
    assert (item["rule"], item["reader"], item["line"], item["fixable"]) == ("TD002", None, 1, False)


def test_unparseable_conversation_document_is_td001(tmp_path) -> None:
    path = tmp_path / "chat.json"
    path.write_text('{"messages": [{"role": "user", "content": "hi"}\n')
    result = cli("lint", "-o", "json", str(path))
    assert result.returncode == 1
    (item,) = json.loads(result.stdout)
    assert (item["rule"], item["line"]) == ("TD001", 2)


def test_directory_walk_skips_hidden_folders_and_counts_non_transcripts(tmp_path) -> None:
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "bad.json").write_bytes((ROOT / DAMAGED).read_bytes())
    (tmp_path / "notes.md").write_text("# notes")
    (tmp_path / "ok.json").write_bytes((ROOT / CLEAN).read_bytes())
    result = cli("lint", "-o", "concise", str(tmp_path))
    assert result.returncode == 0
    assert result.stderr == ""
    assert result.stdout == "All checks passed (1 file checked).\nSkipped 1 file that is not a transcript.\n"


def test_rules_and_rule() -> None:
    table = cli("rules")
    assert table.returncode == 0
    assert len(table.stdout.splitlines()) == len(checks.rules())
    doc = cli("rule", "TD301")
    assert doc.returncode == 0
    assert doc.stdout.startswith("# unanswered-tool-call (TD301)\n")
    assert cli("rule", "pending-tool-call").stdout.startswith("# pending-tool-call (TD306)\n")
    assert cli("rule", "TD999").returncode == 2


def test_formats() -> None:
    result = cli("formats", CLEAN, "README.md")
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        f"{CLEAN}: openai-chat (Chat Completions message list)",
        "README.md: not a transcript (does not start with a JSON object or array)",
    ]
    listing = cli("formats").stdout
    assert "openai-chat" in listing


def test_unknown_reader_is_a_usage_error() -> None:
    assert cli("lint", "--reader", "nope", CLEAN).returncode == 2


def test_fixtures_folder_exists() -> None:
    assert (FIXTURES / "README.md").is_file()


def test_parallel_lint_reports_what_one_job_does() -> None:
    """Workers take the largest files first, a report comes back per batch: the output is
    still in the walk's order, byte for byte what one job prints."""
    named = sorted(str(p) for p in FIXTURES.rglob("*") if p.is_file())  # notes for what is skipped
    one = cli("lint", "-o", "json", "-j", "1", *named)
    two = cli("lint", "-o", "json", "-j", "2", *named)
    assert one.returncode == two.returncode == 1
    assert two.stdout == one.stdout and two.stderr == one.stderr
    assert len(json.loads(one.stdout)) > 100
    assert one.stderr.count(": skipped, ") >= 10


def test_worker_batches_take_large_files_alone_and_small_ones_together() -> None:
    sizes = [5, 900, 10, 1000, *([1] * 70), 300]
    batches = linting._batches(sizes, jobs=2)
    assert sorted(i for batch in batches for i in batch) == list(range(len(sizes)))
    assert batches[:3] == [[3], [1], [74]]  # each over the budget (2285 // 32): alone, largest first
    assert [len(batch) for batch in batches[3:]] == [32, 32, 8]
    assert batches[3][:2] == [2, 0]


def test_workers_start_only_for_enough_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pre-commit batch of small files lints faster in one process than with a pool."""
    monkeypatch.setattr(linting.os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    assert linting._jobs(None, 40, 40 << 10) == 1
    assert linting._jobs(None, 200, 40 << 10) == 4
    assert linting._jobs(None, 3, 30 << 20) == 3
    assert linting._jobs(None, 1, 100 << 20) == 1
    assert linting._jobs(2, 1, 0) == 2  # asked for
