"""Gemini ``Content`` parts as model parts, shared by every Gemini-family reader.

Gemini CLI checkpoints and ``$set.messages`` rebuilds, bare ``Content[]`` histories and
Qwen Code records all store ``{role, parts}`` as the API takes it, so the conversion of a
part list lives here once.  Readers supply where the list sits (``at``) and decide which
parts need a signature; this module only knows what a part is, what a synthetic response
part looks like, and what one fix group has taken from each message so far.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT
from transcript_doctor.editing import EditError
from transcript_doctor.model import Message, Origin, Part, PartKind

# Gemini CLI's SYNTHETIC_THOUGHT_SIGNATURE (geminiChat.ts), also what fix writes for TD401.
SKIP_SIGNATURE = "skip_thought_signature_validator"
MEDIA_KEYS = ("inlineData", "fileData")

# Where a part sits: called with the part's index in the list.
At = Callable[[int], Origin]


def parts(items: Any, at: At) -> list[Part]:
    """Model parts of a ``parts`` list (or of ``content``: a string, one Part or a list).

    Anything that is not a recognisable part becomes OTHER (it is content the model sees),
    except empty objects, which Gemini's own ``isValidContent`` treats as nothing.
    """
    if isinstance(items, str):
        return [Part(PartKind.TEXT, at(0), text=items)]
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        return []
    found: list[Part] = []
    for index, item in enumerate(items):
        part = _part(item, at(index))
        if part is not None:
            found.append(part)
    return found


def _part(item: Any, origin: Origin) -> Part | None:
    if isinstance(item, str):
        return Part(PartKind.TEXT, origin, text=item)
    if not isinstance(item, dict) or not item:
        return None
    signature = item.get("thoughtSignature")
    signature = signature if isinstance(signature, str) else None
    call = item.get("functionCall")
    if isinstance(call, dict):
        return Part(
            PartKind.TOOL_CALL,
            origin,
            call_id=_string(call.get("id")),
            name=_string(call.get("name")),
            signature=signature,
        )
    response = item.get("functionResponse")
    if isinstance(response, dict):
        body = response.get("response")
        return Part(
            PartKind.TOOL_RESULT,
            origin,
            call_id=_string(response.get("id")),
            name=_string(response.get("name")),
            is_error=isinstance(body, dict) and "error" in body,
        )
    text = item.get("text")
    if isinstance(text, str):
        if item.get("thought") is True:
            return Part(PartKind.THINKING, origin, text=text, signature=signature)
        return Part(PartKind.TEXT, origin, text=text, signature=signature)
    if any(key in item for key in MEDIA_KEYS):
        return Part(PartKind.MEDIA, origin)
    if set(item) == {"thoughtSignature"}:
        return Part(PartKind.THINKING, origin, signature=signature)
    return Part(PartKind.OTHER, origin)


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def pair_by_position(calls: list[Part], results: list[Part], tag: str) -> None:
    """Give id-less calls and the id-less responses of the next turn shared ids.

    Older checkpoints and API responses carry no ids: the k-th response answers the k-th
    call with the same name (Gemini requires equal counts per call turn).
    """
    open_calls = [c for c in calls if c.call_id is None]
    for number, call in enumerate(open_calls):
        call.call_id = f"{tag}#{number}"
        call.paired_by = "adjacency"
    for result in (r for r in results if r.call_id is None):
        result.paired_by = "adjacency"
        match = next((c for c in open_calls if c.name == result.name), None)
        if match is not None:
            open_calls.remove(match)
            result.call_id = match.call_id


# -- repairs (``fix``) -------------------------------------------------------------


def answerable(call: Part) -> bool:
    """Whether a response can name ``call``: it needs the call's name, and its id unless
    the call pairs by position (id-less histories)."""
    return call.name is not None and (call.paired_by != "id" or call.call_id is not None)


def synthetic_response(call: Part) -> dict[str, Any]:
    """The ``functionResponse`` part that answers ``call`` with the synthetic error.

    Gemini marks a failed call by ``response.error`` (what the CLI writes for a cancelled
    call), so that is where the text goes.  An id-less call, paired by name and position,
    gets an id-less response.
    """
    if not answerable(call):
        raise EditError("the call has no name or id a response could name")
    body: dict[str, Any] = {}
    if call.paired_by == "id":
        body["id"] = call.call_id
    body["name"] = call.name
    body["response"] = {"error": SYNTHETIC_RESULT_TEXT}
    return {"functionResponse": body}


@dataclass(eq=False)
class Removals:
    """What the repairs applied so far through one editor took from each message.

    The fixer applies every finding of a rule to one editor, one action at a time: two
    duplicates in one message, or a result moved into a message another move empties,
    are only handled right when each action sees what the earlier ones did.
    """

    gone: dict[Message, set[Part]] = field(default_factory=dict)
    received: set[Message] = field(default_factory=set)
    removed: set[Message] = field(default_factory=set)

    def take(self, message: Message, part: Part) -> bool:
        """Note ``part`` as leaving ``message``; True when nothing is left in it.

        A message that received a moved result is never left empty.
        """
        gone = self.gone.setdefault(message, set())
        gone.add(part)
        return message not in self.received and all(p in gone for p in message.parts)

    def receive(self, message: Message) -> None:
        if message in self.removed:
            raise EditError("the message the result belongs in is removed by another repair")
        self.received.add(message)


_REMOVALS: WeakKeyDictionary[object, Removals] = WeakKeyDictionary()


def removals(edit: object) -> Removals:
    """The :class:`Removals` of one editor (one fix group)."""
    found = _REMOVALS.get(edit)
    if found is None:
        found = _REMOVALS[edit] = Removals()
    return found
