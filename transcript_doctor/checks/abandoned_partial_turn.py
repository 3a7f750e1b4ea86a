"""TD101 abandoned-partial-turn: the history ends with a turn that died mid-stream."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.analysis.turns import abandoned_partials, last_turn
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, Phase, Role, Rule, Screening, Severity, unsafe

RULE = Rule(
    "TD101",
    "abandoned-partial-turn",
    Severity.ERROR,
    "The replayed history ends with assistant output from a turn that died mid-stream.",
    "remove the partial assistant record(s); keep the notices",
    (Applicability.UNSAFE,),
    screen=Screening.ASKED,
    phase=Phase.TURNS,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.ASSISTANT

# A partial answer is real model output, kept by some vendors on purpose.
SAFETY = unsafe("removes a partial model answer, which is real model output")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation in ctx.conversations:
        partials = abandoned_partials(conversation)
        for message in partials:
            yield Finding(
                RULE,
                message.origin,
                "the history ends with a partial assistant turn abandoned before an error or "
                f"interrupted notice; every retry replays it{ctx.where(conversation)}",
                actions.RemoveMessage(message),
                SAFETY,
            )
        if partials:
            continue
        final = last_turn(conversation)
        if final is None or final.role is not Role.ASSISTANT or final.tool_calls:
            continue
        text = final.visible_text
        marker = ctx.catalog.partial_suffix(text)
        if marker and marker.text != text.strip():
            yield Finding(
                RULE,
                final.origin,
                f"the history ends with a partial assistant turn marked {ctx.quote(marker.text or '')} "
                f"({marker.vendor}); every retry replays it{ctx.where(conversation)}",
                actions.RemoveMessage(final),
                SAFETY,
            )
