"""config.may_hold_table: a pyproject.toml is parsed only when it may configure us.

The probe may say "maybe" wrongly (then the file is parsed, as before), never "no" for a
document that holds ``tool`` → ``transcript-doctor``: tomllib is the judge here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support import ROOT, cli

from transcript_doctor import config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

HOLDING = [
    '[tool.transcript-doctor]\nselect = ["TD1"]\n',
    '[ tool . "transcript-doctor" ]\nselect = []\n',
    '[tool.\'transcript-doctor\'.readers]\n"*.json" = "openai-chat"\n',
    "[tool]\ntranscript-doctor = { select = [] }\n",
    "[ 'tool' ]  # ours\ntranscript-doctor.select = []\n",
    "tool.transcript-doctor.select = []\n",
    "tool = { other = [\n  1,\n], transcript-doctor = { select = [] } }\n",
    '"tool" = { transcript-doctor = {} }\n',
    '[tool."transcript\\u002Ddoctor"]\nselect = []\n',
    '[project]\nname = "x"\n[tool]\nruff = {}\ntranscript-doctor = {}\n',
]
NOT_HOLDING = [
    '[project]\nname = "transcript-doctor"\n[project.scripts]\ntranscript-doctor = "m:main"\n[tool.ruff]\n',
    "[tool.ruff]\nline-length = 110\n",
    '[project.scripts]\ntranscript-doctor = "m"\n[tool.mypy]\nstrict = true\n',
]


@pytest.mark.parametrize("text", HOLDING)
def test_a_document_with_our_table_is_parsed(text: str) -> None:
    tool = tomllib.loads(text)["tool"]
    assert "transcript-doctor" in tool
    assert config.may_hold_table(text)


@pytest.mark.parametrize("text", NOT_HOLDING)
def test_a_document_for_other_tools_is_not_parsed(text: str) -> None:
    assert "transcript-doctor" not in tomllib.loads(text).get("tool", {})
    assert not config.may_hold_table(text)


def test_this_projects_pyproject_configures_no_lint() -> None:
    """What the start-up benchmark meets: run in this checkout, no TOML parser is loaded."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "transcript-doctor" not in tomllib.loads(text).get("tool", {})
    assert not config.may_hold_table(text)


def test_a_broken_pyproject_of_other_tools_is_skipped_and_ours_still_fails(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('[{"role": "user", "content": "hi"}]')
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "transcript-doctor\n')
    assert cli("lint", "-q", "a.json", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text('[tool.transcript-doctor\nname = "x"\n')
    result = cli("lint", "-q", "a.json", cwd=tmp_path)
    assert (result.returncode, "not valid TOML" in result.stderr) == (2, True)
