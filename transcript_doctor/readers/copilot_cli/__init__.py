"""Reader ``copilot-cli``: GitHub Copilot CLI ``session-state/<id>/events.jsonl``."""

from transcript_doctor.readers.copilot_cli.reader import READER

__all__ = ["READER"]
