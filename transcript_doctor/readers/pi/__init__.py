"""Reader ``pi``: Pi coding agent session JSONL (``~/.pi/agent/sessions/--<cwd>--/*.jsonl``)."""

from transcript_doctor.readers.pi.reader import READER

__all__ = ["READER"]
