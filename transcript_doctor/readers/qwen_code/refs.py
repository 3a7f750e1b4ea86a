"""Where each element of a Qwen Code session lives: the records and links a repair edits."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RecordRef:
    """A replayed chain record: its uuid, parent link and every line stored under the uuid.

    The vendor merges lines sharing a uuid into one record, so removing the record means
    deleting all of ``lines`` and re-linking the records whose ``parentUuid`` is ``uuid``
    to ``parent``; inserting after it means a new record whose ``parentUuid`` is ``uuid``.
    """

    uuid: str
    parent: str | None
    lines: tuple[int, ...]  # 0-based record indices (``Line.index``), in file order


@dataclass(frozen=True, slots=True)
class LineCopyRef:
    """A later byte-identical copy of a line of the same uuid: delete ``line`` only (TD403)."""

    uuid: str
    line: int
    original: int


@dataclass(frozen=True, slots=True)
class CompressedRef:
    """A Content inside ``systemPayload.compressedHistory`` of a ``chat_compression`` record."""

    uuid: str
    line: int
    index: int


@dataclass(frozen=True, slots=True)
class LinkRef:
    """A dangling ``parentUuid`` (TD404) and the record a re-link would point it at.

    ``previous`` is the uuid of the nearest preceding record line in the file with another
    uuid (the chain is linear through every record type), or None at the top of the file.
    """

    uuid: str
    lines: tuple[int, ...]  # every line of the uuid; the vendor reads the link of the first
    missing: str
    previous: str | None


@dataclass(frozen=True, slots=True)
class ChainRef:
    """The replayed chain, root to leaf: the order a fix inserts into and re-links along.

    ``records`` holds ``(line index, uuid, parentUuid)`` of every chain-member line in
    file order, on the chain or off it: removing a record must re-link all its children,
    dead branches included, and the reader has these links at hand already.
    """

    uuids: tuple[str, ...]
    compression: str | None  # uuid of the chat_compression record the history starts from
    records: tuple[tuple[int, str, str | None], ...] = field(default=(), compare=False, repr=False)
