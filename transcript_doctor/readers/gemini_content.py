"""Gemini ``Content`` parts as model parts, shared by every Gemini-family reader.

Gemini CLI checkpoints and ``$set.messages`` rebuilds, bare ``Content[]`` histories and
Qwen Code records all store ``{role, parts}`` as the API takes it, so the conversion of a
part list lives here once.  Readers supply where the list sits (``at``) and decide which
parts need a signature; this module only knows what a part is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transcript_doctor.model import Origin, Part, PartKind

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
