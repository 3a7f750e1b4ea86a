"""fix on openai-chat files: exact bytes, only the named elements change."""

from __future__ import annotations

import pytest
from support import FIXTURES, fix

DIR = FIXTURES / "openai-chat"


REPAIRED = {
    "damaged-tool-pairing.json": ["TD303", "TD302", "TD304"],
    "damaged-turns.json": ["TD403", "TD201", "TD103", "TD102"],
    "damaged-fine-tuning.jsonl": ["TD301"],
    "legacy-function-call.json": ["TD301"],
}


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/openai-chat.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name]


def test_only_named_elements_change() -> None:
    outcome = fix(DIR / "damaged-tool-pairing.json")
    before = outcome.before.decode().splitlines()
    after = outcome.after.decode().splitlines()
    assert [line for line in before if line not in after] == [
        '  {"role": "tool", "tool_call_id": "call_zzz", "content": "stale"},',
    ]
    assert after.count('  {"role": "tool", "tool_call_id": "call_b", "content": "up"},') == 1
    assert (
        after.index('  {"role": "tool", "tool_call_id": "call_b", "content": "up"},')
        == after.index('  {"role": "tool", "tool_call_id": "call_a", "content": "up"},') + 1
    )


def test_synthetic_result_says_where_it_came_from() -> None:
    outcome = fix(DIR / "damaged-fine-tuning.jsonl")
    (applied,) = outcome.applied
    (edit,) = applied.edits
    assert edit.new == (
        b'{"role": "tool", "tool_call_id": "call_cat", "content": "Tool result missing from the transcript '
        b'(the turn was interrupted); inserted by transcript-doctor."}'
    )
    assert (applied.rule, applied.line, applied.action) == ("TD301", 3, "insert")
