"""Reader openworker: detection, every applicable rule, negative controls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import FIXTURES, detected, findings, records, text_findings

from transcript_doctor.model import PartKind, Role
from transcript_doctor.readers.openworker import READER
from transcript_doctor.source import sniff

DIR = FIXTURES / "openworker"
FILES = sorted(p.name for p in DIR.glob("*.jsonl"))


def dumps(*messages: dict[str, object]) -> str:
    """Lines as ConversationStore._append writes them: json.dumps(m) + newline."""
    return "".join(json.dumps(m) + "\n" for m in messages)


def read(path: Path):  # type: ignore[no-untyped-def]
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    return conversation


SYSTEM = {"role": "system", "content": "You are Coworker."}


def call(call_id: str, name: str = "read_file") -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


# -- detection ------------------------------------------------------------------------------


def test_fixtures_are_in_the_vendor_writer_style() -> None:
    for name in FILES:
        for line in (DIR / name).read_text(encoding="ascii").splitlines():
            assert json.dumps(json.loads(line)) == line, name


@pytest.mark.parametrize(
    "name", ["pending-tool-call.jsonl", "clean-fine-tuning.jsonl", "damaged-fine-tuning.jsonl"]
)
def test_leaves_plain_openai_jsonl_to_openai_chat(name: str) -> None:
    assert detected(FIXTURES / "openai-chat" / name) == "openai-chat"


def test_beats_openai_chat_on_a_file_with_only_float_ts(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(
        dumps(
            SYSTEM,
            {"role": "user", "content": "hi", "ts": 1786543211.7391284},
            {"role": "assistant", "content": "Hello.", "ts": 1786543213.4782567},
        )
    )
    assert detected(path) == "openworker"


def test_claims_plain_messages_stored_under_conversations(tmp_path: Path) -> None:
    folder = tmp_path / "conversations"
    folder.mkdir()
    path = folder / "3f2c9a.jsonl"
    text = dumps(SYSTEM, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."})
    path.write_text(text)
    assert detected(path) == "openworker"
    elsewhere = tmp_path / "3f2c9a.jsonl"
    elsewhere.write_text(text)
    assert detected(elsewhere) != "openworker"


@pytest.mark.parametrize(
    "text",
    [
        # Plain Chat Completions JSONL, compact style, no ts/notice/sidecars.
        '{"role":"system","content":"s"}\n{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n',
        # Fine-tuning records: each line holds a conversation, not a message.
        '{"messages":[{"role":"user","content":"hi","ts":1.5},{"role":"assistant","content":"yo"}]}\n',
        # Cline-style integer millisecond ts.
        '{"role":"user","content":"hi","ts":1786543211739}\n{"role":"assistant","content":"yo","ts":1786543213478}\n',
        # Claude Code, Qwen Code, Codex, Gemini CLI first lines (shortened corpus lines).
        '{"parentUuid":null,"type":"user","message":{"role":"user","content":"show tools"},"uuid":"35937d53"}\n',
        '{"uuid":"e7a8f7a7","parentUuid":null,"type":"user","message":{"role":"user","parts":[{"text":"Run"}]}}\n',
        '{"timestamp":"2026-01-02T16:39:45.349Z","type":"response_item","payload":{"type":"message","role":"user","content":[]}}\n',
        '{"id":"af52a4b9","timestamp":"2026-11-29T21:42:42.243Z","type":"user","content":[{"text":"What?"}]}\n',
        # A Gemini Content line with a sidecar-like key but an unknown role.
        '{"role":"model","parts":[{"text":"hi"}],"_display":"x"}\n',
    ],
)
def test_does_not_claim_look_alikes(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(text)
    assert detected(path) != "openworker"


def test_does_not_claim_a_json_document(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps([{"role": "notice", "kind": "error", "ts": 1.5}]))
    assert detected(path) != "openworker"


# -- clean files and negative controls ---------------------------------------------------------


def test_clean_conversation_with_every_sidecar_has_no_findings() -> None:
    # Sidecars on lines 3-26, a prompt typed twice (lines 17 and 19, different ts), Gemini's
    # per-response call ids (call_0 on lines 12 and 14), results answered out of call order.
    assert findings(DIR / "clean-sidecars.jsonl") == []


def test_partial_in_the_middle_of_a_history_that_went_on_is_not_a_finding() -> None:
    assert findings(DIR / "mid-history-partial.jsonl") == []


def test_completed_final_answer_without_a_notice_is_never_td101() -> None:
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "Check the logs", "ts": 1.5},
        {"role": "assistant", "content": "The deploy failed on a missing env var.", "ts": 2.5},
        {"role": "notice", "kind": "model_switch", "ts": 3.5, "text": "Model switched to GPT-5.6"},
    )
    assert text_findings("c.jsonl", text) == []


def test_suspended_tail_is_td306_only() -> None:
    assert findings(DIR / "durable-resume-tail.jsonl") == [("TD306", 3, "/tool_calls/0")]


def test_suspended_tail_before_an_interrupted_notice_is_not_a_partial() -> None:
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "go", "ts": 1.5},
        {"role": "assistant", "content": "", "ts": 2.5, "tool_calls": [call("c1", "ask_user")]},
        {"role": "notice", "kind": "interrupted", "ts": 3.5},
    )
    assert text_findings("c.jsonl", text) == [("TD306", 3, "/tool_calls/0")]


def test_prompt_typed_twice_is_not_td403() -> None:
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "again", "ts": 1.5},
        {"role": "user", "content": "again", "ts": 9.5},
        {"role": "assistant", "content": "ok", "ts": 10.5},
    )
    assert text_findings("c.jsonl", text) == []


def test_vendor_error_results_are_real_results() -> None:
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "go", "ts": 1.5},
        {"role": "assistant", "content": "", "ts": 2.5, "tool_calls": [call("c1"), call("c2")]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}', "ts": 3.5},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": json.dumps({"error": "tool call not executed", "reason": "interrupted by user"}),
            "ts": 3.6,
        },
        {"role": "notice", "kind": "interrupted", "ts": 3.7},
    )
    assert text_findings("c.jsonl", text) == []


def test_a_notice_inside_a_run_of_results_keeps_them_one_slot() -> None:
    # Durable resume after a restart: the reconnect's mcp_error notice lands between the call
    # and the results of the resumed turn.
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "go", "ts": 1.5},
        {"role": "assistant", "content": "", "ts": 2.5, "tool_calls": [call("c1"), call("c2")]},
        {"role": "notice", "kind": "mcp_error", "ts": 3.0, "text": "MCP server failed to start"},
        {"role": "tool", "tool_call_id": "c1", "content": "a", "ts": 3.5},
        {"role": "notice", "kind": "compacted", "ts": 3.6, "text": "Context compacted"},
        {"role": "tool", "tool_call_id": "c2", "content": "b", "ts": 3.7},
        {"role": "assistant", "content": "done", "ts": 4.5},
    )
    assert text_findings("c.jsonl", text) == []


# -- damage -------------------------------------------------------------------------------------


def test_pr_363_partial_turn_tail() -> None:
    # 'I will request permission to ' also ends in a space: TD101 removes it, so no TD102.
    assert findings(DIR / "partial-turn-tail.jsonl") == [("TD101", 3, None)]


def test_failed_retries_stack_one_partial_each() -> None:
    # Line 6 is a reasoning-only partial (content ""): TD101, not TD103.
    assert findings(DIR / "partial-turn-stacked.jsonl") == [("TD101", 3, None), ("TD101", 6, None)]


def test_issue_331_displaced_result() -> None:
    assert findings(DIR / "displaced-result.jsonl") == [("TD304", 5, None)]


def test_displaced_results_of_gemini_calls_pair_by_scoped_id() -> None:
    # Both Gemini turns call call_0 and call_1; the line 5-6 results answer line 3 (out of
    # call order, after a prompt), line 8 answers line 7's call_0, line 7's call_1 is open.
    assert findings(DIR / "displaced-gemini-results.jsonl") == [
        ("TD304", 5, None),
        ("TD304", 6, None),
        ("TD301", 7, "/tool_calls/1"),
    ]


def test_pr_350_duplicated_user_turn() -> None:
    assert findings(DIR / "duplicated-user-turn.jsonl") == [("TD301", 3, "/tool_calls/0"), ("TD403", 5, None)]


def test_byte_identical_user_lines_without_ts_are_td403() -> None:
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "go"},
        {"role": "user", "content": "go"},
        {"role": "user", "content": "go", "source": {"connector": "slack"}},
        {"role": "assistant", "content": "ok", "ts": 4.5},
    )
    assert text_findings("c.jsonl", text) == [("TD403", 3, None)]


def test_tool_pairing_damage() -> None:
    assert findings(DIR / "damaged-tool-pairing.jsonl") == [
        ("TD301", 3, "/tool_calls/1"),
        ("TD303", 8, None),
        ("TD302", 9, None),
    ]


def test_turn_damage() -> None:
    assert findings(DIR / "damaged-turns.jsonl") == [("TD103", 3, None), ("TD102", 7, "/content")]


def test_unsigned_anthropic_thinking_block_is_td402() -> None:
    assert findings(DIR / "unsigned-thinking.jsonl") == [("TD402", 3, "/_anthropic/blocks/0")]


def test_thinking_sidecar_does_not_make_an_empty_turn_content() -> None:
    block = {"type": "thinking", "thinking": "hmm", "signature": "EqQBCkYI"}
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "go", "ts": 1.5},
        {"role": "assistant", "content": "", "ts": 2.5, "_anthropic": {"blocks": [block]}},
        {"role": "user", "content": "well?", "ts": 3.5},
        {"role": "assistant", "content": "Done.", "ts": 4.5},
    )
    assert text_findings("c.jsonl", text) == [("TD103", 3, None)]


def test_repeated_call_id_inside_one_turn_is_td305() -> None:
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "go", "ts": 1.5},
        {"role": "assistant", "content": "", "ts": 2.5, "tool_calls": [call("c1"), call("c1")]},
        {"role": "tool", "tool_call_id": "c1", "content": "a", "ts": 3.5},
        {"role": "tool", "tool_call_id": "c1", "content": "b", "ts": 3.6},
        {"role": "assistant", "content": "done", "ts": 4.5},
    )
    assert text_findings("c.jsonl", text) == [("TD305", 3, "/tool_calls/1")]


@pytest.mark.parametrize(
    ("reply", "rule"),
    [
        ("(request timeout)", "TD201"),
        ("[The previous response was interrupted before it completed.]", "TD202"),
    ],
)
def test_catalog_placeholders(reply: str, rule: str) -> None:
    text = dumps(
        SYSTEM,
        {"role": "user", "content": "go", "ts": 1.5},
        {"role": "assistant", "content": reply, "ts": 2.5},
        {"role": "user", "content": "again", "ts": 3.5},
        {"role": "assistant", "content": "Done.", "ts": 4.5},
    )
    assert text_findings("c.jsonl", text) == [(rule, 3, None)]


def test_torn_final_line_is_td001_and_the_rest_is_read() -> None:
    text = (
        dumps(SYSTEM, {"role": "user", "content": "go", "ts": 1.5}) + '{"role": "assistant", "content": "I wi'
    )
    assert text_findings("c.jsonl", text, reader="openworker") == [("TD001", 3, None)]


# -- the model handed to fix ----------------------------------------------------------------------


def test_refs_name_lines_and_stored_ids() -> None:
    conversation = read(DIR / "clean-sidecars.jsonl")
    messages = conversation.messages
    assert [m.ref for m in messages[:4]] == [0, 1, 2, 3]
    assert [m.role for m in messages[:3]] == [Role.SYSTEM, Role.NOTICE, Role.USER]
    assert messages[1].notice == "mcp_error"
    # Lines 7-8 (two results answering line 6) are one message: one API slot.
    block = messages[6]
    assert block.role is Role.USER and block.ref == 6
    assert [(p.kind, p.ref) for p in block.parts] == [(PartKind.TOOL_RESULT, 6), (PartKind.TOOL_RESULT, 7)]
    # Gemini numbers calls per response: the second call_0 pairs with its own result.
    first, second = messages[10].tool_calls[0], messages[12].tool_calls[0]
    assert (first.call_id, first.ref) == ("call_0", "call_0")
    assert (second.call_id, second.ref) == ("call_0 (line 14)", "call_0")
    assert (messages[13].ref, messages[13].parts[0].call_id) == (14, "call_0 (line 14)")
    assert messages[13].parts[0].is_error


def test_reasoning_sidecar_is_not_replayed_but_anthropic_blocks_are() -> None:
    conversation = read(DIR / "clean-sidecars.jsonl")
    turn = conversation.messages[3]
    assert [p.kind for p in turn.parts] == [PartKind.THINKING, PartKind.TEXT, PartKind.TOOL_CALL]
    assert turn.parts[0].needs_signature and turn.parts[0].signature
    redacted = conversation.messages[5].parts[1]
    assert redacted.kind is PartKind.THINKING and not redacted.needs_signature


def test_record_fields_name_the_lines() -> None:
    (found,) = records(DIR / "displaced-result.jsonl")
    assert "line 3 at /tool_calls/0" in str(found["message"])


# -- robustness ---------------------------------------------------------------------------------


def test_wrong_field_types_do_not_crash() -> None:
    text = "\n".join(
        [
            json.dumps(SYSTEM),
            json.dumps({"role": "user", "content": 7, "ts": "yesterday"}),
            json.dumps({"role": "assistant", "content": None, "ts": 2.5, "tool_calls": "oops"}),
            json.dumps(
                {"role": "assistant", "content": "", "tool_calls": [None, {"id": 5, "function": "x"}]}
            ),
            json.dumps({"role": "assistant", "content": ["x", {"type": "text"}], "_anthropic": "x"}),
            json.dumps(
                {
                    "role": "assistant",
                    "content": "a",
                    "_anthropic": {"blocks": [None, "x", {"type": "thinking"}]},
                }
            ),
            json.dumps({"role": "tool", "tool_call_id": None, "content": {"a": 1}}),
            json.dumps({"role": "notice", "kind": 5}),
            json.dumps({"role": 5}),
            json.dumps([1, 2]),
            "null",
            json.dumps(
                {"role": "user", "content": [None, {"type": "image_url"}, {"type": "file"}], "ts": True}
            ),
        ]
    )
    result = text_findings("c.jsonl", text, reader="openworker")
    assert ("TD103", 3, None) in result
    assert ("TD402", 6, "/_anthropic/blocks/2") in result
    assert ("TD302", 7, None) in result
