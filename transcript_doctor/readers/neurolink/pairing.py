"""Adjacency pairing for NeuroLink ``tool_call`` / ``tool_result`` rows that carry no ids.

Before juspay/neurolink PR #1280 the rows had no ``toolCallId``: the Redis manager's
``flushPendingToolData`` writes every call of a turn, then every result, and the native
Gemini/Vertex replays pair them by position.  This pairs the same way but checks the tool
name, so a reordered or foreign result is not silently given to the wrong call:

1. a result answers the first open call with its name in the batch right before its run;
2. else the earliest open call with its name from an earlier batch (the rule sees a
   result away from its call: displaced);
3. else, when a call with its name was already answered in the same stretch of tool rows,
   it is a second answer to that call (PR #1280: ``repairToolPairs`` gave a parallel
   batch a synthetic result, "2 calls -> 3 results");
4. else it answers nothing.

Every structure pops lazily, so a batch of any size pairs in linear time.
"""

from __future__ import annotations

from collections import deque

from transcript_doctor.plain import Mutable, Plain


class Call(Plain):
    __slots__ = ("call_id", "name", "open")
    call_id: str
    name: str | None
    open: bool

    def __init__(self, call_id: str, name: str | None, open: bool = True) -> None:
        self.call_id = call_id
        self.name = name
        self.open = open


def _first_open(queue: deque[Call] | None) -> Call | None:
    while queue:
        if queue[0].open:
            return queue[0]
        queue.popleft()
    return None


class _Batch(Mutable):
    """The calls of one batch, by name and in order."""

    __slots__ = ("by_name", "order")
    order: deque[Call]
    by_name: dict[str | None, deque[Call]]

    def __init__(self) -> None:
        self.order = deque()
        self.by_name = {}

    def add(self, call: Call) -> None:
        self.order.append(call)
        self.by_name.setdefault(call.name, deque()).append(call)

    def take(self, name: str | None) -> Call | None:
        if name is None:
            return _first_open(self.order)
        # A call stored without a name can only be told apart by position.
        return _first_open(self.by_name.get(name)) or _first_open(self.by_name.get(None))


class AdjacencyPairing(Mutable):
    """Walks the message list once; the reader reports every row in order."""

    __slots__ = ("_answered", "_batch", "_follows_batch", "_open")
    _batch: _Batch | None  # the batch being read, or the one right before the run
    _follows_batch: bool  # the current result run sits right after ``_batch``
    _open: dict[str | None, deque[Call]]
    _answered: dict[str | None, str]  # in this stretch of tool rows

    def __init__(self) -> None:
        self._batch = None
        self._follows_batch = False
        self._open = {}
        self._answered = {}

    def call(self, index: int, name: str | None) -> Call:
        if self._batch is None or self._follows_batch:
            self._batch = _Batch()
            self._follows_batch = False
        call = Call(f"adjacency@{index}", name)
        self._batch.add(call)
        self._open.setdefault(name, deque()).append(call)
        return call

    def result(self, index: int, name: str | None) -> tuple[str, str | None]:
        """The call id this result answers (shared with its call) and the call's name."""
        call = None
        if self._batch is not None:
            self._follows_batch = True
            call = self._batch.take(name)
        if call is None and name is not None:
            call = _first_open(self._open.get(name))
        if call is not None:
            call.open = False
            self._answered[name if name is not None else call.name] = call.call_id
            return call.call_id, call.name if call.name is not None else name
        repeated = self._answered.get(name)
        if repeated is not None:
            return repeated, name
        return f"adjacency-orphan@{index}", name

    def boundary(self) -> None:
        """A user, assistant or system message ends the stretch of tool rows."""
        self._batch = None
        self._follows_batch = False
        self._answered.clear()
