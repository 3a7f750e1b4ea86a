"""TD302 orphan-tool-result: a result whose id matches no earlier call."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, Phase, Rule, Screening, Severity, unsafe

RULE = Rule(
    "TD302",
    "orphan-tool-result",
    Severity.ERROR,
    "A tool result whose id matches no earlier tool call.",
    "remove the result",
    (Applicability.UNSAFE,),
    screen=Screening.ASKED,
    phase=Phase.PAIRING,
    rank=1,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.RESULT

# An orphan may be a real result whose call was lost or mis-paired (an id-less call).
SAFETY = unsafe("removes a tool result, which may be real tool output whose call was lost or mis-paired")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action nor pairing (start-up).
    import transcript_doctor.actions as actions
    import transcript_doctor.analysis.pairing as pairing

    for conversation in ctx.conversations:
        for orphan in ctx.shared(pairing.analyse, conversation).orphans:
            call, how = pairing.label(orphan.part)
            yield Finding(
                RULE,
                orphan.part.origin,
                f"result for {call} answers no earlier tool call{how}{ctx.where(conversation)}",
                actions.RemoveResult(orphan.message, orphan.part),
                SAFETY,
            )
