"""Reader ``neurolink``: NeuroLink conversation exports (Redis conversation object, ChatMessage[]).

Spec: shared/spec/formats/neurolink.md.  (Not implemented yet: claims no file.)
"""

from __future__ import annotations

from transcript_doctor.model import Conversation
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class NeurolinkReader(Reader):
    name = "neurolink"
    summary = "NeuroLink conversation exports (Redis conversation object, ChatMessage[])"

    def detect(self, source: Source) -> Detection | None:
        return None

    def read(self, source: Source) -> list[Conversation]:
        return []


READER = NeurolinkReader()
