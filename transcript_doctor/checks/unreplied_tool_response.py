"""TD104 unreplied-tool-response (Gemini API histories)."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Finding, Message, PartKind, Role, Rule, Screening, Severity

RULE = Rule(
    "TD104",
    "unreplied-tool-response",
    Severity.WARNING,
    "Gemini histories: a tool-response turn is followed directly by a new prompt, which replay fuses into the response.",
    screen=Screening.EXCLUDED,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.FUSES | holds.RESULT


def _fused_within(message: Message) -> bool:
    """Results followed by prompt parts in one stored user Content (already coalesced).

    Tool output the harness stores beside a result (``Part.of_result``) is no prompt.
    """
    seen_result = False
    for part in message.parts:
        if part.kind is PartKind.TOOL_RESULT:
            seen_result = True
        elif seen_result and not part.of_result:
            return True
    return False


def check(ctx: Context) -> Iterator[Finding]:
    for conversation in ctx.conversations:
        if not conversation.dialect.fuses_tool_response:
            continue
        previous: Message | None = None
        for message in conversation.messages:
            if message.role is Role.NOTICE:
                continue
            # A harness-written nudge (Gemini CLI's `System: Please continue.`) is meant to
            # be read as "go on": that is what fusing does to it.
            if message.role is Role.USER and message.is_prompt and not message.harness_written:
                if (
                    previous is not None
                    and previous.role is Role.USER
                    and previous.tool_results
                    and not previous.is_prompt
                ):
                    yield Finding(
                        RULE,
                        message.origin,
                        f"new prompt follows the tool response at {ctx.place(previous.origin)} "
                        "with no model turn between; on replay it is fused into the tool response "
                        f"and read as text to continue{ctx.where(conversation)}",
                    )
                elif _fused_within(message):
                    yield Finding(
                        RULE,
                        message.origin,
                        "user turn holds a tool response followed by a new prompt with no model "
                        f"turn between; the model reads the prompt as text to continue{ctx.where(conversation)}",
                    )
            previous = message
