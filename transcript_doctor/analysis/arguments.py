"""Whether a call's stored arguments text parses (TD405, and the readers' screens).

The question is the one Kimi CLI itself asks before running a tool
(``kimi_cli/soul/toolset.py``: ``json.loads(arguments or "{}", strict=False)``): empty text
means no arguments, raw control characters inside strings are read.  Text that fails it
failed the tool call too (``Error parsing JSON arguments: …``), and it is what the servers
that parse the replayed history reject (kimi-cli#2165, #1171).  A value that parses but is
no object is left alone: no report shows a server rejecting it.
"""

from __future__ import annotations

import json

import orjson


def malformed(text: str | None) -> bool:
    """True when ``text`` is non-empty and does not parse as JSON the way Kimi parses it."""
    if not text or not isinstance(text, str):
        return False
    try:
        orjson.loads(text)  # the common case, fast; stricter than json.loads(strict=False)
    except orjson.JSONDecodeError:
        pass
    else:
        return False
    try:
        json.loads(text, strict=False)
    except json.JSONDecodeError:
        return True
    except (ValueError, RecursionError):
        return False  # not a parse error Kimi reports (it would not catch it either)
    return False
