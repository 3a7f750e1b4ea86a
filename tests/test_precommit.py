"""The pre-commit hooks, for real: pre-commit installs this repository and runs them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support import FIXTURES, ROOT

pytestmark = pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _try_repo(repo: Path, hook: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["pre-commit", "try-repo", str(ROOT), hook, "--all-files", "--verbose"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def test_manifest_is_valid() -> None:
    result = subprocess.run(
        ["pre-commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_lint_hook_fails_on_damage_and_fix_hook_repairs_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    shutil.copyfile(FIXTURES / "openai-chat" / "damaged-turns.json", repo / "damaged.json")
    shutil.copyfile(FIXTURES / "openai-chat" / "clean-parallel-tools.json", repo / "clean.json")
    (repo / "package.json").write_text('{"name": "x", "version": "1.0.0"}\n')
    _git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)

    lint = _try_repo(repo, "transcript-doctor", env)
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "damaged.json:4: " in lint.stdout or "damaged.json" in lint.stdout
    assert "TD201" in lint.stdout

    fix = _try_repo(repo, "transcript-doctor-fix", env)
    assert fix.returncode == 1, fix.stdout + fix.stderr  # files were modified
    assert b"(request timeout)" not in (repo / "damaged.json").read_bytes()
    assert (repo / "clean.json").read_bytes() == (
        FIXTURES / "openai-chat" / "clean-parallel-tools.json"
    ).read_bytes()

    _git(repo, "add", ".")
    again = _try_repo(repo, "transcript-doctor", env)
    assert again.returncode == 0, again.stdout + again.stderr


QWEN = (
    FIXTURES
    / "qwen-code"
    / "gen-request-timeout-persisted-0.15.6__e008e66c-179a-4d66-a640-2a542fd723be.jsonl"
)


def test_hooks_see_a_crash_damaged_transcript(tmp_path: Path) -> None:
    """NUL bytes in the first kilobyte make identify call the file binary: hooks that asked
    for ``types: [text]`` never saw the very damage TD001 is for."""
    from identify import identify

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    session = repo / "session.jsonl"
    kept = b"".join(QWEN.read_bytes().splitlines(keepends=True)[:2])
    session.write_bytes(kept + b"\0" * 300 + b"\n")  # the ext4 crash pattern: the last write zero-filled
    assert "binary" in identify.tags_from_path(str(session))
    _git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)

    lint = _try_repo(repo, "transcript-doctor", env)
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert re.search(
        r"session\.jsonl \(qwen-code\)\n +3 +TD001 +\[\*\] +torn final line \(NUL bytes", lint.stdout
    )

    fix = _try_repo(repo, "transcript-doctor-fix", env)
    assert fix.returncode == 1, fix.stdout + fix.stderr  # the file was modified
    assert session.read_bytes() == kept


def test_readme_rev_is_the_release_tag_of_this_version() -> None:
    """The README's `rev:` must name the tag of the version it documents (the lead tags
    each release `v<version>`)."""
    from transcript_doctor import __version__

    revs = re.findall(r"^\s+rev: (\S+)", (ROOT / "README.md").read_text(), re.MULTILINE)
    assert revs == [f"v{__version__}"]


def test_hooks_take_every_file_the_pattern_names() -> None:
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {hook["id"]: hook["types"] for hook in hooks} == {
        "transcript-doctor": ["file"],
        "transcript-doctor-fix": ["file"],
    }
