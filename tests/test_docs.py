"""Documentation derived from the rule registry stays derived (scripts/sync_docs.py).

The README's rules table, each rule doc's header and the ``rules`` output are written from
the ``Rule`` objects; these tests fail when a file says something else, so a rule changed
in its module cannot leave a stale doc behind.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from support import ROOT, cli

from transcript_doctor import checks, docs
from transcript_doctor.plain import replace


def load_script(name: str) -> ModuleType:
    """A script of ``scripts/`` as a module (they are run as files, not installed)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sync_docs = load_script("sync_docs")


@pytest.mark.parametrize("path", sorted(sync_docs.derived()), ids=lambda p: str(p.relative_to(ROOT)))
def test_derived_docs_match_the_registry(path: Path) -> None:
    expected = sync_docs.derived()[path]
    assert path.read_text(encoding="utf-8") == expected, "run `python scripts/sync_docs.py` and commit"


def test_sync_docs_check_passes_on_the_checkout() -> None:
    assert sync_docs.main(["--check"]) == 0


def test_a_changed_rule_makes_the_docs_drift() -> None:
    """The comparison above can fail: a rule whose fix wording changes changes both its
    doc's header and its README row."""
    rules = checks.rules()
    changed = tuple(replace(r, fix="rewrite everything") if r.code == "TD302" else r for r in rules)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert sync_docs.readme(readme, rules) == readme
    assert "| TD302 | orphan-tool-result | error | rewrite everything | unsafe |\n" in sync_docs.readme(
        readme, changed
    )
    doc = (ROOT / "rules" / "docs" / "TD302.md").read_text(encoding="utf-8")
    assert sync_docs.rule_doc(doc, changed[rules.index(checks.find("TD302"))]).splitlines()[2] == (
        "Severity: error · Fix: rewrite everything"
    )


def test_every_rule_has_a_doc_and_every_doc_a_rule() -> None:
    codes = {rule.code for rule in checks.rules()}
    assert {p.stem for p in (ROOT / "rules" / "docs").glob("*.md")} == codes


def test_a_doc_without_a_header_gets_one() -> None:
    rule = checks.find("TD305")
    assert rule is not None
    assert sync_docs.rule_doc("## What it detects\n", rule) == docs.header(rule) + "\n## What it detects\n"


def test_per_finding_safety_is_said_by_the_rules_that_have_it() -> None:
    """A rule whose repair can be either class says when (the README's "fix safety")."""
    for rule in checks.rules():
        assert (rule.applicability_when is not None) == (len(rule.applicability) == 2), rule.code


def test_rules_output_is_the_registry() -> None:
    """``rules`` prints one line per registered rule, in code order (a contract: cli.md)."""
    result = cli("rules")
    assert result.returncode == 0
    expected = [
        f"{r.code}  {r.severity.value:<7}  {'/'.join(a.value for a in r.applicability) or '-':<11}  "
        f"{r.name:<36}  {r.summary}"
        for r in checks.rules()
    ]
    assert result.stdout.splitlines() == expected
