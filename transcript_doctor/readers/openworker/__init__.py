from transcript_doctor.readers.openworker.reader import READER

__all__ = ["READER"]
