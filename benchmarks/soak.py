"""Soak the write path of ``fix --in-place``: kills, racing appends, open writers, a full disk.

    python benchmarks/soak.py --rounds 25 [--megabytes 2] [--work DIR]

Each round copies a damaged Claude Code session (a clean one repeated to ``--megabytes``,
then the damage) and runs the real CLI on it:

- kills: SIGKILL or SIGTERM (alternately) at a random moment of ``fix --in-place
  --report``, every other pair of rounds within 20 ms of the temp file's appearance.  The file must be the original or the repair, a repair must have its undo
  record (the report, or the journal a killed run leaves) that gives the original back
  byte for byte, and a SIGTERM must leave no temp file.
- appends: a line appended (open, append, close, as Claude Code does) at a random moment
  of the fix.  The line must be in the file afterwards, after the original or the repair.
- open writers: a process holding the file open with O_APPEND (as Codex does) writes a
  line before and one after the fix.  Both must be in the file at its path.
- full disk: the file on a small tmpfs filled to a random level (root only; otherwise
  ENOSPC is injected into the writer's writes in process, and the output says so).  The
  file must be the original or the repair with its undo record, and no temp file left.

Prints the counts per scenario and ``losses: N``; exits 1 if anything was lost, a SIGTERM
or a full disk left a temp file, or a left temp file was linted as a transcript.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import jsonl_session  # noqa: E402

from transcript_doctor import engine, tempnames  # noqa: E402
from transcript_doctor.catalog import load  # noqa: E402
from transcript_doctor.checks import Selection  # noqa: E402
from transcript_doctor.fixer import fix_bytes  # noqa: E402

FIXTURES = HERE.parent / "fixtures" / "claude-code"
TOOL = [sys.executable, "-m", "transcript_doctor"]
LINE = b'{"type":"user","note":"appended by the soak"}\n'


def session(megabytes: float) -> bytes:
    clean = (FIXTURES / "clean-rewound-branch.jsonl").read_bytes()
    damaged = (FIXTURES / "damaged-unanswered-tool-use.jsonl").read_bytes()
    return jsonl_session(clean, int(megabytes * 2**20), damaged)


def repaired(data: bytes) -> bytes:
    options = engine.Options(Selection.build(("ALL",)), load(), None)
    return fix_bytes("s.jsonl", data, options).after


def _raw(step: dict[str, Any], key: str) -> bytes:
    return step[key].encode() if key in step else base64.b64decode(step[f"{key}_base64"])


def undone(after: bytes, steps: list[dict[str, Any]]) -> bytes:
    data = after
    for step in reversed(steps):
        offset = int(step["offset"])
        data = data[:offset] + _raw(step, "old") + data[offset + len(_raw(step, "new")) :]
    return data


def undo_entries(folder: Path) -> list[dict[str, Any]]:
    """Every file entry in the reports and journals of ``folder``."""
    entries: list[dict[str, Any]] = []
    for path in folder.iterdir():
        if path.name.endswith(".journal"):
            for line in path.read_bytes().splitlines():
                with contextlib.suppress(ValueError):
                    value = json.loads(line)
                    if "file" in value:
                        entries.append(value["file"])
        elif path.name.startswith("r.") and path.suffix == ".json" and path.stat().st_size:
            entries.extend(json.loads(path.read_bytes())["files"])
    return entries


def recorded(folder: Path, now: bytes, original: bytes) -> bool:
    digest = hashlib.sha256(now).hexdigest()
    return any(
        e.get("sha256_after") == digest and undone(now, e["steps"]) == original for e in undo_entries(folder)
    )


def temps(folder: Path) -> int:
    return sum(1 for p in folder.iterdir() if tempnames.is_temp(p.name))


def fix(path: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*TOOL, "fix", "--in-place", "-q", *extra, str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def fresh(work: Path, name: str, data: bytes) -> Path:
    folder = work / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    path = folder / "s.jsonl"
    path.write_bytes(data)
    return path


def kills(work: Path, rounds: int, data: bytes, expected: bytes, span: float) -> Counter[str]:
    counts: Counter[str] = Counter()
    for number in range(rounds):
        path = fresh(work, f"kill{number}", data)
        signum = signal.SIGKILL if number % 2 else signal.SIGTERM
        run = fix(path, "--report", str(path.parent / "r.json"))
        if number % 4 < 2:
            time.sleep(random.uniform(0.3, 1.02) * span)  # any moment (start-up and reading come first)
        else:  # during the write: once the temp file exists, within the next 20 ms
            while run.poll() is None and not temps(path.parent):
                time.sleep(0.0005)
            time.sleep(random.uniform(0, 0.02))
        run.send_signal(signum)
        run.wait()
        now = path.read_bytes()
        name = "SIGKILL" if signum == signal.SIGKILL else "SIGTERM"
        if now == data:
            counts["original"] += 1
        elif now == expected and recorded(path.parent, now, data):
            counts["repaired, with undo record"] += 1
        else:
            counts["LOST"] += 1
        left = temps(path.parent)
        if left and signum == signal.SIGTERM:
            counts["FAILED"] += 1  # SIGTERM must clean up
        counts[f"temp files left after {name}"] += left
        if left:
            walked = subprocess.run(
                [*TOOL, "lint", "-o", "concise", "--exit-zero", str(path.parent)],
                capture_output=True,
                text=True,
            )
            if ".tmp:" in walked.stdout or ".old:" in walked.stdout:
                counts["FAILED"] += 1  # a leftover linted as a transcript
    return counts


def appends(work: Path, rounds: int, data: bytes, expected: bytes, span: float) -> Counter[str]:
    counts: Counter[str] = Counter()
    for number in range(rounds):
        path = fresh(work, f"append{number}", data)
        run = fix(path)
        time.sleep(random.uniform(0.3, 1.0) * span)
        with open(path, "ab") as handle:
            handle.write(LINE)
        _, err = run.communicate()
        now = path.read_bytes()
        if now == data + LINE:
            counts[
                "put back with the line (fix refused)"
                if run.returncode == 2
                else "line before the fix read it"
            ] += 1
        elif now == expected + LINE:
            counts["line after the repair"] += 1
        elif now == repaired(data + LINE):
            counts["line read and repaired with the file"] += 1
        else:
            counts["LOST"] += 1
            print(f"  append round {number}: exit {run.returncode}, {err.decode(errors='replace').strip()}")
    return counts


HOLDER = """
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b'{"type":"user","note":"before"}\\n')
print("ready", flush=True)
sys.stdin.readline()
os.write(fd, b'{"type":"user","note":"after"}\\n')
"""


def writers(work: Path, rounds: int, data: bytes) -> Counter[str]:
    counts: Counter[str] = Counter()
    for number in range(rounds):
        path = fresh(work, f"writer{number}", data)
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        run = fix(path)
        _, err = run.communicate()
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.close()
        holder.wait()
        now = path.read_bytes()
        if now == data + b'{"type":"user","note":"before"}\n{"type":"user","note":"after"}\n':
            counts[
                "refused, both lines kept" if b"is open in another process" in err else "kept (other reason)"
            ] += 1
        else:
            counts["LOST"] += 1
    return counts


def full_disk(
    work: Path, rounds: int, data: bytes, expected: bytes, inject: bool
) -> tuple[Counter[str], str]:
    mount = work / "tmpfs"
    mount.mkdir(parents=True, exist_ok=True)
    size = 3 * len(data) + (1 << 20)
    mounted = (
        not inject
        and os.geteuid() == 0
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True
        ).returncode
        == 0
    )
    counts: Counter[str] = Counter()
    try:
        for number in range(rounds):
            folder = (mount if mounted else work / "enospc") / f"r{number}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            path = folder / "s.jsonl"
            path.write_bytes(data)
            free = random.randint(0, 2 * len(data) + (1 << 16))
            if mounted:
                stats = os.statvfs(mount)
                room = stats.f_bavail * stats.f_frsize - free
                if room > 0:
                    (mount / f"filler{number}").write_bytes(b"\0" * room)
                code = fix(path, "--report", str(folder / "r.json")).wait()
                with contextlib.suppress(FileNotFoundError):
                    (mount / f"filler{number}").unlink()
            else:
                code = _injected(path, folder / "r.json", free)
            now = path.read_bytes()
            if now == data:
                counts["original (refused)" if code == 2 else "original"] += 1
            elif now == expected and recorded(folder, now, data):
                counts["repaired, with undo record"] += 1
            else:
                counts["LOST"] += 1
            if temps(folder):
                counts["FAILED"] += 1
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=False)
    how = (
        f"tmpfs of {size // 1024} KiB"
        if mounted
        else "ENOSPC injected into the writer's writes (no tmpfs mounted)"
    )
    return counts, how


def _injected(path: Path, report: Path, budget: int) -> int:
    """Run the CLI in a child whose writes fail with ENOSPC after ``budget`` bytes."""
    script = f"""
import errno, os, sys
from transcript_doctor import cli, reportfile, writer
left = [{budget}]
real = os.write
def write(fd, data):
    if left[0] < len(data):
        raise OSError(errno.ENOSPC, "No space left on device")
    left[0] -= len(data)
    return real(fd, data)
writer.os.write = write
sys.exit(cli.run(sys.argv[1:]))
"""
    return subprocess.run(
        [sys.executable, "-c", script, "fix", "--in-place", "-q", "--report", str(report), str(path)],
        capture_output=True,
    ).returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--megabytes", type=float, default=2)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument(
        "--inject", action="store_true", help="inject ENOSPC even where a tmpfs could be mounted"
    )
    args = parser.parse_args()
    random.seed(args.seed)
    work = args.work or Path(tempfile.mkdtemp(prefix="td-soak-"))
    data = session(args.megabytes)
    expected = repaired(data)
    assert expected != data
    spans = []
    for _ in range(min(3, args.rounds)):
        probe = fresh(work, "probe", data)
        started = time.perf_counter()
        fix(probe).wait()
        spans.append(time.perf_counter() - started)
    span = min(spans)  # how long one fix takes: kills and appends land within it
    print(f"file: {len(data) / 2**20:.1f} MB; one fix --in-place: {span:.2f} s; rounds: {args.rounds}")
    results = {
        "kills": kills(work, args.rounds, data, expected, span),
        "appends": appends(work, args.rounds, data, expected, span),
        "open writers": writers(work, args.rounds, data),
    }
    results["full disk"], how = full_disk(work, args.rounds, data, expected, args.inject)
    lost = failed = 0
    for name, counts in results.items():
        lost += counts.pop("LOST", 0)
        failed += counts.pop("FAILED", 0)
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        print(f"{name}: {shown}")
    print(f"full disk: {how}")
    print(f"temp files left where they must not be, or linted: {failed}")
    print(f"losses: {lost}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if lost or failed else 0)


if __name__ == "__main__":
    main()
