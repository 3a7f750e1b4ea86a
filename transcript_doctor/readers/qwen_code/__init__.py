from transcript_doctor.readers.qwen_code.reader import READER

__all__ = ["READER"]
