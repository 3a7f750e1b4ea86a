from transcript_doctor.readers.codex.reader import READER

__all__ = ["READER"]
