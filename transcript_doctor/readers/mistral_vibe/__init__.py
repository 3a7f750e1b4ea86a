"""Reader ``mistral-vibe``: Mistral Vibe session logs (docs/formats/mistral-vibe.md)."""

from transcript_doctor.readers.mistral_vibe.reader import READER

__all__ = ["READER"]
