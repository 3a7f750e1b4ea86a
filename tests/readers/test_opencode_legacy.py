"""Reader opencode: the legacy ``storage/`` folder of OpenCode < 1.2 (one unit, not files).

Every folder is one ``opencode-ai`` 1.1.65 wrote against the fake model
(fixtures/opencode-legacy/README.md).  Folders are copied to a temp folder before a fix.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from snapshots import Text
from support import FIXTURES

from transcript_doctor import cli as td_cli
from transcript_doctor import treesource
from transcript_doctor.readers.opencode import tree

SYNTHETIC = (
    "Tool result missing from the transcript (the turn was interrupted); inserted by transcript-doctor."
)

DIR = FIXTURES / "opencode-legacy"
SESSION = "ses_dcac1dc06ffeyaKlhOnSROF14W"  # legacy-kill-tool
CALL_MESSAGE = "msg_2353e24c4001u0I1wDjvTIq60i"
RUNNING = "prt_2353e252e001Kgdnmiw4i5H7TU"
RUNNING_FILE = f"part/{CALL_MESSAGE}/{RUNNING}.json"
RESUMED = "msg_2353e424f001goiqMdcy9kUIdr"


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
    result: list[dict[str, Any]] = json.loads(out)
    return result


def short(records: list[dict[str, Any]]) -> list[str]:
    """``"RECORD CODE pointer"`` with the session prefix cut (one session per folder)."""
    return [f"{r['record']} {r['rule']} {'/'.join(r['pointer'].split('/')[3:])}" for r in records]


def copy(tmp_path: Path, case: str = "legacy-kill-tool/storage-2") -> Path:
    """The folder as ``<tmp>/opencode/storage``, where OpenCode keeps it."""
    target = tmp_path / "opencode" / "storage"
    shutil.copytree(DIR / case, target)
    return target


def snapshot_files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


# -- lint: exact findings, negative controls ------------------------------------------


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("legacy-tools/storage-1", []),
        ("legacy-tools/storage-2", []),  # a resume appends to the same session
        ("legacy-kill-stream/storage-1", []),  # 1.1.65 writes the partial text: no empty turn
        ("legacy-kill-stream/storage-2", []),
        ("legacy-http500/storage-1", []),  # an assistant with no part is dropped on replay
        ("legacy-http500/storage-2", []),
        ("legacy-kill-tool/storage-1", [f"5 TD306 message/{CALL_MESSAGE}/part/{RUNNING}"]),
        ("legacy-kill-tool/storage-2", [f"5 TD301 message/{CALL_MESSAGE}/part/{RUNNING}"]),
    ],
)
def test_storage_findings(case: str, expected: list[str]) -> None:
    assert short(lint_json(DIR / case)) == expected


def test_one_report_for_the_folder_with_the_database_readers_pointers() -> None:
    (record,) = lint_json(DIR / "legacy-kill-tool/storage-2")
    assert record["path"] == str(DIR / "legacy-kill-tool/storage-2")
    assert (record["reader"], record["line"], record["record"]) == ("opencode", 0, 5)
    assert record["pointer"] == f"/session/{SESSION}/message/{CALL_MESSAGE}/part/{RUNNING}"
    assert record["message"] == (
        f"tool call call_slow_0 (bash) has no result, but the conversation continues at "
        f"/session/{SESSION}/message/{RESUMED} (session {SESSION})"
    )


def _as_database(storage: Path, target: Path) -> Path:
    """The folder's records as rows of a store (``data`` = the record without its ids),
    as OpenCode 1.2 migrated them: the database reader must say the same."""
    connection = sqlite3.connect(target)
    connection.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, time_created INTEGER);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);"
    )
    for path in storage.glob("session/*/*.json"):
        value = json.loads(path.read_bytes())
        connection.execute("INSERT INTO session VALUES (?, ?)", (value["id"], value["time"]["created"]))
    for path in storage.glob("message/*/*.json"):
        value = json.loads(path.read_bytes())
        ids = (value.pop("id"), value.pop("sessionID"))
        connection.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?)", (*ids, value["time"]["created"], json.dumps(value))
        )
    for path in storage.glob("part/*/*.json"):
        value = json.loads(path.read_bytes())
        ids = (value.pop("id"), value.pop("messageID"), value.pop("sessionID"))
        connection.execute("INSERT INTO part VALUES (?, ?, ?, ?)", (*ids, json.dumps(value)))
    connection.commit()
    connection.close()
    return target


@pytest.mark.parametrize(
    "case", ["legacy-kill-tool/storage-1", "legacy-kill-tool/storage-2", "legacy-tools/storage-2"]
)
def test_the_same_findings_as_the_same_records_in_a_database(tmp_path: Path, case: str) -> None:
    database = _as_database(DIR / case, tmp_path / "opencode.db")
    keys = ("rule", "record", "pointer", "message", "line", "fix_applicability")
    from_files = [{k: r[k] for k in keys} for r in lint_json(DIR / case)]
    from_rows = [{k: r[k] for k in keys} for r in lint_json(database)]
    assert from_files == from_rows


def test_the_data_folder_a_session_file_and_a_folder_inside(tmp_path: Path) -> None:
    storage = copy(tmp_path)
    data = storage.parent
    (data / "notes.json").write_text('{"a": 1}')
    # The data folder: the storage folder is one unit, its files are not offered one by one.
    code, out, err = run("lint", "-o", "concise", str(data))
    assert code == 1, err
    assert out.splitlines() == [
        f"{storage}:0: TD301 [*] error: tool call call_slow_0 (bash) has no result, but the conversation "
        f"continues at /session/{SESSION}/message/{RESUMED} (session {SESSION})",
        "Found 1 finding (1 error).",
        "[*] 1 fixable with `transcript-doctor fix`.",
        "Skipped 1 file that is not a transcript.",
    ]
    # A session file stands for its session; a folder inside for the storage folder.
    session_file = storage / f"session/global/{SESSION}.json"
    assert [r["path"] for r in lint_json(session_file)] == [str(session_file)]
    assert short(lint_json(session_file)) == short(lint_json(storage))
    for inside in ("part", f"part/{CALL_MESSAGE}", "session/global", "message"):
        assert [r["path"] for r in lint_json(storage / inside)] == [str(storage)], inside


def test_a_file_of_the_folder_is_a_part_of_it_never_linted_alone(tmp_path: Path) -> None:
    storage = copy(tmp_path)
    for name in (RUNNING_FILE, f"message/{SESSION}/{CALL_MESSAGE}.json", "project/global.json", "migration"):
        code, out, err = run("lint", "-o", "concise", str(storage / name))
        assert (code, out) == (0, "No transcripts checked.\nSkipped 1 file that is not a transcript.\n"), name
        assert err == (
            f"transcript-doctor: {storage / name}: skipped, part of the OpenCode storage folder "
            f"{storage} (lint that folder)\n"
        )


def test_a_file_of_the_folder_is_told_however_its_path_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder names written in a path decide at once only when neither can be a
    storage folder's; relative paths, ``.`` and ``..`` still find the folder above."""
    storage = copy(tmp_path)
    (tmp_path / "notes" / "a").mkdir(parents=True)
    cases = {
        # (working folder, path as written): (kind, root as shown)
        (storage, RUNNING_FILE): ("member", "."),
        (storage, f"./{RUNNING_FILE}"): ("member", "."),
        (storage, f"part/{CALL_MESSAGE}/../{CALL_MESSAGE}/{RUNNING}.json"): ("member", "."),
        (storage / "part", f"{CALL_MESSAGE}/{RUNNING}.json"): ("member", ".."),
        (storage / "part" / CALL_MESSAGE, f"{RUNNING}.json"): ("member", "../.."),
        (storage / "part" / CALL_MESSAGE, f"../{CALL_MESSAGE}/{RUNNING}.json"): ("member", "../.."),
        (storage / "part" / CALL_MESSAGE, f"./.././{CALL_MESSAGE}/{RUNNING}.json"): ("member", "../.."),
        (storage / "session", f"global/{SESSION}.json"): ("session", ".."),
        (tmp_path, f"opencode/storage/{RUNNING_FILE}"): ("member", "opencode/storage"),
        (tmp_path, "notes/a/b.json"): None,
        (tmp_path / "notes" / "a", "b.json"): None,
        (tmp_path / "notes" / "a", "../a/b.json"): None,
    }
    for (folder, written), expected in cases.items():
        monkeypatch.chdir(folder)
        found = treesource.unit(written)
        assert (None if found is None else (found.kind, found.root)) == expected, (folder, written)


def test_formats_names_the_folder_and_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    names = [
        "opencode",
        f"opencode/storage/session/global/{SESSION}.json",
        f"opencode/storage/{RUNNING_FILE}",
    ]
    code, out, _err = run("formats", *names)
    assert code == 0
    reason = "an OpenCode storage folder (session/, message/, part/ JSON files; OpenCode < 1.2)"
    assert out.splitlines() == [
        f"opencode/storage: opencode ({reason})",
        f"opencode/storage/session/global/{SESSION}.json: opencode (session {SESSION} of {reason})",
        f"opencode/storage/{RUNNING_FILE}: part of the OpenCode storage folder opencode/storage "
        "(lint that folder), skipped",
    ]


@pytest.mark.parametrize(
    "layout",
    [
        # JSON files named like ids, with no storage folder around them
        {"ses_abc.json": '{"id": "ses_abc", "projectID": "global"}', "msg_abc.json": '{"role": "user"}'},
        # the three folders, but no session file that names itself and its project
        {
            "session/global/ses_abc.json": '{"id": "ses_other", "projectID": "global"}',
            "message/ses_abc/msg_1.json": '{"role": "user"}',
            "part/msg_1/prt_1.json": '{"type": "text", "text": "hi"}',
        },
        {
            "session/global/ses_abc.json": '{"id": "ses_abc", "projectID": "elsewhere"}',
            "message/ses_abc/msg_1.json": "{}",
            "part/x.json": "{}",
        },
        # a message folder without the session folder
        {"message/ses_abc/msg_1.json": '{"role": "user"}', "part/msg_1/prt_1.json": '{"type": "text"}'},
    ],
)
def test_look_alikes_are_not_claimed(tmp_path: Path, layout: dict[str, str]) -> None:
    for name, text in layout.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert not treesource.is_root(str(tmp_path))
    code, out, _err = run("lint", "-o", "json", "--exit-zero", str(tmp_path))
    assert code == 0 and json.loads(out) == []
    code, out, _err = run("formats", str(tmp_path))
    assert "storage folder" not in out
    assert len(out.splitlines()) == len(layout)  # every file offered on its own


def test_a_file_that_does_not_parse_is_td001_never_a_crash(tmp_path: Path) -> None:
    storage = copy(tmp_path)
    (storage / RUNNING_FILE).write_bytes(b'{\n  "id": "' + RUNNING.encode() + b'",\n  "type": "to')
    records = lint_json(storage)
    assert [(r["rule"], r["pointer"]) for r in records] == [("TD001", None)]
    assert records[0]["message"].endswith(
        f"{RUNNING}.json is not valid JSON (unexpected end of data: line 3 column 14 (char 57))"
    )


def test_a_pending_part_is_answered_too(tmp_path: Path) -> None:
    """``pending`` (``{status, input, raw}``, read in 1.1.65's bundled source): ``raw`` is
    not in the error state and goes (the report keeps it)."""
    storage = copy(tmp_path)
    path = storage / RUNNING_FILE
    value = json.loads(path.read_bytes())
    value["state"] = {"status": "pending", "input": {}, "raw": ""}
    path.write_text(json.dumps(value, indent=2))
    assert [r["rule"] for r in lint_json(storage)] == ["TD301"]
    code, _out, err = run("fix", "--in-place", str(storage))
    assert code == 1, err
    assert json.loads(path.read_bytes())["state"] == {
        "status": "error",
        "input": {},
        "error": SYNTHETIC,
        "time": {"start": 1796189594943, "end": 1796189594943},
    }
    assert lint_json(storage) == []


# -- fix --------------------------------------------------------------------------------

FIXED = (
    "{\n"
    f'  "id": "{RUNNING}",\n'
    f'  "sessionID": "{SESSION}",\n'
    f'  "messageID": "{CALL_MESSAGE}",\n'
    '  "type": "tool",\n'
    '  "callID": "call_slow_0",\n'
    '  "tool": "bash",\n'
    '  "state": {\n'
    '    "status": "error",\n'
    '    "input": {\n'
    '      "command": "sleep 60 && echo done",\n'
    '      "description": "Slow command"\n'
    "    },\n"
    f'    "error": "{SYNTHETIC}",\n'
    '    "metadata": {\n'
    '      "output": "",\n'
    '      "description": "Slow command"\n'
    "    },\n"
    '    "time": {\n'
    '      "start": 1796189594998,\n'
    '      "end": 1796189594999\n'
    "    }\n"
    "  }\n"
    "}"
)


def test_fix_in_place_repairs_the_part_file_only(tmp_path: Path) -> None:
    storage = copy(tmp_path)
    before = snapshot_files(storage)
    report = tmp_path / "report.json"
    code, out, err = run("fix", "--in-place", "--report", str(report), str(storage))
    assert (code, err) == (1, "")
    assert (
        out
        == f"{storage}: fixed 1 finding(s) (TD301) in 1 file(s)\nFixed 1 finding(s) in 1 file(s); 0 left.\n"
    )
    after = snapshot_files(storage)
    assert after[RUNNING_FILE].decode() == FIXED
    # What OpenCode itself would write: JSON.stringify(record, null, 2).
    assert json.dumps(json.loads(FIXED), indent=2, ensure_ascii=False) == FIXED
    assert {k: v for k, v in after.items() if k != RUNNING_FILE} == {
        k: v for k, v in before.items() if k != RUNNING_FILE
    }
    # The report: the file's bytes before and after, and steps that undo the change.
    (entry,) = json.loads(report.read_text())["files"]
    assert entry["path"] == str(storage / RUNNING_FILE)
    assert (entry["changed"], entry["reader"]) == (True, "opencode")
    (step,) = entry["steps"]
    restored = FIXED.encode()
    restored = (
        restored[: step["offset"]]
        + step["old"].encode()
        + restored[step["offset"] + len(step["new"].encode()) :]
    )
    assert restored == before[RUNNING_FILE]
    (fix,) = entry["fixes"]
    assert (fix["rule"], fix["action"], fix["records"][0]["where"]) == ("TD301", "replace", "/state")
    assert (tmp_path / "report.diff").read_text().startswith(f"--- a/{storage / RUNNING_FILE}\n")
    # Idempotent, and clean.
    code, out, _err = run("fix", "--in-place", str(storage))
    assert (code, out) == (0, "Fixed 0 finding(s) in 0 file(s); 0 left.\n")
    assert snapshot_files(storage) == after
    assert lint_json(storage) == []


def test_fix_a_session_file_repairs_that_session(tmp_path: Path) -> None:
    storage = copy(tmp_path)
    code, _out, err = run("fix", "--in-place", str(storage / f"session/global/{SESSION}.json"))
    assert code == 1, err
    assert (storage / RUNNING_FILE).read_text() == FIXED


def test_fix_diff_prints_each_file_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snapshot: Any
) -> None:
    storage = copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = snapshot_files(storage)
    code, out, err = run("fix", "--diff", "opencode/storage")
    assert code == 1
    assert snapshot_files(storage) == before
    assert out == snapshot(extension_class=Text)
    assert err == (
        "opencode/storage: would fix 1 finding(s) (TD301) in 1 file(s)\n"
        "Would fix 1 finding(s) in 1 file(s); 0 left.\n"
    )


def test_fix_needs_in_place_for_a_storage_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = snapshot_files(storage)
    code, out, err = run("fix", "opencode/storage")
    assert code == 2
    assert err == (
        "transcript-doctor: opencode/storage: an OpenCode storage folder is repaired in place only: "
        "`fix --in-place` (the report keeps every changed file's bytes), or `fix --diff` to see the "
        "changes; nothing written\n"
    )
    assert snapshot_files(storage) == before and not (tmp_path / "transcript-doctor-fixed").exists()
    # Found by a walk: left unfixed, with the reason.
    code, out, err = run("fix", "opencode")
    assert code == 1 and "[not fixed: an OpenCode storage folder is repaired in place only" in out


def test_a_file_that_changed_meanwhile_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transcript_doctor import writer

    storage = copy(tmp_path)
    read = writer.Original.read

    def racing(path: str) -> tuple[writer.Original, bytes]:
        (storage / RUNNING_FILE).write_bytes((storage / RUNNING_FILE).read_bytes() + b" ")
        return read(path)

    monkeypatch.setattr(writer.Original, "read", staticmethod(racing))
    code, _out, err = run("fix", "--in-place", str(storage))
    assert code == 2
    assert err == f"transcript-doctor: {storage / RUNNING_FILE} changed while it was repaired; not replaced\n"
    assert (storage / RUNNING_FILE).read_bytes().endswith(b"}\n ") is False
    assert "error" not in json.loads((storage / RUNNING_FILE).read_bytes())["state"]


@pytest.mark.parametrize("fmt", ["json", "concise", "github", "sarif"])
def test_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, snapshot: Any) -> None:
    copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _err = run("lint", "-o", fmt, "opencode")
    assert code == 1
    if fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        out = json.dumps([{k: r[k] for k in ("ruleId", "level", "message")} for r in results], indent=1)
    assert out == snapshot(extension_class=Text)


# -- hostile input ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(24))
def test_a_damaged_folder_gives_findings_or_one_line_never_a_crash(tmp_path: Path, seed: int) -> None:
    """Files of a real folder cut, overwritten, emptied, removed, or made unreadable."""
    rng = random.Random(seed)
    storage = copy(tmp_path)
    files = sorted(p for p in storage.rglob("*.json") if "session/" not in p.as_posix())
    for _ in range(rng.choice((1, 3, 8))):
        victim = rng.choice(files)
        data = bytearray(victim.read_bytes()) if victim.exists() else bytearray()
        how = rng.randrange(5)
        if how == 0:
            victim.write_bytes(bytes(data[: rng.randrange(len(data) + 1)]))
        elif how == 1 and data:
            start = rng.randrange(len(data))
            data[start : start + 8] = rng.randbytes(8)
            victim.write_bytes(bytes(data))
        elif how == 2:
            victim.write_bytes(
                rng.choice((b"", b"[]", b"null", b'"x"', b"{}", b'{"state": 1, "type": "tool"}'))
            )
        elif how == 3 and victim.exists():
            victim.unlink()
        else:
            victim.write_bytes(
                json.dumps({"type": "tool", "state": {"status": "running", "time": "x"}}).encode()
            )
    for args in (("lint", "-o", "json"), ("fix", "--in-place"), ("fix", "--in-place")):
        code, _out, err = run(*args, str(storage))
        assert code in (0, 1, 2), (args, err)
        assert "internal error" not in err and "Traceback" not in err, (args, err)
    assert run("fix", "--in-place", str(storage))[0] in (0, 1)
    assert [r for r in lint_json(storage) if r["fixable"]] == []


def test_the_reader_reads_sessions_in_creation_order(tmp_path: Path) -> None:
    storage = copy(tmp_path)
    other = DIR / "legacy-kill-stream/storage-2"
    for folder in ("session/global", "message", "part"):
        shutil.copytree(other / folder, storage / folder, dirs_exist_ok=True)
    assert list(tree.session_files(str(storage))) == [
        "ses_dcac1dc06ffeyaKlhOnSROF14W",
        "ses_dcac1aba2ffela06L7xN8cNbQw",
    ]


def test_a_session_file_that_does_not_parse_is_td001(tmp_path: Path) -> None:
    """OpenCode 1.1.65 skips such a session (``Session.list``): its messages are still read."""
    storage = copy(tmp_path)
    (storage / "session/global/ses_other.json").write_text('{"id": "ses_other", "projectID": "global"}')
    (storage / f"session/global/{SESSION}.json").write_bytes(b'{"id": ')
    records = lint_json(storage)
    assert [r["rule"] for r in records] == ["TD001", "TD301"]
    assert records[0]["message"].startswith(f"/session/{SESSION}: {SESSION}.json is not valid JSON")


def test_a_part_holding_a_key_twice_is_not_edited(tmp_path: Path) -> None:
    """JSON.parse keeps the last of two keys; the repair would have to guess which bytes to
    keep, so it is rolled back and said (as a JSON document's object is, editing.py)."""
    storage = copy(tmp_path)
    path = storage / RUNNING_FILE
    data = path.read_bytes()
    path.write_bytes(
        data.replace(b'    "status": "running",', b'    "status": "done",\n    "status": "running",')
    )
    before = path.read_bytes()
    code, out, _err = run("fix", "--in-place", str(storage))
    assert code == 1
    assert "holds a key twice" in out
    assert path.read_bytes() == before


def test_a_baseline_hides_a_folder_finding_and_workers_give_the_same(tmp_path: Path) -> None:
    storage = copy(tmp_path)
    baseline = tmp_path / "b.json"
    assert run("lint", "--baseline", str(baseline), "--write-baseline", str(storage))[0] == 0
    code, out, _err = run("lint", "-o", "concise", "--baseline", str(baseline), str(storage))
    assert code == 0 and "1 finding in the baseline not shown" in out
    # Worker processes (-j 2, over many targets) read the folder as one unit too.
    for index in range(3):
        shutil.copytree(DIR / "legacy-tools/storage-2", tmp_path / f"more-{index}" / "storage")
    serial = run("lint", "-o", "json", "-j", "1", str(tmp_path))
    parallel = run("lint", "-o", "json", "-j", "2", str(tmp_path))
    assert serial == parallel and serial[0] == 1
    assert [r["path"] for r in json.loads(serial[1])] == [str(storage)]
