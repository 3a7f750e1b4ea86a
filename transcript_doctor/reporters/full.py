"""``full``: findings grouped by file, rendered with rich, then the summary."""

from __future__ import annotations

from itertools import groupby
from typing import TextIO

from transcript_doctor.model import Severity
from transcript_doctor.reporters import Run, ordered, summary_lines

STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def report(run: Run, out: TextIO) -> None:
    findings = ordered(run)
    if not findings:  # nothing to colour: a hook run on clean files does not import rich
        if not run.quiet:
            out.write("".join(line + "\n" for line in summary_lines(run)))
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=out, highlight=False, soft_wrap=True)
    for path, group in groupby(findings, key=lambda pair: pair[0].path):
        items = list(group)
        reader = items[0][0].reader or "unknown layout"
        console.print(f"[bold]{escape(path)}[/bold] [dim]({escape(reader)})[/dim]")
        for _, located in items:
            finding = located.finding
            rule = finding.rule
            mark = " [*]" if located.fixable else ""
            where = f"{located.origin.line}"
            if located.origin.pointer:
                where += f" {located.origin.pointer}"
            console.print(
                f"  [dim]{escape(where)}[/dim]  [{STYLE[rule.severity]}]{rule.code}[/]"
                f"{escape(mark)} {escape(finding.message)} [dim]({rule.name})[/dim]"
            )
        console.print()
    if not run.quiet:
        for line in summary_lines(run):
            console.print(escape(line))
