"""Reader ``openworker``: openworker conversation JSONL (OpenAI-shaped messages, notices, sidecars).

Spec: shared/spec/formats/openworker.md.  (Not implemented yet: claims no file.)
"""

from __future__ import annotations

from transcript_doctor.model import Conversation
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class OpenworkerReader(Reader):
    name = "openworker"
    summary = "openworker conversation JSONL (OpenAI-shaped messages, notices, sidecars)"

    def detect(self, source: Source) -> Detection | None:
        return None

    def read(self, source: Source) -> list[Conversation]:
        return []


READER = OpenworkerReader()
