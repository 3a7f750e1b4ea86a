"""TD102 trailing-whitespace-final-assistant."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.analysis.turns import abandoned_partials, last_turn
from transcript_doctor.checks.context import Context
from transcript_doctor.model import (
    Applicability,
    Finding,
    PartKind,
    Phase,
    Role,
    Rule,
    Screening,
    Severity,
    safe,
)

RULE = Rule(
    "TD102",
    "trailing-whitespace-final-assistant",
    Severity.ERROR,
    "The history ends with an assistant text whose last character is whitespace (Anthropic rejects it as prefill).",
    "strip the trailing whitespace of that text only",
    (Applicability.SAFE,),
    screen=Screening.ASKED,
    phase=Phase.CONTENT,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.ASSISTANT | holds.PREFILL

SAFETY = safe("removes only trailing whitespace; every other character of the text stays")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation in ctx.conversations:
        if not conversation.dialect.final_text_is_prefill:
            continue
        final = last_turn(conversation)
        if final is None or final.role is not Role.ASSISTANT or not final.parts:
            continue
        if final in abandoned_partials(conversation):
            continue  # TD101 removes the whole turn
        part = final.parts[-1]
        if part.kind is not PartKind.TEXT or not part.text.strip():
            continue  # ends with a tool call, or is empty (TD103)
        if part.text[-1].isspace():
            tail = part.text[len(part.text.rstrip()) :]
            yield Finding(
                RULE,
                part.origin,
                f"the final assistant text ends with whitespace ({tail!r}), which Anthropic "
                f"rejects when the history is replayed as prefill{ctx.where(conversation)}",
                actions.StripTrailingWhitespace(final, part),
                SAFETY,
            )
