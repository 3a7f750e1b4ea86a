from transcript_doctor.readers.openai_chat.reader import READER

__all__ = ["READER"]
