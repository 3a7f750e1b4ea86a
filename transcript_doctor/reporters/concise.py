"""``concise``: one ``path:line: CODE [*] severity: message`` line per finding, then the summary.

``[*]`` marks a finding ``fix`` repairs (ruff's marker, from the finding's ``fixable``);
the severity reads as compilers print it, so editors' error parsers take the line.
"""

from __future__ import annotations

from typing import TextIO

from transcript_doctor import output
from transcript_doctor.model import Severity
from transcript_doctor.reporters import Run, fix_note, ordered, summary_lines
from transcript_doctor.safetext import printable

STYLE = {Severity.ERROR: ("bold", "red"), Severity.WARNING: ("yellow",), Severity.INFO: ("cyan",)}


def report(run: Run, out: TextIO) -> None:
    color = output.wanted("auto", out) if run.color is None else run.color
    for file, located in ordered(run):
        finding = located.finding
        rule = finding.rule
        where = output.paint(f"{printable(file.path)}:{located.origin.line}:", "bold", on=color)
        code = output.paint(rule.code, "bold", "red", on=color)
        mark = " [*]" if located.fixable else ""
        severity = output.paint(f"{rule.severity.value}:", *STYLE[rule.severity], on=color)
        out.write(f"{where} {code}{mark} {severity} {printable(finding.message)}\n")
        note = fix_note(located) if run.show_fixes else None
        if note is not None:
            out.write(f"    {printable(note)}\n")
    if not run.quiet:
        for line in summary_lines(run):
            out.write(line + "\n")
