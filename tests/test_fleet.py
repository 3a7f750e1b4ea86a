"""The fleet path (issue 20): URLs on a Dask cluster give the local run's outputs.

One in-process cluster (2 thread workers) serves the memory:// filesystem, which only
threads share; the test of a killed worker needs real processes, on a local folder.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, ROOT, cli

distributed = pytest.importorskip("distributed")
fsspec = pytest.importorskip("fsspec")

from transcript_doctor import cli as command  # noqa: E402
from transcript_doctor import fleet  # noqa: E402

# A few vendors' fixtures, damaged and clean: enough for several batches, quick to check.
FOLDERS = ("claude-code", "openai-chat", "gemini-checkpoint", "codex")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as made:
        yield made


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    """The fixtures of FOLDERS under memory://bucket/fixtures/."""
    fs = fsspec.filesystem("memory")
    for folder in FOLDERS:
        for path in sorted((FIXTURES / folder).iterdir()):
            fs.pipe(f"/bucket/fixtures/{folder}/{path.name}", path.read_bytes())
    fs.pipe("/bucket/fixtures/.hidden/x.jsonl", b"{not json\n")  # skipped as locally
    yield "memory://bucket"
    fs.rm("/bucket", recursive=True)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = command.run(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def local(*args: str, cwd: Path) -> tuple[int, str, str]:
    run = cli(*args, "--no-progress", cwd=cwd)
    return run.returncode, run.stdout, run.stderr


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same files in a local folder, for the local run to compare with."""
    root = tmp_path_factory.mktemp("local")
    for folder in FOLDERS:
        shutil.copytree(FIXTURES / folder, root / "fixtures" / folder)
    return root


@pytest.mark.parametrize(
    "fmt",
    [
        ("-o", "json"),
        ("-o", "jsonl"),
        ("-o", "concise"),
        # what fix would do, and the summary of hidden fixes, as a local run says them
        ("-o", "concise", "--show-fixes"),
        ("-o", "concise", "--show-fixes", "--unsafe-fixes"),
    ],
    ids=" ".join,
)
def test_lint_of_a_bucket_is_the_local_run(
    fmt: tuple[str, ...], cluster: Any, bucket: str, copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["lint", f"{bucket}/fixtures", "--scheduler", cluster.scheduler_address, *fmt], capsys
    )
    expected = local("lint", "fixtures", *fmt, cwd=copy)
    assert (code, out.replace(f"{bucket}/", ""), err) == expected
    assert code == 1 and out.count("TD301") > 5


def test_lint_of_named_urls_and_a_missing_one(
    cluster: Any, bucket: str, copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["fixtures/claude-code/damaged-unanswered-tool-use.jsonl", "fixtures/openai-chat/README.md"]
    code, out, err = run_cli(
        ["lint", *(f"{bucket}/{n}" for n in names), "--scheduler", cluster.scheduler_address, "-o", "json"],
        capsys,
    )
    assert (code, out.replace(f"{bucket}/", ""), err.replace(f"{bucket}/", "")) == local(
        "lint", *names, "-o", "json", cwd=copy
    )
    code, out, err = run_cli(
        ["lint", f"{bucket}/nothing.jsonl", "--scheduler", cluster.scheduler_address], capsys
    )
    assert (code, err) == (
        2,
        f"transcript-doctor: cannot read {bucket}/nothing.jsonl: No such file or directory\n",
    )


def test_lint_fix_runs_on_the_scheduler_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lint --fix --scheduler`` is ``fix --scheduler``, not a local fix of the files."""
    from transcript_doctor import fleet

    asked: list[str | None] = []
    monkeypatch.setattr(
        fleet, "fix", lambda paths, out, options, plan, scheduler: asked.append(scheduler) or 0
    )
    path = tmp_path / "d.jsonl"
    path.write_bytes((FIXTURES / "openai-chat" / "damaged-fine-tuning.jsonl").read_bytes())
    assert run_cli(["lint", "--fix", "--scheduler", "tcp://127.0.0.1:1", str(path)], capsys)[0] == 0
    assert asked == ["tcp://127.0.0.1:1"]


def test_fix_out_never_overwrites_an_input(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the local ``fix --out .`` does, a copy that would land on its input is refused
    before anything is written."""
    damaged = FIXTURES / "openai-chat" / "damaged-fine-tuning.jsonl"
    (tmp_path / "d.jsonl").write_bytes(damaged.read_bytes())
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(
        ["fix", "d.jsonl", "--out", f"file://{tmp_path}", "--scheduler", cluster.scheduler_address], capsys
    )
    assert (code, err) == (
        2,
        "transcript-doctor: the copy of d.jsonl would overwrite the input d.jsonl; choose another --out\n",
    )
    assert (tmp_path / "d.jsonl").read_bytes() == damaged.read_bytes()


def test_fix_out_to_another_prefix_is_the_local_fix(
    cluster: Any, bucket: str, copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["fix", f"{bucket}/fixtures", "--out", "memory://fixed", "--scheduler", cluster.scheduler_address],
        capsys,
    )
    expected = local("fix", "fixtures", "--out", str(tmp_path / "fixed"), cwd=copy)
    assert (code, out.replace(f"{bucket}/", ""), err) == expected
    fs = fsspec.filesystem("memory")
    written = {p.removeprefix("/fixed/"): fs.cat(p) for p in fs.find("/fixed")}
    fixed = tmp_path / "fixed"
    on_disk = {p.relative_to(fixed).as_posix(): p.read_bytes() for p in fixed.rglob("*") if p.is_file()}
    report = "transcript-doctor-report.json"
    assert json.loads(written.pop(report).decode().replace(f"{bucket}/", "")) == json.loads(
        on_disk.pop(report)
    )
    diff = written.pop("transcript-doctor-report.diff").decode()
    assert diff.replace(f"{bucket}/", "") == on_disk.pop("transcript-doctor-report.diff").decode()
    assert {k.removeprefix("bucket/"): v for k, v in written.items()} == on_disk
    assert len(on_disk) > 10
    fs.rm("/fixed", recursive=True)


def test_fix_diff_of_a_bucket_is_the_local_diff(
    cluster: Any, bucket: str, copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["fix", f"{bucket}/fixtures", "--diff", "--scheduler", cluster.scheduler_address], capsys
    )
    expected = local("fix", "fixtures", "--diff", cwd=copy)
    assert (code, out.replace(f"{bucket}/", ""), err.replace(f"{bucket}/", "")) == expected
    assert code == 1 and out.count("+++ b/") > 10


def test_a_batch_that_fails_is_split_and_only_the_failing_file_is_an_error(cluster: Any) -> None:
    targets = [fleet.Target(f"memory://x/{i}", f"x/{i}", 1, False) for i in range(6)]
    with distributed.Client(cluster) as client:
        got = list(fleet._run(client, _explode_on_3, targets, "shared", lambda t, e: f"{t.path}: {e!r}"))
    assert got == [
        "x/0 shared",
        "x/1 shared",
        "x/2 shared",
        "x/3: RuntimeError('boom')",
        "x/4 shared",
        "x/5 shared",
    ]


def _explode_on_3(batch: list[tuple[str, str]], shared: str) -> list[str]:
    if any(path == "x/3" for _url, path in batch):
        raise RuntimeError("boom")
    return [f"{path} {shared}" for _url, path in batch]


def test_without_a_url_or_scheduler_the_fleet_is_not_imported() -> None:
    code = (
        "import sys\n"
        "from transcript_doctor import cli\n"
        "code = cli.run(['lint', 'fixtures/openai-chat', '-q', '-o', 'json'])\n"
        "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'fsspec')"
        " or m == 'transcript_doctor.fleet'))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert run.stdout.splitlines()[-1] == "1 []"


def test_a_worker_killed_mid_run_loses_no_result(tmp_path: Path) -> None:
    """A worker dies while it reads a file: the scheduler retries the task elsewhere and
    every file's findings arrive.  The file is a named pipe, so the worker that reads it
    waits until the test kills it, and which process that is is known (/proc/PID/fd)."""
    if not hasattr(os, "mkfifo") or not Path("/proc/self/fd").exists():
        pytest.skip("needs named pipes and /proc")
    source = tmp_path / "src"
    shutil.copytree(FIXTURES / "openai-chat", source)
    slow = FIXTURES / "claude-code" / "damaged-unanswered-tool-use.jsonl"
    expected_dir = tmp_path / "expected"
    shutil.copytree(source, expected_dir)
    shutil.copy(slow, expected_dir / "zz-pipe.jsonl")
    pipe = source / "zz-pipe.jsonl"
    os.mkfifo(pipe)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as procs,
        distributed.Client(procs) as client,
    ):
        workers = set(client.run(os.getpid).values())
        env = {**os.environ, "NO_COLOR": "1"}
        args = [sys.executable, "-m", "transcript_doctor", "lint", str(source), "-o", "json"]
        run = subprocess.Popen(
            [*args, "--scheduler", procs.scheduler_address],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        try:
            writer = _wait_for_reader(pipe)  # a worker has the pipe open and waits for data
            killed = _holder(pipe)
            assert killed in workers, (killed, workers, _holders(pipe))
            # The retried task must read the file once, whole: the path becomes a plain
            # file while the doomed worker still waits on the pipe it opened.
            pipe.unlink()
            shutil.copy(slow, pipe)
            os.kill(killed, signal.SIGKILL)
            os.close(writer)
            out, _err = run.communicate(timeout=120)
        finally:
            run.kill()
    expected = local("lint", str(expected_dir), "-o", "json", cwd=ROOT)
    assert (run.returncode, out.decode().replace(str(source), str(expected_dir))) == expected[:2]
    assert "zz-pipe.jsonl" in out.decode()


def _wait_for_reader(pipe: Path, timeout: float = 90) -> int:
    """A writing end of the pipe, opened once some process waits to read it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            time.sleep(0.05)
    raise AssertionError("no worker opened the pipe")


def _holders(pipe: Path) -> list[int]:
    """The processes that have the pipe open."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            links = [os.readlink(f"/proc/{entry}/fd/{fd}") for fd in os.listdir(f"/proc/{entry}/fd")]
        except OSError:
            continue
        if os.path.realpath(pipe) in links:
            found.append(int(entry))
    return found


def _holder(pipe: Path, timeout: float = 30) -> int:
    """The process that opened the pipe for reading (its open returns just after ours)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = _holders(pipe)
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError("no process holds the pipe")


@pytest.mark.parametrize("command_", [["lint"], ["fix", "--out", "memory://fixed-db"], ["fix", "--diff"]])
def test_a_database_at_a_url_is_a_one_line_error(
    cluster: Any, capsys: pytest.CaptureFixture[str], command_: list[str]
) -> None:
    """A session store is read through SQLite from its own file, its -wal beside it: its
    main file's bytes from a URL could miss most of its rows (dbsource.from_bytes)."""
    fs = fsspec.filesystem("memory")
    fs.pipe("/dbs/opencode.db", (FIXTURES / "opencode/kill-tool/opencode-2.db").read_bytes())
    try:
        code, _out, err = run_cli(
            [*command_, "memory://dbs/opencode.db", "--scheduler", cluster.scheduler_address], capsys
        )
    finally:
        fs.rm("/dbs", recursive=True)
    assert code == 2
    assert err.splitlines()[0] == (
        "transcript-doctor: memory://dbs/opencode.db: an SQLite database (an OpenCode or Kilo session "
        "store?) is read from its own file, with the -wal beside it, not from standard input or a URL: "
        "name the local file"
    )
    assert not fs.exists("/fixed-db")
