"""Reader ``gemini-checkpoint``: Gemini Content[] histories, Gemini CLI /chat save and /restore checkpoints.

Spec: shared/spec/formats/gemini-checkpoint.md.  ``/chat resume`` (and ``/restore``, from
``clientHistory``) sets the client history to the stored array as it is, so the file
order is the replayed order: one ``model`` Content is one turn.  The stored parts are API
parts, so a missing ``thoughtSignature`` on the first ``functionCall`` of a turn Gemini
validates is a real absence (TD401).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn, from_cut
from transcript_doctor.jsonspan import join
from transcript_doctor.model import Conversation, Dialect, Message, Origin, PartKind, Role
from transcript_doctor.readers import gemini_content
from transcript_doctor.readers.base import DEFINITIVE, SHAPE, SPECIFIC, Detection, Reader
from transcript_doctor.source import NODE, Container, Source

ROLES = {"user": Role.USER, "model": Role.ASSISTANT}


def _role(item: Any) -> Role | None:
    role = item.get("role") if isinstance(item, dict) else None
    return ROLES.get(role) if isinstance(role, str) else None


def _contents(items: list[Any]) -> bool:
    """Whether every item is a Content (asked of every item of every JSON document: one
    loop, no call per item)."""
    for item in items:
        if item.__class__ is not dict or item.get("parts").__class__ is not list:
            return False
        role = item.get("role")
        if role != "user" and role != "model":  # any value compares: no hashing
            return False
    return True


def _restore(value: Any) -> bool:
    """A ``/restore`` tool checkpoint: ``{clientHistory, toolCall, commitHash, messageId}``.

    Written before a file-modifying tool runs (spec §1); ``clientHistory`` is the
    ``Content[]`` that ``/restore`` loads back, ``toolCall`` the call about to run.
    """
    return (
        isinstance(value, dict)
        and isinstance(value.get("clientHistory"), list)
        and isinstance(value.get("toolCall"), dict)
    )


def history(value: Any) -> tuple[list[Any], str] | None:
    """The Content list and its pointer: ``clientHistory`` of a ``/restore`` checkpoint,
    ``history`` of a ``/chat save`` checkpoint, or the bare array."""
    if _restore(value):
        return value["clientHistory"], "/clientHistory"
    if isinstance(value, dict) and isinstance(value.get("history"), list):
        return value["history"], "/history"
    if isinstance(value, list):
        return value, ""
    return None


class GeminiCheckpointReader(Reader):
    name = "gemini-checkpoint"
    # First record: a checkpoint's history, or the first Content of a bare array.
    first_keys = frozenset({"clientHistory", "history", "role"})
    summary = "Gemini Content[] histories and Gemini CLI /chat save and /restore checkpoints"
    # Gemini CLI reads checkpoints with JSON.parse (how it reads the bytes: not verified).
    loader = NODE
    # The CLI coalesces adjacent same-role Contents before sending; a tool-response turn
    # followed by a prompt is fused into one user turn on replay (TD104).
    dialect = Dialect(coalesce_roles=True, fuses_tool_response=True, final_text_is_prefill=False)

    def detect(self, source: Source) -> Detection | None:
        if source.container is not Container.JSON:
            return None
        value = source.value
        found = history(value)
        if found is None:
            return None
        items, pointer = found
        if not _contents(items):
            return None
        if pointer == "/clientHistory":
            if not items:
                return None
            return self.claim("Gemini CLI /restore tool checkpoint", DEFINITIVE)
        if pointer:
            # `{history, authType}` is what `/chat save` writes; `history` alone is less sure.
            score = DEFINITIVE if isinstance(value.get("authType"), str) else SPECIFIC
            if not items and score == SPECIFIC:
                return None
            return self.claim("Gemini /chat save checkpoint", score)
        if not items:
            return None
        return self.claim("Gemini Content[] history", SHAPE)

    def read(self, source: Source) -> list[Conversation]:
        return self.read_screened(source, None)

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        if source.container is not Container.JSON:
            return []  # forced on JSONL: checkpoints are single documents
        found = history(source.value)
        if found is None:
            return []
        items, base = found
        if screen is None:
            return [self._conversation(items, base, 0)]
        if screen.clean(_plain_turns(items)):
            return []
        return [from_cut(screen, lambda start: self._conversation(items, base, start))]

    def _conversation(self, items: list[Any], base: str, start: int) -> Conversation:
        messages: list[Message] = []
        for index, item in enumerate(items[start:], start):
            if _role(item) is not None:
                messages.append(_message(item, index, base))
        _pair_id_less(messages)
        gemini_content.sign_active_loop(messages)
        return Conversation(messages, self.dialect, ref=base)


TEXT_KEYS = frozenset({"text", "thoughtSignature"})
CALL_KEYS = frozenset({"functionCall", "thoughtSignature"})


def _plain_turns(items: list[Any]) -> Iterator[Turn | None]:
    """The turns of a history of text and function-call Contents in strict user/model
    alternation, read the way ``read`` reads them, up to a Content that holds anything
    else (None).  Lazily: the screen stops reading at its first doubt.

    Alternation means no coalescing and no prompt fused into a tool response (TD104); a
    model turn's first call must carry its signature (TD401).  Id-less calls pair with
    the next Content's responses by name, so they get ids made of their turn and name.
    """
    previous = None
    for index, item in enumerate(items):
        # A Content of two keys, its role not the previous one's, with parts (inlined: one
        # pass over histories of tens of thousands of Contents).
        if item.__class__ is not dict or len(item) != 2:
            break
        role, parts = item.get("role"), item.get("parts")
        if role == previous or parts.__class__ is not list or not parts:
            break
        if role == "model":
            turn = _model_turn(parts, index)
            if turn is None:
                break
            yield turn
        elif role == "user":
            found = _user_turns(parts, index)
            if found is None:
                break
            yield from found
        else:
            break
        previous = role
    else:
        yield from gemini_content.closing(GeminiCheckpointReader.dialect)  # no TD102 here
        return
    yield None


def _model_turn(parts: list[Any], index: int) -> Turn | None:
    texts: list[str] = []
    ids: list[Hashable] = []
    for part in parts:
        if part.__class__ is not dict:
            return None
        call = part.get("functionCall")
        if call.__class__ is dict and CALL_KEYS.issuperset(part):
            signature = part.get("thoughtSignature")
            if not (ids or (signature.__class__ is str and signature)):
                return None  # TD401
            call_id = _call_id(call, index)
            if call_id is None:
                return None
            ids.append(call_id)
            continue
        text = part.get("text")
        if text.__class__ is str and TEXT_KEYS.issuperset(part):
            texts.append(text)
        else:
            return None
    return ASSISTANT, "".join(texts) if texts else None, tuple(ids)


def _user_turns(parts: list[Any], index: int) -> list[Turn] | None:
    """One prompt (text parts only) or the results of the model Content before it."""
    for part in parts:
        if part.__class__ is not dict or len(part) != 1 or part.get("text").__class__ is not str:
            break
    else:
        return [(OTHER, None, (index,))]
    calling = index - 1
    turns: list[Turn] = []
    for part in parts:
        response = part.get("functionResponse") if part.__class__ is dict else None
        if response.__class__ is not dict or len(part) != 1:
            return None
        call_id = _call_id(response, calling)
        if call_id is None:
            return None
        turns.append((RESULT, None, (call_id,)))
    return turns


def _call_id(body: dict[str, Any], turn: int) -> Hashable | None:
    """A call's or response's id; for id-less ones, their calling turn and name."""
    call_id, name = body.get("id"), body.get("name")
    if "id" in body:
        return call_id if isinstance(call_id, str) else None
    return (turn, name) if isinstance(name, str) else None


def _message(item: dict[str, Any], index: int, base: str) -> Message:
    """One Content; ``Message.ref`` is its index in the list, ``Part.ref`` its part index."""
    pointer = f"{base}/{index}"

    def at(part: int) -> Origin:
        return Origin(0, index, pointer + join("parts", part))

    parts = gemini_content.parts(item.get("parts"), at)
    for part in parts:
        part.ref = int((part.origin.pointer or "").rsplit("/", 1)[1])
    role = ROLES[item["role"]]
    if role is Role.ASSISTANT:
        first = next((p for p in parts if p.kind is PartKind.TOOL_CALL), None)
        if first is not None:
            first.needs_signature = True
    return Message(role, parts, Origin(0, index, pointer), ref=index)


def _pair_id_less(messages: list[Message]) -> None:
    """Pair id-less calls with the responses of the next user run, by position and name.

    Adjacent same-role Contents are one turn once the CLI coalesces them, so a run of
    model Contents is answered by the run of user Contents that follows it.
    """
    called = {p.call_id for m in messages for p in m.tool_calls if p.call_id is not None}
    runs: list[tuple[Role, list[Message]]] = []
    for message in messages:
        if runs and runs[-1][0] is message.role:
            runs[-1][1].append(message)
        else:
            runs.append((message.role, [message]))
    for number, (role, run) in enumerate(runs):
        if role is not Role.ASSISTANT:
            continue
        calls = [p for m in run for p in m.tool_calls]
        if not any(c.call_id is None for c in calls):
            continue
        following = runs[number + 1][1] if number + 1 < len(runs) else []
        results = [p for m in following for p in m.tool_results]
        tag = f"position@{run[0].origin.pointer}"
        gemini_content.pair_by_position(calls, results, tag, called)
    # Results that no call could claim are still id-less; say how they were judged.
    for message in messages:
        for part in message.tool_results:
            if part.call_id is None:
                part.paired_by = "adjacency"


READER = GeminiCheckpointReader()
