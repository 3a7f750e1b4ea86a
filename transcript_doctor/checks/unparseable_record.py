"""TD001 unparseable-record: a record that does not parse."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.actions import RepairRecord
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, Origin, Phase, Rule, Screening, Severity, safe

RULE = Rule(
    "TD001",
    "unparseable-record",
    Severity.ERROR,
    "A record (or the whole document) does not parse: torn or glued lines, NUL bytes, invalid UTF-8.",
    "drop a torn final line; cut the torn stub off a glued line; nothing else (never guess)",
    (Applicability.SAFE,),
    screen=Screening.FILE,
    phase=Phase.RECORDS,
)

# What is removed is bytes no loader can read: the vendor skips them too.
SAFETY = safe("removes only bytes that do not parse, which no loader reads")


def check(ctx: Context) -> Iterator[Finding]:
    for error in ctx.transcript.source.errors:
        action = RepairRecord(error) if error.repair else None
        yield Finding(RULE, Origin(error.line, error.record), error.message, action, SAFETY)
