"""TD001 unparseable-record: a record that does not parse."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, Origin, Phase, Rule, Screening, Severity, safe
from transcript_doctor.source import REJOIN

RULE = Rule(
    "TD001",
    "unparseable-record",
    Severity.ERROR,
    "A record (or the whole document) does not parse: torn or glued lines, NUL bytes, invalid UTF-8.",
    "drop a torn final line; cut the torn stub off a glued line; rejoin an event torn across "
    "lines by raw newlines inside a string; nothing else (never guess)",
    (Applicability.SAFE,),
    screen=Screening.FILE,
    phase=Phase.RECORDS,
)

# What is removed is bytes no loader can read: the vendor skips them too.
SAFETY = safe("removes only bytes that do not parse, which no loader reads")
# Nothing is removed: each raw line break becomes its escape, the same character, in the
# one record the pieces make (a reader proposes it only when they make exactly one).
REJOINED = safe("writes each raw line break inside the string as its escape; every character is kept")


def check(ctx: Context) -> Iterator[Finding]:
    for error in ctx.transcript.source.errors:
        # Loaded with the first finding: a clean file's lint loads no action (start-up).
        import transcript_doctor.actions as actions

        action = actions.RepairRecord(error) if error.repair else None
        safety = REJOINED if error.repair == REJOIN else SAFETY
        yield Finding(RULE, Origin(error.line, error.record), error.message, action, safety)
