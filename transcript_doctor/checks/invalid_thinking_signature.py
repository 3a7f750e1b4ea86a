"""TD402 invalid-thinking-signature: Claude thinking blocks without a signature."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Finding, PartKind, Rule, Screening, Severity

RULE = Rule(
    "TD402",
    "invalid-thinking-signature",
    Severity.WARNING,
    "A Claude thinking block with an empty or missing signature.",
    screen=Screening.EXCLUDED,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.UNSIGNED_THINKING


def check(ctx: Context) -> Iterator[Finding]:
    for conversation in ctx.conversations:
        for message in conversation.messages:
            for part in message.parts:
                if part.kind is PartKind.THINKING and part.needs_signature and not part.signature:
                    state = "an empty" if part.signature == "" else "no"
                    yield Finding(
                        RULE,
                        part.origin,
                        f"thinking block has {state} signature; the API answers "
                        f"'Invalid `signature` in `thinking` block'{ctx.where(conversation)}",
                    )
