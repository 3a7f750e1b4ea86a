"""The options ruff users expect (issue 17): output file, colour, verbosity, show-files and
-settings, ``lint --fix``, rules as JSON, ``fix -j``, the progress bar, aligned output."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest
from snapshots import Text
from support import FIXTURES, ROOT, cli

from transcript_doctor import catalog, checks, engine, linting, progress
from transcript_doctor.checks import Selection

DAMAGED = "fixtures/openai-chat/damaged-turns.json"
PAIRING = "fixtures/openai-chat/damaged-tool-pairing.json"
CLEAN = "fixtures/openai-chat/clean-parallel-tools.json"


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``support.cli`` with other environment variables."""
    environment = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb", **env}
    environment = {key: value for key, value in environment.items() if value}
    command = [sys.executable, "-m", "transcript_doctor", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=environment, check=False)


# --output-file


def test_output_file_holds_what_stdout_would(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "lint.json"  # folders are created, as ruff does
    result = cli("lint", "-o", "json", "--output-file", str(target), DAMAGED)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")
    assert target.read_text() == cli("lint", "-o", "json", DAMAGED).stdout


def test_output_file_is_not_coloured_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / "lint.txt"
    for output in ("full", "concise"):
        result = _run(
            {"NO_COLOR": "", "FORCE_COLOR": "1"}, "lint", "-o", output, "--output-file", str(target), DAMAGED
        )
        assert result.returncode == 1
        assert "TD103" in target.read_text() and "\x1b[" not in target.read_text()
    _run({}, "lint", "-o", "concise", "--color", "always", "--output-file", str(target), DAMAGED)
    assert "\x1b[1;31mTD103\x1b[0m" in target.read_text()


def test_output_file_that_cannot_be_written_exits_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    result = cli("lint", "--output-file", str(tmp_path / "file" / "out.txt"), DAMAGED)
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr
        == f"transcript-doctor: cannot write the output file {tmp_path}/file/out.txt: File exists\n"
    )


# --color


def test_concise_color_always_never_and_auto() -> None:
    args = ("lint", "-o", "concise", "-q", "--select", "TD103", DAMAGED)
    always = cli(*args[:-1], "--color", "always", DAMAGED).stdout
    assert always == (
        "\x1b[1mfixtures/openai-chat/damaged-turns.json:4:\x1b[0m \x1b[1;31mTD103\x1b[0m [*] "
        "\x1b[1;31merror:\x1b[0m assistant turn holds only empty or whitespace text\n"
    )
    plain = "fixtures/openai-chat/damaged-turns.json:4: TD103 [*] error: assistant turn holds only empty or whitespace text\n"
    assert cli(*args[:-1], "--color", "never", DAMAGED).stdout == plain
    assert cli(*args).stdout == plain  # auto: a pipe


def test_full_color_always_colours_and_never_does_not() -> None:
    always = cli("lint", "--color", "always", DAMAGED).stdout
    assert "\x1b[1;31mTD103\x1b[0m" in always
    assert "\x1b[" not in cli("lint", "--color", "never", DAMAGED).stdout


def test_fix_diff_is_coloured_on_request(snapshot) -> None:
    result = cli("fix", "--diff", "-q", "--unsafe-fixes", "--color", "always", PAIRING)
    assert result.returncode == 1
    assert result.stdout == snapshot(extension_class=Text)
    assert "\x1b[" not in cli("fix", "--diff", "-q", PAIRING).stdout


# -v / -q


def test_verbose_says_what_each_file_was() -> None:
    result = cli("lint", "-o", "concise", "-v", DAMAGED, CLEAN, "README.md")
    lines = result.stderr.splitlines()
    assert lines[:4] == [
        f"transcript-doctor: checked {DAMAGED}: openai-chat, 4 findings",
        f"transcript-doctor: checked {CLEAN}: openai-chat, 0 findings",
        "transcript-doctor: README.md: skipped, not a transcript: does not start with a JSON object or array",
        "transcript-doctor: checked README.md: skipped (not a transcript: does not start with a JSON object or array)",
    ]
    assert re.fullmatch(r"transcript-doctor: checked 3 file\(s\) in \d+\.\d\ds", lines[4])
    assert len(lines) == 5


def test_quiet_and_verbose_exclude_each_other() -> None:
    for command in ("lint", "fix"):
        result = cli(command, "-q", "-v", DAMAGED)
        assert result.returncode == 2
        assert "--quiet and --verbose exclude each other" in result.stderr


# --show-files / --show-settings


def test_show_files_lists_what_the_walk_offers(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.json").write_text("[]")
    (tmp_path / "a" / "two.jsonl").write_text("")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "hidden.jsonl").write_text("")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "x.json").write_text("[]")
    (tmp_path / "transcript-doctor.toml").write_text('exclude = ["old/"]\n')
    result = cli("lint", "--show-files", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "transcript-doctor.toml\na/one.json\na/two.jsonl\n",
        "",
    )


def test_show_settings_resolves_the_first_file(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "a.json").write_text("[]")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.transcript-doctor]\n"
        'ignore = ["TD306"]\n'
        'exclude = ["archive/"]\n'
        '[tool.transcript-doctor.per-file-ignores]\n"fixtures/*" = ["TD1", "TD3"]\n'
        '[tool.transcript-doctor.readers]\n"fixtures/*.json" = "openai-chat"\n'
    )
    result = cli("lint", "--show-settings", "fixtures", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.replace(str(tmp_path), "ROOT").splitlines() == [
        "Settings path: ROOT/pyproject.toml",
        "Resolved settings for: fixtures/a.json",
        'reader = "openai-chat"',
        'rules = ["TD001", "TD002", "TD201", "TD202", "TD203", "TD401", "TD402", "TD403", "TD404", "TD405"]',
        "redact = false",
        'root = "ROOT"',
        'exclude = ["archive/"]',
        "extend-catalog = []",
        'per-file-ignores = {"fixtures/*" = ["TD1", "TD3"]}',
        'readers = {"fixtures/*.json" = "openai-chat"}',
        f"catalog = {len(catalog.load().markers)} placeholder and interruption markers",
    ]


# lint --fix


def test_lint_fix_runs_fix(tmp_path: Path) -> None:
    shutil.copyfile(ROOT / PAIRING, tmp_path / "chat.json")
    alias = cli("lint", "--fix", "--unsafe-fixes", "chat.json", cwd=tmp_path)
    copy = tmp_path / "transcript-doctor-fixed" / "chat.json"
    repaired = copy.read_bytes()
    shutil.rmtree(tmp_path / "transcript-doctor-fixed")
    direct = cli("fix", "--unsafe-fixes", "chat.json", cwd=tmp_path)
    assert (alias.returncode, alias.stdout, alias.stderr) == (direct.returncode, direct.stdout, direct.stderr)
    assert alias.stdout.splitlines()[0] == "chat.json: fixed 3 finding(s) (TD302, TD303, TD304)"
    assert repaired == copy.read_bytes()


def test_lint_fix_refuses_lint_only_options() -> None:
    result = cli("lint", "--fix", "-o", "json", PAIRING)
    assert result.returncode == 2
    assert "--output-format does not apply to `fix`" in result.stderr


# rules -o json, rule --all, rule -o json


def test_rules_as_json(snapshot) -> None:
    result = cli("rules", "-o", "json")
    assert result.returncode == 0
    rules = json.loads(result.stdout)
    assert len(rules) == len(checks.rules())
    assert rules[0].keys() == {"code", "name", "severity", "summary", "fix", "fixable", "fix_applicability"}
    assert result.stdout == snapshot(extension_class=Text)


def test_rule_all_and_rule_json() -> None:
    every = cli("rule", "--all")
    assert every.returncode == 0
    headers = [line for line in every.stdout.splitlines() if re.fullmatch(r"# \S+ \(TD\d{3}\)", line)]
    assert len(headers) == len(checks.rules()) and headers[0] == "# unparseable-record (TD001)"
    one = json.loads(cli("rule", "TD301", "-o", "json").stdout)
    assert (one["code"], one["name"], one["fixable"]) == ("TD301", "unanswered-tool-call", True)
    assert one["explanation"].startswith("# unanswered-tool-call (TD301)\n")
    all_json = json.loads(cli("rule", "--all", "-o", "json").stdout)
    assert [r["code"] for r in all_json] == [r["code"] for r in json.loads(cli("rules", "-o", "json").stdout)]
    for args in (("rule",), ("rule", "--all", "TD301")):
        result = cli(*args)
        assert result.returncode == 2
        assert "give either a rule code or --all" in result.stderr


# fix -j N


def test_fix_with_workers_writes_what_one_job_does(tmp_path: Path) -> None:
    sources = sorted(p for p in (FIXTURES / "qwen-code").glob("*.jsonl"))
    for jobs in ("1", "2"):
        folder = tmp_path / f"in{jobs}"
        folder.mkdir()
        for source in sources:
            shutil.copyfile(source, folder / source.name)
    one = cli("fix", "--in-place", "-j", "1", "in1", cwd=tmp_path)
    two = cli("fix", "--in-place", "-j", "2", "in2", cwd=tmp_path)
    assert one.returncode == two.returncode == 1
    assert two.stdout.replace("in2/", "in1/") == one.stdout
    assert two.stderr.replace("in2/", "in1/") == one.stderr
    assert "fixed" in one.stdout
    for source in sources:
        assert (tmp_path / "in1" / source.name).read_bytes() == (tmp_path / "in2" / source.name).read_bytes()


def test_a_worker_outcome_for_other_bytes_is_not_used(tmp_path: Path) -> None:
    """The file changed between the worker's read and the main process's: the main
    process repairs what it read itself."""
    from transcript_doctor import fixpool

    path = tmp_path / "chat.json"
    shutil.copyfile(ROOT / PAIRING, path)
    options = engine.Options(Selection.build(("ALL",)), catalog.load(), unsafe_fixes=True)
    with fixpool.Prefetch([str(path)], [0], options, 1) as prefetch:
        assert prefetch.take(str(path), b"[]") is None
    with fixpool.Prefetch([str(path)], [0], options, 1) as prefetch:
        outcome = prefetch.take(str(path), path.read_bytes())
        assert outcome is not None and outcome.changed
        assert [a.rule for a in outcome.applied] == ["TD303", "TD302", "TD304"]


# progress


class _Recorder:
    calls: ClassVar[list[tuple[int, int]]] = []
    shown: ClassVar[list[bool]] = []

    def __init__(self, sizes: list[int], show: bool, verb: str) -> None:
        type(self).shown.append(show)

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def advance(self, size: int, files: int = 1) -> None:
        type(self).calls.append((size, files))


def test_parallel_lint_advances_the_bar_as_batches_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every finished batch moves the bar at once, by its files' bytes (not only when the
    first file of the walk is done)."""
    monkeypatch.setattr(progress, "Bar", _Recorder)
    monkeypatch.setattr(progress, "wanted", lambda *_args, **_kw: True)
    _Recorder.calls, _Recorder.shown = [], []
    named = sorted(str(p) for p in (FIXTURES / "qwen-code").glob("*.jsonl"))
    options = engine.Options(Selection.build(("ALL",)), catalog.load())
    result = linting.run(named, options, linting.Plan("concise", quiet=True, jobs=2))
    assert _Recorder.shown == [True]
    assert sum(files for _, files in _Recorder.calls) == len(named) == len(result.reports)
    assert sum(size for size, _ in _Recorder.calls) == sum(Path(p).stat().st_size for p in named)


def test_progress_bar_is_wanted_only_for_long_runs_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: True, raising=False)
    assert progress.wanted(progress.MIN_FILES, 0)
    assert progress.wanted(1, progress.MIN_BYTES)
    assert not progress.wanted(progress.MIN_FILES - 1, progress.MIN_BYTES - 1)
    assert not progress.wanted(10_000, 0, machine_output=True)
    monkeypatch.setenv("CI", "true")
    assert not progress.wanted(10_000, 0)


def test_progress_bar_draws_from_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    monkeypatch.setattr(progress.sys, "stderr", stream)
    with progress.Bar([10, 30], True, "checking") as bar:
        assert "checking 0/2 files" in stream.getvalue()
        bar.advance(30)
        assert bar._done == 1


def test_progress_bar_takes_advances_at_most_every_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first file moves the bar at once; the next ones within a tick wait for the
    next advance after it, or for the end of the run."""
    import io
    from types import SimpleNamespace

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    clock = [100.0]
    monkeypatch.setattr(progress.sys, "stderr", Terminal())
    monkeypatch.setattr(progress, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    with progress.Bar([10, 20, 30, 40], True, "checking") as bar:
        assert bar._bar is not None
        task = bar._bar.tasks[0]
        bar.advance(10)
        assert (task.completed, task.description) == (10, "checking 1/4 files")
        bar.advance(20)
        assert (task.completed, task.description) == (10, "checking 1/4 files")
        clock[0] += progress.TICK
        bar.advance(30)
        assert (task.completed, task.description) == (60, "checking 3/4 files")
        bar.advance(40)
        assert task.completed == 60
    assert (task.completed, task.description) == (100, "checking 4/4 files")


# full output: aligned locations, wrapped messages


def test_full_output_aligns_locations_and_wraps_messages(snapshot) -> None:
    result = _run({"COLUMNS": "80"}, "lint", PAIRING)
    assert result.returncode == 1
    assert all(len(line) <= 80 and line == line.rstrip() for line in result.stdout.splitlines())
    assert result.stdout == snapshot(extension_class=Text)


def test_fix_verbose_names_the_files_it_leaves_alone(tmp_path: Path) -> None:
    shutil.copyfile(ROOT / CLEAN, tmp_path / "clean.json")
    shutil.copyfile(ROOT / PAIRING, tmp_path / "chat.json")
    result = cli(
        "fix", "--diff", "-v", "--no-progress", "--unsafe-fixes", "clean.json", "chat.json", cwd=tmp_path
    )
    assert result.returncode == 1
    assert result.stderr.splitlines()[:2] == [
        "clean.json: nothing to fix",
        "chat.json: would fix 3 finding(s) (TD302, TD303, TD304)",
    ]


def test_fix_workers_take_consecutive_batches_and_skip_what_the_caller_skipped(tmp_path: Path) -> None:
    from transcript_doctor import fixpool

    assert fixpool._batches(["a", "b", "c", "d"], [1, fixpool.BATCH_BYTES, 1, 1]) == [["a", "b"], ["c", "d"]]
    assert [len(b) for b in fixpool._batches([str(i) for i in range(70)], [1] * 70)] == [32, 32, 6]
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    shutil.copyfile(ROOT / PAIRING, first)
    shutil.copyfile(ROOT / DAMAGED, second)
    options = engine.Options(Selection.build(("ALL",)), catalog.load(), unsafe_fixes=True)
    with fixpool.Prefetch([str(first), str(second)], [1, 1], options, 1) as prefetch:
        outcome = prefetch.take(str(second), second.read_bytes())  # the first could not be read
        assert outcome is not None and outcome.path == str(second)
        assert prefetch.take(str(first), first.read_bytes()) is None  # gone by: computed again


def test_fix_shows_the_bar_on_long_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from transcript_doctor import fixing
    from transcript_doctor.model import Severity

    monkeypatch.setattr(progress, "Bar", _Recorder)
    monkeypatch.setattr(progress, "wanted", lambda *_args, **_kw: True)
    named = sorted(str(p) for p in (FIXTURES / "qwen-code").glob("*.jsonl"))
    options = engine.Options(Selection.build(("ALL",)), catalog.load())
    for mode, shown in (("out", True), ("diff", True)):
        _Recorder.calls, _Recorder.shown = [], []
        plan = fixing.Plan(mode, tmp_path / mode, None, Severity.WARNING, quiet=True, jobs=1)
        fixing.run(named, options, plan)
        assert _Recorder.shown == [shown]
        assert sum(size for size, _ in _Recorder.calls) == sum(Path(p).stat().st_size for p in named)
