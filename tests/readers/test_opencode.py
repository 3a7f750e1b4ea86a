"""Reader opencode: the SQLite store (lint, transactional fix) and the `opencode export` JSON.

Every database and export is one OpenCode 1.18.33 (or Kilo 7.7.9) wrote against the fake
model (fixtures/opencode/README.md).  Databases are copied to a temp folder before anything
opens them: opening a store may create its ``-shm``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from snapshots import Text
from support import FIXTURES, ROOT, cli, detected

from transcript_doctor import cli as td_cli

DIR = FIXTURES / "opencode"
TABLES = ("session", "message", "part")
SYNTHETIC = (
    "Tool result missing from the transcript (the turn was interrupted); inserted by transcript-doctor."
)


def copy(tmp_path: Path, case: str, name: str = "opencode.db") -> Path:
    target = tmp_path / name
    shutil.copyfile(DIR / case, target)
    return target


def run(*args: str) -> tuple[int, str, str]:
    """The CLI in this process (exit status, stdout, stderr)."""
    from io import StringIO

    out, err = StringIO(), StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = td_cli.run([*args, "--no-progress"] if args[0] in ("lint", "fix") else list(args))
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def lint_json(path: Path | str, *extra: str) -> list[dict[str, Any]]:
    code, out, err = run("lint", "-o", "json", "--exit-zero", str(path), *extra)
    assert code == 0, err
    return json.loads(out)


def short(records: list[dict[str, Any]]) -> list[str]:
    """``"RECORD CODE pointer"`` with the session prefix cut (one session per fixture)."""
    return [f"{r['record']} {r['rule']} {_tail(r['pointer'])}" for r in records]


def _tail(pointer: str | None) -> str:
    if pointer is None:
        return "-"
    parts = pointer.split("/")
    return "/".join(parts[3:]) if pointer.startswith("/session/") else pointer


def dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the session tables, read through SQLite (the WAL applied)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {t: connection.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in TABLES}
    finally:
        connection.close()


def part_data(path: Path, part: str) -> dict[str, Any]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return json.loads(connection.execute("SELECT data FROM part WHERE id = ?", (part,)).fetchone()[0])
    finally:
        connection.close()


def integrity(path: Path) -> str:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


KILL_TOOL_PART = "prt_234513d8c0013QMcECvsRekXDt"
KILL_STREAM_PART = "prt_234557f9b0016Rpp0Pfhl1rSbP"
STEP2 = "message/msg_2345f5c6c0018D6y4kegvZGCB0/part/prt_2345f5de20015DATDXMSpbJ2Sb"


# -- lint: exact findings, negative controls ------------------------------------------


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("clean/opencode-1.db", []),
        ("tools/opencode-1.db", []),
        ("tools/opencode-2.db", []),  # a resume appends to the same session
        ("thinking/opencode-1.db", []),
        ("parallel/opencode-1.db", []),  # a real tool error (glob without ripgrep) is no damage
        ("http500/opencode-1.db", []),  # an errored step is skipped on replay: no finding
        ("http500/opencode-2.db", []),
        ("drop/opencode-2.db", []),
        ("drop-tool/opencode-2.db", []),
        ("tui-abort-tool/opencode-2.db", []),  # the tool answered "User aborted the command"
        ("tui-abort-stream/opencode-1.db", []),  # partial text: OpenCode appends a prompt first
        ("tui-abort-stream/opencode-2.db", []),
        (
            "kill-tool/opencode-1.db",
            ["5 TD306 message/msg_234512327001brLJa6SpkbGNfL/part/" + KILL_TOOL_PART],
        ),
        (
            "kill-tool/opencode-2.db",
            ["5 TD301 message/msg_234512327001brLJa6SpkbGNfL/part/" + KILL_TOOL_PART],
        ),
        ("kill-tool-step2/opencode-1.db", ["10 TD306 " + STEP2]),
        ("kill-tool-step2/opencode-2.db", ["10 TD301 " + STEP2]),
        (
            "term-tool/opencode-1.db",
            ["5 TD306 message/msg_23459615f0011gVRHNMEPOHYEB/part/prt_234597527001QHhs3N6qn8Amov"],
        ),
        (
            "int-tool/opencode-1.db",
            ["5 TD306 message/msg_23453c032001CYWC6HOOOLRNE5/part/prt_23453c9f60018Na26Ca1agqyt9"],
        ),
        ("kill-stream/opencode-1.db", ["2 TD103 message/msg_2345572230014luakdubMtEDuO"]),
        ("kill-stream/opencode-2.db", ["2 TD103 message/msg_2345572230014luakdubMtEDuO"]),
        (
            "kilo-kill-tool/kilo-1.db",
            ["5 TD306 message/msg_23476ad8d001ry4rd25HDbdoTX/part/prt_23476b815001icHQ16W38z69Rd"],
        ),
    ],
)
def test_database_findings(tmp_path: Path, case: str, expected: list[str]) -> None:
    path = copy(tmp_path, case, Path(case).name)
    found = lint_json(path)
    assert short(found) == expected
    assert all(r["line"] == 0 and r["reader"] == "opencode" for r in found)
    assert all(r["fixable"] == (r["rule"] in ("TD301", "TD103")) for r in found)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("clean/export-1.json", []),
        ("tools/export-2.json", []),
        ("continue/export-2.json", []),
        ("thinking/export-1.json", []),
        ("parallel/export-1.json", []),
        ("http500/export-2.json", []),
        ("tui-abort-tool/export-2.json", []),
        ("tui-abort-stream/export-1.json", []),
        ("repair-trial/export.json", []),  # the hand-repaired part reads as answered
        ("kill-tool/export-1.json", ["127 TD306 /messages/1/parts/2"]),
        ("kill-tool/export-2.json", ["127 TD301 /messages/1/parts/2"]),
        ("kill-stream/export-2.json", ["81 TD103 /messages/1"]),
        ("kilo-kill-tool/export-1.json", ["135 TD306 /messages/1/parts/2"]),
    ],
)
def test_export_findings(case: str, expected: list[str]) -> None:
    found = lint_json(DIR / case)
    assert [f"{r['line']} {r['rule']} {r['pointer']}" for r in found] == expected
    # An export is not repaired: `opencode import` keeps the rows it already has.
    assert not any(r["fixable"] for r in found)


@pytest.mark.parametrize("state", [0, [], {"status": []}, {"status": {"x": 1}}, {"status": 3}])
def test_a_tool_state_of_an_unknown_shape_is_answered_not_a_crash(tmp_path: Path, state: Any) -> None:
    """Found by the fuzz suite: a ``state`` or ``status`` that is not what OpenCode writes
    is a shape this reader does not know, never damage and never a traceback."""
    export = json.loads((DIR / "tools" / "export-1.json").read_text())
    for message in export["messages"]:
        for part in message["parts"]:
            if part.get("type") == "tool":
                part["state"] = state
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    assert lint_json(path) == []


def test_every_export_is_detected() -> None:
    for path in sorted(DIR.rglob("export*.json")):
        assert detected(path) == "opencode", path


def test_findings_name_the_session_and_the_row(tmp_path: Path) -> None:
    (record,) = lint_json(copy(tmp_path, "kill-tool/opencode-2.db"))
    session = "ses_dcbaeec64ffeP9AelMm0DKFoE6"
    assert record["pointer"] == (
        f"/session/{session}/message/msg_234512327001brLJa6SpkbGNfL/part/{KILL_TOOL_PART}"
    )
    assert record["message"] == (
        "tool call call_slow_0 (bash) has no result, but the conversation continues at "
        f"/session/{session}/message/msg_23451ae2e001XquT8m3Qk6W1xF (session {session})"
    )


def test_a_live_store_is_read_through_its_wal_and_no_byte_changes(tmp_path: Path) -> None:
    """kill-tool/raw-phase1: a 4096-byte opencode.db, every row in the -wal."""
    for name in ("opencode.db", "opencode.db-wal", "opencode.db-shm"):
        shutil.copyfile(DIR / "kill-tool/raw-phase1" / name, tmp_path / name)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, out, err = run("lint", "-o", "json", str(tmp_path))
    assert code == 0, err  # TD306 is info
    assert short(json.loads(out)) == ["5 TD306 message/msg_234512327001brLJa6SpkbGNfL/part/" + KILL_TOOL_PART]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # not even the -shm


def test_the_parts_of_a_database_are_not_linted(tmp_path: Path) -> None:
    for name in ("opencode.db", "opencode.db-wal", "opencode.db-shm"):
        shutil.copyfile(DIR / "kill-tool/raw-phase1" / name, tmp_path / name)
    code, _out, err = run("lint", "-v", str(tmp_path))
    assert code == 0
    assert f"checked {tmp_path}/opencode.db: opencode, 1 finding" in err
    assert (
        f"checked {tmp_path}/opencode.db-wal: skipped (part of the SQLite database opencode.db beside it"
        in err
    )
    code, _out, err = run("lint", str(tmp_path / "opencode.db-wal"))
    assert (code, err) == (
        0,
        f"transcript-doctor: {tmp_path}/opencode.db-wal: skipped, part of the SQLite database "
        "opencode.db beside it (lint that file)\n",
    )


# -- hostile and foreign databases ------------------------------------------------------


def test_a_foreign_sqlite_database_is_not_claimed(tmp_path: Path) -> None:
    path = tmp_path / "places.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE message (id TEXT, body TEXT)")
    connection.execute("INSERT INTO message VALUES ('a', 'hello')")
    connection.commit()
    connection.close()
    code, _out, err = run("lint", str(path))
    assert code == 0
    assert (
        err
        == f"transcript-doctor: {path}: skipped, not a transcript: an SQLite database no reader recognises\n"
    )


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "not a transcript"),  # empty file named .db
        (b"\x00\x01binary junk" * 100, "not a transcript"),
        (b'{"not": "sqlite"}', "not a transcript"),
    ],
)
def test_a_file_named_db_that_is_no_database(tmp_path: Path, content: bytes, why: str) -> None:
    path = tmp_path / "opencode.db"
    path.write_bytes(content)
    code, _out, err = run("lint", str(path))
    assert code == 0 and why in err and "Traceback" not in err


def test_a_truncated_store_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    path.write_bytes((DIR / "kill-tool/opencode-2.db").read_bytes()[:6000])
    code, _out, err = run("lint", str(path))
    assert code == 2
    assert err.startswith(f"transcript-doctor: cannot read {path} as an SQLite database: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    code, _out, err = run("fix", "--in-place", str(path))
    assert code == 2 and "Traceback" not in err


def test_a_row_that_does_not_parse_is_td001(tmp_path: Path) -> None:
    path = copy(tmp_path, "tools/opencode-1.db")
    connection = sqlite3.connect(path)
    (part,) = connection.execute("SELECT id FROM part ORDER BY id LIMIT 1").fetchone()
    connection.execute("UPDATE part SET data = ? WHERE id = ?", ('{"type":"text","te', part))
    connection.commit()
    connection.close()
    found = lint_json(path)
    assert [(r["rule"], r["line"], r["fixable"]) for r in found] == [("TD001", 0, False)]
    assert part in found[0]["message"] and "not valid JSON" in found[0]["message"]


def test_forcing_a_reader_that_reads_no_database(tmp_path: Path) -> None:
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    code, _out, err = run("lint", "--reader", "openai-chat", str(path))
    assert code == 0
    assert "skipped, an SQLite database the reader openai-chat does not read" in err
    assert len(lint_json(path, "--reader", "opencode")) == 1


# -- outputs ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "concise", "full", "github", "sarif"])
def test_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, snapshot: Any) -> None:
    copy(tmp_path, "kill-tool/opencode-2.db")
    copy(tmp_path, "kill-stream/opencode-1.db", "other.db")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _err = run("lint", "-o", fmt, "opencode.db", "other.db")
    assert code == 1
    if fmt == "sarif":
        document = json.loads(out)
        results = document["runs"][0]["results"]
        assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [1, 1]
        out = json.dumps([{k: r[k] for k in ("ruleId", "level", "message")} for r in results], indent=1)
    assert out == snapshot(extension_class=Text)


# -- fix --------------------------------------------------------------------------------


def test_fix_in_place_repairs_a_killed_tool_part(tmp_path: Path) -> None:
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    original = dump(path)
    report = tmp_path / "report.json"
    code, out, err = run("fix", "--in-place", "--report", str(report), str(path))
    assert (code, err) == (1, "")
    (backup,) = tmp_path.glob("opencode.db.*.td-backup")
    assert out == (
        f"{path}: fixed 1 finding(s) (TD301) in 1 session(s); backup: {backup}\n"
        "Fixed 1 finding(s) in 1 file(s); 0 left.\n"
    )
    assert dump(backup) == original
    assert integrity(path) == "ok"
    assert part_data(path, KILL_TOOL_PART) == {
        "type": "tool",
        "tool": "bash",
        "callID": "call_slow_0",
        "state": {
            "status": "error",
            "input": {"command": "sleep 60 && echo done", "description": "Slow command"},
            "error": SYNTHETIC,
            "metadata": {"output": ""},
            "time": {"start": 1796174069328, "end": 1796174070102},
        },
    }
    repaired = dump(path)
    changed = [t for t in TABLES if repaired[t] != original[t]]
    assert changed == ["part"]
    assert next(r for r in repaired["part"] if r not in original["part"])[0] == KILL_TOOL_PART
    assert len(repaired["part"]) == len(original["part"])
    # The report holds the row before and after, whole.
    (entry,) = json.loads(report.read_text())["files"]
    (row,) = entry["rows"]
    assert row["table"] == "part" and row["id"] == KILL_TOOL_PART
    assert row["before"]["data"] == next(r[5] for r in original["part"] if r[0] == KILL_TOOL_PART)
    assert row["after"]["time_updated"] == 1796174070102
    assert entry["session"] == "ses_dcbaeec64ffeP9AelMm0DKFoE6" and entry["backup"] == str(backup)
    # Idempotent: a second fix changes nothing and needs no backup.
    code, out, err = run("fix", "--in-place", str(path))
    assert (code, out) == (0, "Fixed 0 finding(s) in 0 file(s); 0 left.\n")
    assert dump(path) == repaired
    assert len(list(tmp_path.glob("*.td-backup"))) == 1
    assert lint_json(path) == []
    # Undo from the report (README "Undoing a database repair") gives the original back.
    undo(path, report)
    assert dump(path) == original


def undo(path: Path, report: Path) -> None:
    """The README's recipe, verbatim in spirit: every row put back, last change first."""
    entries = json.loads(report.read_text())["files"]
    connection = sqlite3.connect(path)
    with connection:
        for entry in reversed(entries):
            for row in reversed(entry["rows"]):
                before = row["before"]
                columns = ", ".join(before)
                marks = ", ".join("?" for _ in before)
                connection.execute(
                    f"INSERT OR REPLACE INTO {row['table']} ({columns}) VALUES ({marks})",
                    list(before.values()),
                )
    connection.close()


def test_fix_in_place_removes_an_empty_streamed_turn(tmp_path: Path) -> None:
    path = copy(tmp_path, "kill-stream/opencode-2.db")
    original = dump(path)
    report = tmp_path / "r.json"
    code, out, _err = run("fix", "--in-place", "--no-backup", "--report", str(report), str(path))
    assert code == 1 and "fixed 1 finding(s) (TD103)" in out
    assert not list(tmp_path.glob("*.td-backup"))
    repaired = dump(path)
    assert repaired["message"] == original["message"] and repaired["session"] == original["session"]
    assert [r[0] for r in original["part"] if r not in repaired["part"]] == [KILL_STREAM_PART]
    assert len(repaired["part"]) == len(original["part"]) - 1
    (row,) = json.loads(report.read_text())["files"][0]["rows"]
    assert row["after"] is None and json.loads(row["before"]["data"]) == {
        "type": "text", "text": "", "time": {"start": 1796174348187}
    }  # fmt: skip
    assert lint_json(path) == []
    undo(path, report)
    assert dump(path) == original


def test_fix_needs_in_place_for_a_database(tmp_path: Path) -> None:
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    before = path.read_bytes()
    code, _out, err = run("fix", str(path), "--out", str(tmp_path / "out"))
    assert code == 2
    assert err == (
        f"transcript-doctor: {path}: an SQLite database is repaired in place only: `fix --in-place` "
        "(a backup is made first), or `fix --diff` to see the row changes; nothing written\n"
    )
    assert path.read_bytes() == before and not (tmp_path / "out").exists()


def test_fix_out_over_a_folder_leaves_a_database_unfixed(tmp_path: Path) -> None:
    path = copy(tmp_path / "", "kill-tool/opencode-2.db")
    before = path.read_bytes()
    code, out, _err = run("fix", str(tmp_path), "--out", str(tmp_path / "out"))
    assert code == 1
    assert "TD301 tool call call_slow_0 (bash) has no result" in out
    assert "[not fixed: an SQLite database is repaired in place only: `fix --in-place`" in out
    assert path.read_bytes() == before


def test_fix_diff_prints_the_row_changes_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snapshot: Any
) -> None:
    copy(tmp_path, "kill-tool/opencode-2.db")
    copy(tmp_path, "kill-stream/opencode-1.db", "other.db")
    monkeypatch.chdir(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, out, err = run("fix", "--diff", "opencode.db", "other.db")
    assert code == 1
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert out == snapshot(extension_class=Text)
    assert err == (
        "opencode.db: would fix 1 finding(s) (TD301) in 1 session(s)\n"
        "other.db: would fix 1 finding(s) (TD103) in 1 session(s)\n"
        "Would fix 2 finding(s) in 2 file(s); 0 left.\n"
    )


def test_a_locked_database_is_refused_unchanged(tmp_path: Path) -> None:
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    original = dump(path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another program is writing
    try:
        code, _out, err = run("fix", "--in-place", "--no-backup", str(path))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert code == 2
    assert err.startswith(f"transcript-doctor: {path} is locked by another program (database is locked; ")
    assert "nothing was changed" in err and err.count("\n") == 1
    assert dump(path) == original


def _merged(tmp_path: Path) -> Path:
    """One store holding two damaged sessions (kill-tool's and kill-stream's)."""
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    connection = sqlite3.connect(path)
    connection.execute("ATTACH ? AS other", (str(DIR / "kill-stream/opencode-2.db"),))
    for table in ("project", *TABLES):
        connection.execute(f"INSERT OR IGNORE INTO main.{table} SELECT * FROM other.{table}")
    connection.commit()
    connection.close()
    return path


def test_one_transaction_per_session(tmp_path: Path) -> None:
    path = _merged(tmp_path)
    found = lint_json(path)
    assert sorted(r["rule"] for r in found) == ["TD103", "TD301"]
    assert len({r["pointer"].split("/")[2] for r in found}) == 2
    report = tmp_path / "r.json"
    code, out, _err = run("fix", "--in-place", "--no-backup", "--report", str(report), str(path))
    assert code == 1 and "fixed 2 finding(s) (TD103, TD301) in 2 session(s)" in out
    entries = json.loads(report.read_text())["files"]
    assert sorted(e["session"] for e in entries) == sorted(r["pointer"].split("/")[2] for r in found)
    assert lint_json(path) == []


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from transcript_doctor import dbfix, cli
    real = dbfix.entry
    def entry(path, outcome, repair):
        # The session's UPDATE is made, the transaction not committed: die here.
        sys.stderr.write(f"killed after changing {len(repair.changes)} row(s)\\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    dbfix.entry = entry
    sys.exit(cli.run(sys.argv[1:]))
    """
)


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_fix_killed_mid_transaction_leaves_the_database_unchanged(tmp_path: Path, journal: str) -> None:
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA journal_mode = {journal}")
    connection.close()
    original = dump(path)
    report = tmp_path / "r.json"
    result = subprocess.run(
        [sys.executable, "-c", KILLER, "fix", "--in-place", "--no-backup", "--no-progress", "--report", str(report), str(path)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert result.stderr == "killed after changing 1 row(s)\n"
    # The killed transaction left its journal behind; the next opening rolls it back.
    leftovers = {p.name for p in tmp_path.iterdir()} - {"opencode.db", "r.json", "r.diff", "r.json.journal"}
    assert leftovers <= {"opencode.db-journal", "opencode.db-wal", "opencode.db-shm"}
    assert dump(path) == original
    assert integrity(path) == "ok"
    code, out, _err = run("lint", "-o", "json", "--exit-zero", str(path))
    assert short(json.loads(out)) == ["5 TD301 message/msg_234512327001brLJa6SpkbGNfL/part/" + KILL_TOOL_PART]
    # And a fix run after it repairs the session.
    code, out, _err = run("fix", "--in-place", "--no-backup", str(path))
    assert code == 1 and lint_json(path) == []


def test_fix_keeps_a_running_programs_wal(tmp_path: Path) -> None:
    """A store in WAL mode (as OpenCode keeps it) is repaired through its WAL."""
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = wal")
    connection.close()
    reader = sqlite3.connect(path)  # another connection keeps the WAL alive
    reader.execute("SELECT count(*) FROM part").fetchone()
    try:
        code, _out, err = run("fix", "--in-place", "--no-backup", str(path))
        assert code == 1, err
        assert (
            reader.execute("SELECT data FROM part WHERE id = ?", (KILL_TOOL_PART,))
            .fetchone()[0]
            .count('"error"')
            == 2
        )
    finally:
        reader.close()
    assert integrity(path) == "ok" and lint_json(path) == []


def test_the_export_is_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    shutil.copyfile(DIR / "kill-tool/export-2.json", path)
    before = path.read_bytes()
    code, out, _err = run("fix", "--in-place", str(path))
    assert code == 1 and "TD301" in out and "not fixed" in out
    assert path.read_bytes() == before


def test_detection_leaves_exports_of_other_layouts_alone(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"info": {"id": "conv_1"}, "messages": [{"info": {}, "parts": []}]}')
    assert detected(path) != "opencode"
    path.write_text('{"info": {"id": "ses_1"}, "messages": [{"role": "user", "content": "hi"}]}')
    assert detected(path) != "opencode"


def test_the_backup_is_not_linted_again(tmp_path: Path) -> None:
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    code, _out, _err = run("fix", "--in-place", str(path))
    assert code == 1
    code, _out, err = run("lint", "-v", str(tmp_path))
    assert code == 0 and "a backup `fix` made of a database before repairing it" in err
    assert os.path.exists(next(iter(tmp_path.glob("*.td-backup"))))


def test_formats_names_the_store_and_its_parts(tmp_path: Path) -> None:
    for name in ("opencode.db", "opencode.db-wal", "opencode.db-shm"):
        shutil.copyfile(DIR / "kill-tool/raw-phase1" / name, tmp_path / name)
    copy(tmp_path, "kilo-kill-tool/kilo-1.db", "kilo.db")
    code, out, _err = run("formats", str(tmp_path))
    assert code == 0
    assert out.splitlines() == [
        f"{tmp_path}/kilo.db: opencode (a Kilo session store (tables session, message, part))",
        f"{tmp_path}/opencode.db: opencode (an OpenCode session store (tables session, message, part))",
        f"{tmp_path}/opencode.db-shm: part of the SQLite database opencode.db beside it, skipped",
        f"{tmp_path}/opencode.db-wal: part of the SQLite database opencode.db beside it, skipped",
    ]


def test_a_baseline_hides_a_database_finding_until_another_row_breaks(tmp_path: Path) -> None:
    path = _merged(tmp_path)
    connection = sqlite3.connect(path)
    connection.execute("DELETE FROM part WHERE id = ?", (KILL_STREAM_PART,))  # one finding left
    connection.commit()
    connection.close()
    baseline = tmp_path / "b.json"
    assert run("lint", "--baseline", str(baseline), "--write-baseline", str(path))[0] == 0
    code, out, _err = run("lint", "-o", "concise", "--baseline", str(baseline), str(path))
    assert code == 0 and "1 finding in the baseline not shown" in out
    shutil.copyfile(DIR / "kill-stream/opencode-2.db", tmp_path / "other.db")
    connection = sqlite3.connect(path)
    connection.execute("ATTACH ? AS other", (str(tmp_path / "other.db"),))
    connection.execute("INSERT INTO main.part SELECT * FROM other.part WHERE id = ?", (KILL_STREAM_PART,))
    connection.commit()
    connection.close()
    code, out, _err = run("lint", "-o", "concise", "--baseline", str(baseline), str(path))
    assert code == 1 and out.count("TD103") == 1 and "TD301" not in out


def test_a_pending_part_is_answered_too(tmp_path: Path) -> None:
    """``pending`` (the call's arguments still streaming): the state OpenCode first writes,
    as the event log of kill-tool-step2 records it; the part row itself was never seen so."""
    path = copy(tmp_path, "kill-tool/opencode-2.db")
    pending = {
        "type": "tool",
        "tool": "bash",
        "callID": "call_slow_0",
        "state": {"status": "pending", "input": {}, "raw": ""},
    }
    connection = sqlite3.connect(path)
    connection.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(pending), KILL_TOOL_PART))
    connection.commit()
    connection.close()
    assert [r["rule"] for r in lint_json(path)] == ["TD301"]
    code, _out, err = run("fix", "--in-place", "--no-backup", str(path))
    assert code == 1, err
    assert part_data(path, KILL_TOOL_PART)["state"] == {
        "status": "error",
        "input": {},
        "error": SYNTHETIC,
        "time": {"start": 1796174070102, "end": 1796174070102},
    }
    assert lint_json(path) == []


@pytest.mark.parametrize("seed", range(24))
def test_a_damaged_store_gives_a_finding_or_one_line_never_a_crash(tmp_path: Path, seed: int) -> None:
    """Bytes of a real store overwritten at random (pages, headers, JSON inside rows)."""
    import random

    rng = random.Random(seed)
    data = bytearray((DIR / "kill-tool/opencode-2.db").read_bytes())
    for _ in range(rng.choice((1, 4, 32))):
        start = rng.randrange(len(data))
        data[start : start + rng.choice((1, 8, 64))] = rng.randbytes(rng.choice((1, 8, 64)))
    path = tmp_path / "opencode.db"
    path.write_bytes(bytes(data))
    for args in (("lint", "-o", "json"), ("fix", "--in-place", "--no-backup")):
        before = path.read_bytes()
        code, _out, err = run(*args, str(path))
        assert code in (0, 1, 2), (args, err)
        assert "internal error" not in err and "Traceback" not in err, (args, err)
        if code == 2:  # refused in one line, nothing written
            assert err.count("\n") == 1 and path.read_bytes() == before, (args, err)


# -- a database on standard input ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["lint"], "-"),
        (["lint", "--stdin-filename", "opencode.db"], "opencode.db"),
        (["fix"], "-"),
        (["fix", "--in-place"], "-"),
        (["fix", "--diff"], "-"),
    ],
)
def test_a_database_on_standard_input_is_a_one_line_error(args: list[str], shown: str) -> None:
    """Its bytes alone may miss the rows in its -wal, and it is repaired where it lives:
    refused in one line (exit 2), nothing written to standard output but the summary."""
    data = (DIR / "kill-tool/opencode-2.db").read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "transcript_doctor", *args, "--no-progress", "-"],
        input=data, capture_output=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2
    error = (
        f"transcript-doctor: {shown}: an SQLite database (an OpenCode or Kilo session store?) is read from "
        "its own file, with the -wal beside it, not from standard input or a URL: name the local file"
    )
    assert done.stderr.decode().splitlines()[0] == error
    assert b"SQLite format 3" not in done.stdout  # a filter does not pass the database through


def test_the_stream_check_knows_sqlite() -> None:
    from transcript_doctor import dbsource, linting

    assert linting.SQLITE == dbsource.MAGIC


def test_fix_in_place_repairs_a_kilo_session(tmp_path: Path) -> None:
    """Kilo CLI 7.7.9: a session killed during a tool and resumed (fixtures/opencode/
    kilo-fix-verify; Kilo itself exported and resumed the repaired database there)."""
    path = copy(tmp_path, "kilo-fix-verify/kilo-2.db", "kilo.db")
    part = "prt_2354a88af001EZiEuJhSRIIGsi"
    assert short(lint_json(path)) == [f"5 TD301 message/msg_2354a830a0015n4o6iBPEK0Pqc/part/{part}"]
    original = dump(path)
    code, _out, err = run("fix", "--in-place", "--no-backup", str(path))
    assert code == 1, err
    assert part_data(path, part)["state"] == {
        "status": "error",
        "input": {"command": "sleep 60 && echo done", "description": "Slow command"},
        "error": SYNTHETIC,
        "metadata": {
            "output": "",
            "approval": {
                "source": "global",
                "rule": {"permission": "bash", "pattern": "*", "action": "allow"},
            },
        },
        "time": {"start": 1796190406860, "end": 1796190406876},
    }
    repaired = dump(path)
    assert [t for t in TABLES if repaired[t] != original[t]] == ["part"]
    assert integrity(path) == "ok" and lint_json(path) == []
    assert run("fix", "--in-place", str(path))[:2] == (0, "Fixed 0 finding(s) in 0 file(s); 0 left.\n")
    # What Kilo read back from the same repair (the recipe's own database, WAL and all).
    verified = DIR / "kilo-fix-verify"
    assert (verified / "result.txt").read_text().splitlines() == [
        "fix exit 1",
        "second fix exit 0 (Fixed 0 finding(s) in 0 file(s); 0 left.)",
        "export exit 0",
        "run exit 0",
        "lint after resume exit 0",
    ]
    replayed = json.loads((verified / "replayed.json").read_text())
    assert {"role": "tool", "tool_call_id": "call_slow_0", "content": SYNTHETIC} in replayed


def test_an_export_s_findings_point_at_the_database() -> None:
    # `opencode import` keeps the rows it has: a repaired export would change nothing, so
    # its repairable findings say where the repair is made instead of "without guessing".
    done = cli("fix", "--diff", "fixtures/opencode/kill-stream/export-2.json")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "fixtures/opencode/kill-stream/export-2.json:81: TD103 assistant turn holds only empty or "
        "whitespace text [not fixed: an OpenCode session is repaired in its database "
        "(`opencode import` keeps rows it has)]\nWould fix 0 finding(s) in 0 file(s); 1 left.\n"
    )
