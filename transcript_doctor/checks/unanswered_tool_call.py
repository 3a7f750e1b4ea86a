"""TD301 unanswered-tool-call: a call with no result although the conversation went on."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, Phase, Rule, Screening, Severity, safe

RULE = Rule(
    "TD301",
    "unanswered-tool-call",
    Severity.ERROR,
    "A tool call with no result although the conversation went on past it.",
    "insert a synthetic error result right after the call, in the vendor's own shape",
    (Applicability.SAFE,),
    screen=Screening.ASKED,
    phase=Phase.PAIRING,
    rank=3,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.CALL

SAFETY = safe("adds a synthetic error result marked as such; removes nothing")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action nor pairing (start-up).
    import transcript_doctor.actions as actions
    import transcript_doctor.analysis.pairing as pairing

    for conversation in ctx.conversations:
        for gap in ctx.shared(pairing.analyse, conversation).unanswered:
            if gap.continued_at is None:
                continue  # TD306
            call, how = pairing.label(gap.call.part)
            yield Finding(
                RULE,
                gap.call.part.origin,
                f"{call} has no result, but the conversation continues at "
                f"{ctx.place(gap.continued_at.origin)}{how}{ctx.where(conversation)}",
                actions.InsertResult(gap.call.message, gap.call.part),
                SAFETY,
            )
