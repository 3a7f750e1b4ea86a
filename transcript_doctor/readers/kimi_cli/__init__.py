"""Reader ``kimi-cli``: Kimi CLI session histories (``~/.kimi/sessions/…/context.jsonl``)."""

from transcript_doctor.readers.kimi_cli.reader import READER

__all__ = ["READER"]
