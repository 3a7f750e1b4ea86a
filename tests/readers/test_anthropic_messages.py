"""Reader anthropic-messages: detection, every applicable rule, Cline / Roo shapes, negative controls."""

from __future__ import annotations

import json

import pytest
from support import FIXTURES, detected, findings, records, text_findings

DIR = FIXTURES / "anthropic-messages"
READER = "anthropic-messages"


@pytest.mark.parametrize("name", ["ui_messages.json", "task_metadata.json"])
def test_cline_companions_are_skipped_not_linted(name: str) -> None:
    from support import cli

    result = cli("lint", str(DIR / name))
    assert result.returncode == 0, result.stdout + result.stderr
    assert detected(DIR / name) == READER
    assert findings(DIR / name) == []


def test_task_history_index_is_a_companion(tmp_path) -> None:
    from transcript_doctor import readers
    from transcript_doctor.source import sniff

    path = tmp_path / "taskHistory.json"
    path.write_text(
        '[{"id":"1777000000000","ts":1777000095000,"task":"Remove Firebase","tokensIn":10,"tokensOut":2,"totalCost":0.01}]'
    )
    claim = readers.detect(sniff(str(path), path.read_bytes()))
    assert claim is not None
    assert (claim[1].reader, claim[1].transcript) == (READER, False)


@pytest.mark.parametrize(
    "text",
    [
        '[{"type":"say","ts":1777000095000,"text":"hi"},"stray"]',
        '[{"type":"say","ts":1777000095000,"text":"hi"},{"type":"say","ts":1,"role":"user"}]',
        '[{"id":"1","ts":1777000095000,"task":"Remove Firebase","tokensIn":10},{"task":"x","ts":2}]',
        '["stray",{"type":"say","ts":1777000095000,"text":"hi"}]',
    ],
)
def test_a_list_only_partly_of_companion_items_is_no_companion(tmp_path, text: str) -> None:
    """A companion is told by every item: one that is not an object, or not of its
    kind, anywhere in the list (the first item is read first) makes it none."""
    from transcript_doctor.readers.anthropic_messages.reader import _companion
    from transcript_doctor.source import sniff

    assert _companion(sniff("ui_messages.json", text.encode())) is None
    whole = text.replace(',"stray"', "").replace('"stray",', "")
    if whole != text:  # without the stray item, the list is a companion
        assert _companion(sniff("ui_messages.json", whole.encode())) is not None


@pytest.mark.parametrize(
    ("text", "suffix"),
    [
        ('[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]', ".json"),
        (
            '[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":"yo"}]',
            ".json",
        ),
        (
            '[{"role":"system","content":"s"},{"role":"user","content":"hi"},'
            '{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function",'
            '"function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"x"}]',
            ".json",
        ),
        (  # Claude Code: the MessageParam sits inside an envelope line
            '{"parentUuid":null,"isSidechain":false,"type":"assistant","uuid":"u1","sessionId":"s",'
            '"message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}\n',
            ".jsonl",
        ),
        (  # openworker: float ts, notice role
            '{"role": "user", "content": "hi", "ts": 1786550211.7391284}\n'
            '{"role": "notice", "kind": "error", "ts": 1786550212.5, "text": "boom"}\n',
            ".jsonl",
        ),
        ('{"role": "user", "content": "hi", "ts": 1786550211.7391284}\n', ".jsonl"),
        (
            '[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f"}}]}]',
            ".json",
        ),
        ('{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[]}}', ".json"),
        ('[{"type":"reasoning","encrypted_content":"gAAA","summary":[]}]', ".json"),
        ('{"name": "pkg", "version": "1.0.0", "type": "module"}', ".json"),
    ],
)
def test_does_not_claim_look_alikes(tmp_path, text: str, suffix: str) -> None:
    path = tmp_path / f"x{suffix}"
    path.write_text(text)
    assert detected(path) != READER


def test_plain_string_list_stays_with_openai_chat(tmp_path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]')
    assert detected(path) == "openai-chat"


def test_top_level_system_makes_a_plain_list_anthropic(tmp_path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"system":"Be brief.","messages":[{"role":"user","content":"hi"}]}')
    assert detected(path) == READER


def test_other_readers_fixtures_are_not_claimed() -> None:
    others = [
        p for p in FIXTURES.glob("*/*") if p.parent.name != DIR.name and p.suffix in (".json", ".jsonl")
    ]
    assert [p for p in others if detected(p) == READER] == []


def test_cline_sample_excerpt_mid_history_partial_is_not_a_finding() -> None:
    # /6 ends "\n\n[Response interrupted by API Error]" and /7 is Cline's [TASK RESUMPTION].
    data = json.loads((DIR / "cline-sample-excerpt.json").read_bytes())
    assert data[6]["content"][0]["text"].endswith("\n\n[Response interrupted by API Error]")
    assert data[7]["content"][0]["text"].startswith("[TASK RESUMPTION]")
    assert findings(DIR / "cline-sample-excerpt.json") == []


def test_cline_tail_partial_is_td101() -> None:
    assert findings(DIR / "cline-tail-partial.json") == [("TD101", 1, "/6")]


def test_cline_marker_alone_is_a_placeholder() -> None:
    assert findings(DIR / "cline-marker-alone.json") == [("TD201", 1, "/6")]


def test_cline_text_protocol_results_pair_by_adjacency() -> None:
    # Labels holding `]` and newlines, a denied call, a skipped call, feedback before a result.
    assert findings(DIR / "cline-text-protocol-results.json") == []


def test_text_protocol_call_left_unanswered_says_adjacency() -> None:
    text = (
        '[{"role":"user","content":"go","ts":1},'
        '{"role":"assistant","content":[{"type":"tool_use","id":"tooluse_A","name":"read_file","input":{}},'
        '{"type":"tool_use","id":"tooluse_B","name":"list_files","input":{}}],"ts":2},'
        '{"role":"user","content":[{"type":"text","text":"[read_file for \'a\'] Result:\\nok"},'
        '{"type":"text","text":"<environment_details></environment_details>"}],"ts":3}]'
    )
    report = _records(text)
    assert [(r["rule"], r["pointer"]) for r in report] == [("TD301", "/1/content/1")]
    assert "paired by adjacency" in str(report[0]["message"])


def test_resumption_after_an_unanswered_call_is_td301() -> None:
    # The Cline sample has eight of these: an ask-type call, then [TASK RESUMPTION].
    text = (
        '[{"role":"assistant","content":[{"type":"tool_use","id":"tooluse_Q","name":"ask_followup_question",'
        '"input":{}}],"ts":1},{"role":"user","content":[{"type":"text","text":"[TASK RESUMPTION] This task was '
        'interrupted 3 days ago."}],"ts":2}]'
    )
    assert text_findings("x.json", text) == [("TD301", 1, "/0/content/0")]


def test_fix_fixtures_carry_their_damage() -> None:
    # Cline sample messages 9-14: two ask-type calls answered only by [TASK RESUMPTION].
    assert findings(DIR / "cline-unanswered-ask.json") == [
        ("TD301", 1, "/0/content/0"),
        ("TD301", 1, "/4/content/0"),
    ]
    assert findings(DIR / "cline-missing-text-answer.json") == [("TD301", 1, "/1/content/2")]
    assert findings(DIR / "damaged-messages.jsonl") == [
        ("TD304", 4, "/content/0"),
        ("TD301", 5, "/content/1"),
        ("TD302", 7, "/content/0"),
    ]
    assert findings(DIR / "damaged-fine-tuning.jsonl") == [
        ("TD301", 1, "/messages/1/content/0"),
        ("TD102", 2, "/messages/1/content"),
    ]
    assert findings(DIR / "torn-final-line.jsonl") == [("TD306", 4, "/content/1"), ("TD001", 5, None)]


def test_tool_pairing_damage() -> None:
    assert findings(DIR / "damaged-tool-pairing.json") == [
        ("TD301", 13, "/1/content/1"),
        ("TD304", 50, "/4/content/1"),
        ("TD303", 83, "/7/content/0"),
        ("TD302", 88, "/7/content/1"),
        ("TD305", 98, "/8/content/0"),
    ]


def test_thinking_and_turn_damage() -> None:
    # /messages/7 also holds a redacted_thinking block: its data counts as a signature.
    assert findings(DIR / "damaged-thinking-and-turns.json") == [
        ("TD402", 10, "/messages/1/content/0"),
        ("TD402", 27, "/messages/3/content/0"),
        ("TD103", 42, "/messages/5"),
        ("TD102", 62, "/messages/7/content/1"),
    ]


def test_trailing_pending_call_is_info_not_damage() -> None:
    assert findings(DIR / "pending-tool-call.jsonl") == [("TD306", 4, "/content/1")]


def test_parallel_results_in_one_user_message_in_any_order() -> None:
    text = (
        '[{"role":"user","content":"go"},'
        '{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},'
        '{"type":"tool_use","id":"b","name":"g","input":{}}]},'
        '{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":"x"},'
        '{"type":"tool_result","tool_use_id":"a","content":"y"}]},'
        '{"role":"assistant","content":[{"type":"text","text":"done"}]}]'
    )
    assert text_findings("x.json", text) == []


def test_consecutive_user_messages_are_not_coalesced() -> None:
    # The API wants the result in the very next message; a user message between is TD304.
    text = (
        '[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},'
        '{"role":"user","content":"wait"},'
        '{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}]'
    )
    assert text_findings("x.json", text) == [("TD304", 1, "/2/content/0")]


def test_identical_consecutive_user_messages_are_not_td403() -> None:
    text = (
        '[{"role":"user","content":"hi","ts":5},{"role":"user","content":"hi","ts":5},'
        '{"role":"assistant","content":[{"type":"text","text":"Hello."}],"ts":6}]'
    )
    assert text_findings("x.json", text) == []


def test_wrong_field_types_do_not_crash() -> None:
    text = (
        '[{"role":"user","content":5},'
        '{"role":"assistant","content":[1,"x",null,{"type":5},{"type":"tool_use","id":null,"name":3},'
        '{"type":"thinking","thinking":7,"signature":9}]},'
        '{"role":"user","content":[{"type":"tool_result","tool_use_id":4,"is_error":"yes"}]},'
        '{"role":"assistant","content":[{"type":"text","text":null}]},'
        '{"role":"user","content":[{"type":"text","text":"[x] Result: ok"}]}]'
    )
    result = text_findings("x.json", text, reader=READER)
    assert ("TD402", 1, "/1/content/5") in result
    assert ("TD302", 1, "/2/content/0") in result
    assert ("TD103", 1, "/3") in result
    for text in ('{"messages":"x","system":1}', '{"messages":[null,{"role":"user"}],"system":{"a":1}}', "[]"):
        assert text_findings("x.json", text, reader=READER) == []


def _records(text: str) -> list[dict[str, object]]:
    from support import lint_bytes

    from transcript_doctor.reporters import record

    report = lint_bytes("x.json", text.encode())
    assert report.error is None, report.error
    return [record(report, f) for f in report.findings]


def test_records_name_the_reader() -> None:
    (found,) = records(DIR / "cline-tail-partial.json")
    assert (found["reader"], found["record"]) == (READER, 6)
