"""Proof that a conversation of plain turns is clean, without building its model.

Fine-tuning files hold thousands of short conversations, one per line, and most stored
histories are clean.  Building messages, parts and origins costs many times parsing
them, to learn that no rule applies.  A reader hands a conversation's turns to
:class:`Screen` first and builds the model only when it cannot prove them clean, so lint
stays near the speed of parsing.

The proof covers every rule, whatever the selection: each rule says how the screen
answers for it (``Rule.screen``), and a test fails when a rule is added without
revisiting this module.  Readers give turns only
for conversations whose messages hold text (an assistant's texts joined as the rules
join them), tool calls and tool results, and nothing the rules below do not cover: no
unsigned thinking block, no identity for TD403, no parent link, and for Gemini
histories strict user/model alternation and a signature on each turn's first call
(TD104, TD401).  On such turns only these rules can fire, and the screen asks what
each asks:

- TD101: the final assistant text ends with a partial-turn marker, or error/interrupted
  notices follow the last turn;
- TD102: the final assistant text ends with whitespace;
- TD103: an assistant turn without a call whose text is missing, empty or whitespace;
- TD201/TD202/TD203: an assistant text that is or holds a catalog marker;
- TD301 to TD306: anything but calls with unique ids, each answered exactly once by the
  results that directly follow its turn (parallel results in any order).

A reply that merely mentions a marker is checked the way the rules check it, so one
mention does not send a whole conversation to the full check.

When it doubts, the screen also says where the conversation may be built from (``cut``):
the last prompt before the doubt that follows an assistant turn with every call
answered.  Nothing before such a prompt can be flagged, and no rule reads across it
(pairing sees every call of the part before it answered there, TD403/TD104 compare a
prompt with the message before it, which is no user message, TD101 walks back from the
end and stops at a prompt), except through a call id: a reader that builds from the cut
must build the whole conversation when a call or result after it carries an id called
before it (``before``).  Sessions are wedged at their end, so a long history with one
damaged turn costs about what its tail does.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from transcript_doctor.analysis.turns import ABANDONING_NOTICES
from transcript_doctor.catalog import Catalog
from transcript_doctor.model import Conversation

OTHER, ASSISTANT, RESULT, NOTICE = 0, 1, 2, 3
# (OTHER: a system or user message, None, and (its index in the message list,) where the
#  reader can build from a cut, else (); ASSISTANT: a model turn, its text or None, its
#  call ids; RESULT: one tool result, None, (its call id,); NOTICE: a display-only notice,
#  its kind).  Ids are strings, or any other hashable a reader makes up for id-less calls
#  (never equal to a string id).  A reader that meets something else yields None.
Turn = tuple[int, str | None, tuple[Hashable, ...]]


class Screen:
    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self.cut = 0  # after a doubt: the message a conversation may be built from
        self.before: frozenset[Hashable] = frozenset()  # the call ids of the turns before it

    def doubted_replies(self, texts: list[str], finals: set[int]) -> list[int]:
        """``clean`` of many conversations whose replayed turns are prompts and assistant
        texts without calls (no result, no notice), asked of their replies alone, all in
        one list: the indexes of those it doubts (a conversation is clean exactly when
        none of its replies is); ``finals`` holds the indexes of the replies that are
        their conversation's last turn.  Without turns or a call per conversation:
        fine-tuning files hold thousands of such conversations.

        Such turns leave only TD101/TD102/TD103/TD201-TD203 to ask (nothing is called);
        a doubted conversation is built whole (``cut`` is not set).  The replies are the
        conversations' own, with no prompt appended: asked as ``clean(turns,
        exact_end=True)`` asks them."""
        flags = self._catalog.flags_model_text
        doubted: list[int] = []
        for index, text in enumerate(texts):
            stripped = text.strip()
            if (
                not stripped  # TD103
                or flags(text, stripped, False, index in finals)  # TD101/TD201-TD203
                or (text[-1].isspace() and index in finals)  # TD102, or a partial turn
            ):
                doubted.append(index)
        return doubted

    def clean(self, turns: Iterable[Turn | None] | None, exact_end: bool = False) -> bool:
        """True when no rule can find anything in these turns (False at the first doubt:
        a reader streaming its turns stops reading there; None: not plain at all).

        ``exact_end``: the turns end where the history does (no prompt appended for the
        screen, as ``gemini_content.closing`` appends one), so TD101's partial suffix is
        asked of the final reply alone, as TD101 asks it; otherwise of every reply (a
        reply followed by an appended prompt may still be the history's last).

        After a doubt, ``cut`` is the message a conversation may be built from (0: all of
        it) and ``before`` the call ids of the turns before it."""
        self.cut, self.before = 0, frozenset()
        if turns is None:
            return False
        # What TD101/TD201/TD202/TD203 would flag in an assistant text, asked as they ask
        # it (a turn that calls a tool is model output whatever its text says: no whole or
        # partial marker is asked of it; ``every``: TD101's partial suffix of every reply).
        flagged = self._catalog.flags_model_text
        every = not exact_end  # a partial suffix asked of every reply
        called: set[Hashable] = set()  # every call id so far
        order: list[Hashable] = []  # the same, in order
        cut: tuple[Hashable, ...] = ()  # the ids of the last prompt a build may start from
        before = 0  # how many calls came before it
        waiting: set[Hashable] = set()  # calls of the last assistant turn not answered yet
        last, last_text = OTHER, None  # the last replayed turn
        armed = False  # an error/interrupted notice after it (TD101)
        doubt = True
        for turn in turns:
            if turn is None:
                break
            kind, text, ids = turn
            if kind == NOTICE:
                armed = armed or text in ABANDONING_NOTICES
                continue
            if kind == OTHER and last == ASSISTANT and not waiting:
                cut, before = ids, len(order)
            last, last_text, armed = kind, text, False
            if kind == RESULT:
                if ids[0] not in waiting:
                    break  # orphan, duplicate or displaced result
                waiting.discard(ids[0])
                continue
            if waiting:
                break  # unanswered call, or its results come later
            if kind != ASSISTANT:
                continue
            if ids:
                if len(set(ids)) != len(ids) or not called.isdisjoint(ids):
                    break  # a repeated call id
                called.update(ids)
                order.extend(ids)
                waiting.update(ids)
            if text is None:
                if not ids:
                    break  # no content at all
                continue
            stripped = text.strip()
            if (stripped and flagged(text, stripped, bool(ids), every)) or not (stripped or ids):
                break
        else:
            # pending calls (an info finding), or a final turn that may be a partial
            doubt = bool(waiting or armed) or (
                last == ASSISTANT
                and last_text is not None
                and (
                    last_text[-1].isspace()
                    or (exact_end and self._catalog.partial_suffix(last_text) is not None)
                )
            )
        if doubt and cut:
            index = cut[0]
            assert isinstance(index, int)
            self.cut, self.before = index, frozenset(order[:before])
        return not doubt


def from_cut(screen: Screen, build: Callable[[int], Conversation]) -> Conversation:
    """The conversation a screen doubted, built from its cut (``build`` takes the first
    message), or whole when the part after the cut names a call id of the part before."""
    conversation = build(screen.cut)
    if screen.cut and crosses(conversation, screen.before):
        conversation = build(0)
    return conversation


def crosses(conversation: Conversation, before: frozenset[Hashable]) -> bool:
    """Whether a conversation built from a cut names a call id of the turns before it."""
    return bool(before) and any(
        p.call_id in before for m in conversation.messages for p in m.parts if p.call_id is not None
    )
