"""Reader copilot-cli: detection and look-alikes, the replayed history, every damage shape at
its line, repairs byte for byte (default fix safe, destructive ones unsafe), on the files
Copilot CLI 1.0.102 wrote (fixtures/copilot-cli, README there) and on edits of them that
each test documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, detected, detected_bytes, findings, fix, lint_bytes

from transcript_doctor import readers
from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT
from transcript_doctor.model import PartKind, Role
from transcript_doctor.readers.copilot_cli import READER
from transcript_doctor.readers.copilot_cli.repair import derived_id
from transcript_doctor.source import sniff

DIR = FIXTURES / "copilot-cli"
EVENT_LOGS = sorted(p for p in DIR.rglob("events*.jsonl"))
BACKUPS = sorted(DIR.rglob("events.jsonl.backup-before-recovery-*"))


def log(session: str, name: str = "events.jsonl") -> Path:
    """A session's file: its live log (under session-state/<uuid>/) or a kept copy."""
    if name == "events.jsonl":
        (found,) = (DIR / session / "session-state").glob("*/events.jsonl")
        return found
    return DIR / session / name


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def compact(event: dict[str, Any]) -> bytes:
    """An event as the CLI writes it: compact JSON, non-ASCII raw."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()


def join(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def lines_of(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def codes(name: str, data: bytes) -> list[tuple[str, int]]:
    report = lint_bytes(name, data)
    assert report.error is None, report.error
    return [(f.finding.rule.code, f.origin.line) for f in report.findings]


# -- detection ------------------------------------------------------------------------


def test_every_recorded_log_is_claimed_by_this_reader_only() -> None:
    assert len(EVENT_LOGS) >= 30
    for path in EVENT_LOGS:
        source = sniff(str(path), path.read_bytes())
        claims = {r.name: readers.claim(r, source) for r in readers.all_readers()}
        mine = claims.pop("copilot-cli")
        assert mine is not None and mine.transcript, path
        assert all(c is None for c in claims.values()), (path, claims)


def test_a_log_that_lost_its_first_line_is_still_claimed() -> None:
    rest = lines_of(log("tools"))[1:]
    claim = READER.detect(sniff("events.jsonl", join(rest)))
    assert claim is not None and claim.score == 50 and claim.transcript


def test_the_clis_recovery_backup_is_a_companion_not_a_transcript() -> None:
    assert len(BACKUPS) == 4
    for path in BACKUPS:
        source = sniff(str(path), path.read_bytes())
        found = readers.detect(source)
        assert found is not None
        assert found[0].name == "copilot-cli" and not found[1].transcript, path
    report = lint_bytes(str(BACKUPS[0]), BACKUPS[0].read_bytes())
    assert report.findings == []


def test_request_logs_of_the_fake_server_are_not_claimed() -> None:
    for path in sorted(DIR.rglob("requests-*.jsonl"))[:6]:
        assert detected(path) != "copilot-cli"


LOOK_ALIKES = {
    # Kimi Code wire.jsonl style: an event envelope with other type names.
    "other-event-names": [
        {"type": "TurnBegin", "data": {}, "id": "a", "timestamp": "2026-01-01T00:00:00Z", "parentId": None},
        {
            "type": "StepBegin",
            "data": {"n": 1},
            "id": "b",
            "timestamp": "2026-01-01T00:00:01Z",
            "parentId": "a",
        },
    ],
    # Copilot type names in an envelope with a key the CLI never writes.
    "foreign-key": [
        {
            "type": "user.message",
            "data": {"content": "hi"},
            "id": "a",
            "uuid": "u",
            "timestamp": "2026-01-01T00:00:00Z",
            "parentId": None,
        }
    ],
    # `data` that is not an object.
    "data-not-object": [
        {
            "type": "user.message",
            "data": "hi",
            "id": "a",
            "timestamp": "2026-01-01T00:00:00Z",
            "parentId": None,
        }
    ],
    # No parentId at all.
    "no-parent": [{"type": "user.message", "data": {"content": "hi"}, "id": "a", "timestamp": "t"}],
}


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_look_alikes_are_not_claimed(name: str) -> None:
    data = join([compact(e) for e in LOOK_ALIKES[name]])
    assert READER.detect(sniff("events.jsonl", data)) is None
    assert detected_bytes("events.jsonl", data) != "copilot-cli"


def test_no_other_fixture_is_claimed() -> None:
    for path in sorted(FIXTURES.rglob("*.json*")):
        if DIR in path.parents or path.suffix not in (".json", ".jsonl"):
            continue
        try:
            source = sniff(str(path), path.read_bytes())
        except Exception:
            continue
        assert readers.claim(READER, source) is None, path


# -- the replayed history ---------------------------------------------------------------


def test_history_is_what_the_cli_replays() -> None:
    (conversation,) = READER.read(sniff("events.jsonl", log("tools").read_bytes()))
    shape = [(m.role, m.origin.line, [p.kind for p in m.parts]) for m in conversation.messages]
    text, call, result = PartKind.TEXT, PartKind.TOOL_CALL, PartKind.TOOL_RESULT
    assert shape == [
        (Role.USER, 2, [text]),
        (Role.SYSTEM, 3, [text]),
        (Role.ASSISTANT, 6, [text, call]),
        (Role.USER, 8, [result]),
        (Role.ASSISTANT, 12, [text, call]),
        (Role.USER, 14, [result]),
        (Role.ASSISTANT, 18, [text]),
        (Role.USER, 22, [text]),
        (Role.ASSISTANT, 25, [text, call]),
        (Role.USER, 27, [result]),
        (Role.ASSISTANT, 31, [text]),
    ]
    prompt = conversation.messages[0].parts[0]
    assert prompt.origin.pointer == "/data/transformedContent"
    assert prompt.text.endswith("Run echo, then read notes.txt")


def test_parallel_completions_answer_one_turn_in_finishing_order() -> None:
    (conversation,) = READER.read(sniff("events.jsonl", log("parallel").read_bytes()))
    results = [m for m in conversation.messages if m.tool_results]
    assert len(results) == 1
    assert [p.call_id for p in results[0].parts] == ["call_par_2", "call_par_0", "call_par_1"]
    assert findings(log("parallel")) == []


def test_sub_agent_events_are_not_in_the_main_history() -> None:
    (conversation,) = READER.read(sniff("events.jsonl", log("subagent-parallel").read_bytes()))
    # Prompt, system, the two task calls, both completions (lines 36 and 42, after the
    # sub-agents' interleaved lines 9-42 and between them), the answer.
    shape = [(m.role, m.origin.line, [p.origin.line for p in m.parts]) for m in conversation.messages]
    assert shape == [
        (Role.USER, 2, [2]),
        (Role.SYSTEM, 3, [3]),
        (Role.ASSISTANT, 6, [6, 6, 6]),
        (Role.USER, 36, [36, 42]),
        (Role.ASSISTANT, 46, [46]),
    ]
    calls = [p.call_id for m in conversation.messages for p in m.tool_calls]
    results = [p.call_id for m in conversation.messages for p in m.tool_results]
    assert len(calls) == 2 and sorted(calls) == sorted(results)


def test_reasoning_is_a_thought() -> None:
    (conversation,) = READER.read(sniff("events.jsonl", log("thinking").read_bytes()))
    first = next(m for m in conversation.messages if m.role is Role.ASSISTANT)
    assert first.parts[0].kind is PartKind.THINKING and first.parts[0].origin.pointer == "/data/reasoningText"


# Each recorded file's exact findings and fix diffs are data: tests/expectations/copilot-cli.json.


# -- repairs ------------------------------------------------------------------------------


def test_unanswered_call_gets_the_clis_own_completion_shape() -> None:
    """The gap of orphan-resume: the synthetic completion goes right after the view call's
    tool.execution_start (line 13), and the next line's parentId names it."""
    path = log("orphan-resume", "events.damaged.jsonl")
    original = lines_of(path)
    outcome = fix(path, unsafe=False)
    start = json.loads(original[12])
    new_id = derived_id(start["id"], "call_view_1")
    synthetic = {
        "type": "tool.execution_complete",
        "data": {
            "toolCallId": "call_view_1",
            "success": False,
            "error": {"message": SYNTHETIC_RESULT_TEXT, "code": "interrupted"},
        },
        "id": new_id,
        "timestamp": start["timestamp"],
        "parentId": start["id"],
    }
    relinked = original[13].replace(start["id"].encode(), new_id.encode())
    assert relinked != original[13]
    assert outcome.after == join([*original[:13], compact(synthetic), relinked, *original[14:]])
    assert [a.rule for a in outcome.applied] == ["TD301"]


def test_the_repair_the_cli_resumed_is_the_one_fix_makes() -> None:
    """orphan-fixed-resume: events.fixed.jsonl is what `fix --in-place` made of the damaged
    log before the real CLI resumed it (and replayed the synthetic text, requests-2)."""
    outcome = fix(log("orphan-fixed-resume", "events.damaged.jsonl"), unsafe=False)
    assert outcome.after == log("orphan-fixed-resume", "events.fixed.jsonl").read_bytes()
    resumed = log("orphan-fixed-resume").read_bytes()
    assert resumed.startswith(outcome.after)
    replay = [
        json.loads(line)
        for line in (DIR / "orphan-fixed-resume" / "requests-2.jsonl").read_text().splitlines()
    ]
    tools = [m for m in replay[0]["body"]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tools][1] == ("call_view_1", SYNTHETIC_RESULT_TEXT)


@pytest.mark.parametrize("starts", [True, False])
def test_two_missing_results_chain_one_after_the_other(tmp_path: Path, starts: bool) -> None:
    """parallel with the completions of call_par_1 and call_par_2 removed (and, without
    ``starts``, their tool.execution_start lines too), the chain re-linked so that only the
    gaps are damage.  Each synthetic completion follows its call's start, or both follow the
    assistant.message in call order; every line then names the line above it."""
    gone = {"call_par_1", "call_par_2"}
    kinds = ("tool.execution_complete",) if starts else ("tool.execution_complete", "tool.execution_start")
    kept = [
        e for e in events(log("parallel")) if not (e["type"] in kinds and e["data"].get("toolCallId") in gone)
    ]
    for k in range(1, len(kept)):
        kept[k]["parentId"] = kept[k - 1]["id"]
    path = _derived(tmp_path, "events.jsonl", [compact(e) for e in kept])
    assert [c for c, _, _ in findings(path)] == ["TD301", "TD301"]
    out = [json.loads(line) for line in fix(path, unsafe=False).after.split(b"\n") if line]
    assert len(out) == len(kept) + 2
    for k in range(1, len(out)):
        assert out[k]["parentId"] == out[k - 1]["id"], k
    synthetic = [(i, e["data"]) for i, e in enumerate(out) if e["data"].get("success") is False]
    assert [d["toolCallId"] for _, d in synthetic] == ["call_par_1", "call_par_2"]
    assert all(d["error"] == {"message": SYNTHETIC_RESULT_TEXT, "code": "interrupted"} for _, d in synthetic)
    if starts:
        for i, d in synthetic:
            above = out[i - 1]
            assert above["type"] == "tool.execution_start" and above["data"]["toolCallId"] == d["toolCallId"]
            assert out[i]["timestamp"] == above["timestamp"]
    else:
        (first, _), (second, _) = synthetic
        message = out[first - 1]
        assert message["type"] == "assistant.message" and second == first + 1
        assert out[first]["timestamp"] == out[second]["timestamp"] == message["timestamp"]


def test_displaced_completion_is_moved_back_only_with_unsafe_fixes() -> None:
    """displaced-resume: the bash completion (line 8) was moved after the view call's
    assistant.message (now line 12), the chain re-linked (copilot_damage.py displaced).
    Moving it back to the end of its step restores the file the CLI wrote, byte for byte:
    its parentId names the start again, the start's old child (turn_end) names it, and the
    view start names the view message again."""
    path = log("displaced-resume", "events.damaged.jsonl")
    assert findings(path) == [("TD304", 12, "/data/result/content")]
    assert fix(path, unsafe=False).after == path.read_bytes()  # it moves tool output: unsafe
    outcome = fix(path)
    before = log("displaced-resume", "events.before-damage.jsonl").read_bytes()
    assert outcome.after == before
    assert [(a.rule, a.line, a.action) for a in outcome.applied] == [("TD304", 12, "move")]
    assert fix(log("displaced-resume", "events.before-damage.jsonl")).applied == []


def _replayed(session: str) -> list[tuple[str, str | None]]:
    """(role, tool call id or answered id) of the first request after the resume."""
    first = json.loads((DIR / session / "requests-2.jsonl").read_text().split("\n")[0])
    out: list[tuple[str, str | None]] = []
    for m in first["body"]["messages"]:
        calls = [c["id"] for c in m.get("tool_calls") or []]
        out.append((m["role"], m.get("tool_call_id") or (calls[0] if calls else None)))
    return out


def test_the_cli_resumes_the_moved_completion_and_replays_it_in_place() -> None:
    """displaced-fixed-resume: the damage above, `fix --in-place --unsafe-fixes`, then the
    real CLI resumed it: no backup, no rewrite, and the bash result goes right after its
    call.  1.0.102 does the same with the damaged file (displaced-resume): its replay puts a
    result after its call by id, so the order in the file is harmless to that path."""
    fixed = log("displaced-fixed-resume", "events.fixed.jsonl").read_bytes()
    assert fixed == log("displaced-fixed-resume", "events.before-damage.jsonl").read_bytes()
    assert fix(log("displaced-fixed-resume", "events.damaged.jsonl")).after == fixed
    assert log("displaced-fixed-resume").read_bytes().startswith(fixed)
    assert (
        log("displaced-resume")
        .read_bytes()
        .startswith(log("displaced-resume", "events.damaged.jsonl").read_bytes())
    )
    for session in ("displaced-resume", "displaced-fixed-resume"):
        assert not list((DIR / session).rglob("*backup-before-recovery*"))
        assert _replayed(session)[1:7] == [
            ("user", None),
            ("assistant", "call_bash_0"),
            ("tool", "call_bash_0"),
            ("assistant", "call_view_1"),
            ("tool", "call_view_1"),
            ("assistant", None),
        ]


def _moved(original: list[dict[str, Any]], index: int, after: int) -> list[bytes]:
    """``original`` with event ``index`` moved to after event ``after``, every line re-linked
    to the line above (as the CLI writes the chain)."""
    out = [dict(e) for e in original]
    out.insert(after if index < after else after + 1, out.pop(index))
    for k in range(1, len(out)):
        out[k]["parentId"] = out[k - 1]["id"]
    return [compact(e) for e in out]


@pytest.mark.parametrize(
    ("session", "call_id", "expected"),
    [
        # The last of three parallel completions (line 12) goes back after the other two.
        ("parallel", "call_par_1", "original"),
        # A task completion written after its sub-agent's subagent.completed (line 42, as the
        # CLI wrote it): back after the sub-agents' events.
        ("subagent-parallel", "call_task_b", "original"),
        # The task completion the CLI wrote before subagent.completed (line 23) goes after
        # all of the step's sub-agent events, subagent.completed included (the order the
        # CLI wrote in subagent-parallel).
        ("subagent", "call_task_0", "after-subagent-events"),
    ],
)
def test_displaced_completion_goes_to_the_end_of_its_step(
    tmp_path: Path, session: str, call_id: str, expected: str
) -> None:
    original = events(log(session))
    index = next(
        i
        for i, e in enumerate(original)
        if e["type"] == "tool.execution_complete"
        and e["data"]["toolCallId"] == call_id
        and "agentId" not in e
    )
    answer = next(i for i in range(index, len(original)) if original[i]["type"] == "assistant.message")
    path = _derived(tmp_path, "events.jsonl", _moved(original, index, answer))
    assert findings(path) == [("TD304", answer + 1, "/data/result/content")]
    after = fix(path).after
    if expected == "original":
        assert after == log(session).read_bytes()
    else:
        steps = [e for e in original[index + 1 :] if "agentId" in e]
        last = original.index(steps[-1])
        assert after == join(_moved(original, index, last))
    assert lint_bytes("events.jsonl", after).findings == []


def test_displaced_completion_with_a_prompt_between_goes_back_after_its_start(tmp_path: Path) -> None:
    """tools with the second prompt (line 22) recorded between the bash start (line 7) and
    its completion, chain whole: the completion goes back after the start, the prompt
    follows it."""
    original = events(log("tools"))
    damaged = _moved(original, 21, 6)  # the prompt now line 8, the completion line 9
    path = _derived(tmp_path, "events.jsonl", damaged)
    assert [(c, n) for c, n, _ in findings(path)] == [("TD304", 9)]
    assert fix(path).after == join(_moved(original, 21, 7))  # after the completion


def test_moving_a_completion_keeps_a_broken_link_broken(tmp_path: Path) -> None:
    """The steering test's file (the prompt keeps its own parentId, so the completion's
    link names the start, not the line above): the completion keeps its parentId, the
    prompt's broken link stays, turn_end takes the prompt as its parent."""
    original = lines_of(log("tools"))
    prompt = original[21]
    damaged = [*original[:7], prompt, *original[7:21], *original[22:]]
    path = _derived(tmp_path, "events.jsonl", damaged)
    assert [(c, n) for c, n, _ in findings(path)] == [("TD304", 9)]
    turn_end = original[8].replace(json.loads(original[7])["id"].encode(), json.loads(prompt)["id"].encode())
    assert fix(path).after == join([*original[:8], prompt, turn_end, *original[9:21], *original[22:]])


def _derived(tmp_path: Path, name: str, lines: list[bytes]) -> Path:
    path = tmp_path / name
    path.write_bytes(join(lines))
    return path


def test_duplicate_completion_byte_copy_is_a_safe_removal(tmp_path: Path) -> None:
    """tools with its bash completion (line 8) written twice: TD303 at the copy (line 9)."""
    original = lines_of(log("tools"))
    path = _derived(tmp_path, "events.jsonl", [*original[:8], original[7], *original[8:]])
    assert findings(path) == [("TD303", 9, "/data/result/content")]
    assert fix(path, unsafe=False).after == join(original)


def test_duplicate_completion_with_other_output_needs_unsafe_fixes(tmp_path: Path) -> None:
    """The same, the copy with another output and id: removing it destroys tool output."""
    original = lines_of(log("tools"))
    copy = json.loads(original[7])
    copy["data"]["result"]["content"] = "other output"
    copy["id"] = "00000000-0000-4000-8000-000000000001"
    path = _derived(tmp_path, "events.jsonl", [*original[:8], compact(copy), *original[8:]])
    assert findings(path) == [("TD303", 9, "/data/result/content")]
    assert fix(path, unsafe=False).after == path.read_bytes()
    # turn_end (line 10) named the real completion, not the copy: its link stays.
    assert fix(path).after == join(original)


def test_orphan_completion_removed_and_its_child_relinked(tmp_path: Path) -> None:
    """tools with the view call's assistant.message (line 12) removed and the start re-linked:
    its completion (now line 13) answers nothing (TD302); removing it re-points turn_end."""
    original = lines_of(log("tools"))
    start = json.loads(original[12])
    start["parentId"] = json.loads(original[10])["id"]
    damaged = [*original[:11], compact(start), *original[13:]]
    path = _derived(tmp_path, "events.jsonl", damaged)
    assert [(c, n) for c, n, _ in findings(path)] == [("TD302", 13)]
    assert fix(path, unsafe=False).after == path.read_bytes()  # it removes tool output
    outcome = fix(path)
    turn_end = original[14].replace(json.loads(original[13])["id"].encode(), start["id"].encode())
    assert outcome.after == join([*damaged[:12], turn_end, *damaged[14:]])


def test_empty_turn_removed_and_chain_kept(tmp_path: Path) -> None:
    """tools' final answer (line 31) emptied: TD103; removing it re-points turn_end (32)."""
    original = lines_of(log("tools"))
    answer = json.loads(original[30])
    answer["data"]["content"] = ""
    damaged = [*original[:30], compact(answer), *original[31:]]
    path = _derived(tmp_path, "events.jsonl", damaged)
    assert [(c, n) for c, n, _ in findings(path)] == [("TD103", 31)]
    after = fix(path, unsafe=False).after  # nothing to lose: applied by default
    turn_end = original[31].replace(answer["id"].encode(), answer["parentId"].encode())
    assert after == join([*original[:30], turn_end, *original[32:]])


def test_prompt_recorded_twice_is_a_safe_removal(tmp_path: Path) -> None:
    """tools' second prompt (line 22) as a byte copy right after it: TD403, safe."""
    original = lines_of(log("tools"))
    path = _derived(tmp_path, "events.jsonl", [*original[:22], original[21], *original[22:]])
    assert [(c, n) for c, n, _ in findings(path)] == [("TD403", 23)]
    assert fix(path, unsafe=False).after == join(original)


def test_prompt_typed_twice_is_not_a_duplicate(tmp_path: Path) -> None:
    original = lines_of(log("tools"))
    again = json.loads(original[21])
    again["id"] = "00000000-0000-4000-8000-000000000000"
    path = _derived(tmp_path, "events.jsonl", [*original[:22], compact(again), *original[22:]])
    assert findings(path) == []


@pytest.mark.parametrize(
    ("session", "repaired"),
    [("torn-resume", "drop"), ("nul-resume", "drop"), ("glued-resume", "split")],
)
def test_line_damage_repaired_by_default(session: str, repaired: str) -> None:
    path = log(session, "events.damaged.jsonl")
    before = lines_of(log(session, "events.before-damage.jsonl"))
    after = fix(path, unsafe=False).after
    if session == "nul-resume":  # the NUL run after the last newline
        assert after == join(before)
    elif repaired == "drop":
        assert after == join(before[:-1])
    else:  # the complete session.shutdown after the stub is kept (the CLI dropped it)
        assert after == join([*before[:-2], before[-1]])


def test_event_split_by_a_raw_newline_is_rejoined_by_default() -> None:
    """rawnl-resume: the bash completion written with its \\n as a raw newline (lines 8-9).
    One TD001 at line 8 (not one per piece), safe: the rejoin writes the escape back and
    gives the file the CLI wrote before the damage; the completion is read, so its call is
    not unanswered."""
    path = log("rawnl-resume", "events.damaged.jsonl")
    assert findings(path) == [("TD001", 8, None)]
    outcome = fix(path, unsafe=False)
    assert outcome.after == log("rawnl-resume", "events.before-damage.jsonl").read_bytes()
    assert [(a.rule, a.line, a.action, a.applicability.value) for a in outcome.applied] == [
        ("TD001", 8, "rejoin", "safe")
    ]
    (edit,) = outcome.applied[0].edits
    assert edit.pointer == "lines 8-9" and edit.old.count(b"\n") == 1
    assert edit.new == edit.old.replace(b"\n", b"\\n")


def test_the_cli_drops_a_split_event_and_replays_the_rejoined_one() -> None:
    """Before (rawnl-resume): Copilot CLI 1.0.102 backed the log up, dropped both pieces and
    sent its filler for call_bash_0.  After (rawnl-fixed-resume, `fix --in-place` before the
    resume): no backup, no rewrite, and the real result is replayed."""

    def bash_result(session: str) -> str:
        first = json.loads((DIR / session / "requests-2.jsonl").read_text().split("\n")[0])
        (tool,) = [m for m in first["body"]["messages"] if m.get("tool_call_id") == "call_bash_0"]
        return str(tool["content"])

    assert bash_result("rawnl-resume") == "The execution of this tool, or a previous tool was interrupted."
    assert len(list((DIR / "rawnl-resume").rglob("*backup-before-recovery*"))) == 1
    fixed = log("rawnl-fixed-resume", "events.fixed.jsonl").read_bytes()
    assert fixed == log("rawnl-fixed-resume", "events.before-damage.jsonl").read_bytes()
    assert fix(log("rawnl-fixed-resume", "events.damaged.jsonl"), unsafe=False).after == fixed
    assert log("rawnl-fixed-resume").read_bytes().startswith(fixed)
    assert not list((DIR / "rawnl-fixed-resume").rglob("*backup-before-recovery*"))
    assert (
        bash_result("rawnl-fixed-resume") == "hello from the shell\n<shellId: 0 completed with exit code 0>"
    )


def _torn(line: bytes, *breaks: bytes) -> bytes:
    """``line`` with its first escaped newlines written as the raw ``breaks``."""
    for raw in breaks:
        line = line.replace(b"\\n", raw, 1)
    return line


@pytest.mark.parametrize(
    "breaks",
    [
        (b"\n",),
        (b"\r\n",),  # a CRLF break: its escapes are \r\n
        (b"\n\n",),  # a blank line between the pieces
        (b"\n  \n",),  # a blank line of spaces: the spaces stay in the string
    ],
)
def test_torn_result_content_is_rejoined_exactly(tmp_path: Path, breaks: tuple[bytes, ...]) -> None:
    """The view completion of tools (line 14, content "first line\\nsecond line\\n") with
    its first newline written raw in several spellings: the rejoin gives the content back
    with each break's escape (a CRLF break: "\\r\\n", which is what the raw bytes said)."""
    original = lines_of(log("tools"))
    torn = _torn(original[13], *breaks)
    path = _derived(tmp_path, "events.jsonl", [*original[:13], torn, *original[14:]])
    assert findings(path) == [("TD001", 14, None)]
    after = fix(path, unsafe=False).after
    expected = original[13].replace(b"\\n", breaks[0].replace(b"\r", b"\\r").replace(b"\n", b"\\n"), 1)
    assert after == join([*original[:13], expected, *original[14:]])
    assert json.loads(expected)["data"]["result"]["content"].startswith("first line" + breaks[0].decode())


def test_every_newline_of_a_result_raw_and_two_torn_events_in_a_row(tmp_path: Path) -> None:
    """The view completion with both its newlines raw (three pieces), right after the bash
    completion with its newline raw: two events, two findings, both rejoined."""
    original = lines_of(log("tools"))
    bash = _torn(original[7], b"\n")
    view = _torn(original[13], b"\n", b"\n")
    damaged = [*original[:7], bash, *original[8:13], view, *original[14:]]
    path = _derived(tmp_path, "events.jsonl", damaged)
    assert findings(path) == [("TD001", 8, None), ("TD001", 15, None)]
    assert fix(path, unsafe=False).after == join(original)
    glued = _derived(tmp_path, "glued.jsonl", [*original[:7], bash, view, *original[8:13], *original[14:]])
    # Moved next to each other (chain aside): still two events, rejoined one by one.
    assert findings(glued, select=("TD001",)) == [("TD001", 8, None), ("TD001", 10, None)]
    rejoined = join([*original[:8], original[13], *original[8:13], *original[14:]])
    assert fix(glued, select=("TD001",), unsafe=False).after == rejoined


def test_a_split_sub_agent_event_is_rejoined_and_stays_out_of_the_history(tmp_path: Path) -> None:
    original = lines_of(log("subagent"))
    assert b"\\n" in original[16]  # the sub-agent's wc completion
    path = _derived(tmp_path, "events.jsonl", [*original[:16], _torn(original[16], b"\n"), *original[17:]])
    assert findings(path) == [("TD001", 17, None)]
    assert fix(path, unsafe=False).after == join(original)


TORN = b'{"type":"tool.execution_complete","data":{"toolCallId":"call_view_1","success":true,"result":{"content":"a'


@pytest.mark.parametrize(
    ("pieces", "why"),
    [
        # The line break is escaped by a backslash of its own (`\<LF>`): not a torn string.
        ([TORN + b"\\", b'b"},"id":"x","timestamp":"t","parentId":null}'], "escaped break"),
        # The break falls between members, not inside a string (an event written across lines).
        (
            [b'{"type":"tool.execution_complete","data":{},', b'"id":"x","timestamp":"t","parentId":null}'],
            "outside",
        ),
        # Joined, it parses but is no event (no parentId).
        ([TORN, b'b"}},"id":"x","timestamp":"t"}'], "not an event"),
        # Joined, something follows the event on its last piece.
        ([TORN, b'b"}},"id":"x","timestamp":"t","parentId":null}{"a"'], "trailing bytes"),
        # The string never closes before the next event.
        ([TORN, b"b"], "never closes"),
    ],
)
def test_pieces_that_do_not_make_exactly_one_event_are_not_rejoined(
    tmp_path: Path, pieces: list[bytes], why: str
) -> None:
    """Each piece stays its own TD001, and fix changes none of them."""
    original = lines_of(log("tools"))
    damaged = [*original[:20], *pieces, *original[20:]]
    path = _derived(tmp_path, "events.jsonl", damaged)
    got = findings(path)
    assert [(c, n) for c, n, _ in got] == [("TD001", 21 + k) for k in range(len(pieces))], why
    assert fix(path).after == path.read_bytes(), why


def test_a_complete_event_between_pieces_ends_the_run(tmp_path: Path) -> None:
    """A whole event is never a piece: the first piece and the rest stay unparseable."""
    original = lines_of(log("tools"))
    torn = _torn(original[13], b"\n").split(b"\n")
    damaged = [*original[:13], torn[0], original[14], torn[1], *original[15:]]
    path = _derived(tmp_path, "events.jsonl", damaged)
    assert findings(path, select=("TD001",)) == [("TD001", 14, None), ("TD001", 16, None)]
    assert fix(path, select=("TD001",)).after == path.read_bytes()


# -- hazards and edge shapes -------------------------------------------------------------


def test_raw_control_character_in_a_string_is_unparseable() -> None:
    """A raw tab inside tools' first result: JSON.parse rejects it like orjson, so the
    completion is lost to the CLI too and its call is unanswered."""
    original = lines_of(log("tools"))
    tab = original[7].replace(b"\\n", b"\t", 1)
    assert tab != original[7]
    assert codes("events.jsonl", join([*original[:7], tab, *original[8:]])) == [("TD301", 6), ("TD001", 8)]


def test_unparseable_sub_agent_line_is_reported() -> None:
    original = lines_of(log("subagent"))
    torn = original[16][:40]
    assert codes("events.jsonl", join([*original[:16], torn, *original[17:]])) == [("TD001", 17)]


def test_steering_prompt_between_a_call_and_its_result_is_not_displacement() -> None:
    """A prompt delivered while the tool ran (SDK `delivery: "steering"`) recorded between
    the start (line 7) and the completion (line 8) of tools' first call."""
    original = lines_of(log("tools"))
    prompt = json.loads(original[21])
    prompt["data"]["delivery"] = "steering"
    data = join([*original[:7], compact(prompt), *original[7:21], *original[22:]])
    assert codes("events.jsonl", data) == []
    prompt["data"]["delivery"] = "idle"
    data = join([*original[:7], compact(prompt), *original[7:21], *original[22:]])
    assert codes("events.jsonl", data) == [("TD304", 9)]


def test_unknown_event_types_and_odd_values_are_skipped() -> None:
    original = lines_of(log("tools"))
    odd = [
        {"type": "future.event", "data": {"x": 1}, "id": "e1", "timestamp": "t", "parentId": None},
        {
            "type": "assistant.message",
            "data": {"toolRequests": "nope", "content": 3},
            "id": "e2",
            "timestamp": "t",
            "parentId": None,
        },
        {
            "type": "tool.execution_complete",
            "data": {"success": True},
            "id": "e3",
            "timestamp": "t",
            "parentId": None,
        },
    ]
    data = join([*original[:20], *(compact(e) for e in odd)])
    # The message with neither text nor calls is an empty turn; the completion naming no
    # call an orphan; the unknown type nothing.
    assert codes("events.jsonl", data) == [("TD103", 22), ("TD302", 23)]


def test_values_of_the_wrong_type_are_skipped_not_a_crash() -> None:
    """Ids that are not strings (an unhashable list among them), requests that are not
    objects: read as nothing, never an internal error."""
    original = lines_of(log("tools"))
    odd = [
        {"type": "assistant.message", "data": {"content": "x", "toolRequests": [1, {"toolCallId": []}]}},
        {"type": "tool.execution_start", "data": {"toolCallId": ["a"]}},
        {"type": "tool.execution_complete", "data": {"toolCallId": {"a": 1}, "result": []}},
        {"type": "user.message", "data": {"content": None, "transformedContent": 5}},
        {"type": "system.message", "data": {"content": ["x"]}},
    ]
    stamped = [{**e, "id": f"e{k}", "timestamp": "t", "parentId": None} for k, e in enumerate(odd)]
    data = join([*original[:20], *(compact(e) for e in stamped)])
    # The call without a usable id never pairs (TD301: a prompt follows); the completion
    # naming no call is an orphan.
    assert codes("events.jsonl", data) == [("TD301", 21), ("TD302", 23)]


def test_a_foreign_record_after_the_header_is_skipped_as_unknown() -> None:
    """A line of another shape among the first records (here a bare object after the
    session.start) does not hide the layout: the file is still read, the line skipped."""
    original = lines_of(log("tools"))
    data = join([original[0], b'{"role":"user","content":"hi"}', *original[1:]])
    assert detected_bytes("events.jsonl", data) == "copilot-cli"
    assert codes("events.jsonl", data) == []
    headless = join([b'{"role":"user","content":"hi"}', *original[1:]])
    assert READER.detect(sniff("events.jsonl", headless)) is None


def test_a_piece_of_a_torn_event_is_never_removed_as_an_event() -> None:
    """A removal aimed at a line that is no whole event (a piece of a torn one, before its
    TD001 rejoin) is refused: it would leave the other pieces behind."""
    from transcript_doctor.editing import EditError, Lines
    from transcript_doctor.readers.copilot_cli.refs import EventRef
    from transcript_doctor.readers.copilot_cli.repair import remove_event

    original = lines_of(log("tools"))
    data = join([*original[:13], _torn(original[13], b"\n"), *original[14:]])
    edit = Lines(sniff("events.jsonl", data))
    with pytest.raises(EditError, match="line 14 is not one whole event"):
        remove_event(EventRef(13), edit)
    assert not edit.changed
