"""TD304 displaced-tool-result: a result that is not right after its call."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, Phase, Rule, Screening, Severity, unsafe

RULE = Rule(
    "TD304",
    "displaced-tool-result",
    Severity.ERROR,
    "A tool result that exists but not in the message right after its call.",
    "move the result to directly after its call",
    (Applicability.UNSAFE,),
    screen=Screening.ASKED,
    phase=Phase.PAIRING,
    rank=2,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.CALL | holds.RESULT

# A result placed by a wrong pairing would be moved away from the call it answers.
SAFETY = unsafe("moves a real tool result; if the pairing is wrong it lands after the wrong call")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action nor pairing (start-up).
    import transcript_doctor.actions as actions
    import transcript_doctor.analysis.pairing as pairing

    for conversation in ctx.conversations:
        for moved in ctx.shared(pairing.analyse, conversation).displaced:
            assert moved.call is not None
            call, how = pairing.label_result(moved.part, moved.call.part)
            yield Finding(
                RULE,
                moved.part.origin,
                f"result for {call} is not in the message right after its call at "
                f"{ctx.place(moved.call.part.origin)}{how}{ctx.where(conversation)}",
                actions.MoveResult(moved.message, moved.part, moved.call.message),
                SAFETY,
            )
