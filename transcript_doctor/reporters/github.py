"""``github``: GitHub Actions workflow commands, one annotation per finding."""

from __future__ import annotations

from typing import TextIO

from transcript_doctor.model import Severity
from transcript_doctor.reporters import Run, ordered
from transcript_doctor.safetext import printable_inline

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """actions/toolkit ``escapeData``; other controls (ESC colours a log) and lone
    surrogates written as escapes."""
    return printable_inline(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """actions/toolkit ``escapeProperty``: also ``:`` and ``,``, which delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def report(run: Run, out: TextIO) -> None:
    for file, located in ordered(run):
        finding = located.finding
        rule = finding.rule
        # A database row has no line (0): the annotation is the file's.
        line = f"line={located.origin.line}," if located.origin.line else ""
        props = f"file={escape_property(file.path)},{line}title={escape_property(f'{rule.code} {rule.name}')}"
        out.write(f"::{COMMAND[rule.severity]} {props}::{escape_data(finding.message)}\n")
