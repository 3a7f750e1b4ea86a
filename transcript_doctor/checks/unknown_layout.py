"""TD002 unknown-layout: a conversation-like file that no reader recognises.

Raised by the engine, not by a check: there is no transcript to check.
"""

from __future__ import annotations

from transcript_doctor.model import Finding, Origin, Rule, Severity

RULE = Rule(
    "TD002",
    "unknown-layout",
    Severity.ERROR,
    "A file that looks like a conversation but that no reader recognises (a new vendor, or a release whose layout changed).",
)

check = None


def finding(hint: str) -> Finding:
    return Finding(
        RULE,
        Origin(1, 0),
        f"looks like a conversation ({hint}) but no reader recognises its layout; "
        "name one with --reader if it is a known format",
    )
