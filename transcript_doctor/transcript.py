"""A read file: the unit every check, repair and report works on.

It sits below readers and checks (a reader makes one, a check reads one), so it names
its reader only for type checking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from transcript_doctor.model import Conversation, Message, Part
from transcript_doctor.plain import Mutable
from transcript_doctor.source import Source

if TYPE_CHECKING:
    from transcript_doctor.readers.base import Reader


class Transcript(Mutable):
    """A read file: its source bytes and the conversations it replays."""

    __slots__ = ("_owner", "_where", "conversations", "reader", "source")
    reader: Reader
    source: Source
    conversations: list[Conversation]
    _where: dict[int, tuple[Conversation, int]] | None
    _owner: dict[int, Message] | None

    def __init__(
        self,
        reader: Reader,
        source: Source,
        conversations: list[Conversation],
        _where: dict[int, tuple[Conversation, int]] | None = None,
        _owner: dict[int, Message] | None = None,
    ) -> None:
        self.reader = reader
        self.source = source
        self.conversations = conversations
        self._where = _where
        self._owner = _owner

    def locate(self, message: Message) -> tuple[Conversation, int]:
        """The conversation holding ``message`` and its index there (indexed once)."""
        if self._where is None:
            self._where = {id(m): (c, i) for c in self.conversations for i, m in enumerate(c.messages)}
        found = self._where.get(id(message))
        if found is None:
            from transcript_doctor.editing import EditError  # lint of a clean file never loads it

            raise EditError("the message is not in this transcript")
        return found

    def owner(self, part: Part) -> Message:
        """The message holding ``part`` (indexed once)."""
        if self._owner is None:
            self._owner = {id(p): m for c in self.conversations for m in c.messages for p in m.parts}
        found = self._owner.get(id(part))
        if found is None:
            from transcript_doctor.editing import EditError

            raise EditError("the part is not in this transcript")
        return found
