"""The start-up path (argv.py, ``__main__``) runs ``lint`` and ``fix`` exactly as typer does.

argv.py parses the common command lines without importing typer; whatever it does not
parse goes to typer.  What it parses must reach the command's body with the very arguments
typer gives it, and every way out of the body (exit status, usage error, interrupt,
broken pipe, a bug) must end as cli.run ends it.
"""

from __future__ import annotations

import errno
import subprocess
import sys
from collections.abc import Callable
from enum import Enum
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from support import FIXTURES, ROOT

from transcript_doctor import __main__ as entry
from transcript_doctor import argv, cli, commands

CLICK = typer.main.get_command(cli.app)
BODIES = ("lint", "fix")


class _Reached(Exception):
    pass


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], tuple[str, dict[str, Any]] | None]:
    """What typer hands a command's body for ``args``, or None (typer refused the line)."""
    seen: list[tuple[str, dict[str, Any]]] = []
    for name in BODIES:

        def body(_name: str = name, **given: Any) -> None:
            seen.append((_name, given))
            raise commands.Exit(0)

        monkeypatch.setattr(commands, name, body)

    def typer_parse(args: list[str]) -> tuple[str, dict[str, Any]] | None:
        seen.clear()
        code = cli.run(args)
        return seen[0] if code == 0 and seen else None

    return typer_parse


def _kind(param: Any) -> argv.Kind | None:
    """The kind argv.py gives a click option (None: a path, left to typer)."""
    from typer._click import types
    from typer._types import TyperChoice
    from typer.models import TyperPath

    if param.is_flag:
        return argv.FLAG
    if isinstance(param.type, TyperPath):
        return None
    if param.multiple:
        assert param.type is types.STRING, param.name
        return argv.MANY
    if isinstance(param.type, types.IntRange):
        assert (param.type.min, param.type.max, param.type.clamp) == (1, None, False), param.name
        return argv.JOBS
    if isinstance(param.type, TyperChoice):
        assert param.type.case_sensitive, param.name
        enums = (commands.OutputFormat, commands.FailOn, commands.Color)
        found = [e for e in enums if [m.value for m in e] == list(param.type.choices)]
        assert len(found) == 1, param.name
        return found[0]
    assert param.type is types.STRING, param.name
    return argv.TEXT


@pytest.mark.parametrize("name", BODIES)
def test_the_option_table_is_typers(name: str) -> None:
    """Every option of the command, by every spelling, is in argv.py with its parameter
    and kind, except the path options and --help; and argv.py knows no other."""
    command = CLICK.commands[name]  # type: ignore[attr-defined]
    expected: dict[str, tuple[str, argv.Kind]] = {}
    for param in command.params:
        if param.param_type_name == "argument":
            assert (param.name, param.nargs) == ("paths", -1)
            continue
        kind = _kind(param)
        assert not param.secondary_opts, param.name
        for option in param.opts:
            if kind is not None:
                expected[option] = (param.name, kind)
    assert argv.OPTIONS[name] == expected


COMMON = [
    ["lint"],
    ["lint", "."],
    ["lint", "-"],
    ["lint", "-q", "-o", "concise", "--exit-zero", "--no-progress", "a.json"],
    ["lint", "--force-exclude", "a.json", "b.jsonl"],
    ["lint", "a.json", "-q", "b.json", "--output-format=json"],
    ["lint", "-o", "sarif", "--select", "TD1", "--select=TD2,TD3", "--ignore", "TD101", "x"],
    ["lint", "--extend-select", "TD2", "--fail-on", "error", "--color", "never", "-j", "2", "x"],
    ["lint", "--jobs=3", "-v", "--statistics", "--redact", "--hidden", "--unsafe-fixes", "--show-fixes"],
    ["lint", "--fix", "--reader", "claude-code", "--stdin-filename", "s.jsonl", "-"],
    ["lint", "--show-files", "--show-settings", "--write-baseline", "--scheduler", "tcp://h:1"],
    ["lint", "-o", "full", "-o", "json", "-j", "1", "-j", "0010"],
    ["lint", "--select", "", "x"],
    ["lint", "-q", "-oconcise", "--exit-zero", "--no-progress", "-j1", "x"],
    ["lint", "-ojson", "-j12", "-j", "2", "x"],
    ["fix", "-j2", "--diff", "x"],
    ["fix", "--diff", "fixtures"],
    ["fix", "--in-place", "--unsafe-fixes", "-q", "a.jsonl"],
    ["fix", "--out", "fixed", "--no-backup", "--fail-on=info", "x", "y"],
    ["fix", "--out=s3://b/p", "--select", "TD3", "--exit-zero", "--no-progress", "-v"],
]
# Lines argv.py leaves to typer: a usage error, help, a path option, a spelling typer
# reads its own way.
TYPER_ONLY = [
    [],
    ["--version"],
    ["-V", "lint"],
    ["rules"],
    ["lint", "--help"],
    ["lint", "--bogus"],
    ["lint", "-o", "xml"],
    ["lint", "-o", "JSON"],
    ["lint", "-j", "0"],
    ["lint", "-j", "x"],
    ["lint", "-j", "+2"],
    ["lint", "-j", "9" * 5000],
    ["lint", "--reader"],
    ["lint", "--reader", "-q"],
    ["lint", "-qv"],
    ["lint", "-o=json"],
    ["lint", "-oxml"],
    ["lint", "-j0"],
    ["lint", "-j=1"],
    ["lint", "-j-1"],
    ["lint", "-qj1"],
    ["lint", "--", "-q"],
    ["lint", "--quiet=1"],
    ["lint", "--config", "pyproject.toml"],
    ["lint", "--baseline", "b.json"],
    ["lint", "--output-file", "out"],
    ["fix", "--report", "r.json"],
    ["fix", "-o", "json"],
    ["fix", "--statistics"],
    ["lnt", "x"],
]


@pytest.mark.parametrize("args", COMMON, ids=" ".join)
def test_common_lines_reach_the_body_as_typer_passes_them(
    args: list[str], recorded: Callable[[list[str]], tuple[str, dict[str, Any]] | None]
) -> None:
    parsed = argv.parse(args)
    assert parsed is not None
    assert parsed == recorded(args)


@pytest.mark.parametrize("args", TYPER_ONLY, ids=" ".join)
def test_other_lines_are_left_to_typer(args: list[str]) -> None:
    assert argv.parse(args) is None


def test_shell_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(argv.COMPLETION, "bash_complete")
    assert argv.parse(["lint", "x"]) is None


_TOKENS = [
    *sorted({*argv.OPTIONS["lint"], *argv.OPTIONS["fix"], "--config", "--help", "--report"}),
    "-", "--", "x.json", "json", "sarif", "full", "error", "never", "2", "0", "-1", "", "=",
    "-qv", "-ojson", "-oconcise", "-oxml", "-j1", "-j0", "-j=2", "-qj1", "--select=TD1", "--jobs=2", "--output-format=github", "--quiet=", "claude-code",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(BODIES), st.lists(st.sampled_from(_TOKENS), max_size=7))
def test_any_line_argv_parses_is_what_typer_passes(command: str, tokens: list[str]) -> None:
    """Any mix of options, values and paths: argv.py either declines or agrees with typer."""
    args = [command, *tokens]
    parsed = argv.parse(args)
    if parsed is None:
        return
    with pytest.MonkeyPatch.context() as patch:
        seen: list[tuple[str, dict[str, Any]]] = []
        for name in BODIES:

            def body(_name: str = name, **given: Any) -> None:
                seen.append((_name, given))
                raise commands.Exit(0)

            patch.setattr(commands, name, body)
        assert cli.run(args) == 0
    assert [parsed] == seen


OUTCOMES: list[BaseException] = [
    commands.Exit(1),
    commands.BadOption("--quiet and --verbose exclude each other", "--verbose"),
    SystemExit(3),
    SystemExit(None),
    SystemExit("message"),
    KeyboardInterrupt(),
    EOFError(),
    BrokenPipeError(errno.EPIPE, "Broken pipe"),
    OSError(errno.ENOSPC, "No space left on device"),
    ValueError("a bug"),
]


@pytest.mark.parametrize("raised", OUTCOMES, ids=lambda e: type(e).__name__ + repr(e.args))
def test_every_way_out_of_the_body_ends_as_under_typer(
    raised: BaseException, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def body(**given: Any) -> None:
        raise raised

    monkeypatch.setattr(commands, "lint", body)
    args = ["lint", "-q", "x.json"]
    stdout = sys.stdout
    try:
        typer_code = cli.run(args)
        typer_streams = capsys.readouterr()
        sys.stdout = stdout
        code = entry._without_typer(args)
        if code is None:  # a usage error: typer parses the line again
            code = cli.run(args)
        streams = capsys.readouterr()
    finally:
        sys.stdout = stdout
    assert (code, streams) == (typer_code, typer_streams)


LINES = [
    ["lint", "-q", "-o", "concise", "--exit-zero", "--no-progress", "fixtures/openai-chat/clean-parallel-tools.json"],
    ["lint", "--no-progress", "fixtures/claude-code"],
    ["lint", "-o", "json", "--no-progress", "fixtures/claude-code/damaged-dangling-parent.jsonl"],
    ["lint", "-o", "sarif", "--no-progress", "fixtures/openai-chat"],
    ["lint", "--fix", "--diff", "fixtures/claude-code/damaged-dangling-parent.jsonl"],
    ["lint", "--fix", "-q", "-o", "json", "fixtures/claude-code/damaged-dangling-parent.jsonl"],
    ["lint", "-q", "-v", "fixtures/openai-chat"],
    ["lint", "--reader", "nope", "fixtures/openai-chat"],
    ["lint", "--select", "TD999", "fixtures/openai-chat"],
    ["lint", "--write-baseline", "fixtures/openai-chat"],
    ["lint", "--show-settings", "fixtures/openai-chat"],
    ["lint", "--show-files", "fixtures/openai-chat"],
    ["lint", "/nonexistent/x.json"],
    ["fix", "--diff", "--no-progress", "fixtures/claude-code"],
    ["fix", "--diff", "--unsafe-fixes", "--no-progress", "fixtures/claude-code"],
    ["fix", "--in-place", "--diff", "fixtures/openai-chat"],
    ["fix", "--out", "o", "--diff", "fixtures/openai-chat"],
]  # fmt: skip
TYPER = "import sys; from transcript_doctor.cli import run; sys.exit(run(sys.argv[1:]))"


@pytest.mark.parametrize("args", LINES, ids=" ".join)
def test_the_start_up_path_prints_what_typer_prints(args: list[str]) -> None:
    """The installed command (``__main__``) against cli.run under typer: streams and status."""
    env = {"NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb", "PATH": "/usr/bin:/bin"}
    fast, slow = (
        subprocess.run([sys.executable, *how, *args], capture_output=True, cwd=ROOT, env=env, check=False)
        for how in (["-m", "transcript_doctor"], ["-c", TYPER])
    )
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.returncode in (0, 1, 2)


def test_lint_of_one_small_file_imports_no_cli_library_and_one_reader() -> None:
    """The start-up budget of issue 19, kept by structure (never by a timed test): linting
    one small clean Claude Code session imports neither typer nor click, rich, jsonschema,
    hashlib (OpenSSL), no reader but Claude Code's (and the typed-lines helper of its fast
    path), and none of the repair side (actions, editing, the fix runs) nor the baseline; in this checkout (a pyproject.toml for other tools) not the TOML
    parser; and it compiles none of the patterns of rare paths (source.py's error paths,
    jsonspan's tokenizers)."""
    path = FIXTURES / "claude-code" / "clean-rewound-branch.jsonl"
    code = (
        "import sys\n"
        "from transcript_doctor.__main__ import main\n"
        "try:\n"
        f"    main(['lint', '-q', '--no-progress', {str(path)!r}])\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "heavy = ('typer', 'click', 'rich', 'jsonschema', 'pydantic', 'dask', 'fsspec', 'hashlib', 'tomllib')\n"
        "print(code)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
        "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('transcript_doctor.readers.')}))\n"
        "print(sorted(m for m in sys.modules if m.startswith('transcript_doctor.')\n"
        "             and m.split('.')[1] in ('cli', 'actions', 'editing', 'fixer', 'fixing', 'baseline')))\n"
        "import re\n"
        "from transcript_doctor import jsonspan, source\n"
        "lazy = {'source.' + n: getattr(source, n) for n in LAZY_SOURCE}\n"
        "lazy.update({'jsonspan.' + n: getattr(jsonspan, n) for n in ('_TOKEN', '_BRACKET')})\n"
        "print(sorted(n for n, p in lazy.items() if any(key[1] == p for key in re._cache)))\n"
    ).replace(
        "LAZY_SOURCE", repr(("_JSONL_START", "_INFINITY", "_STRINGS", "_SURROGATE", "_TOKENS_BACKWARDS"))
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT)
    assert run.stderr == ""
    assert run.stdout.splitlines() == ["0", "[]", "['base', 'claude_code', 'typed_lines']", "[]", "[]"]


def _clean_files_of_every_layout() -> list[str]:
    """One fixture file per layout that its expectations say lints clean."""
    import json

    found = []
    for expectations in sorted((ROOT / "tests" / "expectations").glob("*.json")):
        files = json.loads(expectations.read_text())
        found.append(
            next(
                str(FIXTURES / expectations.stem / name)
                for name, expected in files.items()
                if expected.get("reader")
                and not expected.get("findings")
                and name.endswith((".json", ".jsonl"))
                and (FIXTURES / expectations.stem / name).is_file()
            )
        )
    return found


def test_lint_of_clean_files_of_every_layout_loads_no_repair_side() -> None:
    """Every reader and fast path loaded, as in a lint of a tree holding every layout
    (``~/.claude`` beside other agents' folders): a clean lint still imports none of the
    repair side (the repair intents, byte editing, the fix runs), which only ``fix`` and
    findings need (issue 19: their import-time classes cost ~5 ms at every start)."""
    paths = _clean_files_of_every_layout()
    code = (
        "import sys\n"
        "from transcript_doctor.__main__ import main\n"
        "try:\n"
        f"    main(['lint', '-q', '--no-progress', '-j', '1', *{paths!r}])\n"
        "except SystemExit as exc:\n"
        "    print(exc.code)\n"
        "print(sorted(m for m in sys.modules if m.startswith('transcript_doctor.readers.')\n"
        "             and m.endswith('.reader')))\n"
        "print(sorted(m for m in sys.modules if m.startswith('transcript_doctor.')\n"
        "             and m.split('.')[1] in ('actions', 'editing', 'fixer', 'fixing')))\n"
    )
    rooms = sorted(
        f"transcript_doctor.readers.{room.parent.name}.reader"
        for room in (ROOT / "transcript_doctor" / "readers").glob("*/reader.py")
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT)
    assert run.stderr == ""
    assert run.stdout.splitlines() == ["0", str(rooms), "[]"]


def test_the_enums_are_the_clis() -> None:
    for enum in (commands.OutputFormat, commands.FailOn, commands.Color, commands.RulesFormat):
        assert issubclass(enum, Enum) and getattr(cli, enum.__name__) is enum
