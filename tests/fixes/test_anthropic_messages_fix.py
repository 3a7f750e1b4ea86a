"""fix on anthropic-messages files: exact bytes, only the named elements change.

Cline histories are one compact line (``JSON.stringify``), so "only the named elements
change" is checked on elements: the repaired file must be the compact serialisation of the
original list with exactly the named elements removed or inserted (the fixtures are that
serialisation byte for byte, see fixtures/anthropic-messages/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, fix, lint_bytes

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT

DIR = FIXTURES / "anthropic-messages"

REPAIRED = {
    "cline-tail-partial.json": ["TD101"],
    "cline-marker-alone.json": ["TD201"],
    "cline-unanswered-ask.json": ["TD301", "TD301"],
    "cline-missing-text-answer.json": ["TD301"],
    "damaged-thinking-and-turns.json": ["TD103", "TD102"],
    "damaged-tool-pairing.json": ["TD303", "TD302", "TD304", "TD301"],
    "damaged-messages.jsonl": ["TD302", "TD304", "TD301"],
    "damaged-fine-tuning.jsonl": ["TD301", "TD102"],
    "torn-final-line.jsonl": ["TD001"],
}
CLINE_ERROR = (
    "The tool execution failed with the following error:\n<error>\n" + SYNTHETIC_RESULT_TEXT + "\n</error>"
)


def _compact(value: Any) -> bytes:
    """How Cline writes its history: JSON.stringify, raw UTF-8, no newline."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _result(tool_use_id: str, call_id: str | None = None) -> dict[str, Any]:
    """The synthetic result, keys in the order the vendor writes them."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
    if call_id is not None:
        block["call_id"] = call_id
    return {**block, "content": SYNTHETIC_RESULT_TEXT, "is_error": True}


def _fixed(tmp_path: Path, name: str, data: bytes) -> tuple[bytes, list[str]]:
    path = tmp_path / name
    path.write_bytes(data)
    outcome = fix(path)
    return outcome.after, [a.rule for a in outcome.applied]


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/anthropic-messages.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name]


def test_cline_partial_tail_loses_only_the_partial_message() -> None:
    data = json.loads((DIR / "cline-tail-partial.json").read_bytes())
    assert fix(DIR / "cline-tail-partial.json").after == _compact(data[:6])
    data = json.loads((DIR / "cline-marker-alone.json").read_bytes())
    assert fix(DIR / "cline-marker-alone.json").after == _compact(data[:6] + data[7:])


def test_cline_unanswered_asks_get_text_protocol_errors() -> None:
    # Sample messages 9-14: ask_followup_question and plan_mode_respond, each answered by
    # nothing but [TASK RESUMPTION]; the history answers every other call in text.
    data = json.loads((DIR / "cline-unanswered-ask.json").read_bytes())
    outcome = fix(DIR / "cline-unanswered-ask.json")
    for index, name in ((1, "ask_followup_question"), (5, "plan_mode_respond")):
        data[index]["content"].insert(0, {"type": "text", "text": f"[{name}] Result:\n{CLINE_ERROR}"})
    assert outcome.after == _compact(data)
    assert [(a.rule, a.action, e.pointer) for a in outcome.applied for e in a.edits] == [
        ("TD301", "insert", "/1/content/0"),
        ("TD301", "insert", "/5/content/0"),
    ]
    left = lint_bytes("x.json", outcome.after)
    assert [f.finding.rule.code for f in left.findings] == []


def test_cline_answer_missing_from_a_text_reply_joins_the_other_answers() -> None:
    # /1 calls search_files and read_file; /2 answers only the first: the new answer goes
    # right after it, so that adjacency pairs it with the second call.
    data = json.loads((DIR / "cline-missing-text-answer.json").read_bytes())
    outcome = fix(DIR / "cline-missing-text-answer.json")
    data[2]["content"].insert(1, {"type": "text", "text": f"[read_file] Result:\n{CLINE_ERROR}"})
    assert outcome.after == _compact(data)


def test_pretty_document_changes_only_the_named_elements() -> None:
    outcome = fix(DIR / "damaged-tool-pairing.json")
    before = outcome.before.decode().splitlines()
    after = outcome.after.decode().splitlines()
    # Lines of the moved block and of the duplicate survive (moved, the first copy): only
    # the orphan's own lines are gone.
    assert [line for line in before if line not in after] == [
        '        "tool_use_id": "toolu_01Zz",',
        '        "content": "applied 0043_backfill"',
    ]
    data = json.loads(outcome.before)
    fixed = json.loads(outcome.after)
    moved = data[4]["content"].pop(1)
    del data[7]  # TD303 and TD302 emptied it
    data.insert(2, {"role": "user", "content": [moved, _result("toolu_01Lm")]})
    assert fixed == data
    assert [(a.rule, a.line, a.action) for a in outcome.applied] == [
        ("TD303", 83, "remove"),
        ("TD302", 83, "remove"),  # lines of the file as each rule met it
        ("TD304", 50, "move"),
        ("TD301", 13, "insert"),
    ]


def test_moved_block_keeps_its_bytes() -> None:
    outcome = fix(DIR / "damaged-tool-pairing.json")
    block = (
        b'{\n        "type": "tool_result",\n        "tool_use_id": "toolu_01Ls",\n'
        b'        "content": "public, audit"\n      }'
    )
    assert outcome.before.count(block) == 1
    assert outcome.after.count(block) == 1
    assert outcome.after.index(block) < outcome.after.index(b'"Actually, also check the database version."')


def test_thinking_blocks_are_never_touched() -> None:
    outcome = fix(DIR / "damaged-thinking-and-turns.json")
    for block in json.loads(outcome.before)["messages"][1::2]:
        for item in block["content"]:
            if item["type"] in ("thinking", "redacted_thinking"):
                raw = json.dumps(item, indent=2).replace("\n", "\n        ").encode()
                assert raw in outcome.before and raw in outcome.after
    assert [(a.rule, a.action) for a in outcome.applied] == [("TD103", "remove"), ("TD102", "strip")]


def test_jsonl_lines_change_only_where_named() -> None:
    outcome = fix(DIR / "damaged-messages.jsonl")
    before = outcome.before.splitlines()
    after = outcome.after.splitlines()
    # The moved result's new message is its old line byte for byte: same block, same shape.
    assert after == [
        *before[:2],
        before[3],
        before[2],
        before[4],
        b'{"role":"user","content":[' + _compact(_result("toolu_01Ed")) + b"]}",
        before[5],
        b'{"role":"user","content":[{"type":"text","text":"Thanks, and the docs?"}]}',
        before[7],
    ]


def test_per_line_conversations_are_edited_inside_their_line() -> None:
    outcome = fix(DIR / "damaged-fine-tuning.jsonl")
    before = [json.loads(line) for line in outcome.before.splitlines()]
    after = [json.loads(line) for line in outcome.after.splitlines()]
    before[0]["messages"].insert(2, {"role": "user", "content": [_result("toolu_01Or")]})
    before[1]["messages"][1]["content"] = before[1]["messages"][1]["content"].rstrip()
    assert after == before


def test_torn_final_line_is_dropped_and_nothing_else() -> None:
    outcome = fix(DIR / "torn-final-line.jsonl")
    assert outcome.after == (DIR / "pending-tool-call.jsonl").read_bytes()


def test_crlf_and_missing_final_newline_are_kept(tmp_path: Path) -> None:
    original = (DIR / "damaged-messages.jsonl").read_bytes().rstrip(b"\n").replace(b"\n", b"\r\n")
    after, rules = _fixed(tmp_path, "crlf.jsonl", original)
    assert rules == REPAIRED["damaged-messages.jsonl"]
    expected = fix(DIR / "damaged-messages.jsonl").after.rstrip(b"\n").replace(b"\n", b"\r\n")
    assert after == expected
    assert not after.endswith(b"\n")


def test_crlf_pretty_document_gets_crlf_elements(tmp_path: Path) -> None:
    original = (DIR / "damaged-tool-pairing.json").read_bytes().replace(b"\n", b"\r\n")
    after, _ = _fixed(tmp_path, "crlf.json", original)
    assert after == fix(DIR / "damaged-tool-pairing.json").after.replace(b"\n", b"\r\n")


def test_two_duplicates_in_one_message_remove_the_message(tmp_path: Path) -> None:
    text: list[dict[str, Any]] = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "x"},
                {"type": "tool_result", "tool_use_id": "a", "content": "x"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    after, rules = _fixed(tmp_path, "dups.json", _compact(text))
    assert rules == ["TD303", "TD303"]
    assert after == _compact(text[:3] + text[4:])


def test_open_calls_of_one_turn_share_one_new_reply(tmp_path: Path) -> None:
    # Cline shape: the new message copies `ts` from the call message; the blocks carry
    # the calls' `call_id` as Cline's own tool_result blocks do.
    text: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "go"}], "ts": 1},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "tooluse_A",
                    "name": "read_file",
                    "input": {},
                    "call_id": "call_A",
                },
                {
                    "type": "tool_use",
                    "id": "tooluse_B",
                    "name": "list_files",
                    "input": {},
                    "call_id": "call_B",
                },
            ],
            "ts": 2,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Both done."}], "ts": 3},
        {"role": "user", "content": [{"type": "text", "text": "thanks"}], "ts": 4},
    ]
    after, rules = _fixed(tmp_path, "api_conversation_history.json", _compact(text))
    assert rules == ["TD301", "TD301"]
    reply = {
        "role": "user",
        "content": [_result("tooluse_A", call_id="call_A"), _result("tooluse_B", call_id="call_B")],
        "ts": 2,
    }
    assert after == _compact([*text[:2], reply, *text[2:]])


def test_displaced_results_of_one_turn_share_one_new_reply(tmp_path: Path) -> None:
    text: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "b", "name": "g", "input": {}},
            ],
        },
        {"role": "user", "content": "wait"},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "b", "content": "B"},
                {"type": "tool_result", "tool_use_id": "a", "content": "A"},
            ],
        },
    ]
    after, rules = _fixed(tmp_path, "moves.json", _compact(text))
    assert rules == ["TD304", "TD304"]
    reply = {"role": "user", "content": [text[2]["content"][1], text[2]["content"][0]]}
    assert after == _compact([text[0], reply, text[1]])


def test_a_reply_slot_emptied_and_refilled_by_moves_is_kept(tmp_path: Path) -> None:
    # /3 holds a's result (displaced) and is b's reply slot; b's result sits in /5.
    text: list[dict[str, Any]] = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
        {"role": "user", "content": "wait"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "g", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "A"}]},
        {"role": "user", "content": "and?"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "B"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    after, rules = _fixed(tmp_path, "refill.json", _compact(text))
    assert rules == ["TD304", "TD304"]
    expected = [
        text[0],
        {"role": "user", "content": text[3]["content"]},
        text[1],
        text[2],
        {"role": "user", "content": text[5]["content"]},
        text[4],
        text[6],
    ]
    assert after == _compact(expected)


def test_result_goes_after_existing_results_and_before_text(tmp_path: Path) -> None:
    text: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "b", "name": "g", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "A"},
                {"type": "text", "text": "and b?"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "b failed"}]},
    ]
    after, rules = _fixed(tmp_path, "head.json", _compact(text))
    assert rules == ["TD301"]
    text[1]["content"].insert(1, _result("b"))
    assert after == _compact(text)


def test_interruption_marker_turn_is_removed(tmp_path: Path) -> None:
    text: list[dict[str, Any]] = [
        {"role": "user", "content": "Summarise the log."},
        {"role": "assistant", "content": [{"type": "text", "text": "[Tool use interrupted]"}]},
        {"role": "user", "content": "Try again."},
        {"role": "assistant", "content": [{"type": "text", "text": "The log shows two restarts."}]},
    ]
    after, rules = _fixed(
        tmp_path, "interrupted.json", json.dumps({"system": "s", "messages": text}).encode()
    )
    assert rules == ["TD202"]
    assert after == json.dumps({"system": "s", "messages": [text[0], *text[2:]]}).encode()
