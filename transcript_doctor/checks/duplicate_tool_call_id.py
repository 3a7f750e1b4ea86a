"""TD305 duplicate-tool-call-id: two tool calls share one id."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.checks import pairing
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Finding, Rule, Severity

RULE = Rule(
    "TD305",
    "duplicate-tool-call-id",
    Severity.ERROR,
    "Two tool calls share one id.",
)


def check(ctx: Context) -> Iterator[Finding]:
    for conversation in ctx.conversations:
        for first, again in ctx.shared(pairing.analyse, conversation).repeated_calls:
            if again.part.paired_by != "id":
                continue
            yield Finding(
                RULE,
                again.part.origin,
                f"tool call id {again.part.call_id} is used again (first at "
                f"{ctx.place(first.part.origin)}); tool call ids must be unique{ctx.where(conversation)}",
            )
