"""Reader ``codex``: Codex CLI rollout JSONL ({timestamp, type, payload} lines).

Spec: shared/spec/formats/codex.md.  (Not implemented yet: claims no file.)
"""

from __future__ import annotations

from transcript_doctor.model import Conversation
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class CodexReader(Reader):
    name = "codex"
    summary = "Codex CLI rollout JSONL ({timestamp, type, payload} lines)"

    def detect(self, source: Source) -> Detection | None:
        return None

    def read(self, source: Source) -> list[Conversation]:
        return []


READER = CodexReader()
