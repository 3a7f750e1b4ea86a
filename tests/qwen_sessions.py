"""Small Qwen Code sessions built record by record, for the reader's and the fix's tests."""

from __future__ import annotations

import json
from typing import Any


def rec(uuid: str, parent: str | None, kind: str, parts: Any = None, **extra: Any) -> dict[str, Any]:
    """A record in the key order `createBaseRecord()` writes."""
    record: dict[str, Any] = {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s-1",
        "timestamp": "2026-11-29T21:45:41.441Z",
        "type": kind,
        "cwd": "/w/proj",
        "version": "0.24.4",
    }
    if parts is not None:
        record["message"] = {"role": "model" if kind == "assistant" else "user", "parts": parts}
    record.update(extra)
    return record


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
