"""TD403 duplicated-user-turn: a user turn the harness recorded twice."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import (
    Applicability,
    Finding,
    Message,
    Phase,
    Role,
    Rule,
    Screening,
    Severity,
    safe,
    unsafe,
)

RULE = Rule(
    "TD403",
    "duplicated-user-turn",
    Severity.WARNING,
    "The same user message recorded twice in a row by the harness (same content and id/timestamp, or a byte copy).",
    "remove the later copy",
    (Applicability.SAFE, Applicability.UNSAFE),
    screen=Screening.EXCLUDED,
    phase=Phase.RECORDS,
    rank=2,
    applicability_when="safe (byte-identical copy); unsafe (differs)",
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.DUPLICABLE

COPY = safe("the removed record is a byte-identical copy of the one kept")
DIFFERENT = unsafe("the removed record differs from the one kept (same content and identity, other bytes)")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation in ctx.conversations:
        previous: Message | None = None
        for message in conversation.messages:
            if message.role is Role.NOTICE:
                continue
            if (
                previous is not None
                and message.role is Role.USER
                and previous.role is Role.USER
                and message.dup_key is not None
                and message.dup_key == previous.dup_key
            ):
                yield Finding(
                    RULE,
                    message.origin,
                    f"user turn repeats the one at {ctx.place(previous.origin)} exactly (same content "
                    f"and identity): the harness recorded it twice{ctx.where(conversation)}",
                    actions.RemoveDuplicate(message),
                    COPY if ctx.same_bytes(message.origin, previous.origin) else DIFFERENT,
                )
            previous = message
