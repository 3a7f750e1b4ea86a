"""``fix`` for anthropic-messages: repairs as element edits of a ``MessageParam`` list.

Spec: shared/spec/formats/anthropic-messages.md §7.  Every message is one list element (or
one JSONL line) and every block one element of its ``content``, so each repair removes,
inserts or strips exactly the elements it names; the editors keep every other byte.

Results go where the API wants them: in the user message right after the call, after the
``tool_result`` blocks already there ("tool_result blocks must come first").  When that
message is not a user message with a block list, a new ``{"role":"user","content":[…]}``
message is inserted right after the call rather than converting a string ``content``
(converting would rewrite text nobody asked to touch); the API accepts consecutive user
messages.  A Cline message made this way copies ``ts`` from the call message before it.

Cline answers native ``tool_use`` blocks in plain text when it cannot map a call id
(``ToolResultUtils.createToolResultBlock``, cline/cline before commit 791d238996: one text
block ``{description} Result:\\n{result}``; errors as ``formatResponse.toolError``:
``The tool execution failed with the following error:\\n<error>\\n…\\n</error>``).  In a
history that answers that way, a synthetic result is such a text block — a ``tool_result``
block in that reply would stop the reader (and Cline) from pairing the text answers there.
Elsewhere it is a ``tool_result`` block with ``is_error: true`` (Zoo-Code PR #1323), plus
the call's ``call_id`` when the call carries one, as Cline writes its own results.
"""

from __future__ import annotations

import codecs
import json
from typing import Any
from weakref import WeakKeyDictionary

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    InsertResult,
    MoveResult,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.analysis import pairing
from transcript_doctor.analysis.shared import shared
from transcript_doctor.editing import EditError, JsonText, Lines
from transcript_doctor.jsonspan import join, split
from transcript_doctor.model import Conversation, Message, Origin, Part, PartKind, Role
from transcript_doctor.plain import Mutable
from transcript_doctor.readers import listing
from transcript_doctor.readers.anthropic_messages.cline import TEXT_RESULT, TOOL_ERROR
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.transcript import Transcript

_MOVED = "transcript-doctor:moved-block-{}"  # stands in for a moved block's own bytes

Key = tuple[int, str | None]


class _Session(Mutable):
    """What earlier actions of one rule group did to the same editor.

    The engine applies a rule's findings one by one to one editor: two results removed
    from one message must remove the message once it is empty, and the calls of one turn
    must share the one reply message inserted for them.  (A plain class: a dataclass
    compiles its methods at import, and lint imports a layout's repairs to tell which
    findings are fixable.)
    """

    __slots__ = ("filled", "gone", "removed", "replied")
    removed: dict[Key, set[int]]  # block indexes per message
    gone: set[Key]  # messages removed whole
    filled: set[Key]  # messages receiving blocks
    replied: set[Key]  # call messages given a new reply message

    def __init__(self) -> None:
        self.removed, self.gone, self.filled, self.replied = {}, set(), set(), set()


_SESSIONS: WeakKeyDictionary[Edit, _Session] = WeakKeyDictionary()


class AnthropicMessagesRepair(Repair):
    """Element edits in the file's own shapes; TD001 on JSONL is the base class's."""

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        listing.remove(edit, action.message.origin)
        _session(edit).gone.add(_key(action.message))
        return "remove"

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        listing.strip(edit, _text_of(action.part))
        return "strip"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        _remove_block(edit, _session(edit), action.message, action.part, frozenset())
        return "remove"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        _move(transcript, edit, _session(edit), action)
        return "move"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        _insert(transcript, edit, _session(edit), action)
        return "insert"


def _session(edit: Edit) -> _Session:
    return _SESSIONS.setdefault(edit, _Session())


# -- the repairs -------------------------------------------------------------------


def _text_of(part: Part) -> Origin:
    """The string to strip: a string ``content`` itself, or a text block's ``text``."""
    if _block(part) is None:
        return part.origin
    origin = part.origin
    return Origin(origin.line, origin.record, f"{origin.pointer or ''}/text")


def _remove_block(edit: Edit, session: _Session, message: Message, part: Part, keep: frozenset[Key]) -> None:
    """Remove one block; the message goes too once nothing is left in it (and nothing
    is moved into it: ``keep``)."""
    index = _block(part)
    if index is None:
        raise EditError("a string content is not a block")
    key = _key(message)
    removed = session.removed.setdefault(key, set())
    removed.add(index)
    if len(removed) == len(message.parts) and key not in session.filled and key not in keep:
        listing.remove(edit, message.origin)
        session.gone.add(key)
    else:
        listing.remove(edit, part.origin)


def _insert(transcript: Transcript, edit: Edit, session: _Session, action: InsertResult) -> None:
    """TD301: answer the call in its reply message, or in a new one right after its turn."""
    conversation = _conversation(transcript, action.message)
    text = _text_protocol(conversation, action.call)
    reply = listing.next_message(transcript, action.message)
    content = _list_content(edit, reply)
    if reply is not None and content is not None:
        if text:
            answers = [_block(p) for p in reply.parts if _answers_in_text(p)]
            before = max((i for i in answers if i is not None), default=-1) + 1
        else:
            before = _leading_results(content)
        _fill(edit, session, reply, before, [_synthetic(edit, action.call, text)])
        return
    if action.call.paired_by == "adjacency":
        # The reply answers in one string: a second answer would need it rewritten.
        raise EditError("the reply answers this turn in a string content; adding an answer would rewrite it")
    key = _key(action.message)
    if key in session.replied:
        return  # the reply message made for this turn's first open call answers it too
    session.replied.add(key)
    calls = shared(_open_calls, conversation).get(id(action.message), [])
    calls = sorted(calls, key=action.message.parts.index)
    blocks: list[dict[str, Any] | bytes] = [_synthetic(edit, call, text) for call in calls]
    _new_reply(edit, action.message, blocks)


def _move(transcript: Transcript, edit: Edit, session: _Session, action: MoveResult) -> None:
    """TD304: move the block's own bytes into the reply message of its call."""
    conversation = _conversation(transcript, action.call_message)
    found = shared(pairing.analyse, conversation)
    targets = frozenset(
        _key(reply)
        for placed in found.displaced
        if placed.call is not None
        and (reply := listing.next_message(transcript, placed.call.message)) is not None
        and _list_content(edit, reply) is not None
    )
    moved = listing.raw(edit, action.part.origin)
    _remove_block(edit, session, action.message, action.part, targets)
    reply = listing.next_message(transcript, action.call_message)
    content = _list_content(edit, reply)
    if reply is not None and content is not None:
        if any(_answers_in_text(p) for p in reply.parts):
            raise EditError("the reply answers in Cline's text protocol; a tool_result block would unpair it")
        _fill(edit, session, reply, _leading_results(content), [moved])
        return
    key = _key(action.call_message)
    if key in session.replied:
        return  # moved with the first displaced result of this turn
    session.replied.add(key)
    mine = [
        (action.call_message.parts.index(p.call.part), p.part)
        for p in found.displaced
        if p.call is not None and p.call.message is action.call_message
    ]
    blocks: list[dict[str, Any] | bytes] = [
        listing.raw(edit, part.origin) for _, part in sorted(mine, key=lambda t: t[0])
    ]
    _new_reply(edit, action.call_message, blocks)


# -- where results go --------------------------------------------------------------


def _fill(edit: Edit, session: _Session, reply: Message, before: int, blocks: list[Any]) -> None:
    """Insert blocks (values, or raw bytes of moved ones) into a message's content."""
    key = _key(reply)
    if key in session.gone:
        raise EditError("the reply message was removed by another repair of this rule")
    session.filled.add(key)
    text, pointer = _document(edit, reply.origin)
    for block in blocks:
        if isinstance(block, bytes):
            text.insert(f"{pointer}/content", before, raw=block)
        else:
            text.insert(f"{pointer}/content", before, block)


def _new_reply(edit: Edit, call_message: Message, blocks: list[dict[str, Any] | bytes]) -> None:
    """A user message holding ``blocks``, right after the call's turn, in the file's style.

    Moved blocks keep their bytes: they stand in the new message at the depth they had in
    their old one (both are elements of the same list), so no re-indenting is needed.
    """
    value: dict[str, Any] = {
        "role": "user",
        "content": [b if isinstance(b, dict) else _MOVED.format(i) for i, b in enumerate(blocks)],
    }
    ts = _value(edit, call_message.origin).get("ts")
    if isinstance(ts, int) and not isinstance(ts, bool):
        value["ts"] = ts  # Cline / Roo: the new message is stamped like its neighbour
    origin = call_message.origin
    if isinstance(edit, Lines) and origin.pointer is None:
        raw = edit.style(origin.record).dumps(value)
    else:
        text, pointer = _document(edit, origin)
        parent = join(*split(pointer)[:-1])
        raw = text.style(parent).dumps(value, text.depth(parent) + 1)
    for index, block in enumerate(blocks):
        if isinstance(block, bytes):
            raw = raw.replace(json.dumps(_MOVED.format(index)).encode(), block, 1)
    listing.insert_after(edit, origin, raw=raw)


def _synthetic(edit: Edit, call: Part, text: bool) -> dict[str, Any]:
    """The error result for ``call``, in the shape its history answers calls in."""
    if text:
        answer = f"[{call.name}] Result:\n{TOOL_ERROR.format(SYNTHETIC_RESULT_TEXT)}"
        if call.name is None or not TEXT_RESULT.match(answer):
            raise EditError("the call's name cannot head a Cline text-protocol result")
        return {"type": "text", "text": answer}
    block = _value(edit, call.origin)
    call_id = block.get("id")
    if not isinstance(call_id, str):
        raise EditError("the call has no id to answer")
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
    if isinstance(block.get("call_id"), str):
        result["call_id"] = block["call_id"]  # Cline's own tool_result blocks carry it
    result["content"] = SYNTHETIC_RESULT_TEXT
    result["is_error"] = True
    return result


def _open_calls(conversation: Conversation) -> dict[int, list[Part]]:
    """Per call turn (by identity), its calls left unanswered mid-history (TD301)."""
    found: dict[int, list[Part]] = {}
    for gap in shared(pairing.analyse, conversation).unanswered:
        if gap.continued_at is not None:
            found.setdefault(id(gap.call.message), []).append(gap.call.part)
    return found


def _text_protocol(conversation: Conversation, call: Part) -> bool:
    """Whether ``call`` is answered in Cline's text protocol: its turn already is (some of
    its calls are answered in text), or the whole history answers only that way."""
    return call.paired_by == "adjacency" or shared(_only_text_answers, conversation)


def _only_text_answers(conversation: Conversation) -> bool:
    results = [p for m in conversation.messages for p in m.tool_results]
    return bool(results) and all(p.paired_by == "adjacency" for p in results)


def _answers_in_text(part: Part) -> bool:
    return part.kind is PartKind.TOOL_RESULT and part.paired_by == "adjacency"


def _leading_results(content: list[Any]) -> int:
    """Where a new result goes: after the ``tool_result`` blocks that open the content."""
    count = 0
    for block in content:
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            break
        count += 1
    return count


# -- elements ----------------------------------------------------------------------


def _key(message: Message) -> Key:
    return message.origin.record, message.origin.pointer


def _block(part: Part) -> int | None:
    """The block index of a part (``None`` for a string content), from the reader's ref."""
    block = getattr(part.ref, "block", None)
    return block if isinstance(block, int) else None


def _conversation(transcript: Transcript, message: Message) -> Conversation:
    return transcript.locate(message)[0]


def _document(edit: Edit, origin: Origin) -> tuple[JsonText, str]:
    """The JSON text holding an element and its pointer there (a JSONL line's own text)."""
    if isinstance(edit, JsonText):
        return edit, origin.pointer or ""
    return edit.text(origin.record), origin.pointer or ""


def _value(edit: Edit, origin: Origin) -> Any:
    """An element's original value (what the reader saw; edits are applied at the end)."""
    return json.loads(listing.raw(edit, origin).removeprefix(codecs.BOM_UTF8))


def _list_content(edit: Edit, message: Message | None) -> list[Any] | None:
    """The block list of a user message, or ``None`` when results cannot go into it."""
    if message is None or message.role is not Role.USER:
        return None
    content = _value(edit, message.origin).get("content")
    return content if isinstance(content, list) else None


REPAIR = AnthropicMessagesRepair()
