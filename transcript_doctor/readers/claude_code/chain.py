"""The replayed path through a Claude Code session tree, derived the way Claude Code derives it.

Claude Code never replays its file top to bottom: it indexes every entry by ``uuid``, picks the
newest leaf, walks ``parentUuid`` back to the root and then splices back the parallel tool calls
that the single-parent walk loses (``buildConversationChain`` and
``recoverOrphanedParallelToolResults`` in ``sessionStorage.ts``).  Doing the same is what keeps
rewinds and retries from looking like damage and healthy parallel calls from looking unanswered.
Everything here is iterative: chains can be 100k entries deep.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Final

from transcript_doctor.model import Part
from transcript_doctor.plain import Plain, Value

TURN_KINDS = frozenset({"user", "assistant"})
# Entries that are chain members.  ``progress`` lines are bridged: Claude Code re-parents their
# children to their own parent on load (``progressBridge``, pre-#24099 transcripts).
CHAIN_KINDS = frozenset({"user", "assistant", "system", "attachment", "progress"})
BRIDGED_KINDS = frozenset({"progress"})

_EPOCH_DAY = date(1970, 1, 1).toordinal()
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)?\Z")


class Entry(Plain):
    """What one chain line contributes; the parsed dict itself is not kept.  (A plain
    class, as ``Segment``: a dataclass compiles its methods when the module is imported,
    and every lint of a Claude Code session imports this one.)"""

    __slots__ = (
        "copies",
        "harness",
        "has_result",
        "index",
        "kind",
        "msg_id",
        "number",
        "parent",
        "parts",
        "previous",
        "resolved",
        "sidechain",
        "timestamp",
        "uuid",
    )
    index: int
    number: int
    kind: str
    uuid: str
    parent: str | None
    sidechain: bool
    timestamp: str
    msg_id: str | None
    parts: list[Part]
    harness: bool
    has_result: bool  # a user line holding tool_result blocks
    # The nearest earlier chain line of the same session and sidechain (TD404 re-link target).
    previous: str | None
    copies: list[tuple[int, int]]  # byte-identical (number, index)
    resolved: str | None  # parent as Claude Code's loader sees it (bridged, re-linked)

    def __init__(
        self,
        index: int,
        number: int,
        kind: str,
        uuid: str,
        parent: str | None,
        sidechain: bool,
        timestamp: str,
        msg_id: str | None = None,
        parts: list[Part] | None = None,
        harness: bool = False,
        has_result: bool = False,
        previous: str | None = None,
        copies: list[tuple[int, int]] | None = None,
        resolved: str | None = None,
    ) -> None:
        self.index, self.number, self.kind, self.uuid = index, number, kind, uuid
        self.parent, self.sidechain, self.timestamp, self.msg_id = parent, sidechain, timestamp, msg_id
        self.parts = [] if parts is None else parts
        self.harness, self.has_result, self.previous = harness, has_result, previous
        self.copies = [] if copies is None else copies
        self.resolved = resolved


class Segment(Value):
    """``compactMetadata.preservedSegment`` of a compact boundary (partial compaction)."""

    __slots__ = ("anchor", "boundary", "head", "tail")
    boundary: Final[int]  # record index of the boundary line
    head: Final[str]
    anchor: Final[str]
    tail: Final[str]

    def __init__(self, boundary: int, head: str, anchor: str, tail: str) -> None:
        self.boundary, self.head, self.anchor, self.tail = boundary, head, anchor, tail


def timestamp_key(value: str) -> float | None:
    """Seconds since the epoch like ``Date.parse``; None where it would give NaN.

    A session with parallel calls has a leaf per call, and each leaf's time is asked.
    Claude Code's own stamps (``toISOString``: UTC, milliseconds) are read by datetime, in
    C, when the text is exactly that moment's own (datetime writes it back the same: no
    other separator, no field out of its range); any other text as ``_parsed`` reads it."""
    if len(value) == 24 and value[23] == "Z":
        text = value[:23]
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return _parsed(value)
        if moment.isoformat(timespec="milliseconds") == text:
            days = moment.toordinal() - _EPOCH_DAY
            seconds = ((days * 24 + moment.hour) * 60 + moment.minute) * 60 + moment.second
            return seconds + moment.microsecond / 1_000_000  # as ``_parsed`` adds the fraction
    return _parsed(value)


def _parsed(value: str) -> float | None:
    """``timestamp_key`` of any text: ``calendar.timegm`` inline (only the year and month
    are checked, as there)."""
    found = _ISO.match(value)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = found.groups()
    try:
        days = date(int(year), int(month), 1).toordinal() - _EPOCH_DAY + int(day) - 1
    except (ValueError, OverflowError):
        return None
    seconds: float = ((days * 24 + int(hour)) * 60 + int(minute)) * 60 + int(second)
    if fraction:
        seconds += int(fraction[:6].ljust(6, "0")) / 1_000_000
    if zone and zone != "Z":
        sign = -1 if zone[0] == "+" else 1
        digits = zone[1:].replace(":", "")
        seconds += sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return seconds


def load(entries: dict[str, Entry], snipped: set[str], segment: Segment | None, last_boundary: int) -> None:
    """Turn the file's entries into the map Claude Code's ``loadTranscriptFile`` resumes from.

    In the loader's order: progress lines bridged, the preserved segment of a partial
    compaction re-linked (``applyPreservedSegmentRelinks``), history-snip removals bridged
    (``applySnipRemovals``).  Bridged and deleted entries leave ``entries``.
    """
    _bridge(entries, {u for u, e in entries.items() if e.kind in BRIDGED_KINDS}, lambda e: e.parent)
    if segment is not None:
        _relink_preserved(entries, segment, last_boundary)
    if snipped:
        _bridge(entries, snipped & entries.keys(), lambda e: e.resolved)


def _bridge(entries: dict[str, Entry], gone: set[str], link: Callable[[Entry], str | None]) -> None:
    """Point every entry past the ``gone`` ones (whose own links lead on), then drop them."""
    targets = {uuid: link(entries[uuid]) for uuid in gone}
    memo: dict[str, str | None] = {}
    for entry in entries.values():
        start = link(entry)
        # Most links lead to a line that stays: no walk past the gone ones to make.
        entry.resolved = _skip(start, targets, memo) if start in targets else start
    for uuid in gone:
        del entries[uuid]


def resolve(entries: dict[str, Entry], gone: dict[str, str | None]) -> None:
    """Point every entry past the bridged lines ``gone`` (uuid -> the parent its own line
    names) that have no entry, as ``_bridge`` points them past entries it then drops: the
    typed proof makes no entry for a progress line."""
    memo: dict[str, str | None] = {}
    for entry in entries.values():
        start = entry.parent
        entry.resolved = _skip(start, gone, memo) if start in gone else start


def _skip(start: str | None, targets: dict[str, str | None], memo: dict[str, str | None]) -> str | None:
    path: list[str] = []
    on_path: set[str] = set()
    current = start
    while current is not None and current in targets:
        if current in memo:
            current = memo[current]
            break
        if current in on_path:  # a cycle of bridged lines leads nowhere
            current = None
            break
        path.append(current)
        on_path.add(current)
        current = targets[current]
    for uuid in path:
        memo[uuid] = current
    return current


def _relink_preserved(entries: dict[str, Entry], segment: Segment, last_boundary: int) -> None:
    """Splice a partial compaction's kept messages back between its summary and what follows.

    Only the segment of the newest boundary is live; either way everything written before
    the newest boundary, except the live segment, is dropped, as Claude Code does.
    """
    preserved: set[str] = set()
    if segment.boundary == last_boundary:
        current = entries.get(segment.tail)
        while current is not None and current.uuid not in preserved:
            preserved.add(current.uuid)
            if current.uuid == segment.head:
                break
            current = entries.get(current.resolved) if current.resolved else None
        else:
            return  # the walk from tail never reached head: Claude Code leaves the file alone
        entries[segment.head].resolved = segment.anchor
        for entry in entries.values():
            if entry.resolved == segment.anchor and entry.uuid != segment.head:
                entry.resolved = segment.tail
    for uuid in [u for u, e in entries.items() if e.index < last_boundary and u not in preserved]:
        del entries[uuid]


def newest_leaf(entries: dict[str, Entry]) -> Entry | None:
    """The leaf Claude Code resumes: the newest non-sidechain turn that ends a branch.

    A branch that ends in system lines ends, for resume, at the turn above them.  Files of
    sidechain lines only (sub-agent files) are conversations of their own: their newest leaf.
    """
    referenced = {e.resolved for e in entries.values() if e.resolved}
    memo: dict[str, Entry | None] = {}
    leaves: dict[str, Entry] = {}
    for entry in entries.values():
        if entry.uuid in referenced:
            continue
        leaf = _turn_above(entry, entries, memo)
        if leaf is not None:
            leaves.setdefault(leaf.uuid, leaf)
    main = [leaf for leaf in leaves.values() if not leaf.sidechain]
    return latest(main or list(leaves.values()))


def _turn_above(start: Entry, entries: dict[str, Entry], memo: dict[str, Entry | None]) -> Entry | None:
    path: list[str] = []
    seen: set[str] = set()
    current: Entry | None = start
    found: Entry | None = None
    while current is not None:
        if current.kind in TURN_KINDS:
            found = current
            break
        if current.uuid in memo:
            found = memo[current.uuid]
            break
        if current.uuid in seen:
            break
        seen.add(current.uuid)
        path.append(current.uuid)
        current = entries.get(current.resolved) if current.resolved else None
    for uuid in path:
        memo[uuid] = found
    return found


def latest(leaves: list[Entry]) -> Entry | None:
    """``findLatestMessage``: the first leaf with the greatest timestamp, in load order."""
    if len(leaves) == 1:
        return leaves[0]  # whatever its timestamp says (a session has one leaf most often)
    best: Entry | None = None
    best_time = float("-inf")
    for leaf in leaves:
        moment = timestamp_key(leaf.timestamp)
        if moment is not None and moment > best_time:
            best, best_time = leaf, moment
    if best is None and leaves:
        # Unconfirmed: Claude Code finds no chain when no leaf has a parseable timestamp;
        # the last leaf in the file is the closest reading of such a file.
        best = max(leaves, key=lambda leaf: leaf.index)
    return best


def walk(entries: dict[str, Entry], leaf: Entry) -> list[Entry]:
    """Root-to-leaf chain, recovered parallel tool calls spliced in after their response."""
    chain: list[Entry] = []
    seen: set[str] = set()
    current: Entry | None = leaf
    while current is not None and current.uuid not in seen:
        seen.add(current.uuid)
        chain.append(current)
        current = entries.get(current.resolved) if current.resolved else None
    chain.reverse()
    return _recover_parallel(chain, entries, seen)


def _recover_parallel(chain: list[Entry], entries: dict[str, Entry], seen: set[str]) -> list[Entry]:
    """Re-attach the sibling tool_use lines and tool_result lines a single-parent walk drops.

    2.1.x parents each ``tool_result`` line on the one-block assistant line holding its own
    ``tool_use`` (``sourceToolAssistantUUID``), so N parallel calls form N branches.  Off-chain
    assistant lines sharing a ``message.id`` with an on-chain one, and the result lines hanging
    off any line of that response, go right after the response's last on-chain line.

    Only off-chain lines can be recovered, so only they are grouped: a response's lost lines
    in the map's order, and its answers in the order of the lines they hang off (the map's),
    each line's in the map's order; each list then sorted by time (a stable sort).  A line
    belongs to one response (its ``message.id``, or the line it answers), so the responses
    are recovered independently.
    """
    if len(seen) == len(entries):
        return chain  # every line is on it (``seen`` holds the chain's uuids, all in ``entries``)
    anchors: dict[str, int] = {}  # message.id -> chain position of its last line there
    for position, entry in enumerate(chain):
        if entry.kind == "assistant" and entry.msg_id:
            anchors[entry.msg_id] = position
    if not anchors:
        return chain
    lost: dict[str, list[Entry]] = {}  # message.id -> its off-chain lines
    loose: dict[str, list[Entry]] = {}  # uuid -> the off-chain result lines hanging off it
    for entry in entries.values():
        if entry.uuid in seen:
            continue
        if entry.kind == "assistant":
            if entry.msg_id in anchors:
                lost.setdefault(entry.msg_id, []).append(entry)
        elif entry.kind == "user" and entry.has_result and entry.resolved:
            loose.setdefault(entry.resolved, []).append(entry)
    answers: dict[str, list[Entry]] = {}  # message.id -> its answers, not yet sorted
    if loose:
        for entry in entries.values():
            hanging = loose.get(entry.uuid)
            if hanging is not None and entry.kind == "assistant" and entry.msg_id in anchors:
                answers.setdefault(entry.msg_id, []).extend(hanging)
    if not lost and not answers:
        return chain
    inserts: list[tuple[int, list[Entry]]] = []
    for msg_id, position in anchors.items():
        found = lost.get(msg_id, [])
        answered = answers.get(msg_id, [])
        if not found and not answered:
            continue
        found.sort(key=lambda e: e.timestamp)
        answered.sort(key=lambda e: e.timestamp)
        inserts.append((position, found + answered))
    inserts.sort(key=lambda insert: insert[0])  # each position once: one anchor per line
    spliced: list[Entry] = []
    done = 0
    for position, recovered in inserts:
        spliced += chain[done : position + 1]
        spliced += recovered
        done = position + 1
    spliced += chain[done:]
    return spliced
