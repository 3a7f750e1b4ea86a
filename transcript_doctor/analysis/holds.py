"""What a read file's conversations hold, as bits, so that a rule that cannot fire is not run.

A damaged file of a few turns costs each rule's check ~3 µs warm, and several times that in
a real run (each check's code comes back into the caches for one file): most checks look for
an element the file does not have (an unsigned thinking block, a broken parent link, a
duplicable user turn).  Each check module states in ``NEEDS`` the bits without all of which
it finds nothing (``checks.applicable``); :func:`held` gathers them in one pass over the
messages and parts.  A bit is set when any conversation holds it: a rule may run in vain,
never be skipped where it would find something (tests/test_holds.py runs every check over
every fixture and corpus file and asserts that one it would skip finds nothing).
"""

from __future__ import annotations

from transcript_doctor.model import Conversation, PartKind, Role

ASSISTANT = 1  # an assistant message
CALL = 2  # a tool call part
RESULT = 4  # a tool result part
UNSIGNED_CALL = 8  # a tool call the vendor wants signed, without a signature
UNSIGNED_THINKING = 16  # a thinking part the vendor wants signed, without a signature
DUPLICABLE = 32  # a user message with an identity (``dup_key``)
BROKEN_LINK = 64  # a conversation with a broken parent link
PREFILL = 128  # a dialect whose final assistant text is prefill
FUSES = 256  # a dialect that fuses a tool response with the prompt after it
ARGUMENTS = 512  # a dialect that replays each call's arguments text

_CALL, _RESULT, _THINKING = PartKind.TOOL_CALL, PartKind.TOOL_RESULT, PartKind.THINKING
_ASSISTANT, _USER = Role.ASSISTANT, Role.USER


def held(conversations: list[Conversation]) -> int:
    """The bits of everything the conversations hold (see the module's docstring)."""
    mask = 0
    for conversation in conversations:
        dialect = conversation.dialect
        if dialect.final_text_is_prefill:
            mask |= PREFILL
        if dialect.fuses_tool_response:
            mask |= FUSES
        if dialect.replays_arguments_text:
            mask |= ARGUMENTS
        if conversation.broken_links:
            mask |= BROKEN_LINK
        for message in conversation.messages:
            role = message.role
            if role is _ASSISTANT:
                mask |= ASSISTANT
            elif role is _USER and message.dup_key is not None:
                mask |= DUPLICABLE
            for part in message.parts:
                kind = part.kind
                if kind is _CALL:
                    mask |= UNSIGNED_CALL | CALL if part.needs_signature and not part.signature else CALL
                elif kind is _RESULT:
                    mask |= RESULT
                elif kind is _THINKING and part.needs_signature and not part.signature:
                    mask |= UNSIGNED_THINKING
    return mask
