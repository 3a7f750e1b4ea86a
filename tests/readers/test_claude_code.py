"""Reader claude-code: detection, the replayed chain, every applicable rule, negative controls."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from claude_sessions import assistant, call, entry, jsonl, result, text, user
from support import FIXTURES, detected, findings, lint_bytes, text_findings

from transcript_doctor.model import Conversation, PartKind, Role
from transcript_doctor.readers.claude_code import READER
from transcript_doctor.readers.claude_code.refs import FileRef, LineRef, MessageRef, RelinkRef
from transcript_doctor.reporters import record
from transcript_doctor.source import sniff

DIR = FIXTURES / "claude-code"


def read(path: Path) -> Conversation:
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    return conversation


def read_text(text: str) -> Conversation:
    (conversation,) = READER.read(sniff("s.jsonl", text.encode()))
    return conversation


def text_records(text: str) -> list[dict[str, object]]:
    """The ``-o json`` objects of a session given as text."""
    report = lint_bytes("s.jsonl", text.encode())
    return [record(report, f) for f in report.findings]


def grouped_lines(conversation: Conversation) -> list[list[int]]:
    """The 1-based lines each message was built from."""
    groups = []
    for message in conversation.messages:
        assert isinstance(message.ref, MessageRef)
        groups.append([line.index + 1 for line in message.ref.lines])
    return groups


# -- building small sessions ----------------------------------------------------------


def parallel_dag(*, drop_result: str | None = None) -> list[dict[str, Any]]:
    """The 2.1.x writer's shape: each result parented on the line holding its own tool_use."""
    lines = [
        user("u1", None, 0, "read three files"),
        assistant("a1", "u1", 1, "msg_1", text("Reading.")),
        assistant("a2", "a1", 2, "msg_1", call("t1")),
        assistant("a3", "a2", 3, "msg_1", call("t2")),
        assistant("a4", "a3", 4, "msg_1", call("t3")),
        user("r1", "a2", 5, result("t1"), sourceToolAssistantUUID="a2", toolUseResult={"type": "text"}),
        user("r3", "a4", 5, result("t3"), sourceToolAssistantUUID="a4", toolUseResult={"type": "text"}),
        user("r2", "a3", 6, result("t2"), sourceToolAssistantUUID="a3", toolUseResult={"type": "text"}),
        assistant("a5", "r2", 8, "msg_2", text("Done.")),
    ]
    return [line for line in lines if line["uuid"] != drop_result]


# -- detection ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        # Qwen Code: same uuid/parentUuid envelope, Gemini Content messages
        {
            "uuid": "q1",
            "parentUuid": None,
            "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            "type": "user",
            "cwd": "/w",
            "version": "0.24.4",
            "message": {"role": "user", "parts": [{"text": "hi"}]},
        },
        {
            "uuid": "q2",
            "parentUuid": None,
            "sessionId": "s",
            "type": "system",
            "subtype": "ui_telemetry",
            "systemPayload": {},
            "isSidechain": False,
        },
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x"}},  # Codex
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},  # Anthropic Messages
        {"sessionId": "s", "projectHash": "h", "startTime": "t", "kind": "main"},  # Gemini CLI header
        {"display": "fix it", "pastedContents": {}, "timestamp": 1, "project": "/w", "sessionId": "s"},
        {"type": "gemini", "id": "g1", "content": "hi", "timestamp": "2026-01-01T00:00:00Z"},
    ],
)
def test_does_not_claim_look_alikes(tmp_path: Path, record: dict[str, Any]) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(jsonl(record, record))
    assert detected(path) != "claude-code"


def test_does_not_claim_the_sub_agent_meta_file(tmp_path: Path) -> None:
    path = tmp_path / "agent-a485154.meta.json"
    path.write_text('{"agentType": "solution-architect", "description": "Analyze"}')
    assert detected(path) != "claude-code"


def test_does_not_claim_other_vendors_fixtures() -> None:
    others = [p for p in FIXTURES.glob("*/*.json*") if p.parent.name != "claude-code"]
    assert [p for p in others if detected(p) == "claude-code"] == []


@pytest.mark.parametrize(
    "record",
    [
        {"type": "summary", "summary": "Old chat", "leafUuid": "gone"},
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}, "isSnapshotUpdate": False},
    ],
)
def test_a_file_of_only_metadata_lines_is_claimed_and_clean(tmp_path: Path, record: dict[str, Any]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(jsonl(record) * 3)
    assert detected(path) == "claude-code"
    assert findings(path) == []


def test_metadata_filling_the_head_still_claims_the_file(tmp_path: Path) -> None:
    head = [{"type": "queue-operation", "operation": "enqueue", "sessionId": "S"}]
    head += [{"type": f"bookkeeping-{i}", "sessionId": "S"} for i in range(30)]
    path = tmp_path / "s.jsonl"
    path.write_text(jsonl(*head, *parallel_dag()))
    assert detected(path) == "claude-code"
    assert findings(path) == []


# -- real files -----------------------------------------------------------------------


def test_session_captured_mid_tool_is_pending_not_damage() -> None:
    assert findings(DIR / "codemie-incremental-subagents-turn-1.jsonl") == [
        ("TD306", 25, "/message/content/0")
    ]


def test_one_response_over_four_lines_is_one_turn() -> None:
    messages = read(DIR / "codemie-4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl").messages
    turn = messages[1]
    assert (turn.role, turn.origin.line) == (Role.ASSISTANT, 3)
    assert [p.kind for p in turn.parts] == [PartKind.TEXT] + [PartKind.TOOL_CALL] * 3
    assert [p.origin.line for p in turn.parts] == [3, 4, 5, 6]
    results = messages[2]
    assert [p.origin.line for p in results.parts] == [8, 10, 12]
    assert len(messages) == 14


def test_response_split_by_summary_lines_is_grouped_by_chain() -> None:
    messages = read(DIR / "codemie-incremental-simple-turn-1.jsonl").messages
    assert [(m.role, m.origin.line) for m in messages] == [(Role.USER, 3), (Role.ASSISTANT, 7)]
    assert [(p.kind, p.origin.line) for p in messages[1].parts] == [
        (PartKind.THINKING, 7),
        (PartKind.TEXT, 12),
    ]


def test_real_parallel_dag_is_re_attached() -> None:
    messages = read(DIR / "codemie-incremental-subagents-turn-2.jsonl").messages
    turn = next(m for m in messages if m.origin.line == 27)
    assert isinstance(turn.ref, MessageRef)
    assert [r.index + 1 for r in turn.ref.lines] == [27, 28, 29, 30, 31]
    answers = messages[messages.index(turn) + 1]
    assert sorted(p.origin.line for p in answers.parts) == [32, 33, 34]


def test_rejected_tool_and_interruption_marker_are_legitimate() -> None:
    messages = read(DIR / "codemie-session-9eda1058.jsonl").messages
    merged = messages[2]
    assert [(p.kind, p.origin.line) for p in merged.parts] == [
        (PartKind.TOOL_RESULT, 21),
        (PartKind.TEXT, 22),
        (PartKind.TEXT, 24),
    ]
    assert merged.parts[0].is_error
    assert findings(DIR / "codemie-session-9eda1058.jsonl") == []


def test_sidechain_file_is_its_own_conversation() -> None:
    messages = read(DIR / "codemie-agent-50243ee8.jsonl").messages
    assert [(m.role, m.origin.line) for m in messages] == [(Role.USER, 1), (Role.ASSISTANT, 2)]


# -- damaged files ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("clean-rewound-branch.jsonl", []),
        ("damaged-unanswered-tool-use.jsonl", [("TD301", 5, "/message/content/0")]),
        ("damaged-orphan-tool-result.jsonl", [("TD302", 23, "/message/content/0")]),
        ("damaged-duplicate-tool-result.jsonl", [("TD303", 18, "/message/content/0")]),
        ("damaged-displaced-tool-result.jsonl", [("TD304", 22, "/message/content/0")]),
        ("damaged-duplicate-tool-use-id.jsonl", [("TD305", 18, "/message/content/0")]),
        ("damaged-whitespace-turn.jsonl", [("TD103", 13, None)]),
        ("damaged-thinking-only.jsonl", [("TD103", 7, None)]),
        ("damaged-synthetic-replies.jsonl", [("TD201", 23, None), ("TD201", 28, None)]),
        ("damaged-trailing-whitespace.jsonl", [("TD102", 12, "/message/content/0")]),
        ("damaged-empty-signature.jsonl", [("TD402", 7, "/message/content/0")]),
        ("damaged-duplicated-line.jsonl", [("TD403", 16, None)]),
        ("damaged-dangling-parent.jsonl", [("TD404", 15, None)]),
        ("damaged-glued-line.jsonl", [("TD001", 15, None)]),
        ("damaged-torn-last-line.jsonl", [("TD001", 2, None)]),
        ("damaged-tool-use-interrupted.jsonl", [("TD202", 23, None)]),
        ("damaged-parallel-unanswered.jsonl", [("TD301", 31, "/message/content/0")]),
    ],
)
def test_damage(name: str, expected: list[tuple[str, int, str | None]]) -> None:
    assert findings(DIR / name) == expected


# -- the chain --------------------------------------------------------------------------


def test_parallel_dag_with_results_on_their_own_tool_use_lines_is_healthy() -> None:
    assert text_findings("s.jsonl", jsonl(*parallel_dag())) == []
    messages = read_text(jsonl(*parallel_dag())).messages
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    assert [p.call_id for p in messages[2].parts] == ["t1", "t3", "t2"]


def test_parallel_dag_missing_one_result_points_at_its_tool_use_line() -> None:
    assert text_findings("s.jsonl", jsonl(*parallel_dag(drop_result="r3"))) == [
        ("TD301", 5, "/message/content/0")
    ]


def streamed_tool_execution() -> list[dict[str, Any]]:
    """2.1.63 streamed tool execution (wild ``fabien-agent-aac1f23249197c.jsonl`` lines 42-50):
    the results of a response's first calls are recorded while it still streams, and its
    last ``tool_use`` line is parented on the result line of the one before."""
    return [
        user("u1", None, 0, "list the actions"),
        assistant("a1", "u1", 1, "m1", text("Let me list them.")),
        assistant("a2", "a1", 2, "m1", call("t1", "Bash")),
        assistant("a3", "a2", 3, "m1", call("t2")),
        user("r1", "a2", 4, result("t1"), sourceToolAssistantUUID="a2"),
        entry("progress", "p1", "r1", 4, data={"type": "hook_progress"}),
        user("r2", "a3", 4, result("t2"), sourceToolAssistantUUID="a3"),
        assistant("a4", "r2", 5, "m1", call("t3", "Bash")),
        user("r3", "a4", 6, result("t3"), sourceToolAssistantUUID="a4"),
        assistant("a5", "r3", 7, "m2", text("Done.")),
    ]


def test_streamed_tool_execution_folds_the_response_back_together() -> None:
    lines = streamed_tool_execution()
    assert text_findings("s.jsonl", jsonl(*lines)) == []
    conversation = read_text(jsonl(*lines))
    assert grouped_lines(conversation) == [[1], [2, 3, 4, 8], [7, 5, 9], [10]]
    assert [p.call_id for p in conversation.messages[1].tool_calls] == ["t1", "t2", "t3"]
    assert [p.call_id for p in conversation.messages[2].tool_results] == ["t2", "t1", "t3"]


def test_streamed_tool_execution_missing_a_result_is_still_td301() -> None:
    lines = [line for line in streamed_tool_execution() if line["uuid"] != "r1"]
    lines[4]["parentUuid"] = "a1"  # p1 hung off r1; nothing else named it
    assert text_findings("s.jsonl", jsonl(*lines)) == [("TD301", 3, "/message/content/0")]


def test_a_prompt_between_the_lines_of_one_response_stops_the_fold() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("t1")),
        user("u2", "a1", 2, "wait"),
        assistant("a2", "u2", 3, "m1", text("Hm.")),
    ]
    assert grouped_lines(read_text(jsonl(*lines))) == [[1], [2], [3], [4]]
    assert text_findings("s.jsonl", jsonl(*lines)) == [("TD301", 2, "/message/content/0")]


def test_real_streamed_sub_agent_file_is_healthy() -> None:
    path = FIXTURES / "wild" / "claude-code" / "fabien-agent-aac1f23249197c.jsonl"
    assert findings(path) == []
    messages = read(path).messages
    turn = next(m for m in messages if m.origin.line == 42)
    assert isinstance(turn.ref, MessageRef)
    assert [r.index + 1 for r in turn.ref.lines] == [42, 43, 44, 48]
    assert sorted(p.origin.line for p in messages[messages.index(turn) + 1].parts) == [45, 47, 49]


def recorded_twice() -> list[dict[str, Any]]:
    """One conversation written twice into one file: the second recording has new uuids, the
    same message.ids and timestamps, and drops the parallel branch its loader lost (the real
    shape of wild ``sessionshare-fixture-general-tool-calls.jsonl``, lines 5-353 and 355-531)."""
    first = [
        user("u1", None, 0, "read two files"),
        assistant("a1", "u1", 1, "m1", call("t1")),
        assistant("a2", "a1", 2, "m1", call("t2")),
        user("r1", "a1", 3, result("t1"), sourceToolAssistantUUID="a1"),
        user("r2", "a2", 3, result("t2"), sourceToolAssistantUUID="a2"),
        assistant("a3", "r2", 4, "m2", call("t3")),
        user("r3", "a3", 5, result("t3"), sourceToolAssistantUUID="a3"),
        assistant("a4", "r3", 6, "m3", text("Both read.")),
    ]
    second = [
        user("U1", None, 0, "read two files"),
        assistant("A2", "U1", 2, "m1", call("t2")),
        user("R2", "A2", 3, result("t2")),
        assistant("A3", "R2", 4, "m2", call("t3")),
        user("R3", "A3", 5, result("t3")),
        assistant("A4", "R3", 6, "m3", text("Both read.")),
        user("U5", "A4", 7, "thanks"),
        assistant("A5", "U5", 8, "m4", text("You are welcome.")),
    ]
    return [*first, {"type": "summary", "summary": "Reading", "leafUuid": "a4"}, *second]


def test_conversation_recorded_twice_is_one_td305() -> None:
    records = text_records(jsonl(*recorded_twice()))
    assert [(r["rule"], r["line"], r["pointer"]) for r in records] == [("TD305", 3, "/message/content/0")]
    assert records[0]["message"] == (
        "tool call id t2 is used again (first at line 11 at /message/content/0), and 1 more id "
        "with it: 2 responses are recorded twice (same message.id, new uuids: lines 11-13 and "
        "again 3-6), and Claude Code merges the two copies of each into one replayed response; "
        "tool call ids must be unique"
    )


def test_one_response_recorded_twice_names_it() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", text("Looking."), call("t1")),
        user("r1", "a1", 2, result("t1")),
        assistant("a1b", "r1", 1, "m1", text("Looking."), call("t1")),
        user("r1b", "a1b", 2, result("t1")),
        assistant("a2", "r1b", 3, "m2", text("Done.")),
    ]
    records = text_records(jsonl(*lines))
    assert [(r["rule"], r["line"]) for r in records] == [("TD305", 4)]
    assert str(records[0]["message"]).endswith(
        "(first at line 2 at /message/content/1): a response is recorded twice (same message.id, "
        "new uuids: lines 2-2 and again 4-4), and Claude Code merges the two copies of each into "
        "one replayed response; tool call ids must be unique"
    )


def test_an_id_reused_by_another_response_is_still_one_finding_per_call() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("t1")),
        user("r1", "a1", 2, result("t1")),
        assistant("a2", "r1", 3, "m2", call("t1")),
        user("r2", "a2", 4, result("t1")),
        assistant("a3", "r2", 5, "m3", call("t1")),
        user("r3", "a3", 6, result("t1")),
        assistant("a4", "r3", 7, "m4", text("Done.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == [
        ("TD305", 4, "/message/content/0"),
        ("TD305", 6, "/message/content/0"),
    ]


def test_real_file_holding_its_conversation_twice_gives_one_td305() -> None:
    path = FIXTURES / "wild" / "claude-code" / "sessionshare-fixture-general-tool-calls.jsonl"
    assert findings(path) == [
        ("TD001", 1, None),
        ("TD001", 2, None),
        ("TD305", 10, "/message/content/0"),
        ("TD201", 544, None),
        ("TD201", 559, None),
        ("TD306", 562, "/message/content/0"),
    ]


def test_legacy_progress_fork_results_are_re_attached() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("t1")),
        entry("progress", "p1", "a1", 2, data={"type": "bash_progress"}),
        assistant("a2", "p1", 2, "m1", call("t2")),
        entry("progress", "p2", "a2", 3, data={"type": "bash_progress"}),
        user("r1", "a1", 4, result("t1")),
        user("r2", "a2", 5, result("t2")),
        assistant("a3", "p2", 6, "m2", text("Done.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == []
    messages = read_text(jsonl(*lines)).messages
    assert [p.call_id for p in messages[2].parts] == ["t1", "t2"]


def test_older_chained_parallel_results_are_healthy() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("t1")),
        assistant("a2", "a1", 2, "m1", call("t2")),
        user("r1", "a2", 3, result("t1")),
        user("r2", "r1", 4, result("t2")),
        assistant("a3", "r2", 5, "m2", text("Done.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == []


def test_off_chain_retry_is_not_replayed() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("x1", "u1", 1, "mx", call("dead")),  # abandoned attempt, never answered
        assistant("a1", "u1", 5, "m1", text("Hello.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == []
    assert [m.origin.line for m in read_text(jsonl(*lines)).messages] == [1, 3]


def test_compact_boundary_stops_the_walk() -> None:
    lines = [
        user("u1", None, 0, "old"),
        assistant("a1", "u1", 1, "m1", call("lost")),  # pre-compaction, unanswered
        entry(
            "system", "cb", None, 10, subtype="compact_boundary", logicalParentUuid="a1", content="Compacted"
        ),
        user(
            "s1",
            "cb",
            11,
            "This session is being continued from a previous conversation.",
            isCompactSummary=True,
        ),
        assistant("a2", "s1", 12, "m2", text("Continuing.")),
    ]
    conversation = read_text(jsonl(*lines))
    assert [m.origin.line for m in conversation.messages] == [4, 5]
    assert isinstance(conversation.ref, FileRef)
    assert conversation.ref.logical_children == {"a1": [2]}
    assert text_findings("s.jsonl", jsonl(*lines)) == []


def test_partial_compaction_splices_the_preserved_segment_back() -> None:
    segment = {"headUuid": "h1", "anchorUuid": "cs", "tailUuid": "h2"}
    lines = [
        user("u1", None, 0, "old"),
        assistant("a1", "u1", 1, "m1", call("dropped")),  # before the boundary, not preserved
        user("h1", "a1", 2, "kept prompt"),
        assistant("h2", "h1", 3, "m2", call("t1")),
        entry(
            "system",
            "cb",
            None,
            10,
            subtype="compact_boundary",
            logicalParentUuid="h2",
            compactMetadata={"trigger": "manual", "preservedSegment": segment},
        ),
        user("cs", "cb", 11, "This session is being continued.", isCompactSummary=True),
        user("r1", "cs", 12, result("t1")),  # answers the preserved call
        assistant("a3", "r1", 13, "m3", text("Done.")),
    ]
    assert grouped_lines(read_text(jsonl(*lines))) == [[6, 3], [4], [7], [8]]
    assert text_findings("s.jsonl", jsonl(*lines)) == []


def test_history_snip_removals_are_bridged() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("t1")),  # snipped away: its call is not replayed
        user("u2", "a1", 2, "next"),
        assistant("a2", "u2", 3, "m2", text("OK.")),
        entry("system", "sb", "a2", 4, subtype="snip_boundary", snipMetadata={"removedUuids": ["a1", 5]}),
    ]
    assert grouped_lines(read_text(jsonl(*lines))) == [[1, 3], [4]]
    assert text_findings("s.jsonl", jsonl(*lines)) == []


def test_system_progress_and_attachment_lines_are_chain_members_not_turns() -> None:
    lines = [
        user("u1", None, 0, "go"),
        entry("attachment", "at", "u1", 1, attachment={"type": "hook_additional_context", "content": ["x"]}),
        assistant("a1", "at", 2, "m1", call("t1")),
        entry("progress", "p1", "a1", 3, data={"type": "hook_progress"}, toolUseID="t1"),
        user("r1", "p1", 4, result("t1")),
        entry("system", "sy", "r1", 5, subtype="informational", content="note"),
        assistant("a2", "sy", 6, "m2", text("Done.")),
        entry("system", "td", "a2", 7, subtype="turn_duration", durationMs=5),
    ]
    conversation = read_text(jsonl(*lines))
    assert [(m.role, m.origin.line) for m in conversation.messages] == [
        (Role.USER, 1),
        (Role.ASSISTANT, 3),
        (Role.USER, 5),
        (Role.ASSISTANT, 7),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == []


def test_metadata_and_bookkeeping_lines_are_never_turns() -> None:
    lines = [
        user("u1", None, 0, "go"),
        {"type": "api-request-blob", "uuid": "blob", "blocks": [text("No response requested.")]},
        {"type": "queue-operation", "operation": "enqueue", "content": "x", "sessionId": "S"},
        {"type": "ai-title", "aiTitle": "Go", "sessionId": "S"},
        {"type": "brand-new-kind", "sessionId": "S", "message": {"role": "assistant", "content": "  "}},
        assistant("a1", "u1", 1, "m1", text("Gone.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == []
    assert len(read_text(jsonl(*lines)).messages) == 2


def test_consecutive_user_lines_merge_with_tool_results_first() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("t1")),
        user("i1", "a1", 2, [text("[Request interrupted by user for tool use]")]),
        user("r1", "i1", 3, result("t1", is_error=True)),
        user("u2", "r1", 4, "try again"),
        assistant("a2", "u2", 5, "m2", text("OK.")),
    ]
    messages = read_text(jsonl(*lines)).messages
    assert [p.kind for p in messages[2].parts] == [PartKind.TOOL_RESULT, PartKind.TEXT, PartKind.TEXT]
    assert text_findings("s.jsonl", jsonl(*lines)) == []


def test_request_interrupted_marker_is_not_a_finding() -> None:
    lines = [
        user("u1", None, 0, "write a poem"),
        user("i1", "u1", 1, [text("[Request interrupted by user]")]),
        user("u2", "i1", 2, "no, a song"),
        assistant("a1", "u2", 3, "m1", text("La la.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == []


def test_sidechain_lines_in_a_main_file_do_not_win_the_leaf() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", text("Main.")),
        user("s1", None, 5, "Warmup", isSidechain=True, agentId="ag"),
        assistant("s2", "s1", 6, "m9", call("t9"), isSidechain=True, agentId="ag"),
    ]
    assert [m.origin.line for m in read_text(jsonl(*lines)).messages] == [1, 2]


def test_unanswered_call_between_user_lines_is_td301_and_trailing_one_is_info() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", text("Let me look."), call("t1")),
        user("u2", "a1", 2, "never mind"),
        assistant("a2", "u2", 3, "m2", call("t2")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == [
        ("TD301", 2, "/message/content/1"),
        ("TD306", 4, "/message/content/0"),
    ]


def test_placeholder_mentions_and_real_model_api_error_text_are_not_placeholders() -> None:
    lines = [
        user("u1", None, 0, "what does Claude Code print?"),
        assistant("a1", "u1", 1, "m1", text("API Error: 500 is what it prints.")),
        user("u2", "a1", 2, "and otherwise?"),
        assistant("a2", "u2", 3, "m2", text("Sometimes: No response requested. That is all.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == []


def synthetic(uuid: str, parent: str, second: int, words: str, **flags: Any) -> dict[str, Any]:
    """A harness-written assistant line (the writer's ``<synthetic>`` shape)."""
    return assistant(uuid, parent, second, f"{uuid}-random-id", text(words), model="<synthetic>", **flags)


@pytest.mark.parametrize(
    ("words", "flags", "expected"),
    [
        # the catalog's harness texts
        ("No response requested.", {"isApiErrorMessage": False}, [("TD201", 3, None)]),
        ("No response requested.", {}, [("TD201", 3, None)]),
        ("API Error: 529 Overloaded", {"isApiErrorMessage": True}, [("TD201", 3, None)]),
        ("Request timed out", {"isApiErrorMessage": True, "error": "unknown"}, [("TD201", 3, None)]),
        (
            "You've hit your session limit · resets 2pm (Europe/Helsinki)",
            {"isApiErrorMessage": True, "error": "rate_limit", "apiErrorStatus": 429},
            [("TD201", 3, None)],
        ),
        ("Claude AI usage limit reached|1751547600", {}, [("TD201", 3, None)]),
        # a partial model answer kept when the user interrupted (2.1.8x): real output
        ("Sure, the status line is drawn below the", {"isApiErrorMessage": False}, []),
        ("Sure, the status line is drawn below the", {}, []),
        ("API Error: 500 is what it prints when", {"isApiErrorMessage": False}, []),
    ],
)
def test_synthetic_lines_are_placeholders_only_for_catalog_texts(
    words: str, flags: dict[str, Any], expected: list[tuple[str, int, None]]
) -> None:
    lines = [
        user("u1", None, 0, "show the status line at the top"),
        user("u2", "u1", 1, "please"),
        synthetic("s1", "u2", 2, words, **flags),
        user("i1", "s1", 3, [text("[Request interrupted by user]")]),
        user("u3", "i1", 4, "never mind"),
        assistant("a1", "u3", 5, "m1", text("OK.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == expected


def test_interrupted_partial_answer_is_kept_as_model_output() -> None:
    path = DIR / "clean-interrupted-partial-answer.jsonl"
    assert findings(path) == []
    turn = read(path).messages[-3]
    assert (turn.role, turn.origin.line, turn.harness_written) == (Role.ASSISTANT, 10, False)
    assert turn.visible_text.startswith("Claude Code ne peut pas afficher")


def test_redacted_thinking_needs_no_signature_but_alone_is_empty() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", {"type": "redacted_thinking", "data": "EuYBCkQ"}),
        assistant("a2", "a1", 2, "m1", text("Answer.")),
        user("u2", "a2", 3, "again"),
        assistant("a3", "u2", 4, "m3", {"type": "redacted_thinking", "data": "EuYBCkQ"}),
        user("u3", "a3", 5, "hello?"),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == [("TD103", 5, None)]


def test_missing_signature_is_td402() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", {"type": "thinking", "thinking": "hmm"}, text("Answer.")),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == [("TD402", 2, "/message/content/0")]


def test_byte_copy_of_an_assistant_line_is_invisible_and_a_rewrite_wins() -> None:
    first = assistant("a1", "u1", 1, "m1", text("Answer. "))
    rewritten = assistant("a1", "u1", 1, "m1", text("Answer."))
    lines = [user("u1", None, 0, "go"), first, first, rewritten]
    assert text_findings("s.jsonl", jsonl(*lines)) == []
    (_, turn) = read_text(jsonl(*lines)).messages
    assert turn.origin.line == 4


def test_dangling_parent_of_an_off_chain_line_is_still_reported() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", text("Hi.")),
        user("lost", "not-in-file", 2, "orphaned prompt"),
    ]
    assert text_findings("s.jsonl", jsonl(*lines)) == [("TD404", 3, None)]


# -- refs for fix ---------------------------------------------------------------------


def test_refs_name_every_line_of_a_group_and_of_results() -> None:
    conversation = read_text(jsonl(*parallel_dag(), {"type": "summary", "summary": "s", "leafUuid": "a5"}))
    turn = conversation.messages[1]
    assert turn.ref == MessageRef(
        "assistant",
        (LineRef(1, "a1", "u1"), LineRef(2, "a2", "a1"), LineRef(3, "a3", "a2"), LineRef(4, "a4", "a3")),
    )
    assert turn.parts[1].ref == LineRef(2, "a2", "a1")
    answers = conversation.messages[2]
    assert answers.ref == MessageRef(
        "user", (LineRef(5, "r1", "a2"), LineRef(6, "r3", "a4"), LineRef(7, "r2", "a3"))
    )
    assert isinstance(conversation.ref, FileRef)
    assert conversation.ref.children["a3"] == [4, 7]
    assert conversation.ref.summaries == {"a5": [9]}
    assert conversation.ref.leaf == "a5"


def test_refs_name_the_replayed_path_and_every_version_of_a_uuid() -> None:
    prompt = user("u2", "a5", 9, "again")
    rewrite = user("u2", "a5", 9, "again, rewritten")
    records = [*parallel_dag(), entry("progress", "p1", "a5", 8), prompt, prompt, rewrite]
    conversation = read_text(jsonl(*records))
    assert isinstance(conversation.ref, FileRef)
    assert conversation.ref.versions == {"u2": [10, 11, 12]}
    # written links from the leaf up: r1 and r3 hang off their own tool_use lines, off the path
    assert sorted(conversation.ref.path) == [0, 1, 2, 3, 7, 8, 10, 11, 12]


def test_broken_link_ref_names_the_nearest_earlier_line_of_its_chain() -> None:
    lines = [
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", text("Hi.")),
        user("u2", "gone", 2, "more"),
        assistant("a2", "u2", 3, "m2", text("Sure.")),
    ]
    (link,) = read_text(jsonl(*lines)).broken_links
    assert (link.origin.line, link.missing) == (3, "gone")
    assert link.ref == RelinkRef(LineRef(2, "u2", "gone"), "a1")


def test_duplicate_copy_message_points_at_the_copy_line() -> None:
    prompt = user("u2", "a1", 2, "again")
    lines = [user("u1", None, 0, "go"), assistant("a1", "u1", 1, "m1", text("Hi.")), prompt, prompt]
    messages = read_text(jsonl(*lines)).messages
    assert messages[-1].ref == MessageRef("copy", (LineRef(3, "u2", "a1"),))
    assert text_findings("s.jsonl", jsonl(*lines)) == [("TD403", 4, None)]


# -- scale and robustness ---------------------------------------------------------------


def test_twenty_thousand_line_chain_without_recursion(tmp_path: Path) -> None:
    lines = [user("u0", None, 0, "start")]
    for i in range(1, 20_000, 2):
        lines.append(assistant(f"a{i}", lines[-1]["uuid"], i, f"m{i}", call(f"t{i}")))
        lines.append(user(f"u{i}", f"a{i}", i + 1, result(f"t{i}")))
    lines.append(assistant("end", lines[-1]["uuid"], 20_001, "mend", text("Done.")))
    path = tmp_path / "long.jsonl"
    path.write_text(jsonl(*lines))
    started = time.perf_counter()
    assert findings(path) == []
    assert time.perf_counter() - started < 20
    assert len(read(path).messages) == 20_002


@pytest.mark.parametrize(
    "record",
    [
        {"type": "user", "uuid": 5, "parentUuid": None, "message": {"role": "user", "content": "x"}},
        {"type": "user", "uuid": "w1", "parentUuid": 7, "message": "not a dict"},
        {"type": "assistant", "uuid": "w2", "parentUuid": "u1", "message": {"content": {"type": "text"}}},
        {
            "type": "assistant",
            "uuid": "w3",
            "parentUuid": "u1",
            "message": {"id": 3, "content": [None, 4, "s"]},
        },
        {
            "type": "assistant",
            "uuid": "w4",
            "parentUuid": "u1",
            "timestamp": 12,
            "message": {"content": [{"type": 1}]},
        },
        {
            "type": "assistant",
            "uuid": "w5",
            "parentUuid": "u1",
            "message": {"content": [{"type": "tool_use", "id": None}]},
        },
        {"type": "user", "uuid": "w6", "parentUuid": "u1", "message": {"content": [{"type": "tool_result"}]}},
        {
            "type": "assistant",
            "uuid": "w7",
            "parentUuid": "u1",
            "message": {"content": [{"type": "thinking", "signature": 1}]},
        },
        {"type": "summary", "leafUuid": None},
        {"type": None, "uuid": "w8"},
        [1, 2, 3],
    ],
)
def test_wrong_field_types_do_not_crash(record: Any) -> None:
    text_value = jsonl(user("u1", None, 0, "go"), assistant("a1", "u1", 1, "m1", text("Hi."))) + json.dumps(
        record
    )
    result_value = text_findings("s.jsonl", text_value, reader="claude-code")
    assert all(code.startswith("TD") for code, _, _ in result_value)


def test_cycles_in_parent_links_terminate() -> None:
    lines = [
        user("u1", "u2", 0, "a"),
        user("u2", "u1", 1, "b"),
        entry("progress", "p1", "p2", 2),
        entry("progress", "p2", "p1", 3),
        assistant("a1", "p1", 4, "m1", text("Hi.")),
    ]
    assert [m.origin.line for m in read_text(jsonl(*lines)).messages] == [5]
