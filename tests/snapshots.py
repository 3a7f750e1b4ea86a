"""syrupy extensions for byte-exact artefacts (repaired files, diffs, reports)."""

from __future__ import annotations

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class Bytes(SingleFileSnapshotExtension):
    """A repaired file, byte for byte."""

    file_extension = "bin"


class Text(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"
