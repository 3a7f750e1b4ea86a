"""Proof that a Claude Code session has no finding, without building its model.

Most stored sessions are healthy, and a session is mostly bytes no rule reads (tool inputs
and outputs, thinking text).  msgspec decodes each line into the few fields the reader
reads (``_Record``), in C, skipping the rest without building it; from those the active
chain is derived exactly as the reader derives it (``chain.load``, ``newest_leaf``,
``walk``), its lines grouped into API messages as ``reader._Grouper`` groups them, and the
turns handed to the clean-file screen.  Only a session the screen proves clean is left
unbuilt; anything else is read in full, so the findings are the full read's.

What the proof does not handle falls back to the full read (``clean`` returns False):

- a line msgspec does not decode into ``_Record`` (a torn or glued line, a value that is
  not an object, a field of another type, NUL bytes, a lone surrogate escape: msgspec
  refuses what orjson refuses there), a BOM, a blank line that is not empty, and invalid
  UTF-8 anywhere (msgspec does not check the bytes of fields it skips, orjson does: the
  whole text is decoded, a piece at a time, TD001 stays exactly as it was);
- a uuid written twice (byte copies, TD403; rewritten lines), a parent link to a uuid
  that no line has (TD404), history snips and compact boundaries (the loader re-links
  the chain);
- any block the screen does not know: unsigned thinking (TD402), tool calls or results
  without a string id, media or server tool blocks in a reply, unknown blocks.

Numbers beyond a double (``1e400``) are skipped by msgspec and refused by orjson; Claude
Code's loader (JSON.parse) reads them, so the full read reports nothing for them either.

A session the proof covers but the screen doubts (``prove`` returns a ``Doubt``) need not
be read again in full: ``reader`` builds the model from what the proof derived (the chain,
the records) and only the lines from the screen's cut on are parsed into parts (a prompt
turn names its chain position for the cut; see ``analysis/screen.py``).  A response with
an API-error line is always doubted (harness-written text has its own placeholders): its
lines carry ``harness`` into the model, as the full read's do.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Iterator
from itertools import pairwise
from operator import attrgetter
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn
from transcript_doctor.readers.claude_code.chain import (
    CHAIN_KINDS,
    TURN_KINDS,
    Entry,
    latest,
    newest_leaf,
    resolve,
    timestamp_key,
    walk,
)
from transcript_doctor.readers.typed_lines import decode_once, decoded, segments, take
from transcript_doctor.source import HEAD_RECORDS, Source

# A key Claude Code never writes and a look-alike layout's lines hold: any value of it fails
# the decoding (no int is both at least 1 and at most 0), so a file holding one has no
# typed records: detection parses its head (``candidates``), the full read reads it.
_Foreign = Annotated[int, msgspec.Meta(ge=1, le=0)]


class _Block(msgspec.Struct, gc=False):
    type: str = ""
    id: str | None = None  # tool_use
    tool_use_id: str | None = None  # tool_result
    text: str | None = None  # text
    signature: str | None = None  # thinking


class _Message(msgspec.Struct, gc=False):
    id: str | None = None
    content: str | list[_Block] | None = None
    # Read only by detection (``candidates``): Qwen Code's look-alike envelope.
    role: Any = UNSET
    parts: _Foreign | UnsetType = UNSET


class _Record(msgspec.Struct, gc=False):
    type: str | None = None
    uuid: str | None = None
    parentUuid: str | None = None
    isSidechain: bool | None = None
    isApiErrorMessage: bool | None = None
    timestamp: str | None = None
    subtype: str | None = None
    snipMetadata: Any = None
    message: _Message | None = None
    # Read only to build from a doubt (``FileRef``): any type, as the full read takes them.
    leafUuid: Any = None  # summary lines
    logicalParentUuid: Any = None
    # For detection (``candidates``): no line holds them.
    systemPayload: _Foreign | UnsetType = UNSET  # Qwen Code
    projectHash: _Foreign | UnsetType = UNSET  # the keys the registry shows Gemini CLI (PROBED)
    set_: _Foreign | UnsetType = msgspec.field(default=UNSET, name="$set")
    rewindTo: _Foreign | UnsetType = msgspec.field(default=UNSET, name="$rewindTo")


_DECODER = msgspec.json.Decoder(_Record)


class _Metadata(msgspec.Struct, gc=False):
    """A line of a file of metadata lines alone (summaries, snapshots), decoded once for
    both detection (``metadata_lines``) and the proof (``prove_source``).  It holds
    ``_Record``'s fields with their types (a line that decodes here decodes there), and
    refuses a uuid and a snip (the proof has then no chain line to derive) and every key
    of ``UNSEEN`` (no other JSONL reader is shown the file) and of Qwen Code's envelope."""

    type: str  # every line typed (a missing or null type: not decoded)
    parentUuid: str | None = None
    isSidechain: bool | None = None
    isApiErrorMessage: bool | None = None
    timestamp: str | None = None
    subtype: str | None = None
    message: _Message | None = None
    leafUuid: Any = None
    logicalParentUuid: Any = None
    uuid: _Foreign | UnsetType = UNSET
    snipMetadata: _Foreign | UnsetType = UNSET
    systemPayload: _Foreign | UnsetType = UNSET
    projectHash: _Foreign | UnsetType = UNSET
    set_: _Foreign | UnsetType = msgspec.field(default=UNSET, name="$set")
    rewindTo: _Foreign | UnsetType = msgspec.field(default=UNSET, name="$rewindTo")
    # The keys of the other JSONL readers' registry entries that ``PROBED`` does not hold.
    id: _Foreign | UnsetType = UNSET
    ts: _Foreign | UnsetType = UNSET
    payload: _Foreign | UnsetType = UNSET
    parentId: _Foreign | UnsetType = UNSET
    role: _Foreign | UnsetType = UNSET
    messages: _Foreign | UnsetType = UNSET
    protocol_version: _Foreign | UnsetType = UNSET


_METADATA = msgspec.json.Decoder(_Metadata)
# What ``_turns`` holds in place of a message the screen cannot judge: an API-error line's
# (harness-written text) or one written again byte for byte (TD403).
_DOUBTED = _Message()
_COPIES = 8  # the most lines written again that the proof compares (each costs a scan)
# Keys no decoded line holds (``_Foreign``).
PROBED = frozenset({"projectHash", "$set", "$rewindTo"})
UNSEEN = PROBED | frozenset(
    {"uuid", "id", "ts", "payload", "parentId", "role", "messages", "protocol_version"}
)  # ``metadata_lines``: none holds them
_ENTRY_KINDS = frozenset({"user", "assistant"})
_UUID = attrgetter("uuid")
_DECIDED_LINES = 4 * HEAD_RECORDS  # the longest session ``candidates`` decides


def candidates(source: Source) -> Iterator[bytes] | None:
    """The head lines that may make ``ClaudeCodeReader.detect`` claim the file whatever
    else its head holds (user or assistant lines with a uuid, in order; the reader
    parses them with orjson, the head's parser, and asks ``_entry_like`` of them), or
    None when the typed records cannot settle detection.

    Every line is decoded (``decode_once``: the proof takes the records), so none holds
    a key of ``PROBED`` or ``systemPayload`` or ``message.parts`` (``_Foreign``), and
    none may hold the other signals of Qwen Code's envelope (``reader._foreign``):
    the head is a subset of the lines, whichever lines orjson refuses (msgspec skips a
    number beyond a double, orjson refuses it: such a line is not in the head, so only
    the candidate the reader parses speaks for the head)."""
    records = decode_once(source, _DECODER)
    if records is None or len(records) > _DECIDED_LINES:
        return None  # a long session: its head costs less to parse than every line to check
    for record in records:
        if record.type == "tool_result":
            return None
        message = record.message
        if message is not None and message.role == "model":
            return None
    kinds = _ENTRY_KINDS
    wanted = (i for i, r in enumerate(records[:HEAD_RECORDS]) if r.type in kinds and r.uuid is not None)
    return segments(source.data, wanted)


def metadata_lines(source: Source, kinds: Collection[str]) -> Iterator[bytes] | None:
    """The head lines of these ``kinds`` (the reader's metadata line types, in order) that
    may make ``ClaudeCodeReader.detect`` claim a file of metadata lines alone, or None when
    the typed records cannot settle it: every line must decode as ``_Metadata`` (a string
    type, no uuid: no entry in the head, every head record typed; no key of ``UNSEEN``: no
    other reader is shown the file, and the claim is not ``DEFINITIVE``, so every one must
    be ruled out), and none be a user or assistant line or show Qwen Code's envelope
    (``reader._foreign``).  The records stay on the source for the proof (``prove_source``)."""
    records = decode_once(source, _METADATA)
    if records is None:
        return None
    for record in records:
        kind = record.type
        message = record.message
        if kind in _NOT_METADATA or (message is not None and message.role == "model"):
            return None
    return segments(source.data, (i for i, r in enumerate(records[:HEAD_RECORDS]) if r.type in kinds))


_NOT_METADATA = frozenset({"user", "assistant", "tool_result"})  # entries, Qwen Code's results


_USER_PROMPT_BLOCKS = frozenset({"text", "image", "document"})  # reader: TEXT and MEDIA parts


class Doubt:
    """A session the proof covers and the screen doubted: what it derived, for the reader
    to build from (``screen.cut`` is a position in the chain).  ``records`` are the file's
    lines in order (the source's lines: the proof refuses blank ones), ``at`` the record
    indexes of the chain-kind lines (each uuid's once, before the loader bridged any),
    ``copies`` the record indexes of the lines that write a chain line again byte for
    byte, by uuid.

    A linear session's chain (``chain_at``: its record indexes) has its entries made only
    from the position the reader builds from (``chain_from``): the screen doubts a long
    session near its end, and an ``Entry`` for every line before the cut cost as much as
    the proof.  A derived tree hands its entries (``chain``) and ``leaf`` as made."""

    __slots__ = ("_built", "_chain", "_chain_at", "_index", "_leaf", "at", "copies", "records")

    def __init__(
        self,
        records: list[_Record],
        at: list[int],
        copies: dict[str, list[int]],
        chain_at: list[int] | None = None,
        chain: list[Entry] | None = None,
        leaf: Entry | None = None,
    ) -> None:
        self.records, self.at, self.copies = records, at, copies
        self._chain_at, self._chain, self._leaf = chain_at, chain, leaf
        self._built: dict[int, Entry] = {}
        self._index: dict[str, int] | None = None

    def chain_from(self, start: int) -> list[Entry]:
        """The chain's entries from position ``start`` on (the same objects when asked again)."""
        if self._chain is not None:
            return self._chain[start:]
        assert self._chain_at is not None
        built, records = self._built, self.records
        wanted = [i for i in self._chain_at[start:] if i not in built]
        if wanted:
            for entry in _entries(records, wanted).values():
                built[entry.index] = entry
        return [built[i] for i in self._chain_at[start:]]

    @property
    def chain(self) -> list[Entry]:
        return self.chain_from(0)

    @property
    def leaf(self) -> Entry | None:
        if self._chain is not None:
            return self._leaf
        assert self._chain_at is not None
        return self.chain_from(len(self._chain_at) - 1)[-1] if self._chain_at else None

    @property
    def written(self) -> dict[str, int]:
        """The record index of every chain-kind line (each uuid's first), by uuid."""
        if self._index is None:
            records = self.records
            self._index = {records[i].uuid: i for i in self.at}  # type: ignore[misc]
        return self._index

    def path(self) -> set[int]:
        """The record indexes on the written ``parentUuid`` links from the leaf up, each
        uuid's first line once (``reader._Scan._path`` on the entries)."""
        leaf, written, records = self.leaf, self.written, self.records
        path: set[int] = set()
        current = written.get(leaf.uuid) if leaf is not None else None
        while current is not None and current not in path:
            path.add(current)
            parent = records[current].parentUuid
            current = written.get(parent) if parent is not None else None
        return path


def clean(data: bytes, screen: Screen) -> bool:
    """True when no rule can find anything in this Claude Code session."""
    return prove(data, screen) is True


def prove(data: bytes, screen: Screen) -> bool | Doubt:
    """True when no rule can find anything in this session; a ``Doubt`` when the proof
    covers the session but the screen doubts it; False when only the full read can tell."""
    return prove_records(decoded(data, _DECODER), screen, data=data)


def prove_source(source: Source, screen: Screen) -> bool | Doubt:
    """``prove`` of a source's bytes, with the records detection decoded (``candidates``).

    A file detection decoded as metadata lines alone (``metadata_lines``) is not decoded
    again: each of its lines decodes as a ``_Record`` too, and holds no uuid and no snip,
    so ``prove_records`` finds no chain line there and proves the empty chain, whatever
    the lines say (tests/test_claude_fast.py compares the two on every file)."""
    if source.typed.pop(_METADATA, None) is not None:
        return screen.clean(())
    return prove_records(take(source, _DECODER), screen, data=source.data)


def prove_records(
    records: list[_Record] | None, screen: Screen, shortcut: bool = True, data: bytes | None = None
) -> bool | Doubt:
    """``prove`` of the file's decoded lines (None: they do not decode; ``shortcut``
    False: every chain derived as a tree, for the tests to compare; ``data``: the file's
    bytes, to tell a chain line written again byte for byte, TD403, from a rewrite).

    A session whose chain lines each name the one before as parent, once progress lines
    are bridged as the loader bridges them (most sessions: no rewind, no parallel calls),
    is its own chain up to its last turn: ``newest_leaf`` finds one leaf there and
    ``walk`` recovers nothing, so neither (nor an ``Entry`` per line) is needed to prove
    it clean.  Links are followed only backwards there (to lines already read), so the
    bridging is exact and no link is broken.

    A response's parallel tool calls whose results each hang off the call's own line
    (2.1.x) branch that chain; such a session is still its own chain in file order when
    ``_parallel`` says so (the tree would recover every line the walk leaves, in place).

    A user's rewind (a chain line naming an earlier line than the one before it) makes
    the chain lines runs, each from a rewind to the next: when every rewind names a line
    read before it, ``_rewound`` derives the chain from the runs (a session with both
    rewinds and parallel results is the tree's)."""
    if records is None:
        return False
    known: set[str] = set()
    at: list[int] = []  # the record indexes of the chain lines, in file order
    bridged = False  # a progress line: the loader re-links its children (``chain.load``)
    linear = True  # each chain line's (bridged) parent is the chain line before it
    first = True
    previous: str | None = None  # the last chain line that is no progress line
    through: dict[str | None, str | None] = {}  # progress uuid -> what its children are bridged to
    copies: dict[str, list[int]] = {}  # uuid -> the lines that write its chain line again
    blocks: dict[int, tuple[list[int], list[int]]] = {}  # parallel results (``_answers``)
    rewinds: list[int] = []  # positions in ``at`` of lines linking back past the line before
    add, keep = known.add, at.append
    for index, record in enumerate(records):
        if record.snipMetadata is not None:
            return False
        uuid = record.uuid
        if uuid is None:
            continue
        kind = record.type
        if kind == "summary":
            continue
        if uuid in known:
            # Written again: a byte copy of a chain line is no entry (the reader's ``_Scan``
            # keeps it as a copy); a rewrite, or a copy of another line, is the full read's.
            if not _copy(records, at, index, uuid, data, copies):
                return False
            continue
        if kind not in CHAIN_KINDS:
            add(uuid)
            continue
        if kind == "system" and record.subtype == "compact_boundary":
            return False
        keep(index)
        if linear:
            parent = record.parentUuid
            if kind == "progress":
                bridged = True
                if parent is None:
                    through[uuid] = None
                elif parent in known:
                    through[uuid] = through.get(parent, parent)
                else:
                    linear = False  # a link forwards (or to nowhere): the tree decides
            elif first:
                first = False
                linear = parent is None or parent in known
                previous = uuid
            else:
                # (no progress uuid is None: a parent of None is looked up as itself)
                link = through.get(parent, parent)
                if link != previous:
                    if not rewinds and kind == "user" and _answers(records, at, through, blocks):
                        pass  # a parallel call's result, hanging off its call's line
                    elif link is None or (link and link in known):
                        rewinds.append(len(at) - 1)  # a link back past the line before
                    else:
                        linear = False  # a link forwards (or to nowhere): the tree decides
                previous = uuid
        elif kind == "progress":
            bridged = True
        add(uuid)
    if linear and shortcut and not (blocks and rewinds):
        line: list[int] | None
        if rewinds:
            line = _rewound(records, at, rewinds, through)
        else:
            last = len(at)
            while last and records[at[last - 1]].type not in TURN_KINDS:
                last -= 1  # system and progress lines after the last turn: the leaf is above them
            line = at[:last]
            if bridged:
                line = [i for i in line if records[i].type != "progress"]  # bridged: not on the chain
            if blocks and not _parallel(records, at, line, blocks):
                line = None
        if line is not None:
            if screen.clean(_turns(line, records, copies)):
                return True
            return Doubt(records, at, copies, chain_at=line)
    return _prove_tree(records, at, known, bridged, screen, copies)


def _rewound(
    records: list[_Record], at: list[int], rewinds: list[int], through: dict[str | None, str | None]
) -> list[int] | None:
    """The chain (record indexes) of a session whose chain lines each name the line before
    as parent but at ``rewinds`` (positions in ``at``), whose lines name an earlier line or
    none (progress lines bridged), as ``newest_leaf`` and ``walk`` derive it; None when
    the tree decides.

    A user rewinds (Esc-Esc, a prompt edited): the new prompt names an earlier line than
    the one before it, and the lines in between end a branch.  The chain lines form runs,
    each from a rewind (or the file's start) to the next, each line naming the one before
    it in the run; each rewind names a line read before it, or none.  So a run's last line
    is a leaf unless a rewind names it, every other line has a child, and the walk back
    from a leaf takes its run up to it, then the run of the line its run's first line
    names, up to that line, and so on.  The leaf is chosen among them as ``newest_leaf``
    chooses (``chain.latest`` itself), and the tree decides when ``walk`` would recover
    a line off that chain (``_recovered``) or a rewind names a line of no chain kind."""
    positions = dict(zip(map(_UUID, map(records.__getitem__, at)), range(len(at)), strict=True))
    starts = [0, *rewinds]  # each run's first position
    targets: list[int | None] = [None]  # the position each run's first line names (None: a root)
    for start in rewinds:
        parent = records[at[start]].parentUuid
        link = through.get(parent, parent)
        if link is None:
            targets.append(None)
            continue
        target = positions.get(link)
        if target is None:
            return None  # a line of no chain kind: the tree decides
        targets.append(target)
    named = set(targets)
    ends: list[int] = []  # the runs' last lines that no rewind names: the leaves
    stop = len(at)
    for start in reversed(starts):
        end = stop - 1
        while records[at[end]].type == "progress":
            end -= 1  # bridged: no leaf (each run's first line is no progress line)
        if end not in named:
            ends.append(end)
        stop = start
    ends.reverse()
    above = (_turn_above(records, at, starts, targets, end) for end in ends)
    turns = [p for p in dict.fromkeys(above) if p is not None]
    main = [p for p in turns if records[at[p]].isSidechain is not True]
    leaf = latest(list(_entries(records, [at[p] for p in main or turns]).values()))
    if leaf is None:
        return []
    reached: dict[int, int] = {}  # run -> its last position on the chain
    position: int | None = positions[leaf.uuid]
    while position is not None:
        run = bisect_right(starts, position) - 1
        reached[run] = position
        position = targets[run]
    chain: list[int] = []
    for run in sorted(reached):
        chain += at[starts[run] : reached[run] + 1]
    if through:
        chain = [i for i in chain if records[i].type != "progress"]  # bridged: not on the chain
    if len(chain) < len(positions) - len(through) and _recovered(
        records, at, starts, targets, reached, chain
    ):
        return None
    return chain


def _up(
    records: list[_Record], at: list[int], starts: list[int], targets: list[int | None], position: int
) -> int | None:
    """The position of the line ``_rewound``'s line at ``position`` names (bridged), if any."""
    run = bisect_right(starts, position) - 1
    if position == starts[run]:
        return targets[run]
    position -= 1
    while position >= starts[run]:  # the line before in the run (no progress line)
        if records[at[position]].type != "progress":
            return position
        position -= 1
    return None  # the file's first chain line, after progress lines


def _turn_above(
    records: list[_Record], at: list[int], starts: list[int], targets: list[int | None], position: int
) -> int | None:
    """``chain._turn_above`` of ``_rewound``'s leaf at ``position``: the leaf itself
    unless a system line, whose turn above is the one it hangs off (through others)."""
    current: int | None = position
    while current is not None and records[at[current]].type not in TURN_KINDS:
        current = _up(records, at, starts, targets, current)
    return current


def _recovered(
    records: list[_Record],
    at: list[int],
    starts: list[int],
    targets: list[int | None],
    reached: dict[int, int],
    chain: list[int],
) -> bool:
    """Whether ``walk`` would splice a line off ``_rewound``'s chain into it
    (``chain._recover_parallel``): an assistant line of a ``message.id`` on the chain,
    or a line of tool results hanging off an assistant line of one."""
    wanted: set[str | None] = set()  # the message.ids that would bring a line off the chain
    stop = len(at)
    for run in range(len(starts) - 1, -1, -1):
        for position in range(reached.get(run, starts[run] - 1) + 1, stop):  # off the chain
            record = records[at[position]]
            if record.type == "assistant":
                wanted.add(_msg_id(record))
            elif record.type == "user" and _has_result(record):
                hung = _up(records, at, starts, targets, position)
                if hung is not None and records[at[hung]].type == "assistant":
                    wanted.add(_msg_id(records[at[hung]]))
        stop = starts[run]
    wanted.discard(None)
    if wanted:
        for record in map(records.__getitem__, chain):
            if record.type == "assistant" and _msg_id(record) in wanted:
                return True
    return False


def _msg_id(record: _Record) -> str | None:
    """``Entry.msg_id`` of an assistant line (``_entries``)."""
    message = record.message
    return (message.id or None) if message is not None else None


def _answers(
    records: list[_Record],
    at: list[int],
    through: dict[str | None, str | None],
    blocks: dict[int, tuple[list[int], list[int]]],
) -> bool:
    """Whether the user line just kept (``at[-1]``), whose parent is not the chain line
    before it, is one of the results of a response's parallel calls: a line with a
    ``tool_result`` block hanging off a line of the response (the run of assistant lines of
    one ``message.id`` the chain ran through last), after which only such results came
    (progress lines aside).  Noted in ``blocks`` (by the response's first position in
    ``at``: its lines' and its results' record indexes) for ``_parallel``."""
    end = len(at) - 1
    position = end
    while position:  # back over the results (and progress lines) to the response
        record = records[at[position - 1]]
        if record.type != "progress" and record.type != "user":
            break
        position -= 1
    after = position  # the results follow the response's last line, at[after - 1]
    first = 0  # the response's first line's position in ``at``
    response: list[int] = []
    msg_id = None
    while position:
        record = records[at[position - 1]]
        kind = record.type
        if kind == "progress":
            position -= 1
            continue
        if kind != "assistant" or record.message is None or not record.message.id:
            break
        if msg_id is None:
            msg_id = record.message.id
        elif record.message.id != msg_id:
            break
        response.append(at[position - 1])
        position -= 1
        first = position
    if not response:
        return False
    response.reverse()
    lines = {records[i].uuid for i in response}
    results = [i for i in at[after:] if records[i].type != "progress"]
    for index in results:
        record = records[index]
        parent = record.parentUuid
        if through.get(parent, parent) not in lines or not _has_result(record):
            return False
    blocks[first] = (response, results)
    return True


def _has_result(record: _Record) -> bool:
    """``Entry.has_result`` of a user line (``_entries``)."""
    content = record.message.content if record.message is not None else None
    return content.__class__ is list and any(block.type == "tool_result" for block in content)


def _parallel(
    records: list[_Record], at: list[int], line: list[int], blocks: dict[int, tuple[list[int], list[int]]]
) -> bool:
    """Whether a session whose only branching is parallel results (``blocks``) has the
    chain ``line`` (its chain lines in file order up to its last turn), as ``newest_leaf``
    and ``walk`` derive it.

    In each block, the walk from the leaf passes the last result, the response's line it
    hangs off and the response's lines before it; the results before it and the
    response's lines after that line are off the walk, and ``walk`` recovers them right
    after that line (its response's last line on the walk): the response's lines sorted
    by timestamp, then the results (grouped by the line they hang off) sorted by
    timestamp.  That is file order when those lines' timestamps do not decrease and the
    results' strictly increase, when no assistant line after the response holds its
    ``message.id`` (what is recovered would go there) and no other block's response does
    (its results would be recovered here).  Lines of that id before the response (streamed
    tool execution writes the first calls' results before a response's later calls) are on
    the walk: only the id's last line on the walk places what is recovered.  Each line
    off the walk ends a branch: the leaf is the chain's last turn only when it is
    strictly newer than each of them that competes (``newest_leaf``: a sidechain leaf
    only competes when the leaf is a sidechain's, and then no leaf may be a main one)."""
    leaf = records[line[-1]]
    ids: dict[str, list[int]] = {}
    away: list[_Record] = []
    for response, results in blocks.values():
        last = records[results[-1]]
        parent = last.parentUuid
        hanging = next((k for k, i in enumerate(response) if records[i].uuid == parent), None)
        if hanging is None:
            return False  # the last result hangs off a progress line: the tree decides
        lost = [records[i] for i in response[hanging + 1 :]]
        answered = [records[i] for i in results[:-1]]
        times = [r.timestamp or "" for r in lost]  # sorted as ``Entry.timestamp`` sorts
        if times != sorted(times) or any(
            (a.timestamp or "") >= (b.timestamp or "") for a, b in pairwise(answered)
        ):
            return False
        message = records[response[0]].message
        assert message is not None and message.id
        if message.id in ids:
            return False
        ids[message.id] = response
        away += lost
        away += answered
    for index in at:
        record = records[index]
        message = record.message
        lines = ids.get(message.id or "") if record.type == "assistant" and message is not None else None
        if lines is not None and index > lines[-1]:
            return False  # the response's message.id after it: what is recovered goes there
    side = leaf.isSidechain is True
    moment = None
    for record in away:
        if record.isSidechain is True and not side:
            continue  # not a main leaf: the main leaf is chosen among the main ones
        if record.isSidechain is not True and side:
            return False  # a main leaf: the sidechain leaf is not chosen
        if moment is None:
            moment = timestamp_key(leaf.timestamp or "")
            if moment is None:
                return False
        other = timestamp_key(record.timestamp or "")
        if other is not None and other >= moment:
            return False
    return True


def _copy(
    records: list[_Record],
    at: list[int],
    index: int,
    uuid: str,
    data: bytes | None,
    copies: dict[str, list[int]],
) -> bool:
    """Whether the line ``index`` writes the chain line of ``uuid`` again byte for byte
    (then noted in ``copies``)."""
    if data is None or sum(map(len, copies.values())) >= _COPIES:
        return False
    first = next((i for i in at if records[i].uuid == uuid), None)
    if first is None:
        return False  # the uuid's first line is no chain line: the full read decides
    original, again = segments(data, (first, index))
    if original.removesuffix(b"\r") != again.removesuffix(b"\r"):  # the lines' own bytes
        return False
    copies.setdefault(uuid, []).append(index)
    return True


def _prove_tree(
    records: list[_Record],
    at: list[int],
    known: set[str],
    bridged: bool,
    screen: Screen,
    copies: dict[str, list[int]],
) -> bool | Doubt:
    """``prove_records`` of any session: its chain derived as ``chain`` derives it."""
    derived = _tree(records, at, known, bridged)
    if derived is None:
        return False  # TD404
    chain, leaf = derived
    if screen.clean(_turns([entry.index for entry in chain], records, copies)):
        return True
    # Doubted (a block the screen does not know included): the structure is the proof's,
    # the parts from the cut on are the full read's (``reader._doubted``).
    return Doubt(records, at, copies, chain=chain, leaf=leaf)


def _tree(
    records: list[_Record], at: list[int], known: set[str], bridged: bool
) -> tuple[list[Entry], Entry | None] | None:
    """The chain and its leaf, as ``chain.load``, ``newest_leaf`` and ``walk`` derive them
    from an entry per chain line (``at``); None when a link names a uuid no line has.

    A progress line gets no entry: ``chain.load`` would only bridge its children past it
    and drop it (``chain.resolve``, from the links the records hold), and a sub-agent's
    session is half progress lines."""
    if not bridged:
        entries = _entries(records, at)
        gone: dict[str, str | None] = {}
    else:
        gone = {}
        kept = []
        for index in at:
            record = records[index]
            if record.type == "progress":
                gone[record.uuid] = record.parentUuid  # type: ignore[index]
            else:
                kept.append(index)
        entries = _entries(records, kept)
    parents = [entry.parent for entry in entries.values() if entry.parent is not None]
    if not known.issuperset(parents) or not known.issuperset([p for p in gone.values() if p is not None]):
        return None
    if gone:
        resolve(entries, gone)
    leaf = newest_leaf(entries)
    return (walk(entries, leaf) if leaf is not None else []), leaf


def _entries(records: list[_Record], at: list[int]) -> dict[str, Entry]:
    """The chain lines' entries, by uuid, as ``reader._Scan`` makes them (no parts yet)."""
    entries: dict[str, Entry] = {}
    new = Entry
    for index in at:
        record = records[index]
        kind = record.type
        assert kind is not None and record.uuid is not None
        message = record.message
        msg_id = None
        has_result = False
        harness = False
        if kind == "assistant":
            if message is not None:
                msg_id = message.id or None
                harness = record.isApiErrorMessage is True
        elif kind == "user":
            content = message.content if message is not None else None
            if content.__class__ is list:
                for block in content:  # not any(): a generator per line costs more than the test
                    if block.type == "tool_result":
                        has_result = True
                        break
        parent = record.parentUuid
        # Every field given: the defaults' factories cost a list each.  ``resolved`` is the
        # written parent, as ``chain.load`` leaves it when nothing is bridged.
        entries[record.uuid] = new(
            index,
            index + 1,
            kind,
            record.uuid,
            parent,
            record.isSidechain is True,
            record.timestamp or "",
            msg_id,
            _NO_PARTS,
            harness,
            has_result,
            None,
            _NO_COPIES,
            parent,
        )
    return entries


# Shared by every entry of the proof, never filled: the proof builds no parts, keeps no copies.
_NO_PARTS: list[Any] = []
_NO_COPIES: list[tuple[int, int]] = []


class _Run:
    """A user run being grouped: its results and whether it holds a prompt (``plain``
    False: a block the screen does not know).  An assistant response is a plain list of
    its lines' messages."""

    __slots__ = ("first", "plain", "prompt", "results")

    def __init__(self, first: int) -> None:
        self.first = first  # the chain position of its first line
        self.results: list[str | None] = []
        self.prompt = False
        self.plain = True

    def take_user(self, message: _Message | None) -> None:
        content = message.content if message is not None else None
        if isinstance(content, str):
            self.prompt = True
            return
        for block in content or ():
            if block.type == "tool_result":
                self.results.append(block.tool_use_id)
            elif block.type in _USER_PROMPT_BLOCKS:
                self.prompt = True
            else:
                self.plain = False


def _turns(chain: list[int], records: list[_Record], copied: dict[str, list[int]]) -> list[Turn | None]:
    """The screen's turns of the chain (its lines' record indexes), grouped as
    ``reader._messages`` groups it; a line ``copied`` (written again) makes its turn
    unknown."""
    runs: list[Any] = []  # a _Run, or a response: a list of its lines' messages
    responses: dict[str, int] = {}  # message.id -> position of its latest run
    stops: list[int] = []  # positions of user runs without tool results
    last: Any = None  # runs[-1]
    for position, index in enumerate(chain):
        record = records[index]
        kind = record.type
        if kind == "assistant":
            message = record.message
            if message is None:
                msg_id, doubted = None, False
            else:
                msg_id, doubted = message.id or None, record.isApiErrorMessage is True
            if copied and record.uuid in copied:
                doubted = True
            at = responses.get(msg_id) if msg_id is not None else None
            if at is not None and not (stops and stops[-1] > at):
                response = runs[at]
            else:
                response = []
                last = response
                if msg_id is not None:
                    responses[msg_id] = len(runs)
                runs.append(response)
            response.append(_DOUBTED if doubted else message)
        elif kind == "user":
            if last is not None and last.__class__ is _Run:
                stopped = not last.results
                last.take_user(record.message)
                if stopped and last.results:
                    stops.pop()
            else:
                run = _Run(position)
                run.take_user(record.message)
                if not run.results:
                    stops.append(len(runs))
                runs.append(run)
                last = run
            if copied and record.uuid in copied:
                last.plain = False
    turns: list[Turn | None] = []
    append = turns.append
    for each in runs:
        if each.__class__ is list:
            turn = _assistant(each)
            append(turn)
            if turn is None:
                break
            continue
        results = each.results
        if not each.plain or None in results or not (results or each.prompt):
            append(None)  # an unknown block, a result without id, or no parts at all
            break
        for result in results:
            append((RESULT, None, (result,)))
        if each.prompt:
            # A prompt run without results may be a cut: the model is built from its line.
            append((OTHER, None, () if results else (each.first,)))
    return turns


def _assistant(contents: list[_Message | None]) -> Turn | None:
    """One response's turn: its texts joined as ``Message.visible_text`` joins them."""
    texts: list[str] = []
    ids: list[str] = []
    for message in contents:
        if message is _DOUBTED:
            return None  # an API-error line, or a line written again: the model is built
        content = message.content if message is not None else None
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content or ():
            kind = block.type
            if kind == "text":
                texts.append(block.text if block.text is not None else "")
            elif kind == "tool_use" and block.id is not None:
                ids.append(block.id)
            elif not (kind == "redacted_thinking" or (kind == "thinking" and block.signature)):
                return None  # unsigned thinking (TD402), a call without id, any other block
    return ASSISTANT, "".join(texts) if texts else None, tuple(ids)
