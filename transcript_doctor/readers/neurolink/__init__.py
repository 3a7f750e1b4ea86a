from transcript_doctor.readers.neurolink.reader import READER

__all__ = ["READER"]
