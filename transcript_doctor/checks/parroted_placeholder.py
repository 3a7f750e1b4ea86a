"""TD203 parroted-placeholder: a distinctive harness marker inside a longer reply."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.checks.placeholders import is_whole_turn_candidate
from transcript_doctor.model import Finding, Role, Rule, Screening, Severity

RULE = Rule(
    "TD203",
    "parroted-placeholder",
    Severity.WARNING,
    "A longer assistant reply contains a distinctive harness marker verbatim: the model may have learned to repeat it.",
    screen=Screening.ASKED,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.ASSISTANT


def check(ctx: Context) -> Iterator[Finding]:
    for conversation in ctx.conversations:
        for message in conversation.messages:
            if message.role is not Role.ASSISTANT:
                continue
            text = message.visible_text
            hit = ctx.catalog.distinctive_in(text)
            if hit is None or (hit[0].matches(text.strip()) and is_whole_turn_candidate(message)):
                continue  # the whole turn is the marker: TD201/TD202
            marker, found = hit
            yield Finding(
                RULE,
                message.origin,
                f"assistant reply contains the {marker.vendor} marker "
                f"{ctx.quote(found)} verbatim; the model may be parroting it "
                f"(needs a human look){ctx.where(conversation)}",
            )
