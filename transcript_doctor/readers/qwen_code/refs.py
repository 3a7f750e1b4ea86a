"""Where each element of a Qwen Code session lives: the records and links a repair edits."""

from __future__ import annotations

from typing import Final

from transcript_doctor.plain import Value


class RecordRef(Value):
    """A replayed chain record: its uuid, parent link and every line stored under the uuid.

    The vendor merges lines sharing a uuid into one record, so removing the record means
    deleting all of ``lines`` and re-linking the records whose ``parentUuid`` is ``uuid``
    to ``parent``; inserting after it means a new record whose ``parentUuid`` is ``uuid``.
    """

    __slots__ = ("lines", "parent", "uuid")
    uuid: Final[str]
    parent: Final[str | None]
    lines: Final[tuple[int, ...]]  # 0-based record indices (``Line.index``), in file order

    def __init__(self, uuid: str, parent: str | None, lines: tuple[int, ...]) -> None:
        self.uuid = uuid
        self.parent = parent
        self.lines = lines


class LineCopyRef(Value):
    """A later byte-identical copy of a line of the same uuid: delete ``line`` only (TD403)."""

    __slots__ = ("line", "original", "uuid")
    uuid: Final[str]
    line: Final[int]
    original: Final[int]

    def __init__(self, uuid: str, line: int, original: int) -> None:
        self.uuid = uuid
        self.line = line
        self.original = original


class CompressedRef(Value):
    """A Content inside ``systemPayload.compressedHistory`` of a ``chat_compression`` record."""

    __slots__ = ("index", "line", "uuid")
    uuid: Final[str]
    line: Final[int]
    index: Final[int]

    def __init__(self, uuid: str, line: int, index: int) -> None:
        self.uuid = uuid
        self.line = line
        self.index = index


class LinkRef(Value):
    """A dangling ``parentUuid`` (TD404) and the record a re-link would point it at.

    ``previous`` is the uuid of the nearest preceding record line in the file with another
    uuid (the chain is linear through every record type), or None at the top of the file.
    """

    __slots__ = ("lines", "missing", "previous", "uuid")
    uuid: Final[str]
    lines: Final[tuple[int, ...]]  # every line of the uuid; the vendor reads the link of the first
    missing: Final[str]
    previous: Final[str | None]

    def __init__(self, uuid: str, lines: tuple[int, ...], missing: str, previous: str | None) -> None:
        self.uuid = uuid
        self.lines = lines
        self.missing = missing
        self.previous = previous


class ChainRef(Value):
    """The replayed chain, root to leaf: the order a fix inserts into and re-links along.

    ``records`` holds ``(line index, uuid, parentUuid)`` of every chain-member line in
    file order, on the chain or off it: removing a record must re-link all its children,
    dead branches included, and the reader has these links at hand already.
    """

    __slots__ = ("compression", "records", "uuids")
    _fields = (
        "uuids",
        "compression",
    )  # (repr, equality)
    uuids: Final[tuple[str, ...]]
    compression: Final[str | None]  # uuid of the chat_compression record the history starts from
    records: Final[tuple[tuple[int, str, str | None], ...]]

    def __init__(
        self,
        uuids: tuple[str, ...],
        compression: str | None,
        records: tuple[tuple[int, str, str | None], ...] = (),
    ) -> None:
        self.uuids = uuids
        self.compression = compression
        self.records = records
