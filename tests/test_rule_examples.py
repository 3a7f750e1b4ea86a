"""Rule docs' examples run as tests (as pylint runs its doc examples).

A fenced block in ``rules/docs/CODE.md`` whose info string is ``LANG bad NAME`` is linted
as a file called ``NAME`` (the name drives detection as a path does) and must raise the
rule; one marked ``LANG good NAME`` must not.  Other blocks are prose (fragments of a
record, quoted errors) and are not run.  Every rule has at least one of each, so what a
doc shows stays what the rule does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from support import ROOT, lint_bytes

from transcript_doctor import checks

DOCS = ROOT / "rules" / "docs"
EXAMPLE = re.compile(r"^```(\w+) (bad|good) (\S+)\n(.*?)^```$", re.M | re.S)


def examples(text: str) -> Iterator[tuple[str, str, str]]:
    """``(kind, name, body)`` of every runnable block of a doc."""
    for match in EXAMPLE.finditer(text):
        yield match.group(2), match.group(3), match.group(4)


def _cases() -> Iterator[object]:
    for doc in sorted(DOCS.glob("*.md")):
        for number, (kind, name, body) in enumerate(examples(doc.read_text(encoding="utf-8"))):
            yield pytest.param(doc.stem, kind, name, body, id=f"{doc.stem}-{kind}-{number}")


@pytest.mark.parametrize(("code", "kind", "name", "body"), list(_cases()))
def test_doc_example(code: str, kind: str, name: str, body: str) -> None:
    report = lint_bytes(name, body.encode())
    assert report.error is None, report.error
    found = [located.finding.rule.code for located in report.findings]
    if kind == "bad":
        assert code in found, f"{code}'s bad example raises {found}"
    else:
        assert code not in found, f"{code}'s good example raises {found}"


def test_every_rule_doc_shows_a_bad_and_a_good_example() -> None:
    for rule in checks.rules():
        kinds = {kind for kind, _, _ in examples((DOCS / f"{rule.code}.md").read_text(encoding="utf-8"))}
        assert kinds == {"bad", "good"}, rule.code


def test_the_example_marker_is_what_the_docs_use() -> None:
    """A block is run only when its info string says so; a plain ``json`` block is not."""
    text = "```json\n[]\n```\n\n```json bad chat.json\n[1]\n```\n\n```jsonl good a.jsonl\n{}\n```\n"
    assert list(examples(text)) == [("bad", "chat.json", "[1]\n"), ("good", "a.jsonl", "{}\n")]
