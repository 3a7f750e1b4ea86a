"""Reader ``opencode``: OpenCode and Kilo sessions (SQLite store and ``opencode export``)."""

from transcript_doctor.readers.opencode.reader import READER

__all__ = ["READER"]
