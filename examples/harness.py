"""An agent harness using transcript-doctor's Python API (checked by ``mypy --strict``).

Sanitize before save: repair the history the harness is about to persist, so a crash
mid-turn never stores an unanswered tool call.  Check before resume: refuse (or repair)
a history whose replay the provider would reject.
"""

from __future__ import annotations

from typing import Any

import transcript_doctor as td


def save(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the harness writes to disk: the repaired copy (``history`` is untouched)."""
    repaired, report = td.repair_messages(history, api="openai-chat")
    found: list[td.Finding] = td.check_messages(history, api="openai-chat")
    print(f"before save: {len(found)} finding(s), {len(report.applied)} repaired")
    for finding in found:
        print(finding.rule, finding.pointer, finding.message.split(",")[0])
    for unfixed in report.unfixed:
        print(f"left for review: {unfixed.finding.rule} {unfixed.finding.pointer}: {unfixed.why}")
    return repaired


def resume(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replay only a history with no error the provider would reject."""
    errors = [f for f in td.check_messages(history, api="openai-chat") if f.severity == "error"]
    if errors:
        raise RuntimeError(f"history cannot be replayed: {errors[0].rule} at {errors[0].pointer}")
    print("before resume: clean")
    return history


def main() -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "list the files"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "user", "content": "again?"},  # the call was interrupted, the user went on
    ]
    resume(save(history))


if __name__ == "__main__":
    main()
