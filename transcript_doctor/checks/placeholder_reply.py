"""TD201 placeholder-reply: a harness filler stored as if the model said it."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.catalog import INTERRUPTION
from transcript_doctor.checks.context import Context
from transcript_doctor.checks.placeholders import safety, whole_turn_markers
from transcript_doctor.model import Applicability, Finding, Phase, Rule, Screening, Severity

RULE = Rule(
    "TD201",
    "placeholder-reply",
    Severity.ERROR,
    "An assistant turn whose whole visible text is a known harness placeholder from the catalog.",
    "remove the turn; keep tool pairing and parent links valid",
    (Applicability.SAFE, Applicability.UNSAFE),
    screen=Screening.ASKED,
    phase=Phase.TURNS,
    rank=1,
    applicability_when="safe (placeholder only); unsafe (beside thinking or other blocks)",
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.ASSISTANT


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation, message, marker in whole_turn_markers(ctx):
        if marker.kind == INTERRUPTION:
            continue  # TD202
        yield Finding(
            RULE,
            message.origin,
            f"assistant turn is the {marker.vendor} placeholder "
            f"{ctx.quote(message.visible_text.strip())}, not model output{ctx.where(conversation)}",
            actions.RemoveMessage(message),
            safety(message),
        )
