"""Analyses of where a history ends, shared by the turn-integrity rules."""

from __future__ import annotations

from transcript_doctor.model import Conversation, Message, Role

ABANDONING_NOTICES = frozenset({"error", "interrupted"})


def last_turn(conversation: Conversation) -> Message | None:
    """The last message that is replayed (display-only notices do not count)."""
    for message in reversed(conversation.messages):
        if message.role is not Role.NOTICE:
            return message
    return None


def abandoned_partials(conversation: Conversation) -> list[Message]:
    """Assistant partials that end the history, each marked by the notice after it.

    Walking back from the end: an error/interrupted notice arms; the next replayed
    message, if an assistant turn without tool calls, died mid-stream; failed retries
    stack one partial each.  Without the notice a completed final answer looks the same,
    so nothing is ever inferred from shape alone (openworker PR #363).
    """
    found: list[Message] = []
    armed = False
    for message in reversed(conversation.messages):
        if message.role is Role.NOTICE:
            armed = armed or message.notice in ABANDONING_NOTICES
            continue
        if armed and message.role is Role.ASSISTANT and not message.tool_calls:
            found.append(message)
            armed = False
            continue
        break
    found.reverse()
    return found
