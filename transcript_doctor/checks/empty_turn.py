"""TD103 empty-turn: an assistant turn with nothing in it."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.analysis.turns import abandoned_partials
from transcript_doctor.checks.context import Context
from transcript_doctor.model import (
    Applicability,
    Finding,
    Message,
    PartKind,
    Phase,
    Role,
    Rule,
    Safety,
    Screening,
    Severity,
    safe,
    unsafe,
)

RULE = Rule(
    "TD103",
    "empty-turn",
    Severity.ERROR,
    "An assistant turn with no content, only empty or whitespace text, or (Claude Code) only thinking blocks.",
    "remove the turn",
    (Applicability.SAFE, Applicability.UNSAFE),
    screen=Screening.ASKED,
    phase=Phase.TURNS,
    rank=3,
    applicability_when="safe (empty); unsafe (thinking-only)",
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.ASSISTANT


def emptiness(message: Message, thinking_only_is_empty: bool) -> str | None:
    """Why the turn is empty, or None if anything in it counts as content."""
    if not message.parts:
        return "has no content"
    thinking = False
    for part in message.parts:
        if part.kind is PartKind.TEXT:
            if part.text.strip():
                return None
        elif part.kind is PartKind.THINKING:
            if not thinking_only_is_empty and (part.signature or part.text.strip()):
                return None
            thinking = True
        else:
            return None  # a tool call, media or any other block is content
    if thinking and thinking_only_is_empty:
        return "holds only thinking blocks, no output (left by a cancelled stream)"
    return "holds only empty or whitespace text"


def safety(message: Message) -> Safety:
    """Safe when nothing but empty or whitespace text goes; a thinking block (its text,
    signature or redacted data) is model output."""
    if all(p.kind is PartKind.TEXT and not p.text.strip() for p in message.parts):
        return safe("the turn holds no content: nothing but whitespace is removed")
    return unsafe("removes thinking blocks, which are model output")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation in ctx.conversations:
        partials = abandoned_partials(conversation)
        for message in conversation.messages:
            if message.role is not Role.ASSISTANT or message in partials:
                continue
            why = emptiness(message, conversation.dialect.thinking_only_is_empty)
            if why:
                yield Finding(
                    RULE,
                    message.origin,
                    f"assistant turn {why}{ctx.where(conversation)}",
                    actions.RemoveMessage(message),
                    safety(message),
                )
