"""Reader ``anthropic-messages``: Anthropic Messages API lists, incl. Cline / Roo Code api_conversation_history.json.

Spec: shared/spec/formats/anthropic-messages.md.  (Not implemented yet: claims no file.)
"""

from __future__ import annotations

from transcript_doctor.model import Conversation
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class AnthropicMessagesReader(Reader):
    name = "anthropic-messages"
    summary = "Anthropic Messages API lists, incl. Cline / Roo Code api_conversation_history.json"

    def detect(self, source: Source) -> Detection | None:
        return None

    def read(self, source: Source) -> list[Conversation]:
        return []


READER = AnthropicMessagesReader()
