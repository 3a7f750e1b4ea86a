"""TD401 missing-thought-signature (Gemini Content histories)."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, PartKind, Phase, Rule, Screening, Severity, safe

RULE = Rule(
    "TD401",
    "missing-thought-signature",
    Severity.WARNING,
    "The first functionCall part of a replayed Gemini model turn has no thoughtSignature, which Gemini 3 rejects.",
    'add "thoughtSignature": "skip_thought_signature_validator" to that part',
    (Applicability.SAFE,),
    screen=Screening.EXCLUDED,
    phase=Phase.CONTENT,
    rank=1,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.UNSIGNED_CALL

SAFETY = safe("adds the signature Gemini CLI itself adds; changes nothing else")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation in ctx.conversations:
        for message in conversation.messages:
            for part in message.parts:
                if part.kind is PartKind.TOOL_CALL and part.needs_signature and not part.signature:
                    name = f" {part.name}" if part.name else ""
                    yield Finding(
                        RULE,
                        part.origin,
                        f"functionCall{name} opens a model turn without a thoughtSignature; "
                        f"Gemini 3 rejects the replayed history{ctx.where(conversation)}",
                        actions.AddSignature(message, part),
                        SAFETY,
                    )
