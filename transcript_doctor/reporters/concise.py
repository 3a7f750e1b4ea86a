"""``concise``: one ``path:line: CODE message`` line per finding, then the summary."""

from __future__ import annotations

from typing import TextIO

from transcript_doctor.reporters import Run, ordered, summary_lines


def report(run: Run, out: TextIO) -> None:
    for file, located in ordered(run):
        finding = located.finding
        out.write(f"{file.path}:{located.origin.line}: {finding.rule.code} {finding.message}\n")
    if not run.quiet:
        for line in summary_lines(run):
            out.write(line + "\n")
