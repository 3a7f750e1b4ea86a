"""Measure transcript-doctor against the cost of parsing, and print every target of issue 19.

    python benchmarks/run.py [--megabytes 200] [--small-files 4000] [--runs 3] [--peers]
                             [--largest 100] [--work benchmarks/out] [--only startup|large]

Three corpora, built once into ``--work`` (see ``generate.py``): four large Claude Code
sessions (10-20 MB each, real users' sessions repeated with fresh uuids), a tree of
``--small-files`` small files of every layout (half of them a ``~/.claude/projects`` tree),
and the generated mix of every layout (``--megabytes``, about half of its files damaged).

Every time is a command run as a user runs it (a new process), and each ratio compares
two commands of the same run on the same files:

- the parse floor is ``benchmarks/floor.py`` (start Python, import orjson, read each file,
  ``orjson.loads`` each record, build nothing): no Python tool that reads every record
  can take less;
- ``jq empty`` is timed only on the files that parse (jq stops at a file's first parse
  error, so on damaged files it reads less and looks faster than it is), and lint is timed
  on the same files for that ratio; the bytes it skipped are printed;
- claude-rescue ``diagnose`` (a Claude Code session checker; one check, the chain) runs
  only with ``--peers``, which installs it into ``--work/peers``;
- start-up: ``--version`` and a lint of one small file against ``python -c "import orjson"``;
- peak memory of linting one ``--largest`` MB Claude Code session (GNU time's %M);
- ``fix --out`` of the mix's damaged part beside ``lint`` of the same files.

Within each run the measures take turns (a machine whose speed drifts, such as 2 cores
shared with other jobs, slows all of them alike, so the ratios hold); a target's ratio is
computed per run and its median decides "met".  The figures of every run are printed.
The tool's bytecode is compiled first, as ``pip install`` does.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

import transcript_doctor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate, large_claude, largest, small_tree  # noqa: E402

TOOL = [sys.executable, "-m", "transcript_doctor"]
LINT = [*TOOL, "lint", "-q", "-o", "concise", "--exit-zero", "--no-progress"]
FLOOR = [sys.executable, str(HERE / "floor.py")]
RESCUE_VERSION = "0.2.1"
STARTUP_TURNS = 5  # start-up commands per run (their median is the run's figure)


@dataclass
class Corpus:
    name: str
    root: Path
    files: list[Path]

    @property
    def mb(self) -> float:
        return sum(p.stat().st_size for p in self.files) / 2**20


@dataclass
class Bench:
    """Named commands, timed in turns; every run's seconds kept."""

    runs: int
    work: Path
    commands: dict[str, Callable[[], float]] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)  # user + sys of the command

    def add(self, name: str, args: list[str]) -> None:
        self.commands[name] = command(args)

    def add_files(self, name: str, prefix: list[str], files: list[Path]) -> None:
        """A command over a file list (a list file for the floor: thousands of names)."""
        if prefix is FLOOR:
            listing = self.work / f"{name.replace(' ', '-').replace('/', '-')}.list"
            listing.write_text("\n".join(map(str, files)) + "\n", encoding="utf-8")
            self.add(name, [*FLOOR, f"@{listing}"])
        else:
            self.add(name, [*prefix, *map(str, files)])

    def run(self, extra: Callable[[int], None]) -> None:
        for turn in range(self.runs):
            for name, action in self.commands.items():
                start = time.perf_counter()
                cpu = action()
                self.times.setdefault(name, []).append(time.perf_counter() - start)
                self.cpu.setdefault(name, []).append(cpu)
            extra(turn)

    def median(self, name: str) -> float:
        return statistics.median(self.times[name])


def command(args: list[str]) -> Callable[[], float]:
    """A command to time; running it returns its CPU seconds (user + sys)."""

    def run() -> float:
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = 0  # reaped here
        return usage.ru_utime + usage.ru_stime

    return run


def peak_kib(args: list[str]) -> int:
    """Peak resident memory of one command (GNU time's %M)."""
    result = subprocess.run(["/usr/bin/time", "-f", "%M", *args], capture_output=True, text=True, check=False)
    return int(result.stderr.strip().splitlines()[-1])


def parses(path: Path) -> bool:
    """Whether every record of a file parses (what ``jq empty`` reads to its end)."""
    data = path.read_bytes()
    records = data.split(b"\n") if path.suffix in (".jsonl", ".ndjson") else [data]
    try:
        for record in records:
            if record.strip():
                orjson.loads(record)
    except orjson.JSONDecodeError:
        return False
    return True


def jq_files(jq: str, files: list[Path]) -> list[Path]:
    """The files jq reads to their end: orjson's verdict, checked by one jq run (and file
    by file only when that run fails)."""
    good = [p for p in files if parses(p)]
    if subprocess.run([jq, "empty", *map(str, good)], capture_output=True, check=False).returncode:
        good = [p for p in good if not subprocess.run([jq, "empty", str(p)], capture_output=True).returncode]
    return good


def install_rescue(work: Path) -> str | None:
    """claude-rescue in its own venv under ``work`` (installed once), or None."""
    venv = work / "peers"
    exe = venv / "bin" / "claude-rescue"
    if not exe.exists():
        print(f"installing claude-rescue=={RESCUE_VERSION} into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        done = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", f"claude-rescue=={RESCUE_VERSION}"], check=False
        )
        if done.returncode:
            return None
    return str(exe)


def build(args: argparse.Namespace) -> tuple[Corpus, Corpus, Corpus]:
    work = args.work
    mix_root = work / f"corpus-{args.megabytes}mb-seed{args.seed}"
    if not mix_root.is_dir():
        print(f"generating the {args.megabytes} MB mix in {mix_root} ...", flush=True)
        generate(mix_root, args.megabytes, args.seed)
    large_root = work / "large-claude"
    if not large_root.is_dir():
        print(f"generating the large Claude Code sessions in {large_root} ...", flush=True)
        large_claude(large_root)
    small_root = work / f"small-{args.small_files}-seed{args.seed}"
    if not small_root.is_dir():
        print(f"generating {args.small_files} small files in {small_root} ...", flush=True)
        small_tree(small_root, args.small_files, args.seed)

    def files(root: Path) -> list[Path]:
        return sorted(p for p in root.rglob("*") if p.is_file())

    return (
        Corpus("large Claude Code", large_root, files(large_root)),
        Corpus("small files", small_root, files(small_root)),
        Corpus(f"{args.megabytes} MB mix", mix_root, files(mix_root)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--small-files", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--peers", action="store_true", help="install and time claude-rescue diagnose")
    parser.add_argument("--fleet", action="store_true", help="also time lint on a local Dask cluster")
    parser.add_argument(
        "--largest", type=int, default=100, help="MB of the single large file for peak memory"
    )
    parser.add_argument("--work", type=Path, default=HERE / "out")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--only",
        choices=["startup", "large"],
        help="startup: only the start-up targets (no corpus is built); large: only the large Claude Code sessions",
    )
    args = parser.parse_args()
    compileall.compile_dir(Path(transcript_doctor.__file__).parent, quiet=1)
    if args.only == "startup":
        startup_only(args)
        return
    args.work.mkdir(parents=True, exist_ok=True)
    if args.only == "large":
        large_only(args)
        return
    large, small, mix = build(args)
    big = args.work / f"largest-{args.largest}mb.jsonl"
    if not big.is_file():
        largest(big, args.largest)
    damaged = [p for p in mix.files if "damaged" in p.relative_to(mix.root).parts[:1]]
    clean = [p for p in mix.files if p not in set(damaged)]
    small_claude = small.root / "claude"

    bench = Bench(args.runs, args.work)
    for corpus in (large, small, mix):
        bench.add_files(f"floor {corpus.name}", FLOOR, corpus.files)
        bench.add(f"lint {corpus.name}", [*LINT, "-j", "1", str(corpus.root)])
        bench.add(f"lint -j2 {corpus.name}", [*LINT, "-j", "2", str(corpus.root)])
    bench.add_files("floor mix clean", FLOOR, clean)
    bench.add_files("lint mix clean", [*LINT, "-j", "1"], clean)
    bench.add_files("floor mix damaged", FLOOR, damaged)
    bench.add_files("lint mix damaged", [*LINT, "-j", "1"], damaged)
    out = args.work / "fixed"
    bench.add_files(
        "fix mix damaged", [*TOOL, "fix", "-q", "--exit-zero", "-j", "1", "--out", str(out)], damaged
    )

    jq = shutil.which("jq")
    jq_sets: dict[str, tuple[list[Path], Corpus]] = {}
    if jq is None:
        print("jq: skipped (not on PATH; install it, e.g. apt-get install jq)")
    else:
        for corpus in (large, small, mix):
            good = jq_files(jq, corpus.files)
            jq_sets[corpus.name] = (good, corpus)
            bench.add_files(f"jq {corpus.name}", [jq, "empty"], good)
            if len(good) == len(corpus.files):
                continue  # lint of the corpus is lint of the same files
            bench.add_files(f"lint parseable {corpus.name}", [*LINT, "-j", "1"], good)
    rescue = install_rescue(args.work) if args.peers else None
    if not args.peers:
        print("claude-rescue diagnose: skipped (pass --peers to install and time it)")
    elif rescue is None:
        print("claude-rescue diagnose: skipped (it did not install)")
    else:
        bench.add("diagnose large Claude Code", [rescue, "diagnose", str(large.root)])
        bench.add("diagnose small Claude Code", [rescue, "diagnose", str(small_claude)])
        bench.add("lint small Claude Code", [*LINT, "-j", "1", str(small_claude)])

    peaks: list[float] = []

    def extra(turn: int) -> None:
        time_startup(bench)
        peaks.append(peak_kib([*LINT, str(big)]) / 1024)
        print(f"  run {turn + 1} of {args.runs} done", flush=True)

    print(
        f"cores: {os.cpu_count()}; runs: {args.runs}; corpora:\n"
        f"  {large.name}: {len(large.files)} files, {large.mb:.1f} MB ({', '.join(p.name for p in large.files)})\n"
        f"  {small.name}: {len(small.files)} files, {small.mb:.1f} MB "
        f"({sum(1 for p in small.files if small_claude in p.parents)} Claude Code sessions under {small_claude.name}/)\n"
        f"  {mix.name}: {len(mix.files)} files, {mix.mb:.1f} MB ({len(damaged)} damaged)",
        flush=True,
    )
    for name, (good, corpus) in jq_sets.items():
        skipped = sum(p.stat().st_size for p in corpus.files if p not in set(good)) / 2**20
        print(
            f"  jq on {name}: {len(good)} of {len(corpus.files)} files parse; "
            f"{len(corpus.files) - len(good)} files, {skipped:.1f} MB skipped"
        )
    bench.run(extra)
    report(bench, args, large, small, mix, damaged, clean, jq_sets, peaks, big)
    if args.fleet:
        fleet = fleet_times(mix.root, args.runs)
        if fleet is not None:
            two = bench.median(f"lint -j2 {mix.name}")
            print(
                f"  fleet, 2 local workers (--scheduler) / -j 2      {fleet[0] / two:7.2f}x (time; 1.0 = as fast)"
            )
            print(f"  fleet, -j 2 on a file:// URL (own cluster) / -j 2 {fleet[1] / two:7.2f}x")


ONE_FILE = HERE.parent / "fixtures" / "openai-chat" / "clean-parallel-tools.json"
STARTUP = {
    "import orjson": command([sys.executable, "-c", "import orjson"]),
    "--version": command([*TOOL, "--version"]),
    "lint one small file": command([*LINT, str(ONE_FILE)]),
}


def time_startup(bench: Bench) -> None:
    """One run's start-up figures: each command STARTUP_TURNS times in turns, the medians."""
    spent: dict[str, list[float]] = {name: [] for name in STARTUP}
    used: dict[str, list[float]] = {name: [] for name in STARTUP}
    for _ in range(STARTUP_TURNS):
        for name, action in STARTUP.items():
            start = time.perf_counter()
            used[name].append(action())
            spent[name].append(time.perf_counter() - start)
    for name, values in spent.items():
        bench.times.setdefault(name, []).append(statistics.median(values))
        bench.cpu.setdefault(name, []).append(statistics.median(used[name]))


def startup_only(args: argparse.Namespace) -> None:
    """``--only startup``: the two start-up targets alone (no corpus is built)."""
    bench = Bench(args.runs, args.work)

    def extra(turn: int) -> None:
        time_startup(bench)
        print(f"  run {turn + 1} of {args.runs} done", flush=True)

    print(f"cores: {os.cpu_count()}; runs: {args.runs}; start-up only ({ONE_FILE.name})", flush=True)
    bench.run(extra)
    print(f"\nstart-up times (each run: the median of {STARTUP_TURNS} turns):")
    for name, values in bench.times.items():
        wall = " ".join(f"{v * 1000:6.1f}" for v in values)
        cpu = " ".join(f"{v * 1000:6.1f}" for v in bench.cpu[name])
        print(f"  {name:24s} wall {wall} ms   cpu {cpu} ms")
    print_targets(startup_rows(bench, args.runs))


def large_only(args: argparse.Namespace) -> None:
    """``--only large``: the large Claude Code sessions' target alone (only that corpus is built)."""
    root = args.work / "large-claude"
    if not root.is_dir():
        print(f"generating the large Claude Code sessions in {root} ...", flush=True)
        large_claude(root)
    large = Corpus("large Claude Code", root, sorted(p for p in root.rglob("*") if p.is_file()))
    bench = Bench(args.runs, args.work)
    bench.add_files(f"floor {large.name}", FLOOR, large.files)
    bench.add(f"lint {large.name}", [*LINT, "-j", "1", str(large.root)])

    def extra(turn: int) -> None:
        print(f"  run {turn + 1} of {args.runs} done", flush=True)

    print(
        f"cores: {os.cpu_count()}; runs: {args.runs}; {large.name}: {len(large.files)} files, "
        f"{large.mb:.1f} MB ({', '.join(p.name for p in large.files)})",
        flush=True,
    )
    bench.run(extra)
    print("\ntimes (each run):")
    for name, values in bench.times.items():
        wall = " ".join(f"{v:6.3f}" for v in values)
        cpu = " ".join(f"{v:6.3f}" for v in bench.cpu[name])
        print(f"  {name:28s} wall {wall} s   cpu {cpu} s")
    t, c = bench.times, bench.cpu
    top, bottom = f"lint {large.name}", f"floor {large.name}"
    runs = range(args.runs)
    print_targets(
        [
            (
                "large Claude Code: lint -j1 / floor",
                [t[top][i] / t[bottom][i] for i in runs],
                "x",
                1.5,
                True,
                [c[top][i] / c[bottom][i] for i in runs],
            )
        ]
    )


# name, per run, unit, limit, at most?, the same in CPU time (None: wall time only)
Row = tuple[str, list[float], str, float, bool, "list[float] | None"]


def startup_rows(bench: Bench, runs: int) -> list[Row]:
    t, c = bench.times, bench.cpu
    rows: list[Row] = []
    for label, top, limit in (
        ("one small file: lint / python -c 'import orjson'", "lint one small file", 2.0),
        ("--version / python -c 'import orjson'", "--version", 2.5),
    ):
        wall = [t[top][i] / t["import orjson"][i] for i in range(runs)]
        cpu = [c[top][i] / c["import orjson"][i] for i in range(runs)]
        rows.append((label, wall, "x", limit, True, cpu))
    return rows


def print_targets(rows: list[Row]) -> None:
    print("\ntargets (each run's figure in wall time, then the median, which decides; last, the")
    print("median of the same ratio in CPU time, user + sys: what a machine shared with other jobs")
    print("does not blur):")
    width = max(len(r[0]) for r in rows) + 2
    for label, values, unit, limit, at_most, in_cpu in rows:
        middle = statistics.median(values)
        met = middle <= limit if at_most else middle >= limit
        figures = " ".join(f"{v:7.2f}" for v in values)
        sign = "<=" if at_most else ">="
        cpu_text = f"   cpu {statistics.median(in_cpu):7.2f}{unit}" if in_cpu else ""
        print(
            f"  {label:{width}s}{figures}  | {middle:7.2f}{unit} {sign} {limit:g}  "
            f"{'met' if met else 'not met':7s}{cpu_text}"
        )


def fleet_times(corpus: Path, runs: int) -> tuple[float, float] | None:
    """Seconds of a fleet lint on a running 2-worker cluster, and with its own cluster."""
    try:
        from distributed import LocalCluster
    except ImportError:
        print("  fleet: skipped, the [fleet] extra is not installed")
        return None
    import logging

    url = corpus.resolve().as_uri()
    started = statistics.median(timed(command([*LINT, "-j", "2", url])) for _ in range(runs))
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
    ) as cluster:
        lint = command([*LINT, "--scheduler", cluster.scheduler_address, url])
        running = statistics.median(timed(lint) for _ in range(runs))
    return running, started


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def report(
    bench: Bench,
    args: argparse.Namespace,
    large: Corpus,
    small: Corpus,
    mix: Corpus,
    damaged: list[Path],
    clean: list[Path],
    jq_sets: dict[str, tuple[list[Path], Corpus]],
    peaks: list[float],
    big: Path,
) -> None:
    t = bench.times
    runs = range(args.runs)

    def mb(files: list[Path]) -> float:
        return sum(p.stat().st_size for p in files) / 2**20

    sizes = {
        "large Claude Code": large.mb,
        "small files": small.mb,
        mix.name: mix.mb,
        "mix clean": mb(clean),
        "mix damaged": mb(damaged),
    }
    print(f"\ntimes (median of {args.runs} runs):")
    for name, values in t.items():
        size = next((s for key, s in sizes.items() if name.endswith(key)), None)
        rate = f"  {size / statistics.median(values):7.1f} MB/s" if size else ""
        runs_text = " ".join(f"{v:.3f}" for v in values)
        print(f"  {name:40s} {statistics.median(values):8.3f} s{rate}   (runs: {runs_text})")
    big_mb = big.stat().st_size / 2**20
    print(
        f"  peak memory, lint of a {big_mb:.0f} MB Claude Code session: "
        + ", ".join(f"{p:.0f} MB" for p in peaks)
    )

    rows: list[Row] = []
    c = bench.cpu

    def ratio(
        label: str, top: str, bottom: str, limit: float, at_most: bool = True, cpu: bool = True
    ) -> None:
        in_cpu = [c[top][i] / c[bottom][i] for i in runs] if cpu else None
        rows.append((label, [t[top][i] / t[bottom][i] for i in runs], "x", limit, at_most, in_cpu))

    ratio("large Claude Code: lint -j1 / floor", f"lint {large.name}", f"floor {large.name}", 1.5)
    ratio("small files: lint -j1 / floor", f"lint {small.name}", f"floor {small.name}", 2.5)
    files = len(small.files)

    # What each file adds over the floor's per-file work: lint's time past its process start
    # (a lint of one small file) less the floor's time past its own (``import orjson``).
    def overhead(times: dict[str, list[float]]) -> list[float]:
        return [
            (
                (times[f"lint {small.name}"][i] - times["lint one small file"][i])
                - (times[f"floor {small.name}"][i] - times["import orjson"][i])
            )
            / files
            * 1e6
            for i in runs
        ]

    rows.append(
        (
            f"small files: per-file overhead over the floor ({files} files)",
            overhead(t),
            "us",
            100,
            True,
            overhead(c),
        )
    )
    ratio(f"{mix.name}: lint -j1 / floor", f"lint {mix.name}", f"floor {mix.name}", 2.0)
    for name, (good, corpus) in jq_sets.items():
        lint = f"lint {name}" if len(good) == len(corpus.files) else f"lint parseable {name}"
        ratio(f"{name}: lint -j1 / jq empty (files that parse)", lint, f"jq {name}", 1.0, True)
    if "diagnose large Claude Code" in t:
        ratio(
            "large Claude Code: lint -j1 / claude-rescue diagnose",
            f"lint {large.name}",
            "diagnose large Claude Code",
            1.0,
        )
        ratio(
            "small Claude Code tree: lint -j1 / claude-rescue diagnose",
            "lint small Claude Code",
            "diagnose small Claude Code",
            1.0,
        )
    rows.extend(startup_rows(bench, args.runs))
    rows.append(("peak memory / largest file", [p / big_mb for p in peaks], "x", 3.0, True, None))
    ratio(
        f"{mix.name}: -j 2 speed-up over -j 1", f"lint {mix.name}", f"lint -j2 {mix.name}", 1.6, False, False
    )

    print_targets(rows)
    width = max(len(r[0]) for r in rows) + 2

    print("\nalso measured (no target):")
    for label, top, bottom in (
        ("large Claude Code: -j 2 speed-up over -j 1", f"lint {large.name}", f"lint -j2 {large.name}"),
        ("small files: -j 2 speed-up over -j 1", f"lint {small.name}", f"lint -j2 {small.name}"),
        (f"{mix.name}, clean part: lint / floor", "lint mix clean", "floor mix clean"),
        (f"{mix.name}, damaged part: lint / floor", "lint mix damaged", "floor mix damaged"),
    ):
        values = [t[top][i] / t[bottom][i] for i in runs]
        print(
            f"  {label:{width}s}{' '.join(f'{v:7.2f}' for v in values)}  | {statistics.median(values):7.2f}x"
        )
    size = mb(damaged)
    lint_rate = [size / t["lint mix damaged"][i] for i in runs]
    fix_rate = [size / t["fix mix damaged"][i] for i in runs]
    print(
        f"  {'fix --out of the damaged part, MB/s':{width}s}{' '.join(f'{v:7.1f}' for v in fix_rate)}  | {statistics.median(fix_rate):7.1f}"
    )
    print(
        f"  {'lint of the same files, MB/s':{width}s}{' '.join(f'{v:7.1f}' for v in lint_rate)}  | {statistics.median(lint_rate):7.1f}"
    )


if __name__ == "__main__":
    main()
