"""Reader qwen-code: detection, the replayed chain, every applicable rule, negative controls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from qwen_sessions import jsonl, rec
from support import FIXTURES, detected, findings, text_findings

from transcript_doctor.model import Conversation, PartKind, Role
from transcript_doctor.readers.qwen_code import READER
from transcript_doctor.readers.qwen_code.refs import (
    ChainRef,
    CompressedRef,
    LineCopyRef,
    LinkRef,
    RecordRef,
)
from transcript_doctor.source import sniff

DIR = FIXTURES / "qwen-code"
TOOL = DIR / "gen-tool-call-with-thought__307abf63-a3fe-471e-9f54-adcb69726de9.jsonl"
DANGLING = DIR / "gen-crash-dangling-functionCall__471593a1-a491-4074-aa20-fce1b0ea9995.jsonl"
CONTINUED = DIR / "gen-crash-then-continue__471593a1-a491-4074-aa20-fce1b0ea9995.jsonl"
REJECTED = DIR / "gen-degraded-rejected-0.24.4__3221d822-9cf7-49c5-b956-9ab2a7fc37c3.jsonl"
PERSISTED = DIR / "gen-request-timeout-persisted-0.15.6__e008e66c-179a-4d66-a640-2a542fd723be.jsonl"
CALL = {"functionCall": {"id": "call_1", "name": "read_file", "args": {"file_path": "a.txt"}}}
RESULT = {"functionResponse": {"id": "call_1", "name": "read_file", "response": {"output": "hi"}}}


def chain(*specs: tuple[str, Any]) -> str:
    """Records linked in file order: (type, parts) pairs get uuids u1, u2, …"""
    records = []
    for number, (kind, parts) in enumerate(specs, 1):
        parent = f"u{number - 1}" if number > 1 else None
        records.append(rec(f"u{number}", parent, kind, parts))
    return jsonl(*records)


def read(text: str) -> Conversation:
    (conversation,) = READER.read(sniff("s.jsonl", text.encode()))
    return conversation


def drop_line(path: Path, number: int) -> str:
    lines = path.read_text().splitlines(keepends=True)
    del lines[number - 1]
    return "".join(lines)


# -- detection ------------------------------------------------------------------------------


CLAUDE_CODE = [  # claude-code corpus, codemie-4c2ddfdc-….jsonl lines 1-3 (texts shortened)
    '{"type":"file-history-snapshot","messageId":"40523152-693d-4e07-8434-7f0c8f28cc05","snapshot":{"messageId":"40523152-693d-4e07-8434-7f0c8f28cc05","trackedFileBackups":{},"timestamp":"2025-12-10T19:37:45.356Z"},"isSnapshotUpdate":false}',
    '{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/tmp/private","sessionId":"4c2ddfdc-b619-4525-8d03-1950fb1b0257","version":"2.0.64","gitBranch":"analytics-v2","type":"user","message":{"role":"user","content":"create hello.py, md and js"},"uuid":"40523152-693d-4e07-8434-7f0c8f28cc05","timestamp":"2025-12-10T19:37:45.343Z","thinkingMetadata":{"level":"none","disabled":true,"triggers":[]},"todos":[]}',
    '{"parentUuid":"40523152-693d-4e07-8434-7f0c8f28cc05","isSidechain":false,"userType":"external","cwd":"/tmp/private","sessionId":"4c2ddfdc-b619-4525-8d03-1950fb1b0257","version":"2.0.64","gitBranch":"analytics-v2","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_bdrk_013SYvCzWGkVVXBeihWmL3gF","type":"message","role":"assistant","content":[{"type":"text","text":"I\'ll create three simple files."}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":4}},"type":"assistant","uuid":"f4dfad6e-e564-4e66-b8b0-b469f5204e23","timestamp":"2025-12-10T19:37:48.019Z"}',
]
CLAUDE_AGENT = [  # claude-code corpus, codemie-agent-50243ee8.jsonl line 1: a sidechain starting with a user line
    '{"parentUuid":null,"isSidechain":true,"userType":"external","cwd":"/tmp/private","sessionId":"4c2ddfdc-b619-4525-8d03-1950fb1b0257","version":"2.0.64","gitBranch":"analytics-v2","agentId":"50243ee8","type":"user","message":{"role":"user","content":"Warmup"},"uuid":"9dbb4e8d-73e8-4af5-9f90-c76b7404477c","timestamp":"2025-12-10T19:37:37.157Z"}',
]
GEMINI_CLI = [  # gemini-cli corpus, gen-resumed-dup-response__….jsonl lines 1 and 3
    '{"sessionId":"2c95bea0-ad3e-4160-a7da-a7294f3d336c","projectHash":"036c8bbd79d2050ec63aa7234cac9c681f7dfc71e51af6d5b685063e7c8e5a92","startTime":"2026-11-29T21:45:50.642Z","lastUpdated":"2026-11-29T21:45:50.642Z","kind":"main"}',
    '{"id":"eda37d7e-c549-4311-b3fe-256467aa9e97","timestamp":"2026-11-29T21:45:50.655Z","type":"user","content":[{"text":"What files are in this directory?"}]}',
]


@pytest.mark.parametrize(
    "lines",
    [
        CLAUDE_CODE,
        CLAUDE_CODE[1:],  # without the uuid-less snapshot line
        CLAUDE_AGENT,
        GEMINI_CLI,
        GEMINI_CLI[1:],
        # Claude Code system line: the same envelope, but no Gemini Content anywhere
        [
            '{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"s","version":"2.1.4","type":"system","subtype":"compact_boundary","content":"Conversation compacted","uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}'
        ],
        # Qwen envelope with a Claude message inside
        [json.dumps(rec("u1", None, "user") | {"message": {"role": "user", "content": "hi"}})],
        ['{"role": "user", "content": "hi"}', '{"role": "assistant", "content": "hello"}'],
        ['{"role": "model", "parts": [{"text": "hi"}]}'],  # bare Gemini Content lines
    ],
)
def test_does_not_claim_look_alikes(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "chats" / "x.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    assert detected(path) != "qwen-code"


OTHER_FIXTURES = sorted(p for p in FIXTURES.glob("*/*.json*") if p.parent.name != "qwen-code")


@pytest.mark.parametrize("path", OTHER_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_does_not_claim_other_vendors_fixtures(path: Path) -> None:
    assert detected(path) != "qwen-code"


def test_does_not_claim_single_json_documents(tmp_path: Path) -> None:
    path = tmp_path / "package.json"
    path.write_text('{"name": "pkg", "version": "1.0.0", "type": "module"}')
    assert detected(path) is None


# -- corpus copies ------------------------------------------------------------------------------


def test_clean_files_have_no_findings() -> None:
    # TOOL has telemetry records between the call (line 4) and its result (line 6): normal.
    assert findings(TOOL) == []


def test_rejected_placeholder_ends_on_a_prompt_without_finding() -> None:
    assert findings(REJECTED) == []


def test_persisted_request_timeout_is_a_placeholder_reply() -> None:
    assert findings(PERSISTED) == [("TD201", 3, None)]


def test_dangling_call_at_the_end_is_pending() -> None:
    assert findings(DANGLING) == [("TD306", 4, "/message/parts/0")]


@pytest.mark.parametrize("subtype", [["realtime_message"], {"kind": "x"}, 7])
def test_a_subtype_that_is_not_a_string_is_replayed(subtype: object) -> None:
    """Qwen compares ``subtype`` with strings: a list or an object is no unsent subtype
    (it used to stop the check with an internal error: a list is not hashable)."""
    prompt = rec("u-1", None, "user", [{"text": "Say hi"}], subtype=subtype)
    unanswered = rec("a-1", "u-1", "assistant", [{"functionCall": {"id": "c-1", "name": "ls", "args": {}}}])
    again = rec("u-2", "a-1", "user", [{"text": "and?"}])
    assert text_findings("s.jsonl", jsonl(prompt, unanswered, again)) == [("TD301", 2, "/message/parts/0")]


def test_dangling_call_followed_by_more_conversation_is_unanswered() -> None:
    assert findings(CONTINUED) == [("TD301", 4, "/message/parts/0")]


# -- derived fixtures ----------------------------------------------------------------------------


def test_duplicate_result() -> None:
    assert findings(DIR / "damaged-duplicate-result.jsonl") == [("TD303", 9, "/message/parts/0")]


def test_displaced_result() -> None:
    assert findings(DIR / "damaged-displaced-result.jsonl") == [("TD304", 10, "/message/parts/0")]


def test_broken_parent_link_reports_the_record_whose_link_dangles() -> None:
    assert findings(DIR / "damaged-broken-parent-link.jsonl") == [("TD404", 3, None)]


def test_byte_identical_repeated_line_is_a_duplicated_user_turn() -> None:
    assert findings(DIR / "damaged-repeated-prompt-line.jsonl") == [("TD403", 2, None)]


def test_empty_turn() -> None:
    assert findings(DIR / "damaged-empty-turn.jsonl") == [("TD103", 8, None)]


def test_trailing_whitespace_final_assistant() -> None:
    assert findings(DIR / "damaged-trailing-whitespace.jsonl") == [("TD102", 8, "/message/parts/0")]


def test_rewound_dead_branch_is_not_replayed() -> None:
    # Lines 1-9 hold the unanswered call of gen-crash-then-continue; the rewind re-rooted them away.
    path = DIR / "rewound-dead-branch.jsonl"
    assert findings(path) == []
    conversation = read(path.read_text())
    assert [(m.role, m.origin.line) for m in conversation.messages] == [(Role.USER, 11), (Role.ASSISTANT, 12)]


def test_compressed_history_is_the_base_and_findings_point_inside_it() -> None:
    path = DIR / "compressed-placeholder.jsonl"
    assert findings(path) == [("TD201", 8, "/systemPayload/compressedHistory/3")]
    conversation = read(path.read_text())
    assert [(m.origin.line, m.origin.pointer) for m in conversation.messages] == [
        (8, f"/systemPayload/compressedHistory/{i}") for i in range(6)
    ] + [(9, None), (10, None)]
    assert conversation.messages[3].ref == CompressedRef("d4f7b0c3-6e9a-4c25-b148-af3dc05e7b93", 7, 3)
    assert conversation.messages[3].parts[0].origin.pointer == "/systemPayload/compressedHistory/3/parts/0"


# -- chain semantics ----------------------------------------------------------------------------


def test_broken_link_in_the_middle_drops_the_call_and_orphans_its_result() -> None:
    # Line 5 (telemetry between call and result) lost: resume starts at the result.
    assert text_findings("s.jsonl", drop_line(TOOL, 5)) == [
        ("TD302", 5, "/message/parts/0"),
        ("TD404", 5, None),
    ]


def test_broken_link_ref_names_the_relink_target() -> None:
    conversation = read(drop_line(TOOL, 3))
    (link,) = conversation.broken_links
    assert link.missing == "64dd98ca-bed4-4eb9-8ce7-f543e8ebc0ab"
    assert link.ref == LinkRef(
        "5c548b06-19c8-4766-b503-4f44b45c1671",
        (2,),
        "64dd98ca-bed4-4eb9-8ce7-f543e8ebc0ab",
        previous="8d30ba0a-35fd-4c17-94af-898e071b7ce7",
    )


def test_broken_link_off_the_chain_is_reported_too() -> None:
    text = jsonl(
        rec("u1", None, "user", [{"text": "hi"}]),
        rec("x1", "lost", "user", [{"text": "old branch"}]),
        rec("u2", "u1", "assistant", [{"text": "hello"}]),
    )
    assert text_findings("s.jsonl", text) == [("TD404", 2, None)]


def test_leaf_is_the_last_record_in_the_file_not_the_newest_timestamp() -> None:
    late = rec("u3", "u1", "assistant", [{"text": "branch b"}])
    late["timestamp"] = "2020-01-01T00:00:00.000Z"
    text = jsonl(
        rec("u1", None, "user", [{"text": "hi"}]),
        rec("u2", "u1", "assistant", [{"text": "branch a"}]),
        late,
    )
    conversation = read(text)
    assert [m.visible_text for m in conversation.messages] == ["hi", "branch b"]
    assert conversation.ref == ChainRef(("u1", "u3"), None)


def test_records_sharing_a_uuid_are_merged() -> None:
    text = jsonl(
        rec("u1", None, "user", [{"text": "hi"}]),
        rec("u2", "u1", "assistant", [{"text": "Hel"}]),
        rec("u2", "u1", "assistant", [{"text": "lo"}, CALL]),
        rec("u3", "u2", "tool_result", [RESULT]),
        rec("u4", "u3", "assistant", [{"text": "done"}]),
    )
    assert text_findings("s.jsonl", text) == []
    messages = read(text).messages
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    merged = messages[1]
    assert merged.visible_text == "Hello"
    assert [(p.origin.line, p.origin.pointer) for p in merged.parts] == [
        (2, "/message/parts/0"),
        (3, "/message/parts/0"),
        (3, "/message/parts/1"),
    ]
    assert merged.ref == RecordRef("u2", "u1", (1, 2))


def test_repeated_line_copy_is_its_own_message_with_a_line_ref() -> None:
    messages = read((DIR / "damaged-repeated-prompt-line.jsonl").read_text()).messages
    first, copy = messages[0], messages[1]
    assert first.ref == RecordRef("8b1a0f65-85dc-4182-a59d-aadd7ff0d4d8", None, (0, 1))
    assert copy.ref == LineCopyRef("8b1a0f65-85dc-4182-a59d-aadd7ff0d4d8", 1, 0)
    assert first.dup_key == copy.dup_key is not None
    assert first.visible_text == copy.visible_text == "What does notes.txt say?"


def test_record_refs_carry_line_uuid_and_parent() -> None:
    messages = read(TOOL.read_text()).messages
    assert [m.ref for m in messages] == [
        RecordRef("8b1a0f65-85dc-4182-a59d-aadd7ff0d4d8", None, (0,)),
        RecordRef("5c548b06-19c8-4766-b503-4f44b45c1671", "64dd98ca-bed4-4eb9-8ce7-f543e8ebc0ab", (3,)),
        RecordRef("819e5723-09a5-496e-9564-8888d9b6bd85", "57fcf913-6fac-41c7-b191-ce814b6b516a", (5,)),
        RecordRef("9064dc70-f55c-428b-91a3-94ced75e0797", "679b2d7e-e259-4e82-9445-ba93ae1d6dd0", (7,)),
    ]
    assert [p.kind for p in messages[1].parts] == [PartKind.THINKING, PartKind.TOOL_CALL]


def test_later_compression_replaces_an_earlier_one() -> None:
    def compression(uuid: str, parent: str, history: list[Any]) -> dict[str, Any]:
        payload = {"info": {}, "compressedHistory": history}
        return rec(uuid, parent, "system", subtype="chat_compression", systemPayload=payload)

    text = jsonl(
        rec("u1", None, "user", [{"text": "hi"}]),
        compression("c1", "u1", [{"role": "model", "parts": [{"text": "(request timeout)"}]}]),
        compression("c2", "c1", [{"role": "user", "parts": [{"text": "summary"}]}]),
        rec("u2", "c2", "assistant", [{"text": "ok"}]),
    )
    assert text_findings("s.jsonl", text) == []
    assert [m.visible_text for m in read(text).messages] == ["summary", "ok"]


def test_cycle_stops_the_walk() -> None:
    text = jsonl(
        rec("u1", "u2", "user", [{"text": "hi"}]),
        rec("u2", "u1", "assistant", [{"text": "hello"}]),
    )
    assert [m.visible_text for m in read(text).messages] == ["hi", "hello"]


# -- rules on inline variants -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ([{"text": "\n (request timeout)"}], [("TD201", 2, None)]),
        ([{"text": " (request timeout) "}], [("TD102", 2, "/message/parts/0"), ("TD201", 2, None)]),
        ([{"text": "(empty content)"}], [("TD201", 2, None)]),
        ([{"text": "thinking", "thought": True}, {"text": "(request timeout)"}], [("TD201", 2, None)]),
        ([{"text": "The endpoint returned (request timeout) once."}], []),
        ([{"text": "(request timeout)"}, CALL], [("TD306", 2, "/message/parts/1")]),
        ([], [("TD103", 2, None)]),
        ([{"text": "  "}], [("TD103", 2, None)]),
        ([{}], [("TD103", 2, None)]),
        ([{"text": "", "thoughtSignature": "sig"}], []),
        ([{"text": "why", "thought": True}], []),
    ],
)
def test_assistant_turn_rules(parts: list[Any], expected: list[tuple[str, int, str | None]]) -> None:
    text = chain(("user", [{"text": "hi"}]), ("assistant", parts))
    assert text_findings("s.jsonl", text) == expected


def test_tool_result_followed_directly_by_a_prompt_is_not_td104() -> None:
    text = chain(
        ("user", [{"text": "hi"}]),
        ("assistant", [CALL]),
        ("tool_result", [RESULT]),
        ("user", [{"text": "never mind"}]),
        ("assistant", [{"text": "ok"}]),
    )
    assert text_findings("s.jsonl", text) == []


def test_system_records_between_call_and_result_are_normal() -> None:
    text = jsonl(
        rec("u1", None, "user", [{"text": "hi"}]),
        rec("u2", "u1", "assistant", [CALL]),
        rec("s1", "u2", "system", subtype="ui_telemetry", systemPayload={"uiEvent": {}}),
        rec("s2", "s1", "system", subtype="attribution_snapshot", systemPayload={}),
        rec("u3", "s2", "tool_result", [RESULT]),
        rec("u4", "u3", "assistant", [{"text": "done"}]),
    )
    assert text_findings("s.jsonl", text) == []


def test_calls_without_ids_pair_by_adjacency() -> None:
    call = {"functionCall": {"name": "read_file", "args": {}}}
    result = {"functionResponse": {"name": "read_file", "response": {"output": "x"}}}
    text = chain(
        ("user", [{"text": "hi"}]),
        ("assistant", [call]),
        ("tool_result", [result]),
        ("assistant", [call]),
        ("user", [{"text": "go on"}]),
    )
    assert text_findings("s.jsonl", text) == [("TD301", 4, "/message/parts/0")]
    messages = read(text).messages
    assert messages[1].parts[0].call_id == messages[2].parts[0].call_id is not None
    assert messages[2].parts[0].paired_by == "adjacency"


def test_unsent_subtypes_are_not_replayed() -> None:
    text = jsonl(
        rec("u1", None, "user", [{"text": "hi"}]),
        rec("u2", "u1", "tool_result", [RESULT], subtype="code_mode_tool_result"),
        rec("u3", "u2", "assistant", [{"text": "done"}]),
    )
    assert text_findings("s.jsonl", text) == []


# -- robustness ------------------------------------------------------------------------------------


MALFORMED = [
    rec("u1", None, "user", "not a list"),
    rec("u2", "u1", "assistant", None, message="a string"),
    rec("u3", "u2", "assistant", None, message={"role": 5, "parts": {"text": "x"}}),
    rec(
        "u4",
        "u3",
        "assistant",
        [None, 3, "s", {"functionCall": "x"}, {"functionCall": {"id": 7, "name": None}}],
    ),
    rec("u5", "u4", "tool_result", [{"functionResponse": {"id": None, "response": "x"}}]),
    rec(
        "u6",
        "u5",
        "system",
        subtype="chat_compression",
        systemPayload={"compressedHistory": [1, {"parts": 2}]},
    ),
    rec("u7", "u6", "system", subtype="chat_compression", systemPayload={"compressedHistory": "x"}),
    rec("x", "u7", "user", [{"text": "no uuid"}]) | {"uuid": None},
    rec("u8", 42, "user", [{"text": "numeric parent"}]),
    rec("u9", "u8", "user", [{"text": "x"}]) | {"message": {"role": "user", "parts": [{"text": 1}]}},
]


@pytest.mark.parametrize("index", range(len(MALFORMED)))
def test_malformed_records_do_not_crash(index: int) -> None:
    text = jsonl(rec("u0", None, "user", [{"text": "hi"}]), MALFORMED[index])
    text_findings("s.jsonl", text, reader="qwen-code")


def test_malformed_file_as_a_whole_does_not_crash() -> None:
    text = jsonl(*MALFORMED) + "[1, 2]\n{torn"
    rules = {rule for rule, _, _ in text_findings("s.jsonl", text, reader="qwen-code")}
    assert "TD001" in rules


def test_forced_on_a_json_document_does_not_crash() -> None:
    assert text_findings("s.json", '{"a": [1, 2]}', reader="qwen-code") == []


def test_long_chain_is_read_iteratively() -> None:
    count = 20_000
    records = [rec("r0", None, "user", [{"text": "start"}])]
    for number in range(1, count):
        kind = ("assistant", "tool_result")[number % 2 == 0]
        call_id = f"c{(number + 1) // 2}"
        part = (
            {"functionCall": {"id": call_id, "name": "f", "args": {}}}
            if kind == "assistant"
            else {"functionResponse": {"id": call_id, "name": "f", "response": {"output": ""}}}
        )
        records.append(rec(f"r{number}", f"r{number - 1}", kind, [part]))
    text = jsonl(*records)
    assert text_findings("s.jsonl", text) == [("TD306", count, "/message/parts/0")]
    conversation = read(text)
    assert len(conversation.messages) == count
    assert isinstance(conversation.ref, ChainRef) and len(conversation.ref.uuids) == count


# -- record order (rules.md TD3): merging same-role messages hides nothing ----------------------


def test_model_text_after_an_unanswered_call_is_td301_not_pending() -> None:
    text = chain(
        ("user", [{"text": "hi"}]),
        ("assistant", [CALL]),
        ("assistant", [{"text": "I could not read it."}]),
    )
    assert text_findings("s.jsonl", text) == [("TD301", 2, "/message/parts/0")]


def test_prompt_or_model_text_between_a_call_and_its_result_displaces_it() -> None:
    prompt = chain(
        ("user", [{"text": "hi"}]),
        ("assistant", [CALL]),
        ("user", [{"text": "wait"}]),
        ("tool_result", [RESULT]),
        ("assistant", [{"text": "ok"}]),
    )
    assert text_findings("s.jsonl", prompt) == [("TD304", 4, "/message/parts/0")]
    model_text = chain(
        ("user", [{"text": "hi"}]),
        ("assistant", [CALL]),
        ("assistant", [{"text": "Reading it now."}]),
        ("tool_result", [RESULT]),
        ("assistant", [{"text": "ok"}]),
    )
    assert text_findings("s.jsonl", model_text) == [("TD304", 4, "/message/parts/0")]
