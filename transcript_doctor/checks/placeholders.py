"""Catalog matching shared by TD201 and TD202: a whole turn that is a harness string."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.analysis.shared import shared
from transcript_doctor.catalog import Catalog, Marker
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Conversation, Message, PartKind, Role, Safety, safe, unsafe


def is_whole_turn_candidate(message: Message) -> bool:
    """A turn that calls a tool or carries media is model output whatever its text says."""
    return not any(p.kind in (PartKind.TOOL_CALL, PartKind.MEDIA) for p in message.parts)


def safety(message: Message) -> Safety:
    """Removing a turn that is only the placeholder's text loses nothing the model said;
    a thinking (or any other) block beside it is model output."""
    if all(p.kind is PartKind.TEXT for p in message.parts):
        return safe("the turn's whole text is a catalog placeholder the harness wrote")
    return unsafe("the turn also holds thinking or other blocks, which are model output")


def whole_turn_markers(ctx: Context) -> Iterator[tuple[Conversation, Message, Marker]]:
    """Assistant turns whose entire visible text is a catalog marker.

    Exact whole-turn matching only: a turn that also calls a tool or carries media is
    model output, and a reply that merely mentions the string is not a placeholder.
    """
    for conversation in ctx.conversations:
        for message, marker in shared(
            lambda c: _markers(c, ctx.catalog), conversation, key=whole_turn_markers
        ):
            yield conversation, message, marker


def _markers(conversation: Conversation, catalog: Catalog) -> list[tuple[Message, Marker]]:
    found = []
    for message in conversation.messages:
        if message.role is not Role.ASSISTANT or not is_whole_turn_candidate(message):
            continue
        stripped = message.visible_text.strip()
        if not stripped:
            continue
        marker = catalog.whole_match(stripped, message.harness_written)
        if marker is not None:
            found.append((message, marker))
    return found
