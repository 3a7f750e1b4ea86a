"""The fix command as users run it: modes, exit codes, atomic writes, the report."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from support import FIXTURES, cli

from transcript_doctor import fixing, writer

DAMAGED = FIXTURES / "openai-chat" / "damaged-tool-pairing.json"
CLEAN = FIXTURES / "openai-chat" / "clean-parallel-tools.json"


def _copy(tmp_path: Path, source: Path = DAMAGED, name: str = "chat.json") -> Path:
    target = tmp_path / name
    shutil.copyfile(source, target)
    return target


def _undo(after: bytes, steps: list[dict[str, object]]) -> bytes:
    def raw(step: dict[str, object], key: str) -> bytes:
        if key in step:
            return str(step[key]).encode()
        return base64.b64decode(str(step[f"{key}_base64"]))

    data = after
    for step in reversed(steps):
        offset = int(step["offset"])  # type: ignore[call-overload]
        data = data[:offset] + raw(step, "old") + data[offset + len(raw(step, "new")) :]
    return data


def test_in_place_rewrites_keeps_mode_and_exits_1(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    path.chmod(0o640)
    report = tmp_path / "report.json"
    result = cli("fix", "--in-place", "--unsafe-fixes", "--report", str(report), str(path))
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0] == f"{path}: fixed 3 finding(s) (TD302, TD303, TD304)"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left
    document = json.loads(report.read_text())
    (entry,) = document["files"]
    assert _undo(path.read_bytes(), entry["steps"]) == DAMAGED.read_bytes()
    assert [(f["rule"], f["action"]) for f in entry["fixes"]] == [
        ("TD303", "remove"),
        ("TD302", "remove"),
        ("TD304", "move"),
    ]
    assert [u["rule"] for u in entry["unfixed"]] == ["TD305"]
    assert (tmp_path / "report.diff").read_text().startswith(f"--- a/{path}\n+++ b/{path}\n")
    second = cli("fix", "--in-place", str(path))
    assert second.returncode == 1  # TD305 remains (not fixable); nothing changes
    assert not second.stdout.startswith(f"{path}: fixed")


def test_in_place_exit_0_when_nothing_changes_and_nothing_is_left(tmp_path: Path) -> None:
    path = _copy(tmp_path, CLEAN)
    before = path.stat().st_mtime_ns
    assert cli("fix", "--in-place", str(path)).returncode == 0
    assert path.stat().st_mtime_ns == before


def test_diff_writes_nothing(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    result = cli("fix", "--diff", "--unsafe-fixes", str(path))
    assert result.returncode == 1
    assert result.stdout.startswith(f"--- a/{path}\n")
    assert '-  {"role": "tool", "tool_call_id": "call_zzz", "content": "stale"},' in result.stdout
    assert path.read_bytes() == DAMAGED.read_bytes()
    assert not (tmp_path / "transcript-doctor-fixed").exists()


def test_default_writes_copies_and_report_under_out(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    result = cli("fix", "--unsafe-fixes", "--out", "fixed", "chat.json", cwd=tmp_path)
    assert result.returncode == 1  # TD305 is left
    assert path.read_bytes() == DAMAGED.read_bytes()
    repaired = (tmp_path / "fixed" / "chat.json").read_bytes()
    assert b"call_zzz" not in repaired
    entry = json.loads((tmp_path / "fixed" / "transcript-doctor-report.json").read_text())["files"][0]
    assert _undo(repaired, entry["steps"]) == DAMAGED.read_bytes()


def test_stdin_to_stdout(tmp_path: Path) -> None:
    result = cli("fix", "--unsafe-fixes", "-", stdin=DAMAGED.read_bytes(), cwd=tmp_path)
    assert result.returncode == 1
    assert b"call_zzz" not in result.stdout.encode()
    assert result.stdout.startswith("[\n")
    assert "fixed 3 finding(s)" in result.stderr


def test_stdin_writes_no_report_folder_unless_asked(tmp_path: Path) -> None:
    """``fix -`` is a filter: the repair goes to standard output and nothing lands in the
    current folder (it used to leave ``transcript-doctor-fixed/`` with a report there)."""
    result = cli("fix", "--unsafe-fixes", "-", stdin=DAMAGED.read_bytes(), cwd=tmp_path)
    assert result.returncode == 1
    assert b"call_zzz" not in result.stdout.encode()
    assert list(tmp_path.iterdir()) == []
    result = cli("lint", "--fix", "--unsafe-fixes", "-", stdin=DAMAGED.read_bytes(), cwd=tmp_path)
    assert (result.returncode, list(tmp_path.iterdir())) == (1, [])


@pytest.mark.parametrize("asked", [["--report", "r.json"], ["--out", "r"]])
def test_stdin_writes_the_report_it_is_asked_for(tmp_path: Path, asked: list[str]) -> None:
    result = cli("fix", "--unsafe-fixes", *asked, "-", stdin=DAMAGED.read_bytes(), cwd=tmp_path)
    assert result.returncode == 1
    report = tmp_path / "r.json" if asked[0] == "--report" else tmp_path / "r" / fixing.REPORT_NAME
    assert [entry["path"] for entry in json.loads(report.read_text())["files"]] == ["-"]
    assert b"call_zzz" not in result.stdout.encode()


@pytest.mark.parametrize(
    "data", [(FIXTURES / "openai-chat" / "clean-parallel-tools.json").read_bytes(), b'{"name": "x"}\n']
)
def test_stdin_with_nothing_to_fix_passes_through(data: bytes) -> None:
    """``fix - < a > b`` is a filter: a clean transcript (or a file that is none) comes out
    byte for byte, never as an empty ``b``."""
    result = cli("fix", "-", stdin=data)
    assert (result.returncode, result.stdout) == (0, data.decode())


def test_in_place_through_a_symlink_replaces_the_target(tmp_path: Path) -> None:
    target = _copy(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert cli("fix", "--in-place", "--unsafe-fixes", str(link)).returncode == 1
    assert link.is_symlink()
    assert b"call_zzz" not in target.read_bytes()


def test_refuses_when_the_file_changed_since_it_was_read(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    snapshot, original = writer.Original.read(str(path))
    path.write_bytes(original + b"\n")  # someone appended meanwhile
    with pytest.raises(writer.WriteRefused, match="changed while it was being fixed"):
        writer.replace(snapshot, b"[]")
    assert path.read_bytes() == original + b"\n"
    assert [p.name for p in tmp_path.iterdir()] == ["chat.json"]


def test_read_only_folder_is_a_clear_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores folder permissions")
    folder = tmp_path / "ro"
    folder.mkdir()
    path = _copy(folder)
    folder.chmod(0o555)
    try:
        result = cli("fix", "--in-place", str(path))
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2
    assert "cannot write beside" in result.stderr
    assert path.read_bytes() == DAMAGED.read_bytes()


def test_in_place_and_diff_exclude_each_other(tmp_path: Path) -> None:
    assert cli("fix", "--in-place", "--diff", str(_copy(tmp_path))).returncode == 2


def test_failed_write_leaves_the_original_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    path = _copy(tmp_path)
    snapshot, original = writer.Original.read(str(path))

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer.os, "fsync", full_disk)
    with pytest.raises(writer.WriteRefused, match="No space left on device"):
        writer.replace(snapshot, b"[]")
    assert path.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["chat.json"]
