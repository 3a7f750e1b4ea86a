from transcript_doctor.readers.gemini_checkpoint.reader import READER

__all__ = ["READER"]
