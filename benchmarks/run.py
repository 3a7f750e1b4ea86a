"""Measure transcript-doctor against the cost of parsing, in one run, on the same files.

    python benchmarks/run.py [--megabytes 200] [--runs 3] [--largest 100] [--work benchmarks/out]

Prints, for the generated corpus: (a) the parse floor (read + orjson.loads of every
record, no model), (b) ``jq empty`` when jq is installed, (c) ``lint`` with one job,
(d) ``lint -j 2``, (e) ``fix --out`` on the damaged files; (f) start-up of
``transcript-doctor --version`` and of a lint of one small file against
``python -c "import orjson"``; the peak memory of linting the largest file; and (g),
with the ``[fleet]`` extra installed, ``lint`` of the corpus as a ``file://`` URL on a
running Dask cluster of 2 local worker processes (``--scheduler``) and on the cluster
``-j 2`` starts itself, against ``-j 2``.
The clean and damaged parts are also linted on their own: a lint of mostly healthy
sessions costs what the clean part does, while damaged conversations are read in full.
Times are medians of ``--runs`` runs, the measures taking turns within each run;
ratios compare figures of this same run.  The tool's bytecode is compiled first, as
``pip install`` does: an editable install run with PYTHONDONTWRITEBYTECODE=1 would
otherwise compile every module again at each start.
"""

from __future__ import annotations

import argparse
import compileall
import logging
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

import transcript_doctor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate, largest  # noqa: E402

TOOL = [sys.executable, "-m", "transcript_doctor"]


def median_time(action: Callable[[], object], runs: int) -> float:
    return median_times([action], runs)[0]


def median_times(actions: list[Callable[[], object]], runs: int) -> list[float]:
    """Median time of each action, the actions taking turns within each run: a machine
    whose speed drifts (shared cores) slows all of them alike, so the ratios hold."""
    times: list[list[float]] = [[] for _ in actions]
    for _ in range(runs):
        for action, spent in zip(actions, times, strict=True):
            start = time.perf_counter()
            action()
            spent.append(time.perf_counter() - start)
    return [statistics.median(spent) for spent in times]


def parse_floor(files: list[Path]) -> None:
    for path in files:
        data = path.read_bytes()
        parse(data.split(b"\n") if path.suffix == ".jsonl" else [data])


def parse(records: list[bytes]) -> None:
    """``orjson.loads`` of each record and nothing else: a generator step or a context
    manager per record would cost a tenth to a fifth of the floor, and flatter every ratio."""
    loads, error = orjson.loads, orjson.JSONDecodeError
    for record in records:
        if record.strip():
            try:
                loads(record)
            except error:  # damaged files hold torn lines
                continue


def command(args: list[str], cwd: Path | None = None) -> Callable[[], object]:
    def run() -> object:
        return subprocess.run(
            args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )

    return run


def peak_kib(args: list[str]) -> int:
    """Peak resident memory of one command (GNU time's %M)."""
    result = subprocess.run(["/usr/bin/time", "-f", "%M", *args], capture_output=True, text=True, check=False)
    return int(result.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--largest", type=int, default=100, help="MB of the single large file for peak memory"
    )
    parser.add_argument("--work", type=Path, default=HERE / "out")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    compileall.compile_dir(Path(transcript_doctor.__file__).parent, quiet=1)

    corpus = args.work / f"corpus-{args.megabytes}mb-seed{args.seed}"
    if not corpus.is_dir():
        print(f"generating {args.megabytes} MB corpus in {corpus} ...", flush=True)
        generate(corpus, args.megabytes, args.seed)
    files = sorted(p for p in corpus.rglob("*") if p.is_file())
    damaged = sorted(p for p in (corpus / "damaged").rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    mb = size / 2**20
    print(
        f"corpus: {len(files)} files, {mb:.1f} MB ({len(damaged)} damaged); cores: {os.cpu_count()}; runs: {args.runs}"
    )

    lint = [*TOOL, "lint", "-q", "-o", "concise", "--exit-zero", "--no-progress"]
    jq = shutil.which("jq")
    clean = sorted(p for p in (corpus / "clean").rglob("*") if p.is_file())
    floor, one, two, clean_floor, clean_one, damaged_floor, damaged_one, *rest = median_times(
        [
            lambda: parse_floor(files),
            command([*lint, "-j", "1", str(corpus)]),
            command([*lint, "-j", "2", str(corpus)]),
            lambda: parse_floor(clean),
            command([*lint, "-j", "1", str(corpus / "clean")]),
            lambda: parse_floor(damaged),
            command([*lint, "-j", "1", str(corpus / "damaged")]),
            *([command([jq, "empty", *map(str, files)])] if jq else []),
        ],
        args.runs,
    )
    jq_time = rest[0] if rest else None
    out = args.work / "fixed"
    shutil.rmtree(out, ignore_errors=True)
    damaged_mb = sum(p.stat().st_size for p in damaged) / 2**20
    fix = median_time(
        command([*TOOL, "fix", "-q", "--exit-zero", "--out", str(out), str(corpus / "damaged")]), args.runs
    )

    small = HERE.parent / "fixtures" / "openai-chat" / "clean-parallel-tools.json"
    startup_runs = max(11, args.runs)
    baseline = median_time(command([sys.executable, "-c", "import orjson"]), startup_runs)
    version = median_time(command([*TOOL, "--version"]), startup_runs)
    lint_small = median_time(command([*lint, str(small)]), startup_runs)

    big = args.work / f"largest-{args.largest}mb.jsonl"
    if not big.is_file():
        largest(big, args.largest)
    big_mb = big.stat().st_size / 2**20
    peak = peak_kib([*lint, str(big)]) / 1024

    fleet = fleet_times(lint, corpus, args.runs)

    def rate(seconds: float, megabytes: float = mb) -> str:
        return f"{seconds:7.2f} s  {megabytes / seconds:7.1f} MB/s"

    print(f"(a) parse floor (read + orjson.loads)   {rate(floor)}")
    if jq_time is not None:
        print(f"(b) jq empty                            {rate(jq_time)}")
    print(f"(c) lint, 1 job                         {rate(one)}")
    print(f"(d) lint, -j 2                          {rate(two)}")
    print(f"(e) fix --out on damaged ({damaged_mb:.0f} MB)        {rate(fix, damaged_mb)}")
    print(f"(f) python -c 'import orjson'           {baseline * 1000:7.1f} ms")
    print(f"    transcript-doctor --version         {version * 1000:7.1f} ms")
    print(f"    lint of one small file              {lint_small * 1000:7.1f} ms")
    print(
        f"    peak memory, lint of {big_mb:.0f} MB file     {peak:7.1f} MB  ({peak / big_mb:.2f}x the file)"
    )
    if fleet is not None:
        running, started = fleet
        print(f"(g) fleet, 2 local workers (--scheduler) {rate(running)}")
        print(f"    fleet, -j 2 (cluster start included) {rate(started)}")
    print("ratios:")
    print(f"    lint 1 job / parse floor            {one / floor:7.2f}x   (target <= 2.0)")
    if jq_time is not None:
        print(f"    lint 1 job / jq empty               {one / jq_time:7.2f}x   (target < 1.0)")
    print(f"    -j 2 speed-up over 1 job            {one / two:7.2f}x   (target >= 1.6)")
    for name, part, part_floor, part_one in (
        ("clean", clean, clean_floor, clean_one),
        ("damaged", damaged, damaged_floor, damaged_one),
    ):
        if part:  # a small corpus may not reach the damaged sessions
            print(
                f"    {name + ' part: lint / parse floor':36s}{part_one / part_floor:7.2f}x   ({len(part)} files)"
            )
    print(f"    --version / import orjson           {version / baseline:7.2f}x   (target <= 2.5)")
    if fleet is not None:
        print(f"    fleet (running cluster) / -j 2      {fleet[0] / two:7.2f}x   (time; 1.0 = as fast)")
        print(f"    fleet (-j 2, own cluster) / -j 2    {fleet[1] / two:7.2f}x")


def fleet_times(lint: list[str], corpus: Path, runs: int) -> tuple[float, float] | None:
    """Seconds of a fleet lint on a running 2-worker cluster, and with its own cluster."""
    try:
        from distributed import LocalCluster
    except ImportError:
        print("(g) fleet: skipped, the [fleet] extra is not installed")
        return None
    url = corpus.resolve().as_uri()
    started = median_time(command([*lint, "-j", "2", url]), runs)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
    ) as cluster:
        running = median_time(command([*lint, "--scheduler", cluster.scheduler_address, url]), runs)
    return running, started


if __name__ == "__main__":
    main()
