"""``transcript-doctor rule CODE``: a rule's documentation from ``rules/docs/``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from transcript_doctor.catalog import rules_dir
from transcript_doctor.model import Rule


def text(rule: Rule) -> str:
    doc = rules_dir() / "docs" / f"{rule.code}.md"
    if doc.is_file():
        return str(doc.read_text(encoding="utf-8"))
    return f"{header(rule)}\n{rule.summary}\n"


def header(rule: Rule) -> str:
    """The first lines of a rule's doc, derived from its ``Rule`` (``scripts/sync_docs.py``
    writes them into ``rules/docs/CODE.md``; a test fails when a doc says otherwise)."""
    return f"# {rule.name} ({rule.code})\n\nSeverity: {rule.severity.value} · Fix: {rule.fix or 'none'}\n"


def show(rule: Rule, out: TextIO) -> None:
    """Rich Markdown on a terminal, the Markdown source everywhere else (pipes, CI)."""
    source = text(rule)
    if not out.isatty():
        out.write(source)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console(file=out).print(Markdown(source))


def show_all(rules: Iterable[Rule], out: TextIO) -> None:
    """``rule --all``: every rule's documentation, one after the other."""
    for index, rule in enumerate(rules):
        if index:
            out.write("\n")
        show(rule, out)


def entry(rule: Rule, explanation: bool = False) -> dict[str, object]:
    """A rule as ``rules -o json`` and ``rule -o json`` print it (ruff's keys where they fit)."""
    data: dict[str, object] = {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "summary": rule.summary,
        "fix": rule.fix,
        "fixable": rule.fix is not None,
        # The classes the repair can take: ["safe"], ["unsafe"], both (per finding) or none.
        "fix_applicability": [a.value for a in rule.applicability],
    }
    if explanation:
        data["explanation"] = text(rule)
    return data


def write_json(data: object, out: TextIO) -> None:
    import orjson

    out.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
