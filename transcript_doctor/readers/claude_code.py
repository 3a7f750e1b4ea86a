"""Reader ``claude-code``: Claude Code session JSONL (uuid/parentUuid entries, one line per content block).

Spec: shared/spec/formats/claude-code.md.  (Not implemented yet: claims no file.)
"""

from __future__ import annotations

from transcript_doctor.model import Conversation
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class ClaudeCodeReader(Reader):
    name = "claude-code"
    summary = "Claude Code session JSONL (uuid/parentUuid entries, one line per content block)"

    def detect(self, source: Source) -> Detection | None:
        return None

    def read(self, source: Source) -> list[Conversation]:
        return []


READER = ClaudeCodeReader()
