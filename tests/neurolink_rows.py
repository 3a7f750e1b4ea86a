"""Small NeuroLink conversation objects built row by row, for the reader's and the screen's tests."""

from __future__ import annotations

import json

ENVELOPE = {
    "id": "6d1e0b7a-3f0e-4b8e-9a53-2c1f0d4e5a6b",
    "title": "t",
    "sessionId": "s",
    "userId": "u",
    "createdAt": "2026-07-01T10:00:00.000Z",
    "updatedAt": "2026-07-01T10:00:09.000Z",
}


def row(role: str, content: str = "", index: int = 0, **extra: object) -> dict[str, object]:
    """A ChatMessage row; ``index`` makes its id and timestamp."""
    return {
        "id": f"00000000-0000-4000-8000-{index:012d}",
        "timestamp": f"2026-07-01T10:00:{index:02d}.000Z",
        "role": role,
        "content": content,
        **extra,
    }


def conversation(rows: list[dict[str, object]], **envelope: object) -> str:
    """The Redis value as ``serializeConversation`` writes it (compact JSON)."""
    return json.dumps({**ENVELOPE, **envelope, "messages": rows}, separators=(",", ":"))
