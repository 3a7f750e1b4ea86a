"""Repairs as intents on the conversation model.

A rule says *what* should change (remove this turn, answer that call); only the reader
that owns the file's layout knows *how* (delete a line and re-link its children, patch one
element of a pretty-printed document).  Each action names model elements, whose ``ref``
lets the reader find its records again.
"""

from __future__ import annotations

from dataclasses import dataclass

from transcript_doctor.model import BrokenLink, Message, Part
from transcript_doctor.source import ParseError

SYNTHETIC_RESULT_TEXT = (
    "Tool result missing from the transcript (the turn was interrupted); inserted by transcript-doctor."
)


@dataclass(frozen=True, slots=True, eq=False)
class RepairRecord:
    """TD001: drop a torn final line, or cut the torn stub off a glued line."""

    error: ParseError


@dataclass(frozen=True, slots=True, eq=False)
class RemoveMessage:
    """TD101, TD103, TD201, TD202: remove a whole turn, keeping links and pairing valid."""

    message: Message


@dataclass(frozen=True, slots=True, eq=False)
class StripTrailingWhitespace:
    """TD102: strip the trailing whitespace of one text part, nothing else."""

    message: Message
    part: Part


@dataclass(frozen=True, slots=True, eq=False)
class InsertResult:
    """TD301: answer ``call`` with a synthetic error result, right after its turn."""

    message: Message
    call: Part


@dataclass(frozen=True, slots=True, eq=False)
class RemoveResult:
    """TD302, TD303: remove one result (and its message if nothing else is left)."""

    message: Message
    part: Part


@dataclass(frozen=True, slots=True, eq=False)
class MoveResult:
    """TD304: move a result into the message right after the turn holding its call."""

    message: Message
    part: Part
    call_message: Message


@dataclass(frozen=True, slots=True, eq=False)
class AddSignature:
    """TD401: give a Gemini functionCall part the validator-skipping signature."""

    message: Message
    part: Part


@dataclass(frozen=True, slots=True, eq=False)
class RemoveDuplicate:
    """TD403: remove the later copy of a user turn recorded twice by the harness."""

    message: Message


@dataclass(frozen=True, slots=True, eq=False)
class Relink:
    """TD404: point a dangling parent link at the nearest preceding record of its chain."""

    link: BrokenLink
