from transcript_doctor.readers.gemini_cli.reader import READER

__all__ = ["READER"]
