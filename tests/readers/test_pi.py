"""Reader pi: detection and look-alikes, the replayed path, every damage shape at its line,
repairs in Pi's own entry shape (bytes, default vs unsafe, re-lint, idempotence)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, cli, detected, detected_bytes, fix, lint_bytes

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT
from transcript_doctor.model import Conversation, PartKind, Role
from transcript_doctor.readers.pi import READER
from transcript_doctor.readers.pi.refs import FileRef
from transcript_doctor.source import sniff

DIR = FIXTURES / "pi"
DERIVED = DIR / "derived"
SESSIONS = sorted(DIR.glob("*/sessions/*/*.jsonl"))
RECORDED = {p.parts[-4]: p for p in SESSIONS}  # scenario folder -> its session file

# Exact findings and fix diffs of every fixture: tests/expectations/pi.json.
FILES = [p.parts[-4] for p in SESSIONS] + [f"derived/{p.stem}" for p in sorted(DERIVED.glob("*.jsonl"))]

# Damaged files: the rules default fix applies, those --unsafe-fixes adds, and the original
# lines either may touch (removed or edited).  Every other line survives byte for byte.
REPAIRED: dict[str, tuple[list[str], list[str], set[int]]] = {
    "kill-tool": (["TD301"], [], {6}),
    "kill-tool-step2": (["TD301"], [], {8}),
    "orphan-resume": (["TD301"], [], {8}),
    "derived/compaction-keeps-old-damage": (["TD301"], [], {6}),
    "derived/parallel-missing-result": (["TD301"], [], {8}),
    "derived/torn-final-line": (["TD001"], [], {13}),
    "derived/glued-line": (["TD001"], ["TD404"], {9}),
    "derived/duplicate-result": (["TD303"], [], {7, 8}),
    "derived/lost-parent-entry": ([], ["TD404"], {3}),
    "derived/lost-result-line": ([], ["TD404", "TD301"], {6}),
    "derived/orphan-result": ([], ["TD302"], {7, 8}),
    "derived/displaced-result": ([], ["TD304"], {6, 7, 8}),
}


def ID(name: str) -> str:
    return name.replace("/", "-")


def path_of(name: str) -> Path:
    return RECORDED[name] if name in RECORDED else DIR / f"{name}.jsonl"


def read(text: str) -> Conversation:
    (conversation,) = READER.read(sniff("s.jsonl", text.encode()))
    return conversation


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def entry(eid: str, parent: str | None, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        **extra,
        "message": message,
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(*blocks: dict[str, Any], stop: str = "stop") -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "stopReason": stop, "timestamp": 2}


def call(cid: str, name: str = "bash") -> dict[str, Any]:
    return {"type": "toolCall", "id": cid, "name": name, "arguments": {}}


def result(cid: str, name: str = "bash") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": cid,
        "toolName": name,
        "content": [],
        "isError": False,
        "timestamp": 3,
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


# -- detection --------------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES, ids=ID)
def test_detects_every_pi_file(name: str) -> None:
    assert detected(path_of(name)) == "pi"


def test_damaged_copies_of_the_orphan_recording_are_pi_too() -> None:
    for name in ("session.before-damage.jsonl", "session.damaged.jsonl"):
        assert detected(DIR / "orphan-resume" / name) == "pi"


def test_request_logs_are_not_sessions() -> None:
    for path in sorted(DIR.glob("*/requests-*.jsonl")):
        assert detected(path) != "pi", path


@pytest.mark.parametrize(
    "folder",
    [p for p in sorted(FIXTURES.iterdir()) if p.is_dir() and p.name != "pi"],
    ids=lambda p: p.name,
)
def test_other_layouts_are_not_claimed(folder: Path) -> None:
    """Claude Code and Qwen Code uuid/parentUuid chains, Copilot CLI's id/parentId events…"""
    claimed = [p for p in sorted(folder.rglob("*.json*")) if detected(p) == "pi"]
    assert claimed == []


@pytest.mark.parametrize(
    "records",
    [
        # Copilot CLI events carry id/parentId too, under dotted types.
        [{"type": "session.start", "id": "e1", "parentId": None, "timestamp": "t", "data": {"cwd": "/w"}}],
        # Claude Code / Qwen Code entries: uuid/parentUuid.
        [
            {
                "type": "user",
                "uuid": "u1",
                "parentUuid": None,
                "sessionId": "s",
                "message": {"role": "user", "content": "hi"},
            }
        ],
        # A header of another shape: no cwd.
        [{"type": "session", "id": "s1"}, entry("a", None, user("hi"))],
        # A v1 Pi file (no ids before the v2 migration): not read (see docs/formats/pi.md).
        [{**HEADER, "version": 1}, {"type": "message", "timestamp": "t", "message": user("hi")}],
        # Entries of unknown types only.
        [{"type": "note", "id": "a", "parentId": None, "message": user("hi")}],
    ],
    ids=["copilot-events", "claude-entry", "header-without-cwd", "pi-v1", "unknown-types"],
)
def test_look_alikes_are_not_claimed(records: list[dict[str, Any]]) -> None:
    assert detected_bytes("s.jsonl", jsonl(*records).encode()) != "pi"


def test_header_only_file_is_claimed_and_empty() -> None:
    """What Pi 0.73 leaves after it "starts afresh" on a file whose header it rejected."""
    data = jsonl(HEADER)
    assert detected_bytes("s.jsonl", data.encode()) == "pi"
    assert read(data).messages == []


# -- findings ---------------------------------------------------------------------------


def test_missing_header_is_reported_as_the_file_failing_to_load() -> None:
    report = lint_bytes("s.jsonl", (DERIVED / "no-header.jsonl").read_bytes())
    (only,) = report.findings
    assert "header line (type session) is missing" in only.finding.message
    assert not only.fixable


# -- the replayed path ------------------------------------------------------------------


def test_recorded_tools_session_replays_every_message_in_order() -> None:
    conversation = read(RECORDED["tools"].read_text())
    assert [(m.role, m.origin.line) for m in conversation.messages] == [
        (Role.USER, 4),
        (Role.ASSISTANT, 5),
        (Role.USER, 6),
        (Role.ASSISTANT, 7),
        (Role.USER, 8),
        (Role.ASSISTANT, 9),
        (Role.USER, 10),
        (Role.ASSISTANT, 11),
        (Role.USER, 12),
        (Role.ASSISTANT, 13),
    ]
    assert conversation.messages[2].parts[0].kind is PartKind.TOOL_RESULT
    assert conversation.messages[2].parts[0].call_id == "call_bash_0"


def test_thinking_block_is_a_thought_without_a_demanded_signature() -> None:
    conversation = read(RECORDED["thinking"].read_text())
    (thought, *_) = conversation.messages[1].parts
    assert thought.kind is PartKind.THINKING
    assert thought.text and not thought.needs_signature


@pytest.mark.parametrize("name", ["http500", "drop", "drop-tool"])
def test_error_attempts_are_notices_pi_does_not_send(name: str) -> None:
    """transformMessages skips stopReason error (requests-2.jsonl: the prompts go out back to back)."""
    conversation = read(RECORDED[name].read_text())
    assert [(m.role, m.notice) for m in conversation.messages] == [
        (Role.USER, None),
        *[(Role.NOTICE, "skipped-error")] * 4,
        (Role.USER, None),
        (Role.ASSISTANT, None),
    ]


def test_aborted_and_empty_assistants_are_notices() -> None:
    conversation = read(
        jsonl(
            HEADER,
            entry("a", None, user("one")),
            entry("b", "a", assistant(text("partial"), call("c1"), stop="aborted")),
            entry("c", "b", user("two")),
            entry("d", "c", assistant(text("  "), {"type": "thinking", "thinking": ""})),
            entry("e", "d", user("three")),
            entry("f", "e", assistant(text("answer"))),
        )
    )
    assert [m.notice for m in conversation.messages if m.role is Role.NOTICE] == [
        "skipped-aborted",
        "skipped-empty",
    ]


def test_replay_starts_at_the_last_line_and_skips_branches() -> None:
    conversation = read((DERIVED / "off-path-branch.jsonl").read_text())
    assert [m.origin.line for m in conversation.messages] == [4, 5, 6, 7, 8, 9, 12, 13, 14, 15]
    ref = conversation.ref
    assert isinstance(ref, FileRef)
    assert {9, 10} & ref.path == set()  # record indices of the branch lines 10 and 11


def test_compaction_replays_summary_then_kept_entries() -> None:
    conversation = read((DERIVED / "compaction-hides-old-damage.jsonl").read_text())
    assert [m.origin.line for m in conversation.messages] == [8, 6, 7, 9, 10]
    assert conversation.messages[0].parts[0].text.startswith("The user asked")


def test_a_parent_cycle_ends_the_walk() -> None:
    """Pi's own loop never ends on a cycle; the reader stops at the first entry seen twice."""
    conversation = read(jsonl(HEADER, entry("a", "b", user("one")), entry("b", "a", assistant(text("two")))))
    assert [m.origin.line for m in conversation.messages] == [2, 3]


def test_later_line_of_an_id_wins_like_pi_map() -> None:
    conversation = read(
        jsonl(
            HEADER,
            entry("a", None, user("first")),
            entry("a", None, user("rewritten")),
            entry("b", "a", assistant(text("ok"))),
        )
    )
    assert [m.visible_text for m in conversation.messages] == ["rewritten", "ok"]


def test_custom_messages_bash_executions_and_summaries_are_user_context() -> None:
    conversation = read(
        jsonl(
            HEADER,
            {
                "type": "custom_message",
                "id": "a",
                "parentId": None,
                "timestamp": "t",
                "customType": "x",
                "content": "note",
                "display": True,
            },
            entry(
                "b",
                "a",
                {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "timestamp": 1},
            ),
            entry(
                "c",
                "b",
                {"role": "bashExecution", "command": "pwd", "excludeFromContext": True, "timestamp": 1},
            ),
            {
                "type": "branch_summary",
                "id": "d",
                "parentId": "c",
                "timestamp": "t",
                "fromId": "a",
                "summary": "went back",
            },
            {"type": "label", "id": "e", "parentId": "d", "timestamp": "t", "targetId": "a", "label": "x"},
            entry("f", "e", assistant(text("ok"))),
        )
    )
    assert [(m.role, m.visible_text) for m in conversation.messages] == [
        (Role.USER, "note"),
        (Role.USER, "ls"),
        (Role.USER, "went back"),
        (Role.ASSISTANT, "ok"),
    ]


# -- repairs ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REPAIRED), ids=ID)
def test_default_fix_is_safe_and_unsafe_fixes_add_the_rest(name: str) -> None:
    safe, unsafe, _ = REPAIRED[name]
    assert [a.rule for a in fix(path_of(name), unsafe=False).applied] == safe
    assert sorted(a.rule for a in fix(path_of(name)).applied) == sorted(safe + unsafe)


@pytest.mark.parametrize("name", sorted(REPAIRED), ids=ID)
def test_only_named_lines_change(name: str) -> None:
    outcome = fix(path_of(name))
    before = outcome.before.decode().splitlines()
    after = outcome.after.decode().splitlines()
    gone = Counter(before) - Counter(after)
    assert gone == Counter(before[number - 1] for number in REPAIRED[name][2])


@pytest.mark.parametrize("name", sorted(set(FILES) - set(REPAIRED)), ids=ID)
def test_files_without_fixable_damage_are_left_alone(name: str) -> None:
    assert not fix(path_of(name)).changed


def test_synthetic_result_is_pi_failed_tool_entry_and_relinks_the_chain() -> None:
    after = fix(RECORDED["kill-tool"], unsafe=False).after.decode().splitlines()
    call_entry, new, prompt = (json.loads(line) for line in after[4:7])
    assert new == {
        "type": "message",
        "id": new["id"],
        "parentId": call_entry["id"],
        "timestamp": call_entry["timestamp"],
        "message": {
            "role": "toolResult",
            "toolCallId": "call_slow_0",
            "toolName": "bash",
            "content": [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}],
            "details": {},
            "isError": True,
            "timestamp": call_entry["message"]["timestamp"],
        },
    }
    assert len(new["id"]) == 8 and int(new["id"], 16) >= 0
    assert prompt["parentId"] == new["id"]


def test_parallel_result_goes_after_the_answered_ones() -> None:
    after = [
        json.loads(line)
        for line in fix(DERIVED / "parallel-missing-result.jsonl").after.decode().splitlines()
    ]
    assert [r["message"].get("toolCallId") for r in after[4:8]] == [None, "call_p1", "call_p3", "call_p2"]
    assert [r["parentId"] for r in after[5:9]] == [r["id"] for r in after[4:8]]


def test_two_unanswered_calls_of_one_turn_get_two_chained_results() -> None:
    data = jsonl(
        HEADER,
        entry("a", None, user("go")),
        entry("b", "a", assistant(call("c1"), call("c2", "read"), stop="toolUse")),
        entry("c", "b", user("still there?")),
        entry("d", "c", assistant(text("yes"))),
    )
    path = Path("two.jsonl")
    report = lint_bytes(path.name, data.encode())
    assert [(f.finding.rule.code, f.origin.line) for f in report.findings] == [("TD301", 3), ("TD301", 3)]
    from transcript_doctor import engine, fixer
    from transcript_doctor.catalog import load
    from transcript_doctor.checks import Selection

    outcome = fixer.fix_bytes(path.name, data.encode(), engine.Options(Selection.build(), load()))
    after = [json.loads(line) for line in outcome.after.decode().splitlines()]
    assert [r["message"].get("toolCallId") for r in after[2:5]] == [None, "c1", "c2"]
    assert [r["parentId"] for r in after[3:6]] == ["b", after[3]["id"], after[4]["id"]]
    assert after[3]["message"]["toolName"] == "bash" and after[4]["message"]["toolName"] == "read"


def test_placeholder_entry_is_removed_and_its_child_relinked() -> None:
    data = jsonl(
        HEADER,
        entry("a", None, user("go")),
        entry("b", "a", assistant(text("[The previous response was interrupted before it completed.]"))),
        entry("c", "b", user("again")),
        entry("d", "c", assistant(text("done"))),
    )
    from transcript_doctor import engine, fixer
    from transcript_doctor.catalog import load
    from transcript_doctor.checks import Selection

    outcome = fixer.fix_bytes(
        "p.jsonl", data.encode(), engine.Options(Selection.build(), load(), unsafe_fixes=True)
    )
    assert [a.rule for a in outcome.applied] == ["TD202"]
    after = [json.loads(line) for line in outcome.after.decode().splitlines()]
    assert [r.get("id") for r in after] == ["s1", "a", "c", "d"]
    assert after[2]["parentId"] == "a"


def test_crlf_line_ends_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(RECORDED["kill-tool"].read_bytes().replace(b"\n", b"\r\n"))
    after = fix(path).after
    assert after.count(b"\r\n") == after.count(b"\n") == 8


def _unsafe_fix(data: str) -> tuple[list[str], list[dict[str, Any]]]:
    from transcript_doctor import engine, fixer
    from transcript_doctor.catalog import load
    from transcript_doctor.checks import Selection

    options = engine.Options(Selection.build(), load(), unsafe_fixes=True)
    outcome = fixer.fix_bytes("p.jsonl", data.encode(), options)
    assert outcome.error is None
    return [a.rule for a in outcome.applied], [
        json.loads(line) for line in outcome.after.decode().splitlines()
    ]


def test_removing_the_last_entry_keeps_resume_on_its_parent() -> None:
    applied, after = _unsafe_fix(
        jsonl(
            HEADER,
            entry("a", None, user("go")),
            entry("b", "a", assistant(text("ok"))),
            entry("c", "b", result("zz")),
        )
    )
    assert applied == ["TD302"]
    assert [r.get("id") for r in after] == ["s1", "a", "b"]


def test_removing_the_last_entry_is_refused_when_a_branch_line_would_become_the_leaf() -> None:
    """Pi resumes from the last line: the branch entry "x" would be replayed instead."""
    data = jsonl(
        HEADER,
        entry("a", None, user("go")),
        entry("b", "a", assistant(text("ok"))),
        entry("x", "a", user("abandoned branch")),
        entry("c", "b", result("zz")),
    )
    applied, after = _unsafe_fix(data)
    assert applied == []
    assert after == [json.loads(line) for line in data.splitlines()]


def test_moving_the_last_entry_leaves_its_parent_last() -> None:
    applied, after = _unsafe_fix(
        jsonl(
            HEADER,
            entry("a", None, user("go")),
            entry("b", "a", assistant(call("c1"), stop="toolUse")),
            entry("c", "b", user("also this")),
            entry("d", "c", result("c1")),
        )
    )
    assert applied == ["TD304"]
    assert [(r.get("id"), r.get("parentId")) for r in after[1:]] == [
        ("a", None),
        ("b", "a"),
        ("d", "b"),
        ("c", "d"),
    ]


def test_a_dangling_link_off_the_path_is_not_reported() -> None:
    """Only the path Pi resumes loses history at a dangling link; a branch's does not."""
    data = jsonl(
        HEADER,
        entry("a", None, user("go")),
        entry("x", "gone", user("old branch")),
        entry("b", "a", assistant(text("ok"))),
    )
    report = lint_bytes("s.jsonl", data.encode())
    assert report.findings == []
    cut = jsonl(HEADER, entry("a", "gone", user("go")), entry("b", "a", assistant(text("ok"))))
    assert [(f.finding.rule.code, f.origin.line) for f in lint_bytes("s.jsonl", cut.encode()).findings] == [
        ("TD404", 2)
    ]


def test_real_pi_resumes_the_repaired_file_and_sends_the_inserted_result() -> None:
    """fixed-resume: Pi 0.73.1 loaded the tree fix wrote, sent the synthetic result as the
    call's tool message (not its own "No result provided") and appended after it."""
    folder = DIR / "fixed-resume"
    damaged = (folder / "session.damaged.jsonl").read_bytes()
    assert (
        fix(folder / "session.damaged.jsonl", unsafe=False).after
        == (folder / "session.fixed.jsonl").read_bytes()
    )
    assert damaged != (folder / "session.fixed.jsonl").read_bytes()
    (request,) = [json.loads(line) for line in (folder / "requests-3.jsonl").read_text().splitlines()]
    tools = [m for m in request["body"]["messages"] if m["role"] == "tool"]
    assert tools == [{"role": "tool", "content": SYNTHETIC_RESULT_TEXT, "tool_call_id": "call_slow_0"}]
    (final,) = folder.glob("sessions/*/*.jsonl")
    assert lint_bytes(final.name, final.read_bytes()).findings == []
    assert final.read_bytes().startswith((folder / "session.fixed.jsonl").read_bytes())


def test_previewing_a_repair_of_a_glued_line_is_refused_not_a_crash() -> None:
    # SARIF previews each repair on the file as it is: TD404's relink of the glued line
    # 9 cannot be shown (its JSON is torn), so it has no fix there; lint still exits 1.
    done = cli("lint", "-o", "sarif", "fixtures/pi/derived/glued-line.jsonl")
    assert (done.returncode, done.stderr) == (1, "")
    results = json.loads(done.stdout)["runs"][0]["results"]
    assert [(r["ruleId"], "fixes" in r) for r in results] == [("TD001", True), ("TD404", False)]
