from transcript_doctor.readers.claude_code.reader import READER

__all__ = ["READER"]
