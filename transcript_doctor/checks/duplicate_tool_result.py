"""TD303 duplicate-tool-result: more than one result for one call."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, Phase, Rule, Screening, Severity, safe, unsafe

RULE = Rule(
    "TD303",
    "duplicate-tool-result",
    Severity.ERROR,
    "More than one result for one tool call in the replayed history.",
    "keep the first result, remove the others",
    (Applicability.SAFE, Applicability.UNSAFE),
    screen=Screening.ASKED,
    phase=Phase.PAIRING,
    applicability_when="safe (byte-identical copy); unsafe (differs)",
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.CALL | holds.RESULT

COPY = safe("the removed result is a byte-identical copy of the one kept")
DIFFERENT = unsafe("the removed result differs from the one kept: it may be real tool output")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action nor pairing (start-up).
    import transcript_doctor.actions as actions
    import transcript_doctor.analysis.pairing as pairing

    for conversation in ctx.conversations:
        for extra in ctx.shared(pairing.analyse, conversation).duplicates:
            assert extra.call is not None
            call, how = pairing.label_result(extra.part, extra.call.part)
            yield Finding(
                RULE,
                extra.part.origin,
                f"another result for {call}, which was answered already; the call at "
                f"{ctx.place(extra.call.part.origin)} gets two responses{how}{ctx.where(conversation)}",
                actions.RemoveResult(extra.message, extra.part),
                COPY
                if extra.first is not None and ctx.same_bytes(extra.part.origin, extra.first.origin)
                else DIFFERENT,
            )
