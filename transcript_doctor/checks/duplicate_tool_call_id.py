"""TD305 duplicate-tool-call-id: two tool calls share one id."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis import holds
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Finding, Rule, Screening, Severity

RULE = Rule(
    "TD305",
    "duplicate-tool-call-id",
    Severity.ERROR,
    "Two tool calls share one id.",
    screen=Screening.ASKED,
)
# Without these it finds nothing (analysis/holds.py: the engine does not run it).
NEEDS = holds.CALL


def check(ctx: Context) -> Iterator[Finding]:
    """One finding per repeated id, or one per cause where the reader can tell it.

    A file that records the same responses twice repeats every call id of them: one
    structural cause, reported once (at its first repeated call) with its count, not once
    per copied call.
    """
    # Not at import: the lint of a clean file loads no pairing (start-up).
    import transcript_doctor.analysis.pairing as pairing

    for conversation in ctx.conversations:
        repeats = conversation.repeats
        cause_of = {call_id: index for index, repeat in enumerate(repeats) for call_id in repeat.call_ids}
        grouped: dict[int, list[tuple[pairing.Call, pairing.Call]]] = {}
        for first, again in ctx.shared(pairing.analyse, conversation).repeated_calls:
            if again.part.paired_by != "id":
                continue
            index = cause_of.get(again.part.call_id or "")
            if index is not None:
                grouped.setdefault(index, []).append((first, again))
                continue
            yield Finding(
                RULE,
                again.part.origin,
                f"tool call id {again.part.call_id} is used again (first at "
                f"{ctx.place(first.part.origin)}); tool call ids must be unique{ctx.where(conversation)}",
            )
        for index, pairs in grouped.items():
            first, again = pairs[0]
            others = len(pairs) - 1
            more = f", and {others} more id{'s' if others > 1 else ''} with it" if others else ""
            yield Finding(
                RULE,
                again.part.origin,
                f"tool call id {again.part.call_id} is used again (first at "
                f"{ctx.place(first.part.origin)}){more}: {repeats[index].cause}; "
                f"tool call ids must be unique{ctx.where(conversation)}",
            )
