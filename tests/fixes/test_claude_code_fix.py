"""fix on claude-code files: exact bytes, only the named lines change, the uuid tree stays valid."""

from __future__ import annotations

import json
import uuid as uuidlib
from pathlib import Path
from typing import Any

import pytest
from claude_sessions import assistant, call, entry, jsonl, result, text, user
from support import FIXTURES, fix, lint_bytes

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT
from transcript_doctor.fixer import Outcome
from transcript_doctor.model import Severity
from transcript_doctor.readers.claude_code import READER
from transcript_doctor.readers.claude_code.plan import derived_uuid
from transcript_doctor.source import sniff

DIR = FIXTURES / "claude-code"
A = "codemie-4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
T = "codemie-incremental-simple-turn-1.jsonl"
S2 = "codemie-incremental-subagents-turn-2.jsonl"

REPAIRED = {
    "damaged-dangling-parent.jsonl": ["TD404"],
    "damaged-displaced-tool-result.jsonl": ["TD304"],
    "damaged-duplicate-tool-result.jsonl": ["TD303"],
    "damaged-duplicated-line.jsonl": ["TD403"],
    "damaged-glued-line.jsonl": ["TD001"],
    "damaged-orphan-tool-result.jsonl": ["TD302"],
    "damaged-parallel-unanswered.jsonl": ["TD301"],
    "damaged-synthetic-replies.jsonl": ["TD201", "TD201"],
    "damaged-thinking-only.jsonl": ["TD103"],
    "damaged-tool-use-interrupted.jsonl": ["TD202"],
    "damaged-torn-last-line.jsonl": ["TD001"],
    "damaged-trailing-whitespace.jsonl": ["TD102"],
    "damaged-unanswered-tool-use.jsonl": ["TD301"],
    "damaged-whitespace-turn.jsonl": ["TD103"],
}
# Damage made by an edit the repair undoes exactly (fixtures/claude-code/README.md).
RESTORED = {
    "damaged-dangling-parent.jsonl": A,
    "damaged-displaced-tool-result.jsonl": A,
    "damaged-duplicate-tool-result.jsonl": A,
    "damaged-duplicated-line.jsonl": A,
    "damaged-glued-line.jsonl": A,
    "damaged-tool-use-interrupted.jsonl": A,
    "damaged-trailing-whitespace.jsonl": T,
}


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/claude-code.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name]


@pytest.mark.parametrize("name", sorted(RESTORED))
def test_repair_gives_back_the_real_file(name: str) -> None:
    assert fix(DIR / name).after == (DIR / RESTORED[name]).read_bytes()


# -- which lines change -------------------------------------------------------------------


def lines(data: bytes) -> list[bytes]:
    return data.splitlines()


def changes(outcome: Outcome) -> tuple[list[bytes], list[bytes]]:
    """Lines only in the original, lines only in the repaired file."""
    before, after = lines(outcome.before), lines(outcome.after)
    return [x for x in before if x not in after], [x for x in after if x not in before]


def relinked(old: bytes, new: bytes) -> tuple[str, str | None]:
    """The uuid of a line whose only change is its parent link, and the new parent."""
    was, now = json.loads(old), json.loads(new)
    assert {k: v for k, v in was.items() if k != "parentUuid"} == {
        k: v for k, v in now.items() if k != "parentUuid"
    }
    assert old.replace(f'"parentUuid":"{was["parentUuid"]}"'.encode(), b"") == new.replace(
        f'"parentUuid":"{now["parentUuid"]}"'.encode(), b""
    )
    return was["uuid"], now["parentUuid"]


def test_unanswered_call_gets_one_line_and_its_follower_is_relinked() -> None:
    outcome = fix(DIR / "damaged-unanswered-tool-use.jsonl")
    before = lines(outcome.before)
    gone, added = changes(outcome)
    assert gone == [before[7]]  # the first result, re-linked below the new line
    new, follower = added
    inserted = json.loads(new)
    assert lines(outcome.after)[6] == new  # right after the group's last line (6)
    assert inserted["parentUuid"] == json.loads(before[5])["uuid"]
    assert relinked(before[7], follower) == (json.loads(before[7])["uuid"], inserted["uuid"])


def test_synthetic_result_is_claude_codes_failed_tool_line() -> None:
    outcome = fix(DIR / "damaged-unanswered-tool-use.jsonl")
    neighbour = json.loads(lines(outcome.before)[5])
    (applied,) = outcome.applied
    assert (applied.rule, applied.line, applied.action) == ("TD301", 5, "insert")
    new = lines(outcome.after)[6]
    assert (applied.edits[0].pointer, applied.edits[0].new) == ("after line 6", new)
    expected = {
        "parentUuid": neighbour["uuid"],
        **{k: neighbour[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")},
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_bdrk_016tbodT5CtBRJqqi7vKsFvG",
                    "content": SYNTHETIC_RESULT_TEXT,
                    "is_error": True,
                }
            ],
        },
        "uuid": derived_uuid(neighbour["uuid"], "toolu_bdrk_016tbodT5CtBRJqqi7vKsFvG"),
        "timestamp": neighbour["timestamp"],
        "toolUseResult": "Error: " + SYNTHETIC_RESULT_TEXT,
    }  # 2.0.64: no sourceToolAssistantUUID
    assert new == json.dumps(expected, separators=(",", ":"), ensure_ascii=False).encode()


def test_parallel_dag_answer_hangs_off_its_own_tool_use_line_and_nothing_else_changes() -> None:
    outcome = fix(DIR / "damaged-parallel-unanswered.jsonl")
    before, after = lines(outcome.before), lines(outcome.after)
    assert after[:31] == before[:31] and after[32:] == before[31:]
    holder = json.loads(before[30])
    inserted = json.loads(after[31])
    assert inserted["parentUuid"] == inserted["sourceToolAssistantUUID"] == holder["uuid"]
    assert inserted["slug"] == holder["slug"] and inserted["timestamp"] == holder["timestamp"]
    assert list(inserted)[-2:] == ["toolUseResult", "sourceToolAssistantUUID"]
    (conversation,) = READER.read(sniff("s.jsonl", outcome.after))
    answers = next(m for m in conversation.messages if any(p.origin.line == 32 for p in m.parts))
    assert sorted(p.origin.line for p in answers.parts) == [32, 33, 34]


def test_displaced_result_moves_back_under_its_call() -> None:
    outcome = fix(DIR / "damaged-displaced-tool-result.jsonl")
    (applied,) = outcome.applied
    assert applied.action == "move"
    before, after = lines(outcome.before), lines(outcome.after)
    moved = json.loads(before[21])["uuid"]
    assert relinked(before[21], after[16]) == (moved, json.loads(before[15])["uuid"])
    assert [(e.action, e.pointer) for e in applied.edits] == [
        ("replace", "line 23 /parentUuid"),  # its child goes to its parent
        ("remove", "line 22"),
        ("insert", "after line 16"),
        ("replace", "line 17 /parentUuid"),  # the call's former child follows it
    ]


def test_removed_turns_hand_their_children_to_the_turn_before() -> None:
    outcome = fix(DIR / "damaged-synthetic-replies.jsonl")
    before = lines(outcome.before)
    gone, added = changes(outcome)
    assert gone == [before[22], before[23], before[27]]
    (follower,) = added
    assert relinked(before[23], follower)[1] == json.loads(before[21])["uuid"]
    # each repair reports its own lines, in the order it made them
    first, second = outcome.applied
    assert [e.pointer for e in first.edits] == ["line 23", "line 24 /parentUuid"]
    assert [e.pointer for e in second.edits] == ["line 28"]


def test_thinking_only_turn_and_its_system_child() -> None:
    outcome = fix(DIR / "damaged-thinking-only.jsonl")
    before = lines(outcome.before)
    gone, (follower,) = changes(outcome)
    assert gone == [before[6], before[12]]
    assert relinked(before[12], follower)[1] == json.loads(before[2])["uuid"]


def test_orphan_result_line_goes_and_duplicate_result_line_goes() -> None:
    orphan = fix(DIR / "damaged-orphan-tool-result.jsonl")
    before = lines(orphan.before)
    gone, (follower,) = changes(orphan)
    assert gone == [before[22], before[23]]
    assert relinked(before[23], follower)[1] == json.loads(before[21])["uuid"]


# -- files from the wild (fixtures/wild/claude-code/README.md) -----------------------------

WILD = FIXTURES / "wild" / "claude-code"


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in WILD.glob("*.jsonl") if p.name != "sessionshare-fixture-general-tool-calls.jsonl"),
)
def test_healthy_wild_files_are_left_alone(name: str) -> None:
    assert not fix(WILD / name).changed


def test_wild_file_loses_only_its_two_no_response_requested_lines() -> None:
    outcome = fix(WILD / "sessionshare-fixture-general-tool-calls.jsonl")
    assert [(a.rule, a.line) for a in outcome.applied] == [("TD201", 544), ("TD201", 559)]
    before, after = lines(outcome.before), lines(outcome.after)
    assert len(after) == len(before) - 2
    # lines 544 and 559 go; their children (545, 560) are re-linked to their parents (541, 556)
    assert after[:543] == before[:543] and after[544:557] == before[545:558] and after[558:] == before[560:]
    assert relinked(before[544], after[543]) == (
        json.loads(before[544])["uuid"],
        json.loads(before[540])["uuid"],
    )
    assert relinked(before[559], after[557]) == (
        json.loads(before[559])["uuid"],
        json.loads(before[555])["uuid"],
    )
    for gone in (before[543], before[558]):
        placeholder = json.loads(gone)
        assert placeholder["message"]["model"] == "<synthetic>"
        assert placeholder["message"]["content"] == [{"type": "text", "text": "No response requested."}]


# -- composition and the 2.1.x DAG, on small sessions --------------------------------------


def fixed(tmp_path: Path, *records: dict[str, Any]) -> tuple[Outcome, dict[str, dict[str, Any]]]:
    """Fix a small session; the repaired lines by uuid."""
    path = tmp_path / "s.jsonl"
    path.write_text(jsonl(*records))
    outcome = fix(path)
    parsed = [json.loads(line) for line in lines(outcome.after)]
    return outcome, {r.get("uuid", f"#{i}"): r for i, r in enumerate(parsed)}


def parents(by_uuid: dict[str, dict[str, Any]]) -> dict[str, str | None]:
    return {u: r.get("parentUuid") for u, r in by_uuid.items() if not u.startswith("#")}


def dag(drop: str) -> list[dict[str, Any]]:
    """2.1.x parallel calls: each result parented on its own tool_use line, the next turn on r3."""
    records = [
        user("u1", None, 0, "read three files"),
        assistant("a1", "u1", 1, "m1", text("Reading.")),
        assistant("a2", "a1", 2, "m1", call("t1")),
        assistant("a3", "a2", 3, "m1", call("t2")),
        assistant("a4", "a3", 4, "m1", call("t3")),
        user("r1", "a2", 5, result("t1"), sourceToolAssistantUUID="a2"),
        user("r2", "a3", 6, result("t2"), sourceToolAssistantUUID="a3"),
        user("r3", "a4", 7, result("t3"), sourceToolAssistantUUID="a4"),
        assistant("a5", "r3", 8, "m2", text("Done.")),
        user("u2", "a5", 9, "thanks"),
        assistant("a6", "u2", 10, "m3", text("Welcome.")),
    ]
    kept = [r for r in records if r["uuid"] != drop]
    for record in kept:
        if record["parentUuid"] == drop:  # the writer parents the next turn on the last result
            record["parentUuid"] = "r2"
    return kept


@pytest.mark.parametrize(
    ("drop", "expected"),
    [
        # 2.1.x: the answer hangs off its own tool_use line, as the writer does; the loader
        # splices it in after the response, so no other line is re-linked
        ("r3", {"r1": "a2", "r2": "a3", "a5": "r2", "new": "a4"}),
        ("r1", {"r2": "a3", "r3": "a4", "a5": "r3", "new": "a2"}),
        ("r2", {"r1": "a2", "r3": "a4", "a5": "r3", "new": "a3"}),
    ],
)
def test_parallel_dag_stays_valid(tmp_path: Path, drop: str, expected: dict[str, str]) -> None:
    outcome, by_uuid = fixed(tmp_path, *dag(drop))
    assert [a.rule for a in outcome.applied] == ["TD301"]
    new = next(u for u, r in by_uuid.items() if r.get("toolUseResult", "").startswith("Error:"))
    assert by_uuid[new]["sourceToolAssistantUUID"] == {"r1": "a2", "r2": "a3", "r3": "a4"}[drop]
    links = parents(by_uuid)
    assert {k: links[new if k == "new" else k] for k in expected} == {
        k: new if v == "new" else v for k, v in expected.items()
    }
    (conversation,) = READER.read(sniff("s.jsonl", outcome.after))
    assert sorted(p.call_id or "" for p in conversation.messages[2].parts) == ["t1", "t2", "t3"]


def unanswered_pair(version: str) -> list[dict[str, Any]]:
    """Two calls of one response, neither answered; the user went on."""
    return [
        user("u1", None, 0, "go", version=version),
        assistant("a1", "u1", 1, "m1", call("t1"), version=version),
        assistant("a2", "a1", 2, "m1", call("t2"), version=version),
        user("u2", "a2", 3, "never mind", version=version),
        assistant("a3", "u2", 4, "m2", text("OK."), version=version),
    ]


def test_two_unanswered_calls_of_one_response_are_chained_before_2_1(tmp_path: Path) -> None:
    outcome, by_uuid = fixed(tmp_path, *unanswered_pair("2.0.64"))
    assert [a.rule for a in outcome.applied] == ["TD301", "TD301"]
    first, second = derived_uuid("a2", "t1"), derived_uuid(derived_uuid("a2", "t1"), "t2")
    assert list(by_uuid) == ["u1", "a1", "a2", first, second, "u2", "a3"]
    assert parents(by_uuid) == {
        "u1": None,
        "a1": "u1",
        "a2": "a1",
        first: "a2",
        second: first,
        "u2": second,
        "a3": "u2",
    }
    assert "sourceToolAssistantUUID" not in by_uuid[first]


def test_two_unanswered_calls_of_2_1_hang_off_their_own_lines_and_nothing_else_changes(
    tmp_path: Path,
) -> None:
    outcome, by_uuid = fixed(tmp_path, *unanswered_pair("2.1.87"))
    assert [a.rule for a in outcome.applied] == ["TD301", "TD301"]
    first, second = derived_uuid("a1", "t1"), derived_uuid("a2", "t2")
    before = lines(outcome.before)
    assert lines(outcome.after) == [*before[:3], *lines(outcome.after)[3:5], *before[3:]]
    assert list(by_uuid) == ["u1", "a1", "a2", first, second, "u2", "a3"]
    assert parents(by_uuid)[first] == by_uuid[first]["sourceToolAssistantUUID"] == "a1"
    assert parents(by_uuid)[second] == by_uuid[second]["sourceToolAssistantUUID"] == "a2"
    assert by_uuid[first]["timestamp"] == by_uuid["a2"]["timestamp"]
    (conversation,) = READER.read(sniff("s.jsonl", outcome.after))
    assert [[p.call_id for p in m.tool_results] for m in conversation.messages] == [
        [],
        [],
        ["t1", "t2"],
        [],
    ]


def test_2_1_answer_that_would_become_the_newest_leaf_goes_on_the_path(tmp_path: Path) -> None:
    records = unanswered_pair("2.1.87")
    records[-1]["timestamp"] = records[2]["timestamp"]  # the leaf is no newer than the call
    outcome, by_uuid = fixed(tmp_path, *records)
    assert [a.rule for a in outcome.applied] == ["TD301", "TD301"]
    first, second = derived_uuid("a2", "t1"), derived_uuid(derived_uuid("a2", "t1"), "t2")
    assert parents(by_uuid) == {
        "u1": None,
        "a1": "u1",
        "a2": "a1",
        first: "a2",
        second: first,
        "u2": second,
        "a3": "u2",
    }


def test_streamed_response_missing_a_result_is_answered_on_its_own_line(tmp_path: Path) -> None:
    """2.1.63 streamed tool execution: a later tool_use line hangs off an earlier result."""
    outcome, by_uuid = fixed(
        tmp_path,
        user("u1", None, 0, "list the actions"),
        assistant("a1", "u1", 1, "m1", text("Let me list them.")),
        assistant("a2", "a1", 2, "m1", call("t1", "Bash")),
        assistant("a3", "a2", 3, "m1", call("t2")),
        user("r2", "a3", 4, result("t2"), sourceToolAssistantUUID="a3"),
        assistant("a4", "r2", 5, "m1", call("t3", "Bash")),
        user("r3", "a4", 6, result("t3"), sourceToolAssistantUUID="a4"),
        assistant("a5", "r3", 7, "m2", text("Done.")),
    )
    assert [a.rule for a in outcome.applied] == ["TD301"]
    new = derived_uuid("a2", "t1")
    before = lines(outcome.before)
    assert lines(outcome.after) == [*before[:6], lines(outcome.after)[6], *before[6:]]
    assert list(by_uuid) == ["u1", "a1", "a2", "a3", "r2", "a4", new, "r3", "a5"]
    assert parents(by_uuid)[new] == by_uuid[new]["sourceToolAssistantUUID"] == "a2"
    (conversation,) = READER.read(sniff("s.jsonl", outcome.after))
    assert [[p.call_id for p in m.tool_results] for m in conversation.messages] == [
        [],
        [],
        ["t2", "t1", "t3"],
        [],
    ]


def test_removed_groups_that_are_parent_and_child_relink_past_both(tmp_path: Path) -> None:
    outcome, by_uuid = fixed(
        tmp_path,
        user("u1", None, 0, "hi"),
        assistant("p1", "u1", 1, "m1", text("No response requested."), model="<synthetic>"),
        assistant("p2", "p1", 2, "m2", text("API Error: 400"), model="<synthetic>", isApiErrorMessage=True),
        entry("system", "s1", "p2", 3, subtype="turn_duration"),
        {"type": "summary", "summary": "x", "leafUuid": "p2"},
        user("u2", "s1", 4, "again"),
        assistant("a1", "u2", 5, "m3", text("Hello.")),
    )
    assert [a.rule for a in outcome.applied] == ["TD201", "TD201"]
    assert parents(by_uuid) == {"u1": None, "s1": "u1", "u2": "s1", "a1": "u2"}
    assert by_uuid["#2"]["leafUuid"] == "u1"


def test_group_split_by_progress_lines_goes_whole(tmp_path: Path) -> None:
    outcome, by_uuid = fixed(
        tmp_path,
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", text(" ")),
        entry("progress", "p1", "a1", 2, data={"type": "hook_progress"}),
        assistant("a2", "p1", 3, "m1", text("\n")),
        entry("progress", "p2", "a2", 4, data={"type": "hook_progress"}),
        {"type": "summary", "summary": "x", "leafUuid": "a2"},
        user("u3", "p2", 5, "hello?"),
        assistant("b2", "u3", 6, "m3", text("Hi.")),
    )
    assert [a.rule for a in outcome.applied] == ["TD103"]
    # the nearest survivors: p1 keeps its place between u1 and p2
    assert parents(by_uuid) == {"u1": None, "p1": "u1", "p2": "p1", "u3": "p2", "b2": "u3"}
    assert by_uuid["#3"]["leafUuid"] == "p1"


def test_extra_results_and_an_orphan_block_in_one_line(tmp_path: Path) -> None:
    orphan = {"type": "tool_result", "tool_use_id": "zzz", "content": "x"}
    outcome, by_uuid = fixed(
        tmp_path,
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("t1")),
        user("r1", "a1", 2, result("t1")),
        user("r1b", "r1", 3, result("t1")),
        user("r1c", "r1b", 4, [*result("t1"), orphan, text("note")]),
        assistant("a2", "r1c", 5, "m2", text("OK.")),
    )
    assert [a.rule for a in outcome.applied] == ["TD303", "TD303", "TD302"]
    assert parents(by_uuid) == {"u1": None, "a1": "u1", "r1": "a1", "r1c": "r1", "a2": "r1c"}
    assert by_uuid["r1c"]["message"]["content"] == [text("note")]


def test_displaced_parallel_result_moves_under_the_call_group(tmp_path: Path) -> None:
    outcome, by_uuid = fixed(
        tmp_path,
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("t1")),
        assistant("a2", "a1", 2, "m1", call("t2")),
        assistant("a3", "a2", 3, "m1", call("t3")),
        user("r1", "a1", 4, result("t1"), sourceToolAssistantUUID="a1"),
        user("r3", "a3", 5, result("t3"), sourceToolAssistantUUID="a3"),
        assistant("x1", "r3", 6, "mx", text("Hmm.")),
        user("r2", "x1", 7, result("t2"), sourceToolAssistantUUID="a2"),
        assistant("a4", "r2", 8, "m2", text("OK.")),
    )
    assert [a.rule for a in outcome.applied] == ["TD304"]
    assert list(by_uuid) == ["u1", "a1", "a2", "a3", "r2", "r1", "r3", "x1", "a4"]
    assert parents(by_uuid) == {
        "u1": None,
        "a1": "u1",
        "a2": "a1",
        "a3": "a2",
        "r2": "a3",
        "r1": "a1",  # the DAG branch off the path is left alone
        "r3": "r2",
        "x1": "r3",
        "a4": "x1",
    }


def test_byte_copies_are_edited_together(tmp_path: Path) -> None:
    prompt = user("u2", "gone", 2, "more")
    outcome, by_uuid = fixed(
        tmp_path,
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", text("Hi.")),
        prompt,
        prompt,
        assistant("a2", "u2", 3, "m2", text("Sure.  ")),
    )
    # both copies re-linked (or the untouched copy would win the uuid back), then the copy goes
    assert [a.rule for a in outcome.applied] == ["TD404", "TD403", "TD102"]
    assert parents(by_uuid) == {"u1": None, "a1": "u1", "u2": "a1", "a2": "u2"}
    assert len(by_uuid) == 4


def test_untouched_lines_keep_crlf_and_a_missing_final_newline(tmp_path: Path) -> None:
    for name in ("damaged-unanswered-tool-use.jsonl", "damaged-displaced-tool-result.jsonl"):
        plain = fix(DIR / name)
        path = tmp_path / name
        path.write_bytes((DIR / name).read_bytes().replace(b"\n", b"\r\n").rstrip(b"\r\n"))
        outcome = fix(path)
        assert outcome.after == plain.after.replace(b"\n", b"\r\n").rstrip(b"\r\n")


def test_derived_uuid_has_the_uuid4_layout() -> None:
    value = uuidlib.UUID(derived_uuid("a2", "toolu_1"))
    assert (value.version, value.variant) == (4, uuidlib.RFC_4122)
    assert derived_uuid("a2", "toolu_1") != derived_uuid("a3", "toolu_1")


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_repaired_files_have_no_error_left(name: str) -> None:
    report = lint_bytes(name, fix(DIR / name).after, "claude-code")
    assert [f.finding.rule.code for f in report.findings if f.finding.rule.severity is Severity.ERROR] == []
