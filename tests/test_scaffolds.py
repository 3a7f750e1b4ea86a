"""The scaffolds keep their promise: a new reader or rule touches only its own files.

``scripts/new_reader.py`` and ``scripts/new_rule.py`` run on a copy of the repository;
the files they add and change are exactly the ones CONTRIBUTING.md names, each shared
registry gains one line, and the result passes ruff, mypy --strict, the import-linter
contracts and its own generated tests (with the derived-docs and architecture tests).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

CACHES = ("__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis")


def _copy(to: Path) -> Path:
    """The repository without its caches; fixture folders are linked (only read), the new
    reader's folder is written beside them."""
    repo = to / "repo"
    for name in ("transcript_doctor", "rules", "scripts", "tests", "examples"):
        shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns(*CACHES))
    for name in ("README.md", "pyproject.toml"):
        shutil.copy2(ROOT / name, repo / name)
    (repo / "fixtures").mkdir()
    for entry in (ROOT / "fixtures").iterdir():
        (repo / "fixtures" / entry.name).symlink_to(entry)
    return repo


def _tree(repo: Path) -> dict[str, bytes]:
    files = {}
    for folder, dirs, names in os.walk(repo):  # linked fixture folders are not entered
        dirs[:] = [d for d in dirs if d not in CACHES]
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink():
                files[path.relative_to(repo).as_posix()] = path.read_bytes()
    return files


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(repo), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=repo, env=env, capture_output=True, text=True, check=False
    )


def _added_lines(before: bytes, after: bytes) -> list[str]:
    old, new = before.decode().splitlines(), after.decode().splitlines()
    for line in old:
        new.remove(line)  # every old line is kept, in place or not: the rest was added
    return new


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes], dict[str, bytes]]:
    repo = _copy(tmp_path_factory.mktemp("scaffold"))
    before = _tree(repo)
    for args in (("new_reader.py", "acme-chat"), ("new_rule.py", "TD499", "scaffold-check")):
        run = _run(repo, f"scripts/{args[0]}", *args[1:])
        assert run.returncode == 0, run.stdout + run.stderr
    return repo, before, _tree(repo)


def test_scaffolds_touch_only_their_own_files(
    scaffolded: tuple[Path, dict[str, bytes], dict[str, bytes]],
) -> None:
    _, before, after = scaffolded
    added = sorted(set(after) - set(before))
    changed = sorted(name for name in before if after.get(name) != before[name])
    assert added == [
        "fixtures/acme-chat/README.md",
        "rules/docs/TD499.md",
        "tests/expectations/acme-chat.json",
        "tests/readers/test_acme_chat.py",
        "transcript_doctor/checks/scaffold_check.py",
        "transcript_doctor/readers/acme_chat/__init__.py",
        "transcript_doctor/readers/acme_chat/reader.py",
        "transcript_doctor/readers/acme_chat/repair.py",
    ]
    assert changed == [
        "README.md",
        "transcript_doctor/checks/__init__.py",
        "transcript_doctor/readers/__init__.py",
    ]
    added_lines = {name: _added_lines(before[name], after[name]) for name in changed}
    assert added_lines == {
        "README.md": ["| TD499 | scaffold-check | warning | — | — |"],  # derived by sync_docs.py
        "transcript_doctor/checks/__init__.py": ['    "scaffold_check",'],
        "transcript_doctor/readers/__init__.py": ['    Registered("acme_chat", ANY, ANY),'],
    }
    readers = after["transcript_doctor/readers/__init__.py"].decode()
    assert readers.index('"acme_chat"') < readers.index('"anthropic_messages"')  # before the generic layouts
    assert after["tests/expectations/acme-chat.json"] == b"{}\n"
    assert after["rules/docs/TD499.md"].startswith(
        b"# scaffold-check (TD499)\n\nSeverity: warning \xc2\xb7 Fix: none\n\n"
    )


def test_scaffolded_code_passes_the_linters(
    scaffolded: tuple[Path, dict[str, bytes], dict[str, bytes]],
) -> None:
    repo = scaffolded[0]
    for args in (("-m", "ruff", "check", "."), ("-m", "ruff", "format", "--check", ".")):
        run = _run(repo, *args)
        assert run.returncode == 0, run.stdout + run.stderr
    cache = repo.parent / "mypy-cache"
    if (ROOT / ".mypy_cache").is_dir():  # checked again where the sources differ (hashes)
        shutil.copytree(ROOT / ".mypy_cache", cache)
    run = _run(repo, "-m", "mypy", "--cache-dir", str(cache))
    assert run.returncode == 0, run.stdout + run.stderr
    lint = "lint_imports(config_filename='pyproject.toml', no_cache=True)"
    run = _run(repo, "-c", f"import sys; from importlinter.cli import lint_imports; sys.exit({lint})")
    assert run.returncode == 0, run.stdout + run.stderr


def test_scaffolded_tests_pass(scaffolded: tuple[Path, dict[str, bytes], dict[str, bytes]]) -> None:
    """The generated stubs, the derived docs (the new rule's doc and README row), the
    layering and the new (empty) expectations all pass before any code is written."""
    repo = scaffolded[0]
    run = _run(
        repo,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/readers/test_acme_chat.py",
        "tests/test_docs.py",
        "tests/test_architecture.py",
        "tests/test_expectations.py::test_fixtures_do_what_their_expectations_say[acme-chat]",
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and "failed" not in run.stdout and "error" not in run.stdout


def test_scaffolds_refuse_what_exists(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    before = _tree(repo)
    for args in (
        ("new_reader.py", "codex"),
        ("new_rule.py", "TD301", "x-y"),
        ("new_rule.py", "TD999", "empty-turn"),
    ):
        run = _run(repo, f"scripts/{args[0]}", *args[1:])
        assert run.returncode != 0 and "exists" in run.stderr, run.stderr
    for args in (("new_reader.py", "Bad_Name"), ("new_rule.py", "X1", "a-b")):
        assert _run(repo, f"scripts/{args[0]}", *args[1:]).returncode != 0
    assert _tree(repo) == before
