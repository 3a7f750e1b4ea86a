"""Reader gemini-cli: detection, replay of the JSONL edit log, every applicable rule, negative controls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, detected, findings, lint_bytes, records, text_findings

from transcript_doctor.model import Conversation, PartKind, Role
from transcript_doctor.readers.gemini_cli import READER
from transcript_doctor.readers.gemini_cli.refs import MessageRef, StreamRef
from transcript_doctor.source import sniff

DIR = FIXTURES / "gemini-cli"
DUP = DIR / "gen-resumed-dup-response__session-2026-11-29T21-45-2c95bea0.jsonl"
UNANSWERED = DIR / "gen-unanswered-tool-response__session-2026-11-29T21-42-1ea4ff33.jsonl"
LEGACY = DIR / "codemie__session-2025-12-01T21-45-5b959dae.json"
LEGACY_FILE_OPS = DIR / "codemie__session-2026-01-16T11-01-file-ops-37b7abef.json"
LOGS = DIR / "codemie__logs.json"
OURS = {"gemini-cli", "gemini-checkpoint"}

HEADER = {"sessionId": "s1", "projectHash": "ab12", "startTime": "2026-08-01T10:00:00.000Z", "kind": "main"}


def jsonl(*records: dict[str, Any]) -> str:
    """Lines as the CLI appends them: JSON.stringify(record) + newline."""
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)


def user(mid: str, text: str, ts: str = "2026-08-01T10:00:01.000Z") -> dict[str, Any]:
    return {"id": mid, "timestamp": ts, "type": "user", "content": [{"text": text}]}


def gemini(mid: str, content: Any = "", **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-08-01T10:00:02.000Z", "type": "gemini", "content": content, **extra}


def call(call_id: str, result: bool = True, name: str = "read_file") -> dict[str, Any]:
    entry: dict[str, Any] = {"id": call_id, "name": name, "args": {}, "status": "success"}
    if result:
        entry["result"] = [response(call_id, name)]
    return entry


def response(call_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": name, "response": {"output": "ok"}}}


def answer(mid: str, *call_ids: str) -> dict[str, Any]:
    """The recorded functionResponse user message (PR #26939)."""
    return {
        "id": mid,
        "timestamp": "2026-08-01T10:00:03.000Z",
        "type": "user",
        "content": [response(c) for c in call_ids],
    }


def lint(*records: dict[str, Any]) -> list[tuple[str, int, str | None]]:
    return text_findings("session.jsonl", jsonl(*records))


def read(path: Path) -> Conversation:
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    return conversation


def read_text(name: str, text: str) -> Conversation:
    (conversation,) = READER.read(sniff(name, text.encode()))
    return conversation


# -- detection ------------------------------------------------------------------------------


# Fixtures made for `fix` (README "Damaged variants for fix"): what lint finds in each.
DAMAGED_FOR_FIX = {
    "codemie-file-ops-damaged.json": [
        ("TD103", 386, "/messages/7"),
        ("TD301", 414, "/messages/9/toolCalls/0"),
    ],
    "displaced-response.jsonl": [("TD304", 12, "/content/0")],
    "duplicated-prompt.jsonl": [("TD403", 5, None)],
    "orphan-responses-checkpoint.jsonl": [
        ("TD302", 15, "/$set/messages/2/content/0"),
        ("TD302", 15, "/$set/messages/3/content/0"),
    ],
    "placeholder-reply-checkpointed.jsonl": [("TD201", 13, None)],
    "torn-final-line.jsonl": [("TD001", 10, None)],
    # Gemini histories end with the next prompt before they are sent: never prefill.
    "trailing-whitespace-reply.jsonl": [],
    # The call's missing signature is in an earlier turn (a prompt follows at line 16):
    # the API validates only the current turn, so it is no TD401.
    "unanswered-call-checkpoint.jsonl": [("TD301", 15, "/$set/messages/2/content/1")],
    "unanswered-call-lines.jsonl": [("TD301", 7, "/toolCalls/0")],
}


@pytest.mark.parametrize("name", sorted(DAMAGED_FOR_FIX))
def test_damaged_fixtures_for_fix(name: str) -> None:
    assert findings(DIR / name) == DAMAGED_FOR_FIX[name]


def test_prompt_log_is_recognised_and_skipped() -> None:
    report = lint_bytes(str(LOGS), LOGS.read_bytes())
    assert (report.findings, report.error) == ([], None)
    assert report.skipped is not None and "prompt log" in report.skipped


@pytest.mark.parametrize("name", ["logs.json", "logs.json.malformed_array.1767225600000.bak"])
def test_empty_prompt_log_is_recognised_by_name(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("[]")
    report = lint_bytes(str(path), path.read_bytes())
    assert report.skipped is not None and "prompt log" in report.skipped


@pytest.mark.parametrize(
    "text",
    [
        # Qwen Code: sessionId but uuid/parentUuid and no projectHash
        '{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}\n',
        # Claude Code
        '{"parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u"}\n',
        # a header-like line that carries a uuid is not a Gemini CLI header
        '{"sessionId":"s","projectHash":"p","uuid":"u"}\n{"type":"user","message":{"content":"x"}}\n',
    ],
)
def test_does_not_claim_other_jsonl(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(text)
    assert detected(path) != "gemini-cli"


@pytest.mark.parametrize(
    "text",
    [
        '{"history": [{"role": "user", "parts": [{"text": "hi"}]}], "authType": "gemini-api-key"}',
        '[{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}]',
        '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]',
        '{"sessionId": "s", "projectHash": "p", "messages": [{"role": "user", "content": "hi"}]}',
        '[{"sessionId": "s", "messageId": "0", "type": "user", "message": "hi", "timestamp": "t"}]',
        '[{"id": 0, "timestamp": "t", "source": "user", "message": "hi", "action": "message"}]',
        '{"name": "pkg", "version": "1.0.0"}',
    ],
)
def test_does_not_claim_json_look_alikes(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    assert detected(path) != "gemini-cli"


def test_other_readers_fixtures_are_not_claimed() -> None:
    others = [
        p for p in FIXTURES.glob("*/*") if p.parent.name not in OURS and p.suffix in (".json", ".jsonl")
    ]
    assert others
    assert [p for p in others if detected(p) in OURS] == []


# -- corpus copies: the by-design shapes are clean --------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "codemie__session-2025-12-01T21-45-5b959dae.json",
        "codemie__session-2026-01-16T11-01-file-ops-37b7abef.json",
        # ends on the recorded functionResponse: a resumable tail, not an unanswered call
        "gen-unanswered-tool-response__session-2026-11-29T21-42-1ea4ff33.jsonl",
        # header + session-context $set only (a resume in another minute)
        "stray-startup.jsonl",
        # the prompt that made the TD104 shape was rewound away
        "rewound-prompt.jsonl",
    ],
)
def test_clean_files_have_no_findings(name: str) -> None:
    assert findings(DIR / name) == []


def test_resume_rebuild_duplicates_the_response_and_drops_the_signature() -> None:
    """The dropped signature is on a call of an earlier turn (the prompt at line 16 starts
    the current one): Gemini validates only the current turn, so it is no TD401."""
    assert findings(DUP) == [("TD303", 15, "/$set/messages/4/content/0")]


def test_double_storage_of_a_result_is_one_result() -> None:
    conversation = read(UNANSWERED)
    results = [p for m in conversation.messages for p in m.tool_results]
    assert [(p.origin.line, p.origin.pointer) for p in results] == [(8, "/content/0")]


def test_legacy_results_live_in_tool_calls_only() -> None:
    conversation = read(LEGACY_FILE_OPS)
    calls = [p for m in conversation.messages for p in m.tool_calls]
    results = [p for m in conversation.messages for p in m.tool_results]
    assert len(calls) == len(results) == 14
    derived = conversation.messages[4]
    assert (derived.role, derived.origin.pointer) == (Role.USER, "/messages/3/toolCalls")
    assert isinstance(derived.ref, MessageRef) and derived.ref.results
    assert results[0].origin.pointer == "/messages/3/toolCalls/0/result/0"


def test_thoughts_are_rebuilt_as_thinking_parts() -> None:
    first_reply = read(LEGACY).messages[1]
    assert [p.kind for p in first_reply.parts][-1] is PartKind.TEXT
    assert first_reply.parts[0].kind is PartKind.THINKING
    assert first_reply.parts[0].origin.pointer == "/messages/1/thoughts/0"
    assert first_reply.parts[0].text.startswith("**Assessing the Prompt's Intent** ")


# -- damaged variants ------------------------------------------------------------------------


def test_prompt_after_an_unanswered_tool_response_is_td104() -> None:
    (found,) = records(DIR / "unreplied-tool-response.jsonl")
    assert (found["rule"], found["line"], found["pointer"]) == ("TD104", 10, None)
    assert "tool response at line 8" in str(found["message"])


def test_interruption_placeholder_persisted_by_a_checkpoint() -> None:
    assert findings(DIR / "interruption-placeholder-checkpoint.jsonl") == [
        ("TD202", 12, "/$set/messages/4"),
        ("TD203", 13, None),
    ]


def test_crash_before_the_tool_calls_update_leaves_an_empty_turn() -> None:
    assert findings(DIR / "empty-model-turn.jsonl") == [("TD103", 5, None)]


def test_whitespace_only_reply_is_empty() -> None:
    assert lint(HEADER, user("u1", "hi"), gemini("g1", " \n")) == [("TD103", 3, None)]


def test_signed_or_thinking_reply_is_not_empty() -> None:
    signed = [
        {
            "text": "Binary content received.",
            "thought": True,
            "thoughtSignature": "skip_thought_signature_validator",
        }
    ]
    thoughts = [{"subject": "Plan", "description": "think", "timestamp": "t"}]
    assert (
        lint(
            HEADER,
            user("u1", "hi"),
            gemini("g1", signed),
            user("u2", "go"),
            gemini("g2", "", thoughts=thoughts),
        )
        == []
    )


# -- replay of the edit log --------------------------------------------------------------------


def test_repeated_id_replaces_in_place() -> None:
    text = jsonl(
        HEADER,
        user("u1", "hi"),
        gemini("g1", " "),
        user("u2", "more"),
        gemini("g1", "Hello."),
        gemini("g2", "Done."),
    )
    assert text_findings("s.jsonl", text) == []
    conversation = read_text("s.jsonl", text)
    assert [m.ref.message_id for m in conversation.messages] == ["u1", "g1", "u2", "g2"]  # type: ignore[union-attr]
    assert conversation.messages[1].ref == MessageRef("g1", 4, "", None, (2, 4))


def test_checkpoint_resets_the_list_and_findings_point_into_it() -> None:
    damaged = jsonl(HEADER, user("u1", "hi"), gemini("g1", " "))
    rebuilt = {"$set": {"messages": [user("u1", "hi"), gemini("g1", [{"text": " "}])]}}
    text = damaged + jsonl(rebuilt, user("u2", "next"), gemini("g2", "Done."))
    assert text_findings("s.jsonl", text) == [("TD103", 4, "/$set/messages/1")]
    message = read_text("s.jsonl", text).messages[1]
    assert message.ref == MessageRef("g1", 3, "/$set/messages/1", 1, (3,))
    assert message.parts[0].ref == "/content/0"


def test_message_redefined_after_a_checkpoint_points_at_its_last_line() -> None:
    rebuilt = {"$set": {"messages": [user("u1", "hi"), gemini("g1", [{"text": " "}])]}}
    text = jsonl(HEADER, rebuilt, gemini("g1", "  "))
    assert text_findings("s.jsonl", text) == [("TD103", 3, None)]
    assert read_text("s.jsonl", text).messages[1].ref == MessageRef("g1", 2, "", None, (1, 2))


def test_superseded_records_are_not_checked() -> None:
    damaged = jsonl(
        HEADER, user("u1", "hi"), gemini("g1", " "), gemini("g0", "[Response interrupted by user]")
    )
    reset = {"$set": {"messages": [user("u1", "hi"), gemini("g2", "Hello.")]}}
    assert text_findings("s.jsonl", damaged + jsonl(reset)) == []


def test_rewind_cuts_the_list_and_unknown_targets_clear_it() -> None:
    base = [HEADER, user("u1", "hi"), gemini("g1", "Hello."), user("u2", "again"), gemini("g2", " ")]
    assert lint(*base) == [("TD103", 5, None)]
    assert lint(*base, {"$rewindTo": "u2"}) == []
    assert lint(*base, {"$rewindTo": "nope"}, user("u3", "x"), gemini("g3", " ")) == [("TD103", 8, None)]
    conversation = read_text("s.jsonl", jsonl(*base, {"$rewindTo": "u2"}))
    assert [m.ref.message_id for m in conversation.messages] == ["u1", "g1"]  # type: ignore[union-attr]
    assert conversation.ref == StreamRef(False, ((5, "u2"),))


def test_several_headers_and_metadata_updates_are_accepted() -> None:
    text = jsonl(
        HEADER,
        user("u1", "hi"),
        gemini("g1", "Hello."),
        {**HEADER, "startTime": "2026-08-01T11:00:00.000Z"},
        {"$set": {"sessionId": "s1", "summary": "greeting", "directories": ["/tmp"]}},
        user("u2", "bye"),
        gemini("g2", "Bye."),
    )
    assert text_findings("s.jsonl", text) == []
    assert len(read_text("s.jsonl", text).messages) == 4


def test_whole_legacy_record_on_one_line() -> None:
    text = jsonl({**HEADER, "messages": [user("u1", "hi"), gemini("g1", " ")]})
    assert text_findings("s.jsonl", text) == [("TD103", 1, "/messages/1")]


def test_injected_and_command_user_messages_are_not_replayed() -> None:
    # if "/stats" or the hook context were prompts, the tool response would be fused (TD104)
    records_ = [
        HEADER,
        user("u1", "read it"),
        gemini("g1", "", toolCalls=[call("c1")]),
        answer("r1", "c1"),
        user("u2", "/stats"),
        user("u3", "  ?"),
        user("u4", "<hook_context>x</hook_context>"),
        user("u5", ""),
        gemini("g2", "Done."),
    ]
    assert lint(*records_) == []


def test_notices_are_not_replayed() -> None:
    notice = {"id": "n1", "timestamp": "t", "type": "info", "content": "Request cancelled."}
    error = {
        "id": "e1",
        "timestamp": "t",
        "type": "error",
        "content": "Model stream ended with empty response text.",
    }
    base = [HEADER, user("u1", "read it"), gemini("g1", "", toolCalls=[call("c1")]), answer("r1", "c1")]
    assert lint(*base, notice, user("u2", "next")) == [("TD104", 6, None)]
    assert lint(*base, gemini("g2", "Done."), error) == []


# -- tool pairing --------------------------------------------------------------------------------


def test_rebuilt_calls_need_no_signature_but_stored_call_parts_do() -> None:
    rebuilt = gemini("g1", "", toolCalls=[call("c1")])
    assert lint(HEADER, user("u1", "go"), rebuilt, answer("r1", "c1"), gemini("g2", "Done.")) == []
    stored = gemini(
        "g1",
        [
            {"functionCall": {"id": "c1", "name": "read_file", "args": {}}},
            {"functionCall": {"id": "c2", "name": "read_file", "args": {}}},
        ],
    )
    assert lint(HEADER, user("u1", "go"), stored, answer("r1", "c1", "c2"), gemini("g2", "Done.")) == [
        ("TD401", 3, "/content/0")
    ]
    signed = [{"functionCall": {"id": "c1", "name": "read_file", "args": {}}, "thoughtSignature": "c2ln"}]
    assert (
        lint(HEADER, user("u1", "go"), gemini("g1", signed), answer("r1", "c1"), gemini("g2", "Done.")) == []
    )


def test_result_only_in_tool_calls_is_one_result() -> None:
    assert (
        lint(HEADER, user("u1", "go"), gemini("g1", "", toolCalls=[call("c1")]), gemini("g2", "Done.")) == []
    )


def test_second_recorded_response_is_a_duplicate() -> None:
    found = lint(
        HEADER,
        user("u1", "go"),
        gemini("g1", "", toolCalls=[call("c1")]),
        answer("r1", "c1"),
        answer("r2", "c1"),
        gemini("g2", "Done."),
    )
    assert found == [("TD303", 5, "/content/0")]


def test_unanswered_call_in_a_legacy_document() -> None:
    doc = {
        **HEADER,
        "messages": [
            user("u1", "go"),
            gemini("g1", "", toolCalls=[call("c1", result=False)]),
            user("u2", "next"),
            gemini("g2", "ok"),
        ],
    }
    assert text_findings("session.json", json.dumps(doc, indent=2)) == [
        ("TD301", 23, "/messages/1/toolCalls/0")
    ]
    doc["messages"] = doc["messages"][:2]
    assert text_findings("session.json", json.dumps(doc, indent=2)) == [
        ("TD306", 23, "/messages/1/toolCalls/0")
    ]


def test_orphan_displaced_and_reused_ids() -> None:
    assert lint(HEADER, user("u1", "go"), gemini("g1", "Hi."), answer("r1", "zz"), gemini("g2", "ok")) == [
        ("TD302", 4, "/content/0")
    ]
    # consecutive model turns are coalesced, so a user message has to sit between
    late = [user("u2", "wait"), gemini("g2", "Hm."), answer("r1", "c1"), gemini("g3", "ok")]
    displaced = [HEADER, user("u1", "go"), gemini("g1", "", toolCalls=[call("c1", result=False)]), *late]
    assert lint(*displaced) == [("TD304", 6, "/content/0")]
    reused = [
        HEADER,
        user("u1", "go"),
        gemini("g1", "", toolCalls=[call("c1")]),
        gemini("g2", "", toolCalls=[call("c1")]),
        gemini("g3", "ok"),
    ]
    assert lint(*reused) == [("TD305", 4, "/toolCalls/0")]


def test_masking_sync_copies_of_sibling_responses_are_not_results() -> None:
    both = [response("c1"), response("c2")]
    calls = [{**call("c1", result=False), "result": both}, {**call("c2", result=False), "result": both}]
    assert lint(HEADER, user("u1", "go"), gemini("g1", "", toolCalls=calls), gemini("g2", "ok")) == []


# -- other rules -------------------------------------------------------------------------------------


def test_user_message_recorded_twice_is_td403_but_a_prompt_typed_twice_is_not() -> None:
    twice = [HEADER, user("u1", "go"), user("u2", "go"), gemini("g1", "ok")]
    assert lint(*twice) == [("TD403", 3, None)]
    typed = [HEADER, user("u1", "go"), user("u2", "go", ts="2026-08-01T10:00:09.000Z"), gemini("g1", "ok")]
    assert lint(*typed) == []


def test_final_reply_with_trailing_whitespace_is_not_prefill() -> None:
    """Gemini CLI appends the next prompt before sending (Gemini rejects a history that
    ends with a model turn): the final reply is never prefill, its whitespace no damage."""
    assert lint(HEADER, user("u1", "hi"), gemini("g1", "Hello.\n")) == []


# -- robustness --------------------------------------------------------------------------------------


def test_wrong_field_types_do_not_crash() -> None:
    text = (
        jsonl(
            HEADER,
            {"id": "a", "type": "gemini", "content": 5, "toolCalls": "x", "thoughts": [None, 3]},
            {
                "id": "b",
                "type": "gemini",
                "content": [None, 7, {}, "s"],
                "toolCalls": [None, {"id": None, "result": 7}],
            },
            {"id": "c", "type": "user", "content": {"functionResponse": "x"}},
            {"id": "d", "type": 5, "content": None},
            {"id": "e", "type": "gemini", "content": [{"functionCall": "x", "thought": "y"}]},
            {
                "$set": {
                    "messages": [None, 1, {"id": 5}, {"id": "f", "type": "user", "content": [{"text": None}]}]
                }
            },
            {"$set": []},
            {"$set": {"messages": "nope"}},
            {"$rewindTo": 5},
            {
                "id": "g",
                "type": "gemini",
                "content": "ok",
                "toolCalls": [{"name": 3, "result": {"text": "x"}}],
            },
        )
        + "[1, 2]\n7\nnot json\n"
    )
    found = text_findings("s.jsonl", text)
    assert ("TD001", 14, None) in found
    read_text("s.jsonl", text)


def test_forced_on_other_layouts_does_not_crash() -> None:
    assert text_findings("x.json", '[{"role": "user", "content": "hi"}]', reader="gemini-cli") == []
    assert text_findings("x.json", '{"sessionId": "s"}', reader="gemini-cli") == []
    assert text_findings("x.jsonl", '{"type": "user"}\n', reader="gemini-cli") == []


def test_records_only_stdlib_can_parse_do_not_crash() -> None:
    # NaN, a lone surrogate and a 2**64 integer: still read; TD001 for the NaN lines only,
    # since JSON.parse, Gemini CLI's parser, takes a lone surrogate (issue #16 D20)
    text = (
        jsonl(HEADER)
        + '{"id":"u1","timestamp":"t","type":"user","content":[{"text":"hi \\ud800","n":NaN}]}\n'
        + '{"id":"u2","timestamp":"t","type":"user","content":[{"text":"hi \\ud800","n":18446744073709551616}]}\n'
        + '{"id":"g1","timestamp":"t","type":"gemini","content":"ok","n":NaN}\n'
    )
    assert [(rule, line) for rule, line, _ in text_findings("s.jsonl", text)] == [("TD001", 2), ("TD001", 4)]


def test_tool_output_stored_beside_a_legacy_result_is_not_a_prompt(tmp_path: Path) -> None:
    """2025 legacy sessions keep read_many_files' parts in toolCalls[].result (rules.md TD104)."""
    entry = call("m1", name="read_many_files")
    entry["result"] = [
        {
            "functionResponse": {
                "id": "m1",
                "name": "read_many_files",
                "response": {"output": "Tool execution succeeded."},
            }
        },
        {"text": "--- a.md ---\n\nhello\n\n"},
    ]
    session = {
        **HEADER,
        "lastUpdated": "2026-08-01T10:00:04.000Z",
        "messages": [user("u1", "read a.md"), gemini("g1", "", toolCalls=[entry]), gemini("g2", "done")],
    }
    path = tmp_path / "session-2025-09-26T05-50-57d7898f.json"
    path.write_text(json.dumps(session, indent=2))
    assert findings(path) == []
    session["messages"] = [*session["messages"][:2], user("u2", "and b.md?"), gemini("g2", "done")]
    path.write_text(json.dumps(session, indent=2))
    assert findings(path) == [("TD104", 46, "/messages/2")]


# -- record order (rules.md TD3): merging same-role messages hides nothing ----------------------


def test_model_text_after_an_unanswered_call_is_td301_not_pending() -> None:
    found = lint(
        HEADER,
        user("u1", "go"),
        gemini("g1", "", toolCalls=[call("c1", result=False)]),
        gemini("g2", "I could not read it."),
    )
    assert found == [("TD301", 3, "/toolCalls/0")]
    pending = lint(HEADER, user("u1", "go"), gemini("g1", "", toolCalls=[call("c1", result=False)]))
    assert pending == [("TD306", 3, "/toolCalls/0")]


def test_prompt_between_a_call_and_its_recorded_response_displaces_it() -> None:
    found = lint(
        HEADER,
        user("u1", "go"),
        gemini("g1", "", toolCalls=[call("c1", result=False)]),
        user("u2", "wait"),
        answer("a1", "c1"),
        gemini("g2", "ok"),
    )
    assert found == [("TD304", 5, "/content/0")]


def test_the_cli_continuation_nudge_after_a_tool_response_is_not_a_prompt() -> None:
    """client.ts sends `System: Please continue.` after an empty model response and records it."""
    base = (HEADER, user("u1", "go"), gemini("g1", "", toolCalls=[call("c1")]))
    assert lint(*base, user("u2", "System: Please continue."), gemini("g2", "done")) == []
    assert lint(*base, user("u2", "Please continue."), gemini("g2", "done")) == [("TD104", 4, None)]
