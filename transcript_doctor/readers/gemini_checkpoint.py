"""Reader ``gemini-checkpoint``: Gemini Content[] histories and Gemini CLI /chat save checkpoints.

Spec: shared/spec/formats/gemini-checkpoint.md.  (Not implemented yet: claims no file.)
"""

from __future__ import annotations

from transcript_doctor.model import Conversation
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class GeminiCheckpointReader(Reader):
    name = "gemini-checkpoint"
    summary = "Gemini Content[] histories and Gemini CLI /chat save checkpoints"

    def detect(self, source: Source) -> Detection | None:
        return None

    def read(self, source: Source) -> list[Conversation]:
        return []


READER = GeminiCheckpointReader()
