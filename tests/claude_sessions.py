"""Small Claude Code sessions built line by line, for the reader's and the fix's tests."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def entry(kind: str, uuid: str, parent: str | None, second: int, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/w",
        "sessionId": "S",
        "version": "2.1.7",
        "gitBranch": "main",
        "type": kind,
        "uuid": uuid,
        "timestamp": (START + timedelta(seconds=second)).isoformat(timespec="milliseconds")[:-6] + "Z",
    }
    record.update(extra)
    return record


def user(uuid: str, parent: str | None, second: int, content: Any, **extra: Any) -> dict[str, Any]:
    return entry("user", uuid, parent, second, message={"role": "user", "content": content}, **extra)


def assistant(
    uuid: str, parent: str | None, second: int, msg_id: str, *blocks: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    model = extra.pop("model", "claude-x")
    message = {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": list(blocks)}
    return entry("assistant", uuid, parent, second, message=message, **extra)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(call_id: str, name: str = "Read") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {}}


def result(call_id: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": "ok", **extra}]


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
