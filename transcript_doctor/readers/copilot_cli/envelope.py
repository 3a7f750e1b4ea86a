"""The Copilot CLI event envelope, and which prompts the CLI reads late: what the reader
and its fast path (``fast``) both ask of a line."""

from __future__ import annotations

from typing import Any

# The envelope (SDK `SessionEvent`): `ephemeral` events are "not persisted", so the key is
# accepted but never seen on disk (1.0.102 wrote none).
ENVELOPE_KEYS = frozenset({"type", "data", "agentId", "id", "timestamp", "parentId", "ephemeral"})
REQUIRED_KEYS = frozenset({"type", "data", "id", "timestamp", "parentId"})
# Queued and steering prompts arrive while the agent is busy (SDK `UserMessageDelivery`);
# where the CLI puts them in the replayed history when they were recorded between a call
# and its result is unconfirmed: they are read after the open calls' results, never as
# a prompt that displaces them.
LATE_DELIVERY = frozenset({"steering", "queued"})


def is_event(record: Any) -> bool:
    """The envelope: the required keys with their types, no key it does not have (asked
    of every line, twice on a short log: lookups first, the key set only when longer)."""
    if not isinstance(record, dict):
        return False
    try:
        parent = record["parentId"]
        if not (
            isinstance(record["type"], str)
            and isinstance(record["data"], dict)
            and isinstance(record["id"], str)
            and isinstance(record["timestamp"], str)
            and (parent is None or isinstance(parent, str))
        ):
            return False
    except KeyError:
        return False  # a required key is missing
    return len(record) == len(REQUIRED_KEYS) or record.keys() <= ENVELOPE_KEYS
