"""TD302 orphan-tool-result: a result whose id matches no earlier call."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.actions import RemoveResult
from transcript_doctor.checks import pairing
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Finding, Rule, Severity

RULE = Rule(
    "TD302",
    "orphan-tool-result",
    Severity.ERROR,
    "A tool result whose id matches no earlier tool call.",
    "remove the result",
)


def check(ctx: Context) -> Iterator[Finding]:
    for conversation in ctx.conversations:
        for orphan in ctx.shared(pairing.analyse, conversation).orphans:
            call, how = pairing.label(orphan.part)
            yield Finding(
                RULE,
                orphan.part.origin,
                f"result for {call} answers no earlier tool call{how}{ctx.where(conversation)}",
                RemoveResult(orphan.message, orphan.part),
            )
