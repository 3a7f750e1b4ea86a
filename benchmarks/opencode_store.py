"""Lint and fix an OpenCode store of many sessions: how the database path scales.

    python benchmarks/opencode_store.py [--sessions 2000] [--work benchmarks/out]

Builds ``opencode.db`` from the recorded ``fixtures/opencode/tools/opencode-2.db`` (one
healthy session: 2 prompts, 5 steps, tool parts) and ``kill-tool/opencode-2.db`` (one
TD301), copied ``--sessions`` times under new ids (every 50th a killed one), in WAL mode
with the rows left in the WAL as a running OpenCode leaves them.  Then times, each in a
fresh process as a user runs them: ``lint``, ``fix --diff`` and ``fix --in-place`` (with
the backup), and prints the sizes and the medians of three runs (``fix --in-place`` once).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "opencode"
TABLES = ("session", "message", "part")


def build(target: Path, sessions: int) -> None:
    if target.exists():
        target.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(FIXTURES / "tools" / "opencode-2.db", target)
    db = sqlite3.connect(target)
    db.execute("PRAGMA journal_mode = wal")
    db.execute("PRAGMA wal_autocheckpoint = 0")  # rows stay in the WAL, as OpenCode leaves them
    for table in TABLES:
        db.execute(f"DELETE FROM {table}")
    healthy = _rows(FIXTURES / "tools" / "opencode-2.db")
    killed = _rows(FIXTURES / "kill-tool" / "opencode-2.db")
    with db:
        for n in range(sessions):
            source = killed if n % 50 == 0 else healthy
            for table in TABLES:
                for row in source[table]:
                    db.execute(
                        f"INSERT INTO {table} VALUES ({', '.join('?' for _ in row)})", _renamed(table, row, n)
                    )
    db.close()


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {t: db.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES}
    finally:
        db.close()


def _renamed(table: str, row: tuple[object, ...], n: int) -> list[object]:
    """Ids made unique per copy (the suffix keeps their sort order)."""
    out = list(row)
    columns = {"session": (0,), "message": (0, 1), "part": (0, 1, 2)}[table]
    for index in columns:
        out[index] = f"{out[index]}{n:06d}"
    return out


def timed(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "transcript_doctor", *args, "--no-progress", "-q"], cwd=ROOT, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "out")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    store = args.work / "opencode.db"
    build(store, args.sessions)
    sizes = {p.name: p.stat().st_size for p in sorted(args.work.glob("opencode.db*"))}
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    db.close()
    print(f"store: {counts}, files: {sizes}")
    lint = statistics.median(timed("lint", str(store)) for _ in range(3))
    diff = statistics.median(timed("fix", "--diff", str(store)) for _ in range(3))
    fix = timed("fix", "--in-place", str(store))
    print(f"lint {lint:.2f}s  fix --diff {diff:.2f}s  fix --in-place (backup included) {fix:.2f}s")
    for backup in args.work.glob("*.td-backup"):
        backup.unlink()


if __name__ == "__main__":
    main()
