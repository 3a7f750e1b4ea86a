"""TD404 broken-parent-chain: a parent link to a record that is not in the file."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Applicability, Finding, Phase, Rule, Screening, Severity, unsafe

RULE = Rule(
    "TD404",
    "broken-parent-chain",
    Severity.WARNING,
    "A record whose parent link names a record that is not in the file, so resume drops everything before it.",
    "re-link it to the nearest preceding record of the same chain",
    (Applicability.UNSAFE,),
    screen=Screening.EXCLUDED,
    phase=Phase.RECORDS,
    rank=1,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.BROKEN_LINK

# The nearest preceding record is a guess: the lost parent may have been on another branch.
SAFETY = unsafe("re-links the chain to a record chosen by position, which changes what resume replays")


def check(ctx: Context) -> Iterator[Finding]:
    # Not at import: the lint of a clean file loads no action (start-up).
    import transcript_doctor.actions as actions

    for conversation in ctx.conversations:
        for link in conversation.broken_links:
            yield Finding(
                RULE,
                link.origin,
                f"parent {link.missing} is not in the file; resume silently drops everything "
                f"before this record{ctx.where(conversation)}",
                actions.Relink(link),
                SAFETY,
            )
