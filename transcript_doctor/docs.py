"""``transcript-doctor rule CODE``: a rule's documentation from ``rules/docs/``."""

from __future__ import annotations

from typing import TextIO

from transcript_doctor.catalog import rules_dir
from transcript_doctor.model import Rule


def text(rule: Rule) -> str:
    doc = rules_dir() / "docs" / f"{rule.code}.md"
    if doc.is_file():
        return str(doc.read_text(encoding="utf-8"))
    fix = rule.fix or "none"
    return f"# {rule.name} ({rule.code})\n\nSeverity: {rule.severity.value} · Fix: {fix}\n\n{rule.summary}\n"


def show(rule: Rule, out: TextIO) -> None:
    """Rich Markdown on a terminal, the Markdown source everywhere else (pipes, CI)."""
    source = text(rule)
    if not out.isatty():
        out.write(source)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console(file=out).print(Markdown(source))
