"""Repairs as intents on the conversation model.

A rule says *what* should change (remove this turn, answer that call); only the reader
that owns the file's layout knows *how* (delete a line and re-link its children, patch one
element of a pretty-printed document).  Each action names model elements, whose ``ref``
lets the reader find its records again.
"""

from __future__ import annotations

from typing import ClassVar, Final

from transcript_doctor.model import BrokenLink, Message, Part
from transcript_doctor.plain import Plain
from transcript_doctor.source import ParseError

SYNTHETIC_RESULT_TEXT = (
    "Tool result missing from the transcript (the turn was interrupted); inserted by transcript-doctor."
)


class Action(Plain):
    """A repair intent.  ``method`` names the :class:`~transcript_doctor.readers.base.Repair`
    method that makes it in a layout, so a layout supports an action by defining that method."""

    __slots__ = ()
    method: ClassVar[str]

    def possible(self) -> bool:
        """Whether the finding itself allows a repair, whatever the layout."""
        return True


class RepairRecord(Action):
    """TD001: drop a torn final line, or cut the torn stub off a glued line."""

    method: ClassVar[str] = "repair_record"

    __slots__ = ("error",)
    error: Final[ParseError]

    def __init__(self, error: ParseError) -> None:
        self.error = error

    def possible(self) -> bool:
        return self.error.repair is not None  # a torn line is repaired only when it can be told


class RemoveMessage(Action):
    """TD101, TD103, TD201, TD202: remove a whole turn, keeping links and pairing valid."""

    method: ClassVar[str] = "remove_message"

    __slots__ = ("message",)
    message: Final[Message]

    def __init__(self, message: Message) -> None:
        self.message = message


class StripTrailingWhitespace(Action):
    """TD102: strip the trailing whitespace of one text part, nothing else."""

    method: ClassVar[str] = "strip_trailing_whitespace"

    __slots__ = ("message", "part")
    message: Final[Message]
    part: Final[Part]

    def __init__(self, message: Message, part: Part) -> None:
        self.message = message
        self.part = part


class InsertResult(Action):
    """TD301: answer ``call`` with a synthetic error result, right after its turn."""

    method: ClassVar[str] = "insert_result"

    __slots__ = ("call", "message")
    message: Final[Message]
    call: Final[Part]

    def __init__(self, message: Message, call: Part) -> None:
        self.message = message
        self.call = call


class RemoveResult(Action):
    """TD302, TD303: remove one result (and its message if nothing else is left)."""

    method: ClassVar[str] = "remove_result"

    __slots__ = ("message", "part")
    message: Final[Message]
    part: Final[Part]

    def __init__(self, message: Message, part: Part) -> None:
        self.message = message
        self.part = part


class MoveResult(Action):
    """TD304: move a result into the message right after the turn holding its call."""

    method: ClassVar[str] = "move_result"

    __slots__ = ("call_message", "message", "part")
    message: Final[Message]
    part: Final[Part]
    call_message: Final[Message]

    def __init__(self, message: Message, part: Part, call_message: Message) -> None:
        self.message = message
        self.part = part
        self.call_message = call_message


class AddSignature(Action):
    """TD401: give a Gemini functionCall part the validator-skipping signature."""

    method: ClassVar[str] = "add_signature"

    __slots__ = ("message", "part")
    message: Final[Message]
    part: Final[Part]

    def __init__(self, message: Message, part: Part) -> None:
        self.message = message
        self.part = part


class ReplaceArguments(Action):
    """TD405: replace a call's arguments text that does not parse with ``{}``."""

    method: ClassVar[str] = "replace_arguments"

    __slots__ = ("message", "part")
    message: Final[Message]
    part: Final[Part]

    def __init__(self, message: Message, part: Part) -> None:
        self.message = message
        self.part = part


class RemoveDuplicate(Action):
    """TD403: remove the later copy of a user turn recorded twice by the harness."""

    method: ClassVar[str] = "remove_duplicate"

    __slots__ = ("message",)
    message: Final[Message]

    def __init__(self, message: Message) -> None:
        self.message = message


class Relink(Action):
    """TD404: point a dangling parent link at the nearest preceding record of its chain."""

    method: ClassVar[str] = "relink"

    __slots__ = ("link",)
    link: Final[BrokenLink]

    def __init__(self, link: BrokenLink) -> None:
        self.link = link
