"""Tool-call / tool-result pairing, computed once and read by every TD3 rule.

Pairing is by id, never by position: parallel calls answer in any order.  Formats
without ids are paired by their reader, which gives both sides a shared synthetic id and
says so in ``Part.paired_by`` (``"name"`` where only the response had an id).  A result must sit in the reply slot of its call: the first
message after the turn holding the call (after merging consecutive same-role messages
where the vendor does so before sending).

"Went on" and "right after" are judged in record order, before merging (rules.md, TD3):
a model text recorded after a call's message is the model speaking after the call (the
call is TD301, not pending), and a prompt or model text recorded between a call and its
result displaces the result (TD304), even where merging would put them in one turn.
"""

from __future__ import annotations

from collections import deque

from transcript_doctor.model import Conversation, Message, Part, PartKind, Role
from transcript_doctor.plain import Plain

_TOOL_PARTS = (PartKind.TOOL_CALL, PartKind.TOOL_RESULT)
_SILENT = (PartKind.TOOL_CALL, PartKind.THINKING)
_CALL, _RESULT = PartKind.TOOL_CALL, PartKind.TOOL_RESULT


class Call(Plain):
    __slots__ = ("group", "index", "message", "part")
    message: Message
    part: Part
    group: int
    index: int  # position among the replayed messages

    def __init__(self, message: Message, part: Part, group: int, index: int) -> None:
        self.message = message
        self.part = part
        self.group = group
        self.index = index


class Unanswered(Plain):
    __slots__ = ("call", "continued_at")
    call: Call
    # The first later message that shows the conversation went on (None: pending tail).
    continued_at: Message | None

    def __init__(self, call: Call, continued_at: Message | None) -> None:
        self.call = call
        self.continued_at = continued_at


class Placed(Plain):
    """A result and what it answers (``call`` is None for an orphan; ``first`` is the
    result kept for a duplicate)."""

    __slots__ = ("call", "first", "message", "part")
    message: Message
    part: Part
    call: Call | None
    first: Part | None

    def __init__(self, message: Message, part: Part, call: Call | None, first: Part | None = None) -> None:
        self.message = message
        self.part = part
        self.call = call
        self.first = first


class Pairing(Plain):
    __slots__ = ("displaced", "duplicates", "orphans", "repeated_calls", "unanswered")
    unanswered: list[Unanswered]
    orphans: list[Placed]
    duplicates: list[Placed]
    displaced: list[Placed]
    repeated_calls: list[tuple[Call, Call]]

    def __init__(
        self,
        unanswered: list[Unanswered] | None = None,
        orphans: list[Placed] | None = None,
        duplicates: list[Placed] | None = None,
        displaced: list[Placed] | None = None,
        repeated_calls: list[tuple[Call, Call]] | None = None,
    ) -> None:
        self.unanswered = [] if unanswered is None else unanswered
        self.orphans = [] if orphans is None else orphans
        self.duplicates = [] if duplicates is None else duplicates
        self.displaced = [] if displaced is None else displaced
        self.repeated_calls = [] if repeated_calls is None else repeated_calls


def analyse(conversation: Conversation) -> Pairing:
    result = Pairing()
    if not any(p.kind in _TOOL_PARTS for m in conversation.messages for p in m.parts):
        return result  # most conversations of a dataset file never call a tool
    messages = [m for m in conversation.messages if m.role is not Role.NOTICE]
    groups = _groups(messages, conversation.dialect.coalesce_roles)
    pending: dict[object, deque[Call]] = {}
    first_call: dict[object, Call] = {}
    answered: dict[object, Part] = {}  # the first result of each answered call
    for index, message in enumerate(messages):
        group = groups[index]
        for part in message.parts:
            kind = part.kind
            if kind is _CALL:
                # A part without an id can never pair: its call stays open, its result orphaned.
                key: object = part.call_id if part.call_id is not None else object()
                call = Call(message, part, group, index)
                if key in first_call:
                    result.repeated_calls.append((first_call[key], call))
                else:
                    first_call[key] = call
                queue = pending.get(key)
                if queue is None:
                    pending[key] = deque((call,))
                else:
                    queue.append(call)
            elif kind is _RESULT:
                key = part.call_id if part.call_id is not None else object()
                queue = pending.get(key)
                if queue:
                    call = queue.popleft()
                    answered.setdefault(key, part)
                    # Record order judges pairs the ids made; a pair guessed by position has
                    # no order of its own to judge (the guess already follows the merged turns).
                    # (nothing lies between a call and a result in the next message: no scan)
                    if group != call.group + 1 or (
                        index > call.index + 1
                        and part.paired_by != "adjacency"
                        and _spoken_between(messages, call.index, index)
                    ):
                        result.displaced.append(Placed(message, part, call))
                elif key in answered:
                    result.duplicates.append(Placed(message, part, first_call[key], answered[key]))
                else:
                    result.orphans.append(Placed(message, part, None))
    left = [call for queue in pending.values() for call in queue]
    if left:
        after = _continuations(messages, groups)
        left.sort(key=lambda c: c.index)
        result.unanswered = [
            Unanswered(c, _spoken_in_turn(messages, groups, c) or after.get(c.group)) for c in left
        ]
    return result


def speaks(message: Message) -> bool:
    """A message that is a prompt or a model turn saying something besides calls and thoughts."""
    if message.role is Role.USER:
        return message.is_prompt
    return message.role is Role.ASSISTANT and any(
        p.kind not in _SILENT and not (p.kind is PartKind.TEXT and not p.text.strip()) for p in message.parts
    )


def _spoken_between(messages: list[Message], call: int, result: int) -> bool:
    """Whether a prompt or model text was recorded between a call and its result."""
    return any(speaks(m) for m in messages[call + 1 : result])


def _spoken_in_turn(messages: list[Message], groups: list[int], call: Call) -> Message | None:
    """A model text recorded after the call inside the call's own (merged) turn."""
    for message, group in zip(messages[call.index + 1 :], groups[call.index + 1 :], strict=True):
        if group != call.group:
            return None
        if speaks(message):
            return message
    return None


def label(part: Part) -> tuple[str, str]:
    """How findings name a call or result, and how it was paired."""
    if part.paired_by == "id":
        name = f" ({part.name})" if part.name else ""
        return f"tool call {part.call_id or '(no id)'}{name}", ""
    if part.paired_by == "name":
        name = f" ({part.name})" if part.name else ""
        return (
            f"tool call {part.call_id}{name}",
            " (the call has no id: paired with the response of the same name in the next turn, "
            "which carries this id)",
        )
    return (
        f"tool call {part.name or '(unnamed)'}",
        " (the format has no call ids: paired by adjacency and name)",
    )


def label_result(result: Part, call: Part) -> tuple[str, str]:
    """How findings name a paired result: a one-sided pair is named by its call, which
    says that it was paired by name."""
    return label(call if call.paired_by == "name" else result)


def _groups(messages: list[Message], coalesce: bool) -> list[int]:
    groups: list[int] = []
    group = -1
    previous: Role | None = None
    for message in messages:
        if not (coalesce and message.role is previous):
            group += 1
        groups.append(group)
        previous = message.role
    return groups


def _continuations(messages: list[Message], groups: list[int]) -> dict[int, Message]:
    """For each group, the first message of a later group showing the history went on."""
    after: dict[int, Message] = {}
    seen: Message | None = None  # earliest continuing message at or after this point
    current = -1
    for message, group in zip(reversed(messages), reversed(groups), strict=True):
        if group != current:
            current = group
            if seen is not None:
                after[group] = seen
        if message.role is Role.ASSISTANT or message.is_prompt:
            seen = message
    return after
