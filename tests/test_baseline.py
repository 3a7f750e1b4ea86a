"""``lint --baseline``: recorded findings stay hidden while lines move; new ones show."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from snapshots import Text
from support import FIXTURES, cli

OPENAI = FIXTURES / "openai-chat"
PAIRING = OPENAI / "damaged-tool-pairing.json"  # TD304, TD303, TD302, TD305
FINE_TUNING = OPENAI / "damaged-fine-tuning.jsonl"  # TD301 on its third line
CLEAN_LINE = (OPENAI / "clean-fine-tuning.jsonl").read_bytes().splitlines(keepends=True)[0]


def _project(tmp_path: Path, *files: Path) -> Path:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for source in files:
        shutil.copyfile(source, sessions / source.name)
    return sessions


def _concise(*args: str, cwd: Path) -> tuple[int, str, str]:
    result = cli("lint", "-o", "concise", *args, cwd=cwd)
    return result.returncode, result.stdout, result.stderr


def _pointers(cwd: Path) -> list[str]:
    return [f["pointer"] for f in json.loads(cli("lint", "-o", "json", "sessions", cwd=cwd).stdout)]


def test_write_baseline_records_every_finding_and_exits_0(tmp_path: Path, snapshot) -> None:
    _project(tmp_path, PAIRING, FINE_TUNING)
    code, out, err = _concise("--baseline", "td-baseline.json", "--write-baseline", "sessions", cwd=tmp_path)
    assert (code, out, err) == (0, "", "wrote 5 finding(s) to the baseline td-baseline.json\n")
    assert (tmp_path / "td-baseline.json").read_text() == snapshot(extension_class=Text)


def test_a_baselined_run_reports_nothing_and_says_what_it_hid(tmp_path: Path) -> None:
    _project(tmp_path, PAIRING, FINE_TUNING)
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    assert _concise("--baseline", "b.json", "sessions", cwd=tmp_path) == (
        0,
        "All checks passed (2 files checked).\n5 findings in the baseline not shown.\n",
        "",
    )
    full = cli("lint", "--baseline", "b.json", "sessions", cwd=tmp_path)
    assert (full.returncode, full.stdout) == (
        0,
        "All checks passed (2 files checked).\n5 findings in the baseline not shown.\n",
    )
    assert cli("lint", "-o", "json", "--baseline", "b.json", "sessions", cwd=tmp_path).stdout == "[]\n"


def test_new_findings_are_reported_when_lines_move(tmp_path: Path) -> None:
    """Lines prepended and a damaged line appended: the old finding's line moves from 3
    to 4 and stays hidden; the appended one is new."""
    sessions = _project(tmp_path, FINE_TUNING)
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    path = sessions / FINE_TUNING.name
    damaged = FINE_TUNING.read_bytes().splitlines(keepends=True)[2]
    fresh = damaged.replace(b"call_cat", b"call_dog")
    path.write_bytes(CLEAN_LINE + FINE_TUNING.read_bytes() + fresh)
    unfiltered = _concise("-q", "sessions", cwd=tmp_path)[1]
    assert [line.split(" ")[0] for line in unfiltered.splitlines()] == [
        "sessions/damaged-fine-tuning.jsonl:4:",
        "sessions/damaged-fine-tuning.jsonl:5:",
    ]
    code, out, _ = _concise("--baseline", "b.json", "sessions", cwd=tmp_path)
    assert code == 1
    assert out.splitlines() == [
        "sessions/damaged-fine-tuning.jsonl:5: TD301 [*] error: tool call call_dog (cat) has no result, "
        "but the conversation continues at line 5 at /messages/2 (conversation on line 5)",
        "Found 1 finding (1 error).",
        "[*] 1 fixable with `transcript-doctor fix`.",
        "1 finding in the baseline not shown.",
    ]


def test_a_reformatted_document_with_shifted_indexes_keeps_its_fingerprints(tmp_path: Path) -> None:
    """A vendor rewrites a JSON document whole: other indentation, a turn inserted before
    the findings (every pointer index moves by two)."""
    sessions = _project(tmp_path, PAIRING)
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    path = sessions / PAIRING.name
    messages = json.loads(path.read_text())
    earlier = [{"role": "user", "content": "Good morning"}, {"role": "assistant", "content": "Morning!"}]
    path.write_text(json.dumps(earlier + messages, indent=4))
    assert _pointers(tmp_path)[-1] == "/9/tool_calls/0"  # TD305, at /7 when recorded
    assert _concise("--baseline", "b.json", "-q", "sessions", cwd=tmp_path) == (0, "", "")


def test_repairing_other_records_leaves_the_rest_hidden_and_the_fixed_entry_stale(tmp_path: Path) -> None:
    sessions = _project(tmp_path, PAIRING)
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    path = sessions / PAIRING.name
    assert (
        cli("fix", "--in-place", "--unsafe-fixes", "--select", "TD302", str(path)).returncode == 1
    )  # /6 removed
    assert _pointers(tmp_path)[-1] == "/6/tool_calls/0"  # TD305, at /7 when recorded
    assert _concise("--baseline", "b.json", "sessions", cwd=tmp_path) == (
        0,
        "All checks passed (1 file checked).\n"
        "3 findings in the baseline not shown.\n"
        "1 baseline entry matches no finding any more; `--write-baseline` updates it.\n",
        "",
    )


def test_findings_that_share_a_record_get_their_own_fingerprints(tmp_path: Path) -> None:
    """Two unanswered calls in one Qwen record (line 4, parts 0 and 1): the second is
    reported when only the first is in the baseline."""
    _project(tmp_path, FIXTURES / "qwen-code" / "damaged-parallel-unanswered.jsonl")
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    document = json.loads((tmp_path / "b.json").read_text())
    assert [(f["line"], f["rule"]) for f in document["findings"]] == [(4, "TD301"), (4, "TD301")]
    assert len({f["fingerprint"] for f in document["findings"]}) == 2
    kept = next(f for f in document["findings"] if "call_fake_ls_1" in f["message"])
    document["findings"] = [kept]
    (tmp_path / "b.json").write_text(json.dumps(document))
    code, out, _ = _concise("--baseline", "b.json", "-q", "sessions", cwd=tmp_path)
    assert code == 1
    assert [line.split(" error: ")[1][:30] for line in out.splitlines()] == ["tool call call_fake_ls_2 (run_"]


def test_identical_findings_are_counted(tmp_path: Path) -> None:
    """Values that are byte for byte the same are interchangeable: the baseline holds how
    many there were, and one more is reported."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    empty = {"role": "assistant", "content": ""}
    turns = [{"role": "user", "content": "a"}, empty, {"role": "user", "content": "b"}, empty]
    (sessions / "chat.json").write_text(json.dumps([*turns, {"role": "user", "content": "c"}]))
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    assert len(json.loads((tmp_path / "b.json").read_text())["findings"]) == 2
    more = [*turns, {"role": "user", "content": "c"}, empty, {"role": "user", "content": "d"}]
    (sessions / "chat.json").write_text(json.dumps(more))
    code, out, _ = _concise("--baseline", "b.json", "-q", "sessions", cwd=tmp_path)
    assert code == 1
    assert [line.split(": ")[1] for line in out.splitlines()] == ["TD103 [*] error"]


def test_paths_are_relative_to_the_baseline_file_not_the_working_folder(tmp_path: Path) -> None:
    sessions = _project(tmp_path, PAIRING)
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    paths = {f["path"] for f in json.loads((tmp_path / "b.json").read_text())["findings"]}
    assert paths == {"sessions/damaged-tool-pairing.json"}
    inside = _concise("--baseline", "../b.json", "-q", ".", cwd=sessions)
    absolute = _concise("--baseline", str(tmp_path / "b.json"), "-q", str(sessions), cwd=FIXTURES)
    assert inside == absolute == (0, "", "")


def test_parallel_workers_fingerprint_as_one_job_does(tmp_path: Path) -> None:
    _project(tmp_path, PAIRING, FINE_TUNING, *sorted((FIXTURES / "qwen-code").glob("damaged-*.jsonl")))
    cli("lint", "--baseline", "one.json", "--write-baseline", "-j", "1", "sessions", cwd=tmp_path)
    cli("lint", "--baseline", "two.json", "--write-baseline", "-j", "2", "sessions", cwd=tmp_path)
    assert (tmp_path / "one.json").read_text() == (tmp_path / "two.json").read_text()
    assert _concise("--baseline", "one.json", "-q", "-j", "2", "sessions", cwd=tmp_path) == (0, "", "")


def test_baseline_usage_errors_exit_2(tmp_path: Path) -> None:
    _project(tmp_path, PAIRING)
    missing = cli("lint", "--baseline", "nope.json", "sessions", cwd=tmp_path)
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        2,
        "",
        "transcript-doctor: no baseline nope.json: create it with --write-baseline\n",
    )
    (tmp_path / "bad.json").write_text('{"version": 2, "findings": []}')
    bad = cli("lint", "--baseline", "bad.json", "sessions", cwd=tmp_path)
    assert (bad.returncode, bad.stderr) == (
        2,
        'transcript-doctor: bad.json: not a transcript-doctor baseline (expected "version": 1)\n',
    )
    (tmp_path / "bad.json").write_text('{"version": 1, "findings": [{"path": "x"}]}')
    entry = cli("lint", "--baseline", "bad.json", "sessions", cwd=tmp_path)
    assert (entry.returncode, entry.stderr) == (
        2,
        "transcript-doctor: bad.json: findings[0] needs string path, rule and fingerprint\n",
    )
    alone = cli("lint", "--write-baseline", "sessions", cwd=tmp_path)
    assert alone.returncode == 2
    assert "--write-baseline needs --baseline FILE to write" in alone.stderr


def test_a_growing_document_of_unknown_layout_stays_baselined(tmp_path: Path) -> None:
    """TD002 names the whole file: messages appended to it do not make it new."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    turns = [{"role": "user", "parts": "a"}, {"role": "model", "parts": "b"}]
    (sessions / "odd.json").write_text(json.dumps({"conversation": turns}))
    assert _concise("-q", "sessions", cwd=tmp_path)[1].split(": ")[1] == "TD002 error"
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    (sessions / "odd.json").write_text(json.dumps({"conversation": [*turns, *turns]}))
    assert _concise("--baseline", "b.json", "-q", "sessions", cwd=tmp_path) == (0, "", "")


def test_a_torn_line_is_keyed_on_its_bytes(tmp_path: Path) -> None:
    sessions = _project(tmp_path, FIXTURES / "claude-code" / "damaged-torn-last-line.jsonl")
    cli("lint", "--baseline", "b.json", "--write-baseline", "sessions", cwd=tmp_path)
    assert _concise("--baseline", "b.json", "-q", "sessions", cwd=tmp_path) == (0, "", "")
    path = sessions / "damaged-torn-last-line.jsonl"
    path.write_bytes(path.read_bytes() + b'{"torn')  # another torn tail: the first is now mid-file
    code, out, _ = _concise("--baseline", "b.json", "-q", "sessions", cwd=tmp_path)
    assert code == 1
    assert [line.split(": ")[1] for line in out.splitlines()] == ["TD001 error"]
