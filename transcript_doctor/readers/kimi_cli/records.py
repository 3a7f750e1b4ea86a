"""What Kimi CLI 1.51.0 writes to ``context.jsonl`` and what its loader takes back.

Spec: docs/formats/kimi-cli.md.  Lines are either control records that
``kimi_cli/soul/context.py`` writes with ``json.dumps`` (``_system_prompt``, ``_checkpoint``,
``_usage``) or kosong ``Message.model_dump_json(exclude_none=True)`` dumps.  On resume
``Context.restore`` reads the file with universal newlines, ``json.loads(line,
strict=False)`` and ``Message.model_validate``, and skips (with a log warning only) every
line that fails: :func:`unloadable` and :func:`broken_by_cr` say which, so the reader
leaves out what Kimi leaves out, and reports it.
"""

from __future__ import annotations

from typing import Any

# Control records and the field each must hold (context.py _apply_context_record: a
# control line whose field has the wrong type is skipped; it holds no message anyway).
CONTROL_FIELDS: dict[str, tuple[str, type]] = {
    "_system_prompt": ("content", str),
    "_checkpoint": ("id", int),
    "_usage": ("token_count", int),
}
MESSAGE_ROLES = frozenset({"system", "user", "assistant", "tool"})  # kosong.message.Role
KNOWN_ROLES = MESSAGE_ROLES.union(CONTROL_FIELDS)  # what ``mostly_known`` counts

# kosong content parts 1.51.0 registers, with the field each requires (model_validate
# rejects a part without it).  A part of another type makes 1.51.0 raise KeyError in
# restore; it is read as an unknown part, not as damage: a newer release may add types.
PART_FIELDS: dict[str, tuple[str, type]] = {
    "text": ("text", str),
    "think": ("think", str),
    "image_url": ("image_url", dict),
    "audio_url": ("audio_url", dict),
    "video_url": ("video_url", dict),
}
MEDIA_PARTS = frozenset({"image_url", "audio_url", "video_url"})  # unconfirmed on disk
# kimi_cli/soul/message.py tool_result_to_message: how a failed tool's result starts.
ERROR_PREFIX = "<system>ERROR:"


def is_control(record: dict[str, Any]) -> bool:
    """A known control record with its field of the right type (bool is not an int there:
    pydantic is not involved, ``isinstance`` is, so ``True`` would pass; JSON booleans
    are not written by Kimi, and a file of them is no Kimi file)."""
    role = record.get("role")
    field = CONTROL_FIELDS.get(role) if isinstance(role, str) else None
    if field is None:
        return False
    value = record.get(field[0])
    return isinstance(value, field[1]) and not isinstance(value, bool)


def mostly_known(head: list[dict[str, Any]]) -> bool:
    """Whether at least half the records have a role Kimi CLI writes: a message role or a
    control record's."""
    known = 0
    for record in head:
        role = record.get("role")
        if isinstance(role, str) and role in KNOWN_ROLES:
            known += 1
    return 2 * known >= len(head)


_ABSENT = object()  # ``unloadable``: a record without content


def unloadable(record: dict[str, Any]) -> str | None:
    """Why kosong's ``Message.model_validate`` (1.51.0) rejects a message record, so that
    ``Context.restore`` skips it, or None.  Only type errors of fields kosong declares are
    named here; keys it does not declare are ignored by pydantic, as here."""
    content = record.get("content", _ABSENT)
    if content.__class__ is not str:  # a string, the common case, needs no look inside
        if content is _ABSENT:
            return "it has no content"  # 1.51.0 raises TypeError here (not only skips): restore fails
        if isinstance(content, list):
            for part in content:
                why = _part_problem(part)
                if why:
                    return why
        elif content is not None and not isinstance(content, str):
            return "its content is neither a string nor a list of parts"
    calls = record.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            return "its tool_calls is not a list"
        for call in calls:
            why = _call_problem(call)
            if why:
                return why
    call_id, name = record.get("tool_call_id"), record.get("name")
    if call_id is not None and not isinstance(call_id, str):
        return "its tool_call_id is not a string"
    if name is not None and not isinstance(name, str):
        return "its name is not a string"
    return None


def _part_problem(part: Any) -> str | None:
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        return "a content part has no type"
    field = PART_FIELDS.get(part["type"])
    if field is not None and not isinstance(part.get(field[0]), field[1]):
        return f"a {part['type']} part has no {field[0]}"
    return None


def _call_problem(call: Any) -> str | None:
    if not isinstance(call, dict):
        return "a tool call is not an object"
    if not isinstance(call.get("id"), str):
        return "a tool call has no string id"
    if call.get("type", "function") != "function":
        return "a tool call's type is not function"
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return "a tool call has no function name"
    if "arguments" not in function:
        return "a tool call's function has no arguments"
    if function["arguments"] is not None and not isinstance(function["arguments"], str):
        return "a tool call's arguments are not a string"
    return None


def broken_by_cr(raw: bytes) -> bool:
    """Whether a raw CR splits the record for Kimi: ``restore`` reads the file in text mode
    with universal newlines, where a lone ``\\r`` ends a line too, and both halves fail to
    parse.  A CR among the whitespace before or after the record only makes a blank line
    (skipped).  Kimi's writers escape CR inside strings, so only outside damage puts one
    there."""
    if b"\r" not in raw:  # every line of a CRLF file is asked: most have none inside
        return False
    return len([piece for piece in raw.split(b"\r") if piece.strip()]) > 1
