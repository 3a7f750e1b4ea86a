"""Reader ``qwen-code``: Qwen Code session JSONL (uuid/parentUuid chain of Gemini Content records).

Spec: shared/spec/formats/qwen-code.md.  (Not implemented yet: claims no file.)
"""

from __future__ import annotations

from transcript_doctor.model import Conversation
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class QwenCodeReader(Reader):
    name = "qwen-code"
    summary = "Qwen Code session JSONL (uuid/parentUuid chain of Gemini Content records)"

    def detect(self, source: Source) -> Detection | None:
        return None

    def read(self, source: Source) -> list[Conversation]:
        return []


READER = QwenCodeReader()
