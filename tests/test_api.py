"""The Python API (issue 20): the CLI's findings and bytes, typed, without a process."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import FIXTURES, ROOT, cli

import transcript_doctor as td
from transcript_doctor import api, fixer, treesource

FIXTURE_FILES = sorted(
    p
    for p in FIXTURES.rglob("*")
    if p.is_file()
    and p.suffix in (".json", ".jsonl")
    and p.name != "README.md"
    and treesource.unit(str(p)) is None  # a file of a storage folder is no transcript alone
)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@cache
def cli_findings() -> dict[str, list[dict[str, Any]]]:
    run = cli("lint", "fixtures", "-o", "json", "--exit-zero", "--no-progress")
    assert run.returncode == 0, run.stderr
    by_path: dict[str, list[dict[str, Any]]] = {}
    for record in json.loads(run.stdout):
        by_path.setdefault(record["path"], []).append(record)
    return by_path


@pytest.fixture(scope="module", params=[False, True], ids=["safe", "unsafe"])
def fixed_by_cli(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[bool, Path, dict[str, Any]]:
    """``fix --out`` over the fixture folder (``--unsafe-fixes`` or not): the copies and
    the report's entries."""
    unsafe: bool = request.param
    out = tmp_path_factory.mktemp("fixed")
    flags = ["--unsafe-fixes"] if unsafe else []
    run = cli("fix", "fixtures", "--out", str(out), *flags, "--exit-zero", "--no-progress", "-q")
    assert run.returncode == 0, run.stderr
    report = json.loads((out / "transcript-doctor-report.json").read_text())
    return unsafe, out, {entry["path"]: entry for entry in report["files"]}


def test_lint_path_on_the_fixture_folder_is_the_cli_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    found = td.lint_path("fixtures")
    expected = [r for records in cli_findings().values() for r in records]
    assert [f.to_dict() for f in found] == sorted(expected, key=lambda r: (r["path"], r["line"]))
    assert len(found) > 100  # the fixtures are mostly damaged on purpose


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=rel)
def test_lint_bytes_and_lint_path_of_each_fixture_are_the_cli_json(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    expected = cli_findings().get(rel(path), [])
    assert [f.to_dict() for f in td.lint_bytes(path.read_bytes(), name=rel(path))] == expected
    assert [f.to_dict() for f in td.lint_path(rel(path))] == expected


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=rel)
def test_fix_bytes_of_each_fixture_is_the_cli_fix(
    path: Path, fixed_by_cli: tuple[bool, Path, dict[str, Any]]
) -> None:
    unsafe, out, entries = fixed_by_cli
    data = path.read_bytes()
    written = out / rel(path)
    companions = {e["companion"]["path"]: e["companion"] for e in entries.values() if "companion" in e}
    if rel(path) in companions:  # a file its layout keeps in step with a transcript: written with it
        assert hashlib.sha256(written.read_bytes()).hexdigest() == companions[rel(path)]["sha256_after"]
        assert td.fix_bytes(data, name=rel(path), unsafe=unsafe).changed is False  # not a transcript
        return
    # As the CLI fixes a named file: with the companion file beside it (fixer.py); the bytes
    # API, which has none, makes the same repair or refuses it and keeps the bytes.
    options = api.with_unsafe(api.settings(None, (), None, None), unsafe)
    outcome = api.fix_outcome(rel(path), data, options, fixer.read_companion)
    result = api.fixed(outcome)
    in_memory = td.fix_bytes(data, name=rel(path), unsafe=unsafe)
    assert in_memory.data == (
        data if outcome.companion is not None and outcome.companion.changed else result.data
    )
    assert result.data == (written.read_bytes() if written.exists() else data)
    assert result.changed == written.exists()
    assert result.undo() == data
    if rel(path) in entries:
        assert result.to_dict() == entries[rel(path)]
        assert [r.rule for r in result.applied] == [f["rule"] for f in entries[rel(path)]["fixes"]]
        assert [u.why for u in result.unfixed] == [f["why"] for f in entries[rel(path)]["unfixed"]]


def test_fix_result_is_frozen_and_exact() -> None:
    data = (FIXTURES / "claude-code" / "damaged-unanswered-tool-use.jsonl").read_bytes()
    result = td.fix_bytes(data, name="s.jsonl")
    with pytest.raises(AttributeError):
        result.data = b""  # type: ignore[misc]
    assert [(r.rule, r.action) for r in result.applied] == [("TD301", "insert")]
    assert result.unfixed == ()
    assert result.applied[0].edits[0].old == b""
    assert td.lint_bytes(result.data, name="s.jsonl") == []
    assert td.fix_bytes(result.data, name="s.jsonl").changed is False


# A harness's list: the call in message 1 was never answered, and the user went on.
OPENAI = [
    {"role": "user", "content": "list the files"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
    },
    {"role": "user", "content": "again?"},
]


def test_check_messages_points_into_the_list() -> None:
    before = copy.deepcopy(OPENAI)
    found = td.check_messages(OPENAI, api="openai-chat")
    assert [(f.rule, f.record, f.pointer, f.line, f.path) for f in found] == [
        ("TD301", 1, "/1/tool_calls/0", None, None)
    ]
    assert found[0].to_dict()["line"] is None
    assert before == OPENAI


def test_repair_messages_returns_a_new_list_and_leaves_the_input_alone() -> None:
    before = copy.deepcopy(OPENAI)
    repaired, report = td.repair_messages(OPENAI, api="openai-chat")
    assert before == OPENAI
    assert repaired[:2] == OPENAI[:2] and repaired[3] == OPENAI[2]
    assert repaired[2]["role"] == "tool" and repaired[2]["tool_call_id"] == "c1"
    assert repaired[1] is not OPENAI[1]
    assert [(r.rule, r.action, r.line) for r in report.applied] == [("TD301", "insert", None)]
    assert report.applied[0].edits[0].pointer == "/2"
    assert report.changed and report.unfixed == ()
    assert td.check_messages(repaired) == []
    again, second = td.repair_messages(repaired)
    assert again == repaired and not second.changed
    json.dumps(report.to_dict())


# The result of c1 came after the next prompt: moving it back is unsafe (the harness may
# have meant it there), so only unsafe=True moves it.
DISPLACED = [
    {"role": "user", "content": "list the files"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
    },
    {"role": "user", "content": "and?"},
    {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
]


def test_repair_messages_applies_unsafe_repairs_only_when_asked() -> None:
    before = copy.deepcopy(DISPLACED)
    assert [(f.rule, f.fixable, f.fix_applicability) for f in td.check_messages(DISPLACED)] == [
        ("TD304", False, "unsafe")
    ]
    kept, report = td.repair_messages(DISPLACED)
    assert kept == DISPLACED and not report.changed
    assert [(u.finding.rule, u.why.startswith("unsafe fix not applied")) for u in report.unfixed] == [
        ("TD304", True)
    ]
    moved, report = td.repair_messages(DISPLACED, unsafe=True)
    assert moved == [DISPLACED[0], DISPLACED[1], DISPLACED[3], DISPLACED[2]]
    assert [(r.rule, r.action, r.applicability) for r in report.applied] == [("TD304", "move", "unsafe")]
    assert before == DISPLACED


def _lists(folder: str) -> list[tuple[Path, list[Any], str]]:
    """Fixtures of one API whose messages are a bare list or a ``messages`` array."""
    found = []
    for path in sorted((FIXTURES / folder).glob("*.json")):
        value = orjson.loads(path.read_bytes())
        if isinstance(value, list):
            found.append((path, value, ""))
        elif (
            isinstance(value, dict) and isinstance(value.get("messages"), list) and set(value) == {"messages"}
        ):
            found.append((path, value["messages"], "/messages"))
    return found


API_CASES = [
    (api, reader, path, messages, prefix)
    for api, reader, folder in (
        ("openai-chat", "openai-chat", "openai-chat"),
        ("anthropic", "anthropic-messages", "anthropic-messages"),
        ("gemini", "gemini-checkpoint", "gemini-checkpoint"),
    )
    for path, messages, prefix in _lists(folder)
]


@pytest.mark.parametrize(
    ("api", "reader", "path", "messages", "prefix"), API_CASES, ids=lambda v: str(v)[-40:]
)
def test_messages_functions_agree_with_the_file_of_the_same_list(
    api: Any, reader: str, path: Path, messages: list[Any], prefix: str
) -> None:
    before = copy.deepcopy(messages)
    expected = sorted(
        (f.rule, f.record, (f.pointer or "")[len(prefix) :] or f"/{f.record}")
        for f in td.lint_path(path, reader=reader)
    )
    found = td.check_messages(messages, api=api)
    assert sorted((f.rule, f.record, f.pointer) for f in found) == expected
    repaired, report = td.repair_messages(messages, api=api)
    assert messages == before
    fixed = td.fix_bytes(orjson.dumps(messages), name="messages.json", reader=reader)
    assert repaired == orjson.loads(fixed.data)
    assert [r.rule for r in report.applied] == [r.rule for r in fixed.applied]
    left = {u.finding.rule for u in report.unfixed}
    assert {f.rule for f in td.check_messages(repaired, api=api)} == left


def test_every_api_has_a_case() -> None:
    assert {case[0] for case in API_CASES} == {"openai-chat", "anthropic", "gemini"}
    assert any(f for case in API_CASES for f in td.check_messages(case[3], api=case[0]))


def test_bad_arguments_are_errors_not_findings() -> None:
    with pytest.raises(TypeError):
        td.check_messages("hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        td.check_messages([{"role": "user", "content": object()}])
    with pytest.raises(ValueError, match="unknown api"):
        td.check_messages([], api="cohere")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown reader"):
        td.lint_bytes(b"[]", name="x.json", reader="nope")
    with pytest.raises(ValueError, match="unknown rule selector"):
        td.lint_bytes(b"[]", name="x.json", select=["TD999"])
    with pytest.raises(td.CheckError, match="cannot read"):
        td.lint_path(ROOT / "no-such-file.jsonl")


def test_selection_and_config(tmp_path: Path) -> None:
    path = FIXTURES / "claude-code" / "damaged-unanswered-tool-use.jsonl"
    assert [f.rule for f in td.lint_path(path)] == ["TD301"]
    assert td.lint_path(path, ignore=["TD301"]) == []
    assert td.lint_path(path, select=["TD1"]) == []
    config = tmp_path / "transcript-doctor.toml"
    config.write_text('ignore = ["TD3"]\n')
    assert td.lint_path(path, config=config) == []
    config.write_text('[readers]\n"*.jsonl" = "claude-cod"\n')
    with pytest.raises(ValueError, match="claude-cod"):
        td.lint_path(path, config=config)


def test_importing_the_package_and_its_api_loads_no_heavy_module() -> None:
    code = (
        "import sys, transcript_doctor\n"
        "assert 'transcript_doctor.engine' not in sys.modules\n"
        "from transcript_doctor import lint_bytes, check_messages, fix_bytes, Finding\n"
        "lint_bytes(b'[]', name='x.json')\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('dask', 'distributed', 'fsspec', 'rich', 'typer', 'pyarrow'))\n"
        "print(heavy)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "[]\n"


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError):
        _ = td.no_such_name  # type: ignore[attr-defined]
    assert set(td.__all__) <= set(dir(td))


def test_the_typed_client_example_runs() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "harness.py")], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "before save: 1 finding(s), 1 repaired",
        "TD301 /1/tool_calls/0 tool call c1 (ls) has no result",
        "before resume: clean",
    ]


def test_fix_bytes_takes_a_lone_surrogate() -> None:
    """Issue 16 D12 in the API: the report entry is written as the CLI writes it."""
    data = (Path(__file__).parent / "data" / "repro" / "surrogate-id.jsonl").read_bytes()
    result = td.fix_bytes(data, name="s.jsonl")
    assert json.loads(result.report)["unfixed"][0]["rule"] == "TD001"
