"""TD202 interruption-placeholder: a harness interruption marker stored as a model turn."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.catalog import INTERRUPTION
from transcript_doctor.checks.context import Context
from transcript_doctor.checks.placeholders import safety, whole_turn_markers
from transcript_doctor.model import Applicability, Finding, Phase, Rule, Screening, Severity

RULE = Rule(
    "TD202",
    "interruption-placeholder",
    Severity.ERROR,
    "A model-authored turn that is a harness interruption marker rather than model output.",
    "remove the turn",
    (Applicability.SAFE, Applicability.UNSAFE),
    screen=Screening.ASKED,
    phase=Phase.TURNS,
    rank=2,
    applicability_when="safe (marker only); unsafe (beside thinking or other blocks)",
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.ASSISTANT


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation, message, marker in whole_turn_markers(ctx):
        if marker.kind != INTERRUPTION:
            continue
        yield Finding(
            RULE,
            message.origin,
            f"assistant turn is the {marker.vendor} interruption marker "
            f"{ctx.quote(message.visible_text.strip())}, not model output; the model learns to "
            f"repeat it{ctx.where(conversation)}",
            actions.RemoveMessage(message),
            safety(message),
        )
