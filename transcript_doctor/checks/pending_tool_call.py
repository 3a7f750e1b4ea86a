"""TD306 pending-tool-call: calls without results at the very end (not damage)."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Finding, Rule, Screening, Severity

RULE = Rule(
    "TD306",
    "pending-tool-call",
    Severity.INFO,
    "Tool calls without results at the very end of the history: a suspended or killed turn the vendor resumes itself.",
    screen=Screening.ASKED,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.CALL


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no pairing (start-up).
    import transcript_doctor.analysis.pairing as pairing

    for conversation in ctx.conversations:
        for gap in ctx.shared(pairing.analyse, conversation).unanswered:
            if gap.continued_at is not None:
                continue  # TD301
            call, how = pairing.label(gap.call.part)
            yield Finding(
                RULE,
                gap.call.part.origin,
                f"{call} is pending at the end of the history; the vendor resumes it (not "
                f"damage){how}{ctx.where(conversation)}",
            )
