from transcript_doctor.readers.anthropic_messages.reader import READER

__all__ = ["READER"]
