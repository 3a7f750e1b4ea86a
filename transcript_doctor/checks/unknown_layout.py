"""TD002 unknown-layout: a conversation-like file that no reader recognises.

Raised by the engine, not by a check: there is no transcript to check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from transcript_doctor.model import Finding, Origin, Rule, Screening, Severity

if TYPE_CHECKING:
    from transcript_doctor.readers.base import Detection, Reader

RULE = Rule(
    "TD002",
    "unknown-layout",
    Severity.ERROR,
    "A file that looks like a conversation but that no reader recognises (a new vendor, or a release whose layout changed).",
    screen=Screening.FILE,
)

check = None


def finding(hint: str) -> Finding:
    return Finding(
        RULE,
        Origin(1, 0),
        # No --reader advice: a forced reader must recognise the layout too (see mismatch).
        f"looks like a conversation ({hint}) but no reader recognises its layout, so nothing in it "
        "was checked (a new vendor, or a release whose layout changed)",
    )


def mismatch(forced_by: str, forced: str, claimed_by: tuple[Reader, Detection] | None) -> Finding:
    """A forced reader that does not recognise the file: reading it anyway finds bogus
    damage (which fix would act on) or hides real damage, so nothing is checked.  The
    advice names only a reader whose detection claims the file: safe to follow."""
    cli = forced_by == "--reader"
    subject = f"--reader {forced}" if cli else f"{forced_by} names {forced}, which"
    if claimed_by is None:
        return Finding(
            RULE,
            Origin(1, 0),
            f"{subject} does not recognise this file's layout, and no reader does; nothing was checked",
        )
    reader, detection = claimed_by
    message = f"{subject} does not recognise this file's layout ({reader.name} does: {detection.reason}); nothing was checked"
    if detection.transcript:
        message += f": drop --reader or name {reader.name}" if cli else f": change it to {reader.name}"
    return Finding(RULE, Origin(1, 0), message)
