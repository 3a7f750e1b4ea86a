"""Hostile and damaged input: each is a finding or a one-line note, never a traceback,
and never exit 2 for a problem of the transcript itself."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from support import FIXTURES, cli, lint_bytes

from transcript_doctor import catalog, engine, fixer, linting, readers
from transcript_doctor.checks import Selection

CLAUDE = FIXTURES / "claude-code" / "codemie-incremental-simple-turn-1.jsonl"
QWEN = FIXTURES / "qwen-code" / "gen-tool-call-with-thought__307abf63-a3fe-471e-9f54-adcb69726de9.jsonl"


def codes(name: str, data: bytes, reader: str | None = None) -> list[tuple[str, int]]:
    report = lint_bytes(name, data, reader)
    assert report.error is None, report.error
    return [(f.finding.rule.code, f.origin.line) for f in report.findings]


@pytest.mark.parametrize("name", ["empty.jsonl", "empty.json", "blank.jsonl"])
def test_empty_files_are_not_transcripts(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\n\n" if name.startswith("blank") else b"")
    result = cli("lint", "-o", "concise", str(path))
    assert result.returncode == 0
    assert result.stderr.startswith(f"transcript-doctor: {path}: skipped, not a transcript")


def test_binary_file_named_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "blob.jsonl"
    path.write_bytes(bytes(range(256)) * 64)
    result = cli("lint", str(path))
    assert (result.returncode, result.stdout.count("\n")) == (0, 2)
    assert "skipped, not a transcript" in result.stderr


def test_valid_json_that_is_not_a_transcript(tmp_path: Path) -> None:
    path = tmp_path / "tsconfig.json"
    path.write_text(json.dumps({"compilerOptions": {"strict": True}, "include": ["src"]}))
    assert cli("lint", "-q", str(path)).returncode == 0


def test_bom_invalid_utf8_nul_surrogate_nan_in_a_real_session() -> None:
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    damaged = [b"\xef\xbb\xbf" + lines[0], *lines[1:4]]
    damaged.append(b'{"type":"summary","summary":"caf\xe9","leafUuid":"x"}\n')  # Latin-1, not UTF-8
    damaged.append(b'{"type":"summary","summary":"\\ud800","leafUuid":"x"}\n')
    damaged.append(b'{"type":"summary","summary":NaN,"leafUuid":"x"}\n')
    damaged.append(b"\0" * 40 + b"\n")
    damaged.extend(lines[4:])
    found = codes("s.jsonl", b"".join(damaged), "claude-code")
    assert [c for c in found if c[0] == "TD001"] == [
        ("TD001", 1),
        ("TD001", 5),
        ("TD001", 6),  # JSON.parse reads the lone surrogate, the Anthropic API rejects it
        ("TD001", 7),
        ("TD001", 8),
    ]


def test_a_nul_run_at_the_end_is_a_torn_line_fix_drops() -> None:
    data = QWEN.read_bytes() + b"\0" * 4096
    assert codes("q.jsonl", data)[-1] == ("TD001", 9)
    outcome = fixer.fix_bytes("q.jsonl", data, _options())
    assert outcome.after == QWEN.read_bytes()


def test_garbage_before_a_torn_tail_is_not_peeled_off() -> None:
    data = QWEN.read_bytes() + b'{"uuid": "x", garbage}\n{"uuid":"y","par'
    outcome = fixer.fix_bytes("q.jsonl", data, _options())
    assert outcome.after == QWEN.read_bytes() + b'{"uuid": "x", garbage}\n'
    assert [f.finding.rule.code for f, _ in outcome.remaining] == ["TD001"]


def test_integers_beyond_64_bits_survive_fix_byte_for_byte(tmp_path: Path) -> None:
    big = b"184467440737095516170000"
    data = (
        b'[{"role":"user","content":"hi","n":' + big + b"},"
        b'{"role":"assistant","content":"(request timeout)","n":' + big + b"},"
        b'{"role":"assistant","content":"ok.  ","n":-' + big + b".5e400}]"
    )
    outcome = fixer.fix_bytes("x.json", data, _options())
    assert outcome.after == (
        b'[{"role":"user","content":"hi","n":' + big + b"},"
        b'{"role":"assistant","content":"ok.","n":-' + big + b".5e400}]"
    )
    assert fixer.undo(outcome.after, outcome.steps) == data


def test_deeply_nested_json() -> None:
    deep = b"[" * 5000 + b"]" * 5000
    line = b'{"role":"user","content":"hi","x":' + deep + b"}\n"
    found = codes("x.jsonl", line + b'{"role":"assistant","content":"ok"}\n', "openai-chat")
    assert found == [("TD001", 1)]
    report = lint_bytes("x.json", b'{"messages":[{"role":"user","content":' + deep + b"}]}")
    assert report.error is None


def test_a_single_50_mb_line() -> None:
    text = "x" * (50 << 20)
    data = json.dumps({"role": "user", "content": text}).encode() + b"\n"
    data += b'{"role":"assistant","content":"ok"}\n'
    assert codes("big.jsonl", data, "openai-chat") == []


def test_crlf_and_no_final_newline_read_like_lf() -> None:
    lf = QWEN.read_bytes()
    crlf = lf.replace(b"\n", b"\r\n").rstrip(b"\r\n")
    assert codes("q.jsonl", crlf) == codes("q.jsonl", lf) == []


def test_wrong_field_types_in_every_layout() -> None:
    """A record of the right layout with the wrong types (a string for a list, a null id)."""
    for path in sorted(FIXTURES.rglob("*.json*")):
        data = path.read_bytes()
        for old, new in (
            (b'"content":[', b'"content":"[",'),
            (b'"id":"', b'"id":null,"x":"'),
            (b'"parts":[', b'"parts":{"a":['),
            (b'"type":"', b'"type":["'),
            (b'"message":{', b'"message":[{'),
        ):
            if old in data:
                report = lint_bytes(path.name, data.replace(old, new, 3))
                assert report.error is None, (path.name, old, report.error)


def test_unreadable_file_and_folder_are_reported_and_the_run_goes_on(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    good = tmp_path / "good.json"
    good.write_bytes((FIXTURES / "openai-chat" / "damaged-turns.json").read_bytes())
    locked = tmp_path / "locked.json"
    locked.write_text("[]")
    folder = tmp_path / "private"
    folder.mkdir()
    real_open = os.open

    def locked_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]  # root reads any file
        if os.fspath(file).endswith("locked.json"):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if str(path).endswith("private"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "open", locked_open)  # linting reads through the descriptor
    monkeypatch.setattr(os, "scandir", scandir)
    result = linting.run(
        [str(tmp_path)], _options(), linting.Plan("concise", quiet=True, progress=False, jobs=1)
    )
    err = capsys.readouterr().err
    assert result.failed
    assert f"cannot read {locked}: Permission denied" in err
    assert f"cannot read {folder}: Permission denied" in err
    assert any(f.finding.rule.code == "TD201" for _, f in result.findings)


def test_symlink_loops_do_not_hang(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "loop").symlink_to(tmp_path)
    (tmp_path / "x.jsonl").symlink_to(tmp_path / "y.jsonl")
    (tmp_path / "y.jsonl").symlink_to(tmp_path / "x.jsonl")
    result = cli("lint", "-o", "concise", str(tmp_path))
    assert result.returncode == 2
    assert "Too many levels of symbolic links" in result.stderr


def test_read_only_folder_in_place_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    from transcript_doctor import writer

    path = tmp_path / "t.json"
    path.write_bytes((FIXTURES / "openai-chat" / "damaged-turns.json").read_bytes())

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(writer, "create_temp", refuse)
    with pytest.raises(writer.WriteRefused, match=f"cannot write beside {path}: Permission denied"):
        writer.replace(writer.Original.read(str(path))[0], b"[]")


def test_two_fixes_in_place_at_once_never_tear_the_file(tmp_path: Path) -> None:
    source = FIXTURES / "claude-code" / "damaged-unanswered-tool-use.jsonl"
    expected = fixer.fix_bytes(source.name, source.read_bytes(), _options()).after
    for round_ in range(5):
        path = tmp_path / f"s{round_}.jsonl"
        path.write_bytes(source.read_bytes())
        results: list[int] = []

        def run_fix(target: Path = path, sink: list[int] = results) -> None:
            sink.append(cli("fix", "--in-place", "-q", str(target)).returncode)

        runs = [threading.Thread(target=run_fix) for _ in range(2)]
        for run in runs:
            run.start()
        for run in runs:
            run.join()
        assert path.read_bytes() == expected
        # One repairs (1); the other finds it repaired (0) or the file replaced under it (2).
        assert 1 in results and set(results) <= {0, 1, 2}
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_100k_deep_parent_chain_and_100k_records() -> None:
    """No recursion and no quadratic step: a chain as deep as the file is long."""
    rows = []
    parent = None
    for number in range(100_000):
        uuid = f"00000000-0000-4000-8000-{number:012d}"
        kind = "user" if number % 2 == 0 else "assistant"
        message = (
            {"role": "user", "content": f"prompt {number}"}
            if kind == "user"
            else {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": None,
                "usage": {},
            }
        )
        rows.append(
            json.dumps(
                {
                    "parentUuid": parent,
                    "isSidechain": False,
                    "userType": "external",
                    "cwd": "/w",
                    "sessionId": "s",
                    "version": "2.1.4",
                    "type": kind,
                    "message": message,
                    "uuid": uuid,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                },
                separators=(",", ":"),
            )
        )
        parent = uuid
    data = ("\n".join(rows) + "\n").encode()
    assert codes("deep.jsonl", data) == []
    assert lint_bytes("deep.jsonl", data).reader == "claude-code"


def test_a_100k_deep_pi_tree_and_every_parent_missing() -> None:
    """Pi walks ``parentId`` from the last line: no recursion, and no quadratic step when
    every link dangles (only the last line's is TD404: Pi's walk stops there)."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w"}
    rows = [json.dumps(header)]
    parent = None
    for number in range(100_000):
        message = (
            {"role": "user", "content": [{"type": "text", "text": f"prompt {number}"}], "timestamp": 1}
            if number % 2 == 0
            else {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"}
        )
        entry = {
            "type": "message",
            "id": f"{number:08x}",
            "parentId": parent,
            "timestamp": "t",
            "message": message,
        }
        rows.append(json.dumps(entry, separators=(",", ":")))
        parent = f"{number:08x}"
    data = ("\n".join(rows) + "\n").encode()
    assert codes("deep.jsonl", data) == []
    assert lint_bytes("deep.jsonl", data).reader == "pi"
    dangling = ("\n".join(rows[:20_001]) + "\n").encode().replace(b'"parentId":"', b'"parentId":"x')
    found = codes("dangling.jsonl", dangling)
    assert found == [("TD404", 20_001)]  # the walk stops at the last line; the rest is off the path


def _options():  # type: ignore[no-untyped-def]
    from support import _catalog

    from transcript_doctor import engine

    return engine.Options(Selection.build(["ALL"]), _catalog())


def _unhashable(value: object, key: str) -> object:
    """Every value of ``key`` wrapped in an object (unhashable in Python)."""
    if isinstance(value, dict):
        return {k: ({"v": v} if k == key else _unhashable(v, key)) for k, v in value.items()}
    if isinstance(value, list):
        return [_unhashable(v, key) for v in value]
    return value


@pytest.mark.parametrize("reader", sorted(r.name for r in readers.all_readers()))
def test_unhashable_roles_and_types_under_every_forced_reader(reader: str) -> None:
    """Forced readers (``--reader``, config globs) read files detection would refuse."""
    for path in sorted(FIXTURES.rglob("*.json*")):
        data = path.read_bytes()
        try:
            if path.suffix == ".json":
                loaded = [json.loads(data)]
            else:
                loaded = [json.loads(line) for line in data.splitlines() if line.strip()]
        except ValueError:
            continue  # fixtures that are damaged on purpose
        for key in ("role", "type", "kind"):
            mutated = "\n".join(json.dumps(_unhashable(v, key)) for v in loaded).encode() + b"\n"
            for screen in (True, False):  # the screen would prove some clean before reading
                options = engine.Options(Selection.build(("ALL",)), catalog.load(), reader, screen=screen)
                report = engine.lint_bytes(path.name, mutated, options)
                assert report.error is None, (path.name, key, report.error)
