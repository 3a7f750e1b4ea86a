"""Gemini ``Content`` parts as model parts, shared by every Gemini-family reader.

Gemini CLI checkpoints and ``$set.messages`` rebuilds, bare ``Content[]`` histories and
Qwen Code records all store ``{role, parts}`` as the API takes it, so the conversion of a
part list lives here once.  Readers supply where the list sits (``at``) and decide which
parts need a signature; this module only knows what a part is, what a synthetic response
part looks like, and what one fix group has taken from each message so far.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from weakref import WeakKeyDictionary

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Turn
from transcript_doctor.model import Conversation, Dialect, Message, Origin, Part, PartKind, Role

# Gemini CLI's SYNTHETIC_THOUGHT_SIGNATURE (geminiChat.ts), also what fix writes for TD401.
SKIP_SIGNATURE = "skip_thought_signature_validator"
MEDIA_KEYS = ("inlineData", "fileData")

# The response output Gemini CLI writes when a tool returned a list of parts and stores
# them after the functionResponse (convertToFunctionResponse, coreToolScheduler.ts, 2025
# versions: `[functionResponse("Tool execution succeeded."), ...toParts(llmContent)]`).
LISTED_OUTPUT = "Tool execution succeeded."

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
    beside: str | None = None  # what may follow the last functionResponse as its output
    for index, item in enumerate(items):
        part = _part(item, at(index))
        if part is None:
            continue
        found.append(part)
        if part.kind is PartKind.TOOL_RESULT:
            beside = _beside(item)
        elif beside == "any" or (beside == "media" and part.kind is PartKind.MEDIA):
            part.of_result = True
        else:
            beside = None
    return found


def _beside(item: dict[str, Any]) -> str:
    """Which parts Gemini CLI stores after this functionResponse as the tool's output.

    ``convertToFunctionResponse`` puts a tool's media after its functionResponse in every
    version (2025: ``[functionResponse("Binary content of type … was processed."),
    inlineData]``; 2026: ``[functionResponse, ...fileData, ...inlineData]`` for models
    without multimodal responses), and in 2025 versions every part of a listed result
    (``read_many_files`` text) after a ``"Tool execution succeeded."`` response.  A text
    after any other response is a prompt fused into the turn (TD104).
    """
    body = item["functionResponse"].get("response")
    if isinstance(body, dict) and body.get("output") == LISTED_OUTPUT:
        return "any"
    return "media"


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


# What ``plain`` makes of one part: its kind, its text ("" when none), its call id, and
# its ``thoughtSignature`` when that is a string (``Part.signature``).
Plain = tuple[PartKind, str, str | None, str | None]


def plain(items: Any) -> list[Plain] | None:
    """``parts`` without building them, for the clean-file screen: each part's kind, text,
    call id and signature, in order; None where a part would be stored beside a
    result as its output (``Part.of_result``), which the screen does not take.

    It must say exactly what ``parts`` says (``tests/test_fast_path.py`` compares the
    screen's turns made each way on every fixture and corpus file)."""
    if isinstance(items, str):
        return [(PartKind.TEXT, items, None, None)]
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        return []
    found: list[Plain] = []
    beside: str | None = None
    for item in items:
        if isinstance(item, str):
            kind, text, call_id, signature = PartKind.TEXT, item, None, None
        elif not isinstance(item, dict) or not item:
            continue
        else:
            signature = _string(item.get("thoughtSignature"))
            text, call_id = "", None
            call = item.get("functionCall")
            response = item.get("functionResponse")
            if isinstance(call, dict):
                kind, call_id = PartKind.TOOL_CALL, _string(call.get("id"))
            elif isinstance(response, dict):
                kind, call_id = PartKind.TOOL_RESULT, _string(response.get("id"))
            elif isinstance(item.get("text"), str):
                kind, text = PartKind.THINKING if item.get("thought") is True else PartKind.TEXT, item["text"]
            elif any(key in item for key in MEDIA_KEYS):
                kind = PartKind.MEDIA
            elif set(item) == {"thoughtSignature"}:
                kind = PartKind.THINKING
            else:
                kind = PartKind.OTHER
        if kind is PartKind.TOOL_RESULT:
            beside = _beside(item)  # only a dict holds a response
        elif beside == "any" or (beside == "media" and kind is PartKind.MEDIA):
            return None
        else:
            beside = None
        found.append((kind, text, call_id, signature))
    return found


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def pair_by_position(
    calls: list[Part], results: list[Part], tag: str, called: set[str] | None = None
) -> None:
    """Pair the id-less calls of a turn with the responses of the next turn, by name.

    Older checkpoints and API responses carry no ids: the k-th response answers the k-th
    call with the same name (Gemini requires equal counts per call turn).  Mid-2025
    Gemini CLI checkpoints are one-sided: the model's ``functionCall`` has no id while
    the CLI gave its ``functionResponse`` one (``read_file-1758990089388-f5135e087103a``),
    and the API takes that as a healthy pair.  Such a response pairs with the first open
    call of its name unless its id names a call (``called``: every call id of the
    conversation); the call adopts the response's id and both say they were paired by
    name (``paired_by = "name"``), so a finding that relies on it can say so.
    """
    open_calls = [c for c in calls if c.call_id is None]
    for number, call in enumerate(open_calls):
        call.call_id = f"{tag}#{number}"
        call.paired_by = "adjacency"
    known = called or set()
    for result in results:
        if result.call_id is not None and result.call_id in known:
            continue
        match = next((c for c in open_calls if c.name == result.name), None)
        if result.call_id is None:
            result.paired_by = "adjacency"
            if match is not None:
                open_calls.remove(match)
                result.call_id = match.call_id
        elif match is not None:
            open_calls.remove(match)
            match.call_id = result.call_id
            match.paired_by = result.paired_by = "name"


def sign_active_loop(messages: list[Message]) -> None:
    """Keep ``needs_signature`` only on calls of the current turn, the part Gemini validates.

    The Gemini API checks signatures only in the current turn, which starts at the last
    user Content holding text ("Only the current turn is required; we do not validate
    previous turns", ai.google.dev thought-signatures); Gemini CLI's
    ``ensureActiveLoopHasThoughtSignatures`` draws the same line.  A call before it
    replays fine without a signature.  Without any user text the whole history is the
    current turn.
    """
    start = next(
        (
            index
            for index in range(len(messages) - 1, -1, -1)
            if messages[index].role is Role.USER
            and any(p.kind is PartKind.TEXT and p.text for p in messages[index].parts)
        ),
        0,
    )
    for message in messages[:start]:
        for part in message.parts:
            part.needs_signature = False


# -- the clean-file screen (lint) -------------------------------------------------------

_PROMPT_KINDS = (PartKind.TEXT, PartKind.MEDIA)
# The prompt a vendor appends before it sends a history again (``closing``).
NEXT_PROMPT: Turn = (OTHER, None, ())


def closing(dialect: Dialect) -> list[Turn]:
    """What follows a history's turns when the screen judges them.

    The screen doubts a history whose final assistant text ends with whitespace (TD102:
    prefill).  Where the final text is never prefill (``Dialect.final_text_is_prefill``:
    the vendor appends the next prompt before it sends the history) TD102 does not apply,
    and the screen is shown that prompt: it ends the history the way the vendor sends it.
    Only for turns without notices (a notice after the last turn arms TD101, a prompt
    would disarm it); a call still waiting for its result stays a doubt.
    """
    return [] if dialect.final_text_is_prefill else [NEXT_PROMPT]


def screen_turns(conversation: Conversation) -> list[Turn] | None:
    """The screen's turns of a built Gemini-family conversation, or None when it holds
    anything the screen does not answer for (``analysis/screen.py``).

    Building a conversation costs less than running every rule over it: readers whose
    model is cheap to build (or already built) let the screen prove it clean instead.
    The turns are the rules' own view (the built messages), so only what the screen
    cannot judge needs ruling out: a missing signature the API demands (TD401, TD402),
    a user message with an identity right after a user message (TD403), a prompt after a
    user message or anything after a prompt where the dialect fuses a prompt into a tool
    response (TD104), a result and a prompt in one message (TD104), broken links (TD404),
    notices and parts that are not text, media in a prompt, calls or results.  A run of
    user messages is one turn for pairing after merging (``Dialect.coalesce_roles``) and
    one turn each for the screen, which doubts a result after a prompt.  A run of result-only
    messages is one tool-response turn, as pairing reads it after merging
    (``Dialect.coalesce_roles``); a run of model messages stays one turn per message,
    which the screen judges each as strictly as the rules judge it (a call answered
    only after a later model message is a doubt: pairing may merge them, the screen
    does not).
    """
    if conversation.broken_links or conversation.repeats:
        return None
    dialect = conversation.dialect
    if not dialect.coalesce_roles:
        return None  # unmerged runs: a result in the second message of a run is displaced
    turns: list[Turn] = []
    fuses = dialect.fuses_tool_response
    previous: Role | None = None
    prompt = False  # the previous message was a prompt
    for message in conversation.messages:
        role = message.role
        parts = message.parts
        if role is Role.ASSISTANT:
            if message.harness_written:
                return None
            texts: list[str] = []
            ids: list[str] = []
            for part in parts:
                kind = part.kind
                if kind is PartKind.TEXT:
                    texts.append(part.text)
                elif kind is PartKind.TOOL_CALL:
                    if part.call_id is None or (part.needs_signature and not part.signature):
                        return None
                    ids.append(part.call_id)
                elif kind is not PartKind.THINKING or (part.needs_signature and not part.signature):
                    return None
            turns.append((ASSISTANT, "".join(texts) if texts else None, tuple(ids)))
        elif role is Role.USER and parts:
            asks = all(p.kind in _PROMPT_KINDS and not p.of_result for p in parts)
            if previous is Role.USER and (message.dup_key is not None or (fuses and (prompt or asks))):
                return None
            if asks:
                turns.append((OTHER, None, ()))
                prompt = True
            else:
                for part in parts:
                    if part.kind is not PartKind.TOOL_RESULT or part.of_result or part.call_id is None:
                        return None
                    turns.append((RESULT, None, (part.call_id,)))
                prompt = False
        else:
            return None  # a notice, system text, or a user message without parts
        previous = role
    return turns + closing(dialect)


# -- repairs (``fix``) -------------------------------------------------------------
# The repair side (actions, editing) is imported where it is used: every Gemini-family
# reader imports this module, and a lint never needs it.


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
    from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT
    from transcript_doctor.editing import EditError

    if not answerable(call):
        raise EditError("the call has no name or id a response could name")
    body: dict[str, Any] = {}
    if call.paired_by == "id":
        body["id"] = call.call_id
    body["name"] = call.name
    body["response"] = {"error": SYNTHETIC_RESULT_TEXT}
    return {"functionResponse": body}


class Removals:
    """What the repairs applied so far through one editor took from each message.

    The fixer applies every finding of a rule to one editor, one action at a time: two
    duplicates in one message, or a result moved into a message another move empties,
    are only handled right when each action sees what the earlier ones did.  (A plain
    class: a dataclass compiles its methods when the module is imported, at every lint.)
    """

    __slots__ = ("gone", "received", "removed")

    def __init__(self) -> None:
        self.gone: dict[Message, set[Part]] = {}
        self.received: set[Message] = set()
        self.removed: set[Message] = set()

    def take(self, message: Message, part: Part) -> bool:
        """Note ``part`` as leaving ``message``; True when nothing is left in it.

        A message that received a moved result is never left empty.
        """
        gone = self.gone.setdefault(message, set())
        gone.add(part)
        return message not in self.received and all(p in gone for p in message.parts)

    def receive(self, message: Message) -> None:
        if message in self.removed:
            from transcript_doctor.editing import EditError

            raise EditError("the message the result belongs in is removed by another repair")
        self.received.add(message)


_REMOVALS: WeakKeyDictionary[object, Removals] = WeakKeyDictionary()


def removals(edit: object) -> Removals:
    """The :class:`Removals` of one editor (one fix group)."""
    found = _REMOVALS.get(edit)
    if found is None:
        found = _REMOVALS[edit] = Removals()
    return found
