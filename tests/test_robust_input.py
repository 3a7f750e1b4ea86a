"""Issue #16, the input side: what a vendor can read is not damage, junk lines do not hide
a layout, torn lines cost linear time (correctness here; the time in benchmarks/)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson
import pytest
from support import FIXTURES, _catalog, cli, fed_pipe, fix, lint_bytes

from transcript_doctor import engine, fixer
from transcript_doctor.checks import Selection
from transcript_doctor.source import NODE, PYTHON, STRICT, _cut_short, _glued_record_start, sniff

REPRO = Path(__file__).parent / "data" / "repro"
CLAUDE = FIXTURES / "claude-code" / "codemie-incremental-simple-turn-1.jsonl"


def found(name: str, data: bytes, reader: str | None = None) -> list[tuple[str, int, str]]:
    report = lint_bytes(name, data, reader)
    assert report.error is None, report.error
    return [(f.finding.rule.code, f.origin.line, f.finding.message) for f in report.findings]


# -- D6: a record Node reads with U+FFFD is there -------------------------------------


def test_a_record_with_an_invalid_byte_is_reported_not_relinked_around() -> None:
    data = (REPRO / "latin1-user-prompt-qwen.jsonl").read_bytes()
    assert [(code, line) for code, line, _ in found("q.jsonl", data)] == [
        ("TD201", 3),
        ("TD201", 4),
        ("TD001", 5),
    ]
    assert found("q.jsonl", data)[-1][2] == (
        "invalid UTF-8 at byte 320 of the record (the vendor reads U+FFFD in its place)"
    )
    outcome = fix(REPRO / "latin1-user-prompt-qwen.jsonl")
    lines = outcome.after.split(b"\n")
    prompt = next(line for line in lines if b"caf\xe9 Say hi again" in line)  # the byte is kept
    # The two placeholders go; the prompt is relinked to what preceded them, not dropped.
    assert orjson.loads(prompt.replace(b"\xe9", b"e"))["parentUuid"] == "e222ea20-673f-4c0b-8f73-09420617ef3f"
    assert [(f.finding.rule.code, f.origin.line) for f, _ in outcome.remaining] == [("TD001", 3)]


def test_each_loader_decides_what_is_unparseable() -> None:
    line = b'{"a":"\xff"}'
    node, strict = sniff("x.jsonl", line + b"\n{}\n"), sniff("x.jsonl", line + b"\n{}\n")
    node.loader = NODE
    assert node.record(node.lines[0]) == {"a": "\ufffd"}  # Node: the record is read...
    assert [e.message for e in node.errors] == [  # ...and its damaged bytes reported
        "invalid UTF-8 at byte 6 of the record (the vendor reads U+FFFD in its place)"
    ]
    assert strict.record(strict.lines[0]) is None
    assert [e.message for e in strict.errors] == ["invalid UTF-8 at byte 6 of the record"]


def test_a_pi_record_with_an_invalid_byte_is_read_by_node_and_reported() -> None:
    """Pi reads its file with readFileSync("utf8"): the prompt stays in the replayed chain
    (no TD404 past it) and its damaged byte is TD001; fix leaves the line alone."""
    path = next((FIXTURES / "pi" / "tools" / "sessions").glob("*/*.jsonl"))
    data = path.read_bytes().replace(b"Run echo, then read", b"Run \xe9cho, then read")
    assert [(code, line) for code, line, _ in found("p.jsonl", data)] == [("TD001", 4)]
    options = engine.Options(Selection.build(["ALL"]), _catalog())
    assert fixer.fix_bytes("p.jsonl", data, options).after == data


# -- D20: what the vendor's parser accepts is not unparseable ------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"a":"\\ud800"}', "a lone surrogate escape (\\ud800), which is not valid Unicode"),
        (b'{"a":"\\udc00"}', "a lone surrogate escape (\\udc00), which is not valid Unicode"),
        (b'{"\\uDBFF":1}', "a lone surrogate escape (\\udbff), which is not valid Unicode"),
        (b'{"a":1e400}', "a number beyond the range of a double"),
        (b'{"a":[-1.5E999]}', "a number beyond the range of a double"),
        (b'{"a":-1' + b"0" * 400 + b"}", "a number beyond the range of a double"),  # an integer literal
        (b'{"a":"no Infinity here","b":1e400}', "a number beyond the range of a double"),
        (b'{"a":NaN}', "NaN or Infinity, which JSON does not allow"),
        (b'{"a":-Infinity}', "NaN or Infinity, which JSON does not allow"),
        (
            b'{"a":"\\udc00","b":1e400}',
            "a number beyond the range of a double; a lone surrogate escape (\\udc00), which is not valid Unicode",
        ),
    ],
)
def test_records_only_stdlib_reads_name_their_cause(raw: bytes, message: str) -> None:
    node_reads = "NaN or Infinity" not in message
    for loader, reads in ((STRICT, False), (NODE, node_reads), (PYTHON, True)):
        source = sniff("x.jsonl", raw + b"\n")
        source.loader = loader
        assert source.record(source.lines[0]) is not None  # the value is analysed in any case
        assert [e.message for e in source.errors] == ([] if reads else [message]), loader.name


def test_a_raw_control_character_is_read_only_by_a_loader_that_takes_it() -> None:
    """Kimi CLI restores with json.loads(line, strict=False): a raw TAB inside a string is
    no damage there, and the record keeps its place; every other loader reports it."""
    from transcript_doctor.readers.kimi_cli.reader import KIMI

    raw = b'{"a":"x\ty","b":"\\ud800"}'  # a raw TAB, and the escape of a lone surrogate
    strict = ["invalid JSON: Invalid control character at column 8"]
    for loader, errors in (
        (STRICT, strict),
        (PYTHON, strict),
        (
            KIMI,
            [
                "a lone surrogate escape (\\ud800), which is not valid Unicode; "
                "a raw control character inside a string (JSON requires an escape)"
            ],
        ),
    ):
        source = sniff("x.jsonl", raw + b"\n")
        source.loader = loader
        value = source.record(source.lines[0])
        assert [e.message for e in source.errors] == errors, loader.name
        assert (value is not None) is (loader is KIMI)
    source = sniff("x.jsonl", b'{"a":"x\ty"}\n')
    source.loader = KIMI
    assert source.record(source.lines[0]) == {"a": "x\ty"} and source.errors == []


def test_a_lone_surrogate_is_reported_only_where_a_parser_on_the_way_rejects_it() -> None:
    gemini = FIXTURES / "gemini-cli" / "gen-resumed-dup-response__session-2026-11-29T21-45-2c95bea0.jsonl"
    clean = gemini.read_bytes()
    # Gemini CLI: JSON.parse reads both; no finding.
    assert found(gemini.name, clean + b'{"$set":{"summary":"\\udc00","n":1e400}}\n') == found(
        gemini.name, clean
    )
    # Claude Code: JSON.parse reads it too, but the Anthropic API refuses the resumed session.
    extra = b'{"type":"summary","summary":"\\udc00 and","n":1e400,"leafUuid":"x"}\n'
    lines = len(CLAUDE.read_bytes().splitlines())
    assert found("s.jsonl", CLAUDE.read_bytes() + extra) == [
        *found("s.jsonl", CLAUDE.read_bytes()),
        (
            "TD001",
            lines + 1,
            "a number beyond the range of a double; a lone surrogate escape (\\udc00), which is not valid Unicode",
        ),
    ]
    # openai-chat lists go to an API whose parser is strict: the same record is TD001 there.
    chat = b'{"role":"user","content":"hi \\udc00"}\n{"role":"assistant","content":"ok"}\n'
    assert [(c, n) for c, n, _ in found("c.jsonl", chat, "openai-chat")] == [("TD001", 1)]


def test_a_document_with_a_bom_and_a_surrogate_is_still_read() -> None:
    source = sniff("x.json", b'\xef\xbb\xbf[{"role":"user","content":"\\ud800"}]')
    assert source.value == [{"role": "user", "content": "\ud800"}]
    assert [e.message for e in source.errors][-1] == (
        "a lone surrogate escape (\\ud800), which is not valid Unicode"
    )


# -- D9: a junk line is a TD001, not an unknown layout -------------------------------


def test_a_null_line_does_not_make_the_session_an_unknown_layout() -> None:
    data = (REPRO / "junk-line.jsonl").read_bytes()
    report = lint_bytes("s.jsonl", data)
    assert report.reader == "claude-code"
    assert [(f.finding.rule.code, f.origin.line) for f in report.findings] == [("TD001", 5), ("TD301", 6)]
    assert report.findings[0].finding.message == "a JSON null where a record object belongs"
    assert not report.findings[0].fixable


@pytest.mark.parametrize(
    ("junk", "what"),
    [(b"null", "null"), (b"[]", "array"), (b"42", "number"), (b'"x"', "string"), (b"true", "boolean")],
)
def test_non_object_lines_are_td001_in_every_jsonl_layout(junk: bytes, what: str) -> None:
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    data = b"".join([lines[0], junk + b"\n", *lines[1:]])
    assert found("s.jsonl", data)[0] == ("TD001", 2, f"a JSON {what} where a record object belongs")
    assert lint_bytes("s.jsonl", data).reader == "claude-code"
    options = engine.Options(Selection.build(["ALL"]), _catalog())
    assert fixer.fix_bytes("s.jsonl", data, options).after == data  # nothing to guess


# -- D13: the glued record is found in one pass ---------------------------------------


@pytest.mark.parametrize(
    ("raw", "start"),
    [
        (b'{"type":"pr-link","prNu{"parentUuid":null,"uuid":"u1"}', 23),
        (b'{"a":"b\\\\{"c":{"d":"}"}}', 9),  # an escaped backslash before the glue
        (b'{"a":"x\\"{\\"y"{"c":1}', 14),  # an escaped quote: the stub's string goes on
        (b'{"a":[{"b":1},{"c":2', 0),  # torn: no closing brace at all
        (b'{"a":{"b":1}', 0),  # torn after an inner object: ends in a whole one, is not two
        (b'{"a":1}{"b":[1,{"c":"}{\\""}]}', 7),
        (b'{"a":1}{}', 0),  # an empty object is no record
        (b'[1]{"a":1}', 0),
        (b'{"a":"\\\\\\\\"}{"b":"\\\\\\""}', 12),
        (b'{"a":1}  {"b":2}  ', 9),
        (b'{"a":1}{"b":2}}', 0),  # unbalanced
        (b'{"a":1}x{"b":{"c":2}', 13),  # as before: a line wrong mid-way ending in an object
    ],
)
def test_glued_record_start(raw: bytes, start: int) -> None:
    assert _glued_record_start(raw) == start
    assert start == _quadratic_glued_record_start(raw) or _cut_short(raw)


def _quadratic_glued_record_start(raw: bytes) -> int:
    """The former search, for comparison: every ``{"`` tried by parsing what follows."""
    if not raw.startswith(b"{"):
        return 0
    pos = raw.find(b'{"', 1)
    while pos > 0:
        try:
            if isinstance(orjson.loads(raw[pos:]), dict):
                return pos
        except orjson.JSONDecodeError:
            pass
        pos = raw.find(b'{"', pos + 1)
    return 0


def test_glued_search_agrees_with_parsing_every_candidate() -> None:
    import random

    rng = random.Random(16)
    lines = [
        line
        for path in sorted(FIXTURES.rglob("*.jsonl"))[:12]
        for line in path.read_bytes().split(b"\n")
        if line
    ]
    for _ in range(400):
        first, second = rng.choice(lines), rng.choice(lines)
        raw = (
            first[: rng.randrange(1, len(first))]
            + second[: rng.choice([len(second), rng.randrange(1, len(second) + 1)])]
        )
        new, old = _glued_record_start(raw), _quadratic_glued_record_start(raw)
        assert new == old or (new == 0 and _cut_short(raw)), raw[:200]


def test_a_torn_record_ending_in_an_inner_object_is_dropped_whole() -> None:
    data = CLAUDE.read_bytes() + b'{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}'
    source = sniff("s.jsonl", data)
    for line in source.lines:
        source.record(line)
    (error,) = source.errors
    assert (error.repair, error.keep_from) == ("drop", 0)


# -- D12: a lone surrogate in an id or a file name fails no output --------------------

FORMATS = ["full", "concise", "json", "jsonl", "github", "sarif"]
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


@pytest.mark.parametrize("output", FORMATS)
def test_every_format_writes_a_lone_surrogate_as_its_escape(output: str) -> None:
    result = cli("lint", "-o", output, "surrogate-id.jsonl", cwd=REPRO)
    assert (result.returncode, result.stderr) == (1, "")
    assert "c\\ud8002bc748a-c58f-47c8-bc82-62bd95ea2a1f" in result.stdout.replace("\\\\", "\\")
    if output in ("json", "sarif"):
        orjson.loads(result.stdout)  # strict parsers read it


def test_fix_writes_report_diff_and_summary_for_hostile_names(tmp_path: Path) -> None:
    name = b"caf\xe9\x1b]52;c;eA==\x07\n::error::x.jsonl"
    (tmp_path / os.fsdecode(name)).write_bytes((REPRO / "surrogate-id.jsonl").read_bytes())
    result = cli("fix", "--unsafe-fixes", "--out", "o", "--report", "r.json", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "caf\\udce9\\x1b]52;c;eA==\\x07\\n::error::x.jsonl: fixed 1 finding(s) (TD404)\n"
        "Fixed 1 finding(s) in 1 file(s); 0 left.\n"
    )
    (entry,) = orjson.loads((tmp_path / "r.json").read_bytes())["files"]
    assert entry["path"] == "caf\\udce9\x1b]52;c;eA==\x07\n::error::x.jsonl"
    assert entry["fixes"][0]["message"].startswith("parent c\\ud8002bc748a-")
    header = b'--- "a/caf\\351\\033]52;c;eA==\\a\\n::error::x.jsonl"\n'
    assert (tmp_path / "r.diff").read_bytes().startswith(header)
    diff = cli("fix", "--unsafe-fixes", "--diff", ".", cwd=tmp_path)
    assert diff.returncode == 1 and diff.stdout.encode().startswith(header)
    assert (tmp_path / "o" / os.fsdecode(name)).exists()


# -- D15/D16: no control character and no line break from a transcript reaches a terminal


@pytest.mark.parametrize("output", ["full", "concise", "github"])
@pytest.mark.parametrize("name", ["hostile.json", "osc-st.json"])
def test_lint_output_holds_no_control_character_from_the_transcript(output: str, name: str) -> None:
    result = cli("lint", "-o", output, name, cwd=REPRO)
    assert result.returncode == 1
    assert UNSAFE.search(result.stdout + result.stderr) is None
    lines = result.stdout.splitlines()
    if output == "github":
        assert all(line.startswith("::error file=") for line in lines)
    else:
        assert not any(line.lstrip().startswith("::") for line in lines)


def test_concise_shows_the_escapes_as_text() -> None:
    result = cli("lint", "-o", "concise", "osc-st.json", cwd=REPRO)
    assert result.stdout.splitlines()[0] == (
        "osc-st.json:1: TD301 [*] error: tool call t\\x1b]52;c;ZWNobyBwd25lZAo=\\x1b\\ "
        "(\\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\) has no result, "
        "but the conversation continues at line 1 at /2"
    )


@pytest.mark.parametrize("mode", [("--diff",), ("--out", "o")])
def test_fix_summary_holds_no_control_character(tmp_path: Path, mode: tuple[str, ...]) -> None:
    for name in ("hostile.json", "osc-st.json"):
        (tmp_path / name).write_bytes((REPRO / name).read_bytes())
    damaged = CLAUDE.read_bytes() + b'{"type":"summary","summary":"\\u001b[2J","leafUuid":"x"}\n{"a":'
    (tmp_path / "s\x1b[31m.jsonl").write_bytes(damaged)
    result = cli("fix", *mode, "hostile.json", "osc-st.json", "s\x1b[31m.jsonl", cwd=tmp_path)
    summary = result.stderr if mode == ("--diff",) else result.stdout
    done = "Would fix" if mode == ("--diff",) else "Fixed"
    assert "s\\x1b[31m.jsonl: " in summary and f"{done} 4 finding(s) in 3 file(s)" in summary
    assert UNSAFE.search(summary) is None
    assert not any(line.startswith("::") for line in summary.splitlines())


def test_error_lines_escape_the_file_name(tmp_path: Path) -> None:
    result = cli("lint", "missing\x1b]52;c;eA==\x07.jsonl", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        result.stderr
        == "transcript-doctor: cannot read missing\\x1b]52;c;eA==\\x07.jsonl: No such file or directory\n"
    )


# -- D21: .gitignore as git reads it ---------------------------------------------------

TREE = [
    "docs/a.jsonl",
    "docs/x/b.jsonl",
    "docs/x/y/c.jsonl",
    "docs/z/d.jsonl",
    "top.jsonl",
    "x/e.jsonl",
    "a/docs/x/f.jsonl",
    "foo/bar.jsonl",
    "foox/q/bar.jsonl",
    "b[1]/i.jsonl",
    "!imp.jsonl",
    "sp .jsonl",
    "Docs/j.jsonl",
    "a/b/c/k.jsonl",
]
IGNORES = [
    ("docs/**\n!docs/x/\n", None),  # the case: the folder is back, its files are not
    ("docs/*\n!docs/x/\n", None),
    ("docs/**/\n", None),  # folders inside docs, not docs's own files
    ("docs/**\n!docs/x/\n!docs/x/**\n", None),
    ("!docs/x/\n!docs/x/**\ndocs/x/y\n", None),
    ("docs/\n!docs/x/\n", None),  # nothing comes back from inside an ignored folder
    ("*\n!*/\n!*.jsonl\ndocs/x/\n", None),
    ("foo**/bar.jsonl\n**/x/\n!x\n", None),
    ("[dD]ocs/\n\\!imp.jsonl\nsp\\ .jsonl\nb\\[1\\]/\n", None),
    ("a/**/k.jsonl\n[z-a]*\ndocs/[[:alpha:]].jsonl\n", None),
    ("docs/**\n", "!x/\n!*.jsonl\n"),
    ("/docs\n", "!x/\n"),
    ("x/\n", "*\n!*/\n!b.jsonl\n"),
]


def _repo(tmp_path: Path, top: str, inner: str | None) -> Path:
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in TREE:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    (tmp_path / ".gitignore").write_text(top)
    if inner is not None:
        (tmp_path / "docs" / ".gitignore").write_text(inner)
    return tmp_path


def _git_lists(repo: Path) -> tuple[list[str], list[str]]:
    import subprocess

    def run(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout
        return sorted(name for name in out.split("\n") if name.endswith(".jsonl"))

    return run("ls-files", "--others", "--exclude-standard"), run(
        "ls-files", "--others", "--ignored", "--exclude-standard"
    )


@pytest.mark.parametrize(("top", "inner"), IGNORES)
def test_gitignore_matches_git(
    tmp_path: Path, top: str, inner: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transcript_doctor import walk

    repo = _repo(tmp_path, top, inner)
    kept, ignored = _git_lists(repo)
    monkeypatch.chdir(repo)
    walked = sorted(
        t.path for t in walk.expand(["."]) if isinstance(t, walk.Target) and t.path.endswith(".jsonl")
    )
    assert walked == kept
    # Named on the command line with --force-exclude (pre-commit): the same verdicts.
    named = [t.path for t in walk.expand(TREE, force_exclude=True) if isinstance(t, walk.Target)]
    assert sorted(set(TREE) - set(named)) == ignored


def test_info_exclude_counts_and_a_gitignore_overrides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transcript_doctor import walk

    repo = _repo(tmp_path, "!top.jsonl\n", None)
    (repo / ".git" / "info" / "exclude").write_text("top.jsonl\nx/\n")
    kept, _ = _git_lists(repo)
    monkeypatch.chdir(repo)
    walked = sorted(
        t.path for t in walk.expand(["."]) if isinstance(t, walk.Target) and t.path.endswith(".jsonl")
    )
    assert walked == kept and "top.jsonl" in kept and "x/e.jsonl" not in kept


def test_a_repository_inside_another_follows_its_own_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outer repository's .gitignore stops at a nested repository's folder, as in git,
    whether the walk starts inside it or reaches it from outside."""
    import subprocess

    from transcript_doctor import walk

    outer = _repo(tmp_path, "*.jsonl\n", None)
    inner = outer / "inner"
    subprocess.run(["git", "init", "-q", str(inner)], check=True)
    (inner / "a.jsonl").write_text("{}")
    kept, _ = _git_lists(inner)
    assert kept == ["a.jsonl"]
    monkeypatch.chdir(inner)
    assert [t.path for t in walk.expand(["."]) if isinstance(t, walk.Target)] == ["a.jsonl"]
    monkeypatch.chdir(outer)
    walked = [t.path for t in walk.expand(["."]) if isinstance(t, walk.Target)]
    assert "inner/a.jsonl" in walked and not any(p.endswith(".jsonl") and "/" not in p for p in walked)
    # A submodule or worktree names its repository in a .git file: its folder is one too.
    module = outer / "module"
    module.mkdir()
    (module / ".git").write_text("gitdir: ../.git/modules/module\n")
    (module / "b.jsonl").write_text("{}")
    assert "module/b.jsonl" in [t.path for t in walk.expand(["."]) if isinstance(t, walk.Target)]


def test_a_file_of_array_lines_is_no_transcript() -> None:
    data = b'[{"role":"user","content":"hi"}]\n[{"role":"assistant","content":"ok"}]\n'
    report = lint_bytes("a.jsonl", data)
    assert (report.findings, report.skipped) == ([], "not a transcript: no line is a JSON object")


def test_a_diff_keeps_a_record_with_a_raw_line_separator_on_one_line() -> None:
    lines = CLAUDE.read_bytes().split(b"\n")
    last = lines[-2].replace(b'"summary":"', '"summary":"a\u2028b\u0085c '.encode(), 1)
    assert last != lines[-2]
    data = b"\n".join([*lines[:-2], last, b""]) + b'{"type":"user","mess'
    outcome = fixer.fix_bytes("s.jsonl", data, engine.Options(Selection.build(["ALL"]), _catalog()))
    from transcript_doctor.fixreport import unified_diff

    diff = unified_diff(outcome).split("\n")
    assert all(line[:1] in (" ", "+", "-", "@", "\\") for line in diff if line), diff
    assert f" {last.decode()}" in diff and diff[-3:] == [
        '-{"type":"user","mess',
        "\\ No newline at end of file",
        "",
    ]


def test_an_invalid_byte_in_the_first_records_hides_no_layout() -> None:
    data = (
        (REPRO / "latin1-user-prompt-qwen.jsonl").read_bytes().replace(b'"cwd":"/tmp/', b'"cwd":"/t\xefmp/')
    )
    report = lint_bytes("q.jsonl", data)  # every line has an invalid byte
    assert report.reader == "qwen-code"
    assert [
        (f.finding.rule.code, f.origin.line) for f in report.findings if f.finding.rule.code == "TD001"
    ] == [("TD001", n) for n in range(1, 9)]


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":"g9","timestamp":"t","type":"gemini","content":"T\xa0e answer.   "}',  # fuzz seed 35325
        b'{"id":"g9","timestamp":"t","type":"gemini","content":"The answer.   ","k\xe9y":1}',
        b'{"id":"g9","timestamp":"t","type":"gemini","content":"The answer.   ","k\xe9\\u0079":1}',
        b'{"id":"g9","timestamp":"t","type":"gemini","content":"The answer.   ","\\ud800":1}',
    ],
)
def test_a_record_read_with_replacement_is_never_edited_blindly(line: bytes) -> None:
    """Found by the fuzzer: a Gemini reply with an invalid byte and trailing whitespace made
    the strip fix decode the string strictly (a crash)."""
    path = FIXTURES / "gemini-cli" / "gen-resumed-dup-response__session-2026-11-29T21-45-2c95bea0.jsonl"
    data = path.read_bytes() + line + b"\n"
    options = engine.Options(Selection.build(["ALL"]), _catalog())
    outcome = fixer.fix_bytes(path.name, data, options)
    assert outcome.error is None
    assert fixer.undo(outcome.after, outcome.steps) == data
    if b"\xa0e" in line:  # the damaged string itself is left as it is
        assert line in outcome.after


@pytest.mark.parametrize("columns", ["40", "60", "200"])
def test_a_wrapped_line_never_starts_a_workflow_command(tmp_path: Path, columns: str) -> None:
    """The Actions runner trims leading spaces before looking for ``::``: a message wrapped
    at a space must not put one at the start of a line."""
    name = "Bash ::error file=x,line=1::INJECTED ::warning::W"
    conversation = [
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1 ::notice::N", "name": name, "input": {}}],
        },
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "done"},
    ]
    (tmp_path / "c.json").write_bytes(orjson.dumps(conversation))
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": columns, "TERM": "dumb"}
    import subprocess
    import sys

    for output in ("full", "concise"):
        result = subprocess.run(
            [sys.executable, "-m", "transcript_doctor", "lint", "--show-fixes", "-o", output, "c.json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 1 and "INJECTED" in result.stdout
        assert not any(line.lstrip().startswith("::") for line in result.stdout.splitlines()), result.stdout


# -- A file is read whole, whatever its size says ----------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_read_to_its_end(tmp_path: Path) -> None:
    """A path whose size says 0 and whose bytes come in pieces (a named pipe a script
    feeds) is read to its end and linted as the file itself: a read of the size the file
    system states would see nothing."""
    from transcript_doctor import linting

    data = (FIXTURES / "claude-code" / "damaged-unanswered-tool-use.jsonl").read_bytes()
    assert len(data) > 4096  # more than one write
    options = engine.Options(Selection.build(), _catalog())
    with fed_pipe(tmp_path / "session.jsonl", data) as pipe:
        report = linting.check(str(pipe), options)
    expected = linting.check_data(str(pipe), data, options)
    assert report.findings  # the fixture's damage: a file read short would hide it
    assert [(f.finding.rule.code, f.origin.line) for f in report.findings] == [
        (f.finding.rule.code, f.origin.line) for f in expected.findings
    ]
