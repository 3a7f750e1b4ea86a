"""Reader ``gemini-cli``: Gemini CLI chat recordings (JSONL stream and legacy session .json).

Spec: shared/spec/formats/gemini-cli.md.  (Not implemented yet: claims no file.)
"""

from __future__ import annotations

from transcript_doctor.model import Conversation
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class GeminiCliReader(Reader):
    name = "gemini-cli"
    summary = "Gemini CLI chat recordings (JSONL stream and legacy session .json)"

    def detect(self, source: Source) -> Detection | None:
        return None

    def read(self, source: Source) -> list[Conversation]:
        return []


READER = GeminiCliReader()
