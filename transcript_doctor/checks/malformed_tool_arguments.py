"""TD405 malformed-tool-arguments: a call's stored arguments text that does not parse."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.analysis.arguments import malformed
from transcript_doctor.checks.context import Context
from transcript_doctor.model import (
    Applicability,
    Finding,
    PartKind,
    Phase,
    Rule,
    Screening,
    Severity,
    unsafe,
)

RULE = Rule(
    "TD405",
    "malformed-tool-arguments",
    Severity.WARNING,
    "A tool call whose stored arguments are not valid JSON, replayed verbatim to a server that parses them.",
    'replace the arguments with "{}" (the fallback of kimi-cli PR #2196)',
    (Applicability.UNSAFE,),
    # The readers that give arguments screen no conversation holding malformed ones.
    screen=Screening.EXCLUDED,
    phase=Phase.CONTENT,
    rank=2,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.ARGUMENTS | holds.CALL

# The text is the model's own output (what it meant to call the tool with): replacing it
# loses that, even though no program can read it.
SAFETY = unsafe("replaces the model's own arguments text (kept in the report) with {}")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation in ctx.conversations:
        if not conversation.dialect.replays_arguments_text:
            continue
        for message in conversation.messages:
            for part in message.parts:
                if part.kind is PartKind.TOOL_CALL and malformed(part.arguments):
                    name = f" {part.name}" if part.name else ""
                    yield Finding(
                        RULE,
                        part.origin,
                        f"tool call {part.call_id}{name} has arguments that are not valid JSON "
                        f"({ctx.quote(part.arguments or '')}); they are replayed verbatim with "
                        f"every later request{ctx.where(conversation)}",
                        actions.ReplaceArguments(message, part),
                        SAFETY,
                    )
