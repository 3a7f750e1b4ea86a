"""``fix`` of a Mistral Vibe session: ``messages.jsonl`` and its ``meta.json`` together.

Repairs that add or remove a line change the count Vibe keeps in ``meta.json``
``total_messages`` (its next save on an interactive resume appends from it), so ``fix``
writes both files: the exact bytes of both, the report and ``--diff`` holding both, the
companion written first (a crash between the two renames leaves a state the next ``fix``
completes), and the refusals where ``meta.json`` cannot be seen or edited.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from snapshots import Text
from support import FIXTURES, _catalog, cli, findings
from syrupy.assertion import SnapshotAssertion

from transcript_doctor import engine, fixer, writer
from transcript_doctor.checks import Selection
from transcript_doctor.readers.mistral_vibe.repair import REPAIR, message_count
from transcript_doctor.source import sniff

DIR = FIXTURES / "mistral-vibe"
FOLDER = "session_20261202_003735_343a3d07"
TOOLS = DIR / "tools" / "sessions" / FOLDER  # the 10 lines Vibe wrote, and its meta.json
ORPHAN = DIR / "orphan-resume" / "sessions" / "session_20261202_004636_4387d5b5"  # TD301 at line 4
SYNTHETIC = (
    b'{"role": "tool", "content": "<tool_error>read: Tool result missing from the transcript '
    b'(the turn was interrupted); inserted by transcript-doctor.</tool_error>", "injected": false, '
    b'"name": "read", "tool_call_id": "R7tWc2NfA"}\n'
)


def _session(tmp_path: Path, source: Path, name: str = "s") -> Path:
    """A copy of a session folder; returns its messages.jsonl."""
    folder = tmp_path / name
    shutil.copytree(source, folder)
    return folder / "messages.jsonl"


def _orphan_fixed() -> tuple[bytes, bytes]:
    """The bytes of both files after the TD301 repair, built by hand."""
    lines = (ORPHAN / "messages.jsonl").read_bytes().splitlines(keepends=True)
    messages = b"".join([*lines[:4], SYNTHETIC, *lines[4:]])
    meta = (ORPHAN / "meta.json").read_bytes()
    assert meta.count(b'"total_messages": 8,') == 1
    return messages, meta.replace(b'"total_messages": 8,', b'"total_messages": 9,')


def _options(unsafe: bool = False) -> engine.Options:
    return engine.Options(Selection.build(("ALL",)), _catalog(), unsafe_fixes=unsafe)


def _undo(after: bytes, steps: list[dict[str, Any]]) -> bytes:
    def raw(step: dict[str, Any], key: str) -> bytes:
        return step[key].encode() if key in step else base64.b64decode(step[f"{key}_base64"])

    data = after
    for step in reversed(steps):
        offset = int(step["offset"])
        data = data[:offset] + raw(step, "old") + data[offset + len(raw(step, "new")) :]
    return data


# -- the repairs, both files ------------------------------------------------------------


def test_td301_inserts_the_result_and_raises_total_messages(tmp_path: Path) -> None:
    """The synthetic result in Vibe's own line shape, right after the call's turn (where
    Vibe fills it in memory); only the count's bytes of meta.json change."""
    path = _session(tmp_path, ORPHAN)
    result = cli("fix", "--in-place", str(path))
    assert result.returncode == 1, result.stderr
    assert result.stdout == (
        f"{path}: fixed 1 finding(s) (TD301); {path.parent / 'meta.json'} kept in step\n"
        "Fixed 1 finding(s) in 1 file(s); 0 left.\n"
    )
    messages, meta = _orphan_fixed()
    assert path.read_bytes() == messages
    assert (path.parent / "meta.json").read_bytes() == meta
    assert json.loads(meta)["total_messages"] == len(messages.splitlines())
    assert findings(path) == []


@pytest.mark.parametrize(
    ("shape", "rule", "unsafe"),
    [
        ("duplicated-user", "TD403", False),
        ("duplicate-result", "TD303", False),
        ("orphan-result", "TD302", True),
        ("empty-turn", "TD103", False),
    ],
)
def test_removals_lower_total_messages(tmp_path: Path, shape: str, rule: str, unsafe: bool) -> None:
    path = _session(tmp_path, DIR / "damaged" / shape / FOLDER)
    before = path.read_bytes()
    meta_before = (path.parent / "meta.json").read_bytes()
    count = json.loads(meta_before)["total_messages"]
    result = cli("fix", "--in-place", *(["--unsafe-fixes"] if unsafe else []), str(path))
    assert result.returncode == 1, result.stderr
    (line,) = [f for f in findings(DIR / "damaged" / shape / FOLDER / "messages.jsonl") if f[0] == rule]
    lines = before.splitlines(keepends=True)
    assert path.read_bytes() == b"".join(lines[: line[1] - 1] + lines[line[1] :])
    old, new = f'"total_messages": {count},'.encode(), f'"total_messages": {count - 1},'.encode()
    assert (path.parent / "meta.json").read_bytes() == meta_before.replace(old, new)
    assert findings(path) == []


@pytest.mark.parametrize("shape", ["duplicated-user", "duplicate-result"])
def test_removing_a_copy_gives_back_both_files_vibe_wrote(tmp_path: Path, shape: str) -> None:
    path = _session(tmp_path, DIR / "damaged" / shape / FOLDER)
    assert cli("fix", "--in-place", str(path)).returncode == 1
    assert path.read_bytes() == (TOOLS / "messages.jsonl").read_bytes()
    assert (path.parent / "meta.json").read_bytes() == (TOOLS / "meta.json").read_bytes()


def test_an_unsafe_removal_waits_for_unsafe_fixes_and_leaves_meta_json(tmp_path: Path) -> None:
    path = _session(tmp_path, DIR / "damaged" / "orphan-result" / FOLDER)
    meta = (path.parent / "meta.json").read_bytes()
    before = path.read_bytes()
    assert cli("fix", "--in-place", str(path)).returncode == 1  # TD302 left (error)
    assert (path.read_bytes(), (path.parent / "meta.json").read_bytes()) == (before, meta)


def test_a_count_neutral_repair_leaves_meta_json_alone(tmp_path: Path) -> None:
    """TD001 drops a torn final line that Vibe never counted: meta.json is not touched,
    even when its count disagrees (no finding names it)."""
    path = _session(tmp_path, DIR / "damaged" / "torn-final-line" / FOLDER)
    meta = path.parent / "meta.json"
    meta.write_bytes(meta.read_bytes().replace(b'"total_messages": 9,', b'"total_messages": 12,'))
    before = meta.read_bytes()
    result = cli("fix", "--in-place", str(path))
    assert result.returncode == 1
    assert "kept in step" not in result.stdout
    assert meta.read_bytes() == before


def test_the_count_is_what_vibes_save_counts() -> None:
    """Every line ``load_session`` takes except system messages (tests/fakemodel/recipes/
    mistral_vibe_count.py runs Vibe's own save on such files)."""
    data = (TOOLS / "messages.jsonl").read_bytes()
    assert message_count(sniff("m.jsonl", data)) == 10
    system = b'{"role": "system", "content": "x"}\n'
    assert message_count(sniff("m.jsonl", system + data)) == 10
    assert message_count(sniff("m.jsonl", data.replace(b"\n", b"\r\n"))) == 10
    assert message_count(sniff("m.jsonl", data + b'{"role": "user", "cont')) == 11


def test_second_fix_changes_neither_file(tmp_path: Path) -> None:
    path = _session(tmp_path, ORPHAN)
    assert cli("fix", "--in-place", str(path)).returncode == 1
    messages, meta = path.read_bytes(), (path.parent / "meta.json").read_bytes()
    again = cli("fix", "--in-place", str(path))
    assert again.returncode == 0, again.stdout
    assert (path.read_bytes(), (path.parent / "meta.json").read_bytes()) == (messages, meta)


# -- report, diff, --out ----------------------------------------------------------------


def test_the_report_holds_every_removed_byte_of_both_files(tmp_path: Path) -> None:
    path = _session(tmp_path, ORPHAN)
    report = tmp_path / "r.json"
    assert cli("fix", "--in-place", "--report", str(report), str(path)).returncode == 1
    (entry,) = json.loads(report.read_text())["files"]
    companion = entry["companion"]
    meta = path.parent / "meta.json"
    assert companion["path"] == str(meta)
    assert companion["records"] == [{"where": "/total_messages", "original": "8", "new": "9"}]
    assert _undo(path.read_bytes(), entry["steps"]) == (ORPHAN / "messages.jsonl").read_bytes()
    assert _undo(meta.read_bytes(), companion["steps"]) == (ORPHAN / "meta.json").read_bytes()
    assert companion["sha256_before"] == hashlib.sha256((ORPHAN / "meta.json").read_bytes()).hexdigest()
    assert companion["sha256_after"] == hashlib.sha256(meta.read_bytes()).hexdigest()
    assert [f["rule"] for f in entry["fixes"]] == ["TD301"]


def test_diff_shows_both_files(tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    path = _session(tmp_path, ORPHAN, "session_20261202_004636_4387d5b5")
    before = path.read_bytes(), (path.parent / "meta.json").read_bytes()
    result = cli("fix", "--diff", "session_20261202_004636_4387d5b5/messages.jsonl", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == snapshot(extension_class=Text)
    assert (
        result.stdout.count("\n--- a/") == 1
        and "+++ b/session_20261202_004636_4387d5b5/meta.json" in result.stdout
    )
    assert (path.read_bytes(), (path.parent / "meta.json").read_bytes()) == before


def test_out_writes_both_files(tmp_path: Path) -> None:
    path = _session(tmp_path, ORPHAN, "in")
    out = tmp_path / "out"
    result = cli("fix", "--out", str(out), "in/messages.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    messages, meta = _orphan_fixed()
    assert (out / "in" / "messages.jsonl").read_bytes() == messages
    assert (out / "in" / "meta.json").read_bytes() == meta
    assert path.read_bytes() == (ORPHAN / "messages.jsonl").read_bytes()  # the input is kept
    (entry,) = json.loads((out / "transcript-doctor-report.json").read_text())["files"]
    assert entry["companion"]["path"] == "in/meta.json"


def test_workers_repair_both_files_too(tmp_path: Path) -> None:
    """``-j``: a worker reads meta.json for its plan; the main process checks it is still
    the same before it writes both."""
    paths = [_session(tmp_path, ORPHAN, f"s{i}") for i in range(3)]
    result = cli("fix", "--in-place", "-j", "2", *map(str, paths))
    assert result.returncode == 1, result.stderr
    messages, meta = _orphan_fixed()
    for path in paths:
        assert (path.read_bytes(), (path.parent / "meta.json").read_bytes()) == (messages, meta)


# -- refusals ----------------------------------------------------------------------------


def test_standard_input_cannot_see_meta_json() -> None:
    data = (ORPHAN / "messages.jsonl").read_bytes()
    result = cli("fix", "-", "--stdin-filename", str(ORPHAN / "messages.jsonl"), stdin=data)
    assert result.returncode == 1
    assert result.stdout == data.decode()
    assert (
        "TD301 tool call R7tWc2NfA (read) has no result, but the conversation continues at line 5 [not fixed: "
        "inserting the missing result would raise the number of lines in messages.jsonl, which Mistral "
        "Vibe also counts in meta.json total_messages (its next save on resume appends from that count); "
        "fix sees this file alone here (standard input or bytes in memory), not the meta.json beside it]"
    ) in result.stderr


def test_in_memory_fix_refuses_with_the_reason() -> None:
    data = (ORPHAN / "messages.jsonl").read_bytes()
    outcome = fixer.fix_bytes(str(ORPHAN / "messages.jsonl"), data, _options())
    assert outcome.after == data and outcome.companion is None
    ((located, why),) = outcome.remaining
    assert located.finding.rule.code == "TD301"
    assert why.endswith(
        "; fix sees this file alone here (standard input or bytes in memory), not the meta.json beside it"
    )


def _refused(tmp_path: Path, change: Any) -> tuple[str, bytes, bytes]:
    path = _session(tmp_path, ORPHAN)
    change(path.parent / "meta.json")
    meta = path.parent / "meta.json"
    meta_before = meta.read_bytes() if meta.exists() else b""
    result = cli("fix", "--in-place", str(path))
    assert result.returncode == 1
    assert path.read_bytes() == (ORPHAN / "messages.jsonl").read_bytes()
    assert (meta.read_bytes() if meta.exists() else b"") == meta_before
    (line,) = [line for line in result.stdout.splitlines() if "TD301" in line]
    return line.split("; ", 1)[1], meta_before, path.parent.as_posix().encode()


def test_missing_meta_json_is_a_refusal(tmp_path: Path) -> None:
    why, _, _ = _refused(tmp_path, Path.unlink)
    assert why == f"there is no meta.json beside it ({tmp_path / 's' / 'meta.json'})]"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_meta_json_is_a_refusal(tmp_path: Path) -> None:
    why, _, _ = _refused(tmp_path, lambda meta: meta.chmod(0))
    assert why == f"{tmp_path / 's' / 'meta.json'} cannot be read: Permission denied]"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b'{"session_id": "x", "total_messages": 8', "not a JSON text Mistral Vibe can read"),
        (b"[8]", "not a JSON object"),
        (b'{"session_id": "x"}', "no total_messages (Mistral Vibe's save would fail on it)"),
        (b'{"total_messages": "8"}', "total_messages is not an integer"),
        (b'{"total_messages": 8.0}', "total_messages is not an integer"),
        (b'{"total_messages": true}', "total_messages is not an integer"),
        (
            b'{"total_messages": 7, "total_messages": 8}',
            "a key is written twice; which one Vibe reads is not edited",
        ),
    ],
)
def test_meta_json_that_cannot_be_edited_is_a_refusal(tmp_path: Path, text: bytes, reason: str) -> None:
    why, _, _ = _refused(tmp_path, lambda meta: meta.write_bytes(text))
    assert why == f"{tmp_path / 's' / 'meta.json'}: {reason}]"


def test_a_torn_line_is_still_dropped_without_meta_json(tmp_path: Path) -> None:
    """Only the repairs that need meta.json wait for it."""
    path = _session(tmp_path, ORPHAN)
    (path.parent / "meta.json").unlink()
    original = path.read_bytes()
    path.write_bytes(original + b'{"role": "user", "content": "to')
    result = cli("fix", "--in-place", str(path))
    assert result.returncode == 1
    assert path.read_bytes() == original
    assert "TD301" in result.stdout and "there is no meta.json beside it" in result.stdout


def test_a_bom_in_meta_json_is_kept(tmp_path: Path) -> None:
    path = _session(tmp_path, ORPHAN)
    meta = path.parent / "meta.json"
    meta.write_bytes(b"\xef\xbb\xbf" + meta.read_bytes())
    assert cli("fix", "--in-place", str(path)).returncode == 1
    assert meta.read_bytes() == b"\xef\xbb\xbf" + _orphan_fixed()[1]


def test_lint_marks_the_repair_fixable_and_sarif_offers_no_one_file_fix() -> None:
    """lint cannot know whether fix will see meta.json; a SARIF fix would change one file
    only, so none is offered for a repair that needs the companion."""
    from transcript_doctor.plain import replace

    data = (ORPHAN / "messages.jsonl").read_bytes()
    report = engine.lint_bytes(str(ORPHAN / "messages.jsonl"), data, replace(_options(), with_edits=True))
    (located,) = report.findings
    assert located.fixable and located.blocked is None
    assert located.edits is None
    assert REPAIR.needs_companion(located.finding.action) is not None  # type: ignore[arg-type]


# -- a crash between the two renames ------------------------------------------------------

KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from transcript_doctor import cli, writer
    def hook(point, target):
        if point == "after-rename":
            os.kill(os.getpid(), signal.SIGKILL)
    writer.HOOK = hook
    sys.exit(cli.run(sys.argv[1:]))
    """
)


def test_a_crash_between_the_renames_is_completed_by_the_next_fix(tmp_path: Path) -> None:
    """meta.json is renamed first: killed right after that rename, messages.jsonl is as it
    was, so lint still finds the damage, and the next fix inserts the result and finds the
    count already right.  (That halfway state is also one Vibe resumes correctly: it fills
    the result in memory, so its list is as long as the new count says; fixtures/
    mistral-vibe/halfway-resume.)"""
    path = _session(tmp_path, ORPHAN)
    meta = path.parent / "meta.json"
    report = tmp_path / "r.json"
    args = ["fix", "--in-place", "--report", str(report), str(path)]
    result = subprocess.run([sys.executable, "-c", KILLER, *args], capture_output=True, check=False)
    assert result.returncode == -signal.SIGKILL, result.stderr
    messages, fixed_meta = _orphan_fixed()
    assert meta.read_bytes() == fixed_meta
    assert path.read_bytes() == (ORPHAN / "messages.jsonl").read_bytes()
    # The undo record was on disk before the first rename; its hashes tell which file changed.
    lines = [json.loads(line) for line in (tmp_path / "r.json.journal").read_bytes().splitlines()]
    entry = lines[1]["file"]
    assert entry["companion"]["sha256_after"] == hashlib.sha256(meta.read_bytes()).hexdigest()
    assert entry["sha256_before"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert findings(path) == [("TD301", 4, "/tool_calls/0")]  # the re-lint still sees it
    again = cli("fix", "--in-place", "--report", str(tmp_path / "r2.json"), str(path))
    assert again.returncode == 1, again.stderr
    assert "kept in step" not in again.stdout  # the count was already what the repair needs
    assert (path.read_bytes(), meta.read_bytes()) == (messages, fixed_meta)
    (second,) = json.loads((tmp_path / "r2.json").read_text())["files"]
    assert "companion" not in second
    assert findings(path) == []


def test_when_the_transcript_cannot_be_replaced_meta_json_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _session(tmp_path, ORPHAN)
    meta = path.parent / "meta.json"

    def appended(point: str, target: str) -> None:
        if point == "before-rename" and target.endswith("messages.jsonl"):
            with open(target, "ab") as handle:  # Vibe appends meanwhile
                handle.write(b'{"role": "user", "content": "late", "injected": false}\n')

    monkeypatch.setattr(writer, "HOOK", appended)
    from transcript_doctor import cli as cli_module

    code = cli_module.run(["fix", "--in-place", str(path)])
    assert code == 2
    assert meta.read_bytes() == (ORPHAN / "meta.json").read_bytes()
    assert path.read_bytes().endswith(b'"late", "injected": false}\n')


def test_a_transcript_named_like_its_companion_is_not_its_own_companion(tmp_path: Path) -> None:
    path = tmp_path / "meta.json"
    path.write_bytes((ORPHAN / "messages.jsonl").read_bytes())
    result = cli("fix", "--in-place", str(path))
    assert result.returncode == 1
    assert path.read_bytes() == (ORPHAN / "messages.jsonl").read_bytes()
    assert "the file is named meta.json itself, not a transcript beside its meta.json]" in result.stdout
