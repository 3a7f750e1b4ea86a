"""Damage files of a real OpenCode ``storage/`` folder and hold lint and fix to their promises.

The folder is one unit (treesource.py), so the byte fuzzer of test_fuzz.py, which lints
each file alone, never reaches its reader: here hypothesis damages one to three files of
``fixtures/opencode-legacy/legacy-kill-tool/storage-2`` with the same mutations, then lint
gives no internal error, ``fix --in-place`` changes only files its report names (undoing
each file's steps gives it back), leaves no repairable finding without a reason, and a
second fix changes nothing.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
from io import StringIO
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutate import MUTATIONS
from support import FIXTURES

from transcript_doctor import cli

TREE = FIXTURES / "opencode-legacy" / "legacy-kill-tool" / "storage-2"
FILES = sorted(p.relative_to(TREE).as_posix() for p in TREE.rglob("*") if p.is_file())


def _run(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = cli.run([*args, "--no-progress"])
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(FILES), st.sampled_from(MUTATIONS), st.integers(0, 2**32)),
        min_size=1,
        max_size=3,
    )
)
def test_hypothesis_damage_of_a_storage_folder(damage) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        storage = Path(tmp) / "storage"
        shutil.copytree(TREE, storage)
        for name, mutation, seed in damage:
            path = storage / name
            path.write_bytes(mutation(path.read_bytes(), random.Random(seed), b""))
        code, _out, err = _run("lint", "-o", "json", str(storage))
        assert code in (0, 1, 2) and "internal error" not in err and "Traceback" not in err, err
        before = _files(storage)
        report = Path(tmp) / "report.json"
        code, _out, err = _run("fix", "--in-place", "--report", str(report), str(storage))
        assert code in (0, 1, 2) and "internal error" not in err, err
        after = _files(storage)
        changed = {k for k in before if before[k] != after.get(k)}
        if report.exists():
            entries = json.loads(report.read_text())["files"]
            named = {Path(e["path"]).relative_to(storage).as_posix() for e in entries if e["changed"]}
            assert changed == named, (changed, named)
            for entry in entries:
                data = after[Path(entry["path"]).relative_to(storage).as_posix()]
                for step in reversed(entry["steps"]):
                    offset, old, new = step["offset"], step["old"].encode(), step["new"].encode()
                    assert data[offset : offset + len(new)] == new
                    data = data[:offset] + old + data[offset + len(new) :]
                assert data == before[Path(entry["path"]).relative_to(storage).as_posix()]
        else:
            assert not changed
        code, _out, err = _run("fix", "--in-place", str(storage))
        assert _files(storage) == after, "a second fix changed the folder"
        assert code in (0, 1, 2) and "internal error" not in err, err
