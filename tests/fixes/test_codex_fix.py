"""fix on Codex rollouts: exact bytes, only the named items change (spec codex.md §7).

The damaged fixtures' fixed bytes are pinned by tests/expectations/codex.json.  Further
damage is derived here from real files (each edit documented at its test) and checked
against bytes built by hand from the original lines, so every expectation says which
lines may change and how.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, fix, lint_bytes

from transcript_doctor import jsonspan
from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT, RemoveMessage
from transcript_doctor.editing import Lines, splice
from transcript_doctor.fixer import Outcome
from transcript_doctor.model import PartKind, Role
from transcript_doctor.readers.base import Transcript
from transcript_doctor.readers.codex import READER
from transcript_doctor.source import sniff

DIR = FIXTURES / "codex"
LOCALPUSH = "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
SEQUENTIAL = "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
PARALLEL = "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
COMPACTED = "excerpt-compacted-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
DESKTOP_0128 = "excerpt-rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
HISTORY = "/payload/replacement_history"

REPAIRED = {
    "damaged-compacted-history.jsonl": ["TD103"],
    "damaged-displaced-output.jsonl": ["TD304"],
    "damaged-tool-pairing.jsonl": ["TD303", "TD302"],
    "damaged-torn-final-line.jsonl": ["TD001"],
    "damaged-trailing-whitespace.jsonl": ["TD102"],
    "damaged-turns.jsonl": ["TD201", "TD103"],
    "legacy-rollout.jsonl": ["TD301"],
}


def lines(name: str) -> list[bytes]:
    """A fixture's lines without terminators (every real rollout ends with a newline)."""
    data = (DIR / name).read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def write(tmp_path: Path, rows: list[bytes], eol: bytes = b"\n", final: bool = True) -> Path:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(eol.join(rows) + (eol if final else b""))
    return path


def joined(rows: list[bytes]) -> bytes:
    return b"\n".join(rows) + b"\n"


def applied(outcome: Outcome) -> list[tuple[str, int, str]]:
    return [(a.rule, a.line, a.action) for a in outcome.applied]


def changed_lines(outcome: Outcome) -> tuple[Counter[bytes], Counter[bytes]]:
    """(lines that went, lines that came), as multisets: everything else kept its bytes."""
    before = Counter(outcome.before.splitlines())
    after = Counter(outcome.after.splitlines())
    return before - after, after - before


def compact(value: Any) -> bytes:
    """Codex's serde style: compact separators, raw UTF-8, insertion key order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def synthetic(kind: str, call_id: str) -> dict[str, str]:
    return {"type": kind, "call_id": call_id, "output": SYNTHETIC_RESULT_TEXT}


def timestamp(line: bytes) -> str:
    value = json.loads(line)["timestamp"]
    assert isinstance(value, str)
    return value


def with_history_items(line: bytes, inserts: dict[int, list[bytes]]) -> bytes:
    """A compacted line with raw items put before the given replacement_history indexes."""
    items = jsonspan.resolve(jsonspan.index(line), HISTORY).items
    assert items is not None
    out = line
    for index in sorted(inserts, reverse=True):
        at = items[index].start
        out = out[:at] + b"".join(raw + b"," for raw in inserts[index]) + out[at:]
    return out


# -- the damaged fixtures ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/codex.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name]


def test_real_unanswered_call_gets_exactly_one_output_line() -> None:
    """localpush line 826: the call is answered right after it, nothing else moves."""
    rows = lines(LOCALPUSH)
    outcome = fix(DIR / LOCALPUSH)
    new = compact(
        {
            "timestamp": "2026-02-23T12:42:26.675Z",  # copied from the call line
            "type": "response_item",
            "payload": synthetic("function_call_output", "call_BpTazJ89W9PntRqGPwDNfwEY"),
        }
    )
    assert outcome.after == joined([*rows[:826], new, *rows[826:]])
    assert applied(outcome) == [("TD301", 826, "insert")]
    ((edit,),) = [a.edits for a in outcome.applied]
    assert (edit.pointer, edit.old, edit.new) == ("after line 826", b"", new)


def test_turn_repairs_remove_the_message_and_only_dangling_reasoning() -> None:
    """damaged-turns: the blank commentary (34) goes and its reasoning (32) stays, because
    it also produced the call on 35; the placeholder final answer (61) goes with its
    reasoning (59), which produced nothing else.  The event_msg mirrors stay."""
    rows = lines("damaged-turns.jsonl")
    outcome = fix(DIR / "damaged-turns.jsonl")
    assert outcome.after == joined([r for n, r in enumerate(rows, 1) if n not in (34, 59, 61)])
    assert applied(outcome) == [("TD201", 61, "remove"), ("TD103", 34, "remove")]


def test_pairing_repairs_remove_the_named_outputs() -> None:
    rows = lines("damaged-tool-pairing.jsonl")
    outcome = fix(DIR / "damaged-tool-pairing.jsonl")
    assert rows[26] == rows[27]  # the duplicate is a byte copy: the later one (28) goes
    assert outcome.after == joined([r for n, r in enumerate(rows, 1) if n not in (18, 28)])
    assert applied(outcome) == [("TD303", 28, "remove"), ("TD302", 18, "remove")]
    assert [e.pointer for a in outcome.applied for e in a.edits] == ["line 28", "line 18"]


def test_displaced_output_moves_back_behind_its_call() -> None:
    """The output (13) goes back into the run after its call (10), before the prompt (11)."""
    rows = lines("damaged-displaced-output.jsonl")
    outcome = fix(DIR / "damaged-displaced-output.jsonl")
    assert outcome.after == joined([*rows[:10], rows[12], *rows[10:12], *rows[13:]])
    assert applied(outcome) == [("TD304", 13, "move")]


def test_empty_item_inside_the_replacement_history_is_removed_from_the_array() -> None:
    rows = lines("damaged-compacted-history.jsonl")
    outcome = fix(DIR / "damaged-compacted-history.jsonl")
    history = jsonspan.resolve(jsonspan.index(rows[9]), HISTORY).items
    assert history is not None
    cut = rows[9][: history[6].end] + rows[9][history[7].end :]  # drops `,{item 7}`
    assert outcome.after == joined([*rows[:9], cut, *rows[10:]])
    assert [e.pointer for a in outcome.applied for e in a.edits] == [f"line 10 {HISTORY}/7"]


def test_trailing_whitespace_is_stripped_from_the_final_answer_only() -> None:
    outcome = fix(DIR / "damaged-trailing-whitespace.jsonl")
    gone, came = changed_lines(outcome)
    (old,) = gone
    assert came == Counter([old.replace(b'sha=10502814]\\n"}]', b'sha=10502814]"}]')])
    assert outcome.after == (DIR / SEQUENTIAL).read_bytes()  # the file the damage came from


def test_torn_final_line_is_dropped() -> None:
    rows = (DIR / "damaged-torn-final-line.jsonl").read_bytes().split(b"\n")
    outcome = fix(DIR / "damaged-torn-final-line.jsonl")
    assert outcome.after == joined(rows[:-1])
    assert applied(outcome) == [("TD001", 19, "remove")]


def test_legacy_layout_gets_a_bare_output_line() -> None:
    rows = lines("legacy-rollout.jsonl")
    outcome = fix(DIR / "legacy-rollout.jsonl")
    new = compact(synthetic("function_call_output", "call_a2"))  # local_shell_call's output kind
    assert outcome.after == joined([*rows[:9], new, *rows[9:]])


# -- damage derived here from real files ------------------------------------------------


def test_interruption_placeholder_is_removed_with_its_reasoning(tmp_path: Path) -> None:
    """SEQUENTIAL with the final answer (61) replaced by Gemini CLI's interruption marker."""
    rows = lines(SEQUENTIAL)
    damaged = list(rows)
    damaged[60] = rows[60].replace(
        b"[REDACTED_TEXT len=647 sha=10502814]",
        b"[The previous response was interrupted before it completed.]",
    )
    outcome = fix(write(tmp_path, damaged))
    assert applied(outcome) == [("TD202", 61, "remove")]
    assert outcome.after == joined([r for n, r in enumerate(rows, 1) if n not in (59, 61)])


def test_unanswered_custom_tool_call_gets_a_custom_output(tmp_path: Path) -> None:
    """The 0.128 excerpt without line 34, the output of the apply_patch call on line 31,
    and with a copy of the prompt line 22 appended, so that the conversation goes on."""
    rows = lines(DESKTOP_0128)
    damaged = [*rows[:33], *rows[34:], rows[21]]
    outcome = fix(write(tmp_path, damaged))
    assert applied(outcome) == [("TD301", 31, "insert")]
    new = compact(
        {
            "timestamp": timestamp(rows[30]),
            "type": "response_item",
            "payload": synthetic("custom_tool_call_output", "call_0gOiGGSkJEBvvlrXtBn0xzwL"),
        }
    )
    assert outcome.after == joined([*damaged[:31], new, *damaged[31:]])


def test_pairing_inside_the_replacement_history_is_repaired_in_the_array(tmp_path: Path) -> None:
    """The compacted excerpt with three items put into its replacement_history (line 10):
    an unanswered call after item 5, a call after item 7 whose output sits behind the
    prompt (item 8), and an orphan output behind item 9."""
    rows = lines(COMPACTED)
    call_a = compact(
        {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "call_A"}
    )
    call_b = compact(
        {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "call_B"}
    )
    out_b = compact({"type": "function_call_output", "call_id": "call_B", "output": "ok"})
    orphan = compact({"type": "function_call_output", "call_id": "call_Z", "output": "stale"})
    damaged = list(rows)
    damaged[9] = with_history_items(rows[9], {6: [call_a], 8: [call_b], 9: [out_b], 10: [orphan]})
    path = write(tmp_path, damaged)
    report = lint_bytes(path.name, path.read_bytes())
    assert sorted((f.finding.rule.code, f.origin.pointer) for f in report.findings) == [
        ("TD301", f"{HISTORY}/6"),
        ("TD302", f"{HISTORY}/13"),
        ("TD304", f"{HISTORY}/11"),
    ]
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD302", "TD304", "TD301"]
    synthetic_a = compact(synthetic("function_call_output", "call_A"))
    repaired = with_history_items(rows[9], {6: [call_a, synthetic_a], 8: [call_b, out_b]})
    assert outcome.after == joined([*rows[:9], repaired, *rows[10:]])


def test_displaced_output_of_a_parallel_batch_goes_after_the_batch(tmp_path: Path) -> None:
    """PARALLEL with the first of two outputs (line 20) moved behind the next turn's
    assistant message (27): it goes back after the batch's other output (21)."""
    rows = lines(PARALLEL)
    damaged = [*rows[:19], *rows[20:27], rows[19], *rows[27:]]
    outcome = fix(write(tmp_path, damaged))
    assert applied(outcome) == [("TD304", 27, "move")]
    assert outcome.after == joined([*rows[:19], rows[20], rows[19], *rows[21:]])


def test_harness_duplicated_prompt_line_is_removed(tmp_path: Path) -> None:
    """SEQUENTIAL with the prompt line (9) written twice."""
    rows = lines(SEQUENTIAL)
    outcome = fix(write(tmp_path, [*rows[:9], rows[8], *rows[9:]]))
    assert applied(outcome) == [("TD403", 10, "remove")]
    assert outcome.after == joined(rows)


def test_crlf_and_missing_final_newline_are_kept(tmp_path: Path) -> None:
    """Codex writes `\\n` and a final newline; a file that went through other hands keeps
    its own line ends, and the new line takes them."""
    legacy = lines("legacy-rollout.jsonl")
    outcome = fix(write(tmp_path, legacy, b"\r\n", final=False))
    new = compact(synthetic("function_call_output", "call_a2"))
    assert outcome.after == b"\r\n".join([*legacy[:9], new, *legacy[9:]])

    # The repaired text on the very last line, which has no newline.
    rows = lines("damaged-trailing-whitespace.jsonl")[:61]
    outcome = fix(write(tmp_path, rows, b"\r\n", final=False))
    assert applied(outcome) == [("TD102", 61, "strip")]
    assert outcome.after == b"\r\n".join(lines(SEQUENTIAL)[:61])


# -- composition within one rule group (spec-shaped rollouts) ----------------------------

META = {"id": "019c8a70-dda7-7f33-98ea-f30553347322", "timestamp": "2026-02-23T12:00:00.000Z", "cwd": "/w"}


def item(payload: dict[str, Any], kind: str = "response_item") -> bytes:
    return compact({"timestamp": "2026-02-23T12:00:00.000Z", "type": kind, "payload": payload})


def say(text: str) -> bytes:
    return item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})


def user(text: str) -> bytes:
    return item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})


def reasoning(encrypted: str | None = "gAAAAB…") -> bytes:
    return item({"type": "reasoning", "summary": [], "content": None, "encrypted_content": encrypted})


def call(call_id: str) -> bytes:
    return item({"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": call_id})


def output(call_id: str) -> bytes:
    return item({"type": "function_call_output", "call_id": call_id, "output": "ok"})


def rollout(tmp_path: Path, *rows: bytes) -> Path:
    return write(tmp_path, [item(META, "session_meta"), *rows])


def test_reasoning_goes_when_every_message_it_produced_goes(tmp_path: Path) -> None:
    """Two empty messages after one reasoning item: each is its own empty turn; whichever
    is removed last leaves the reasoning with no following item, so it goes too."""
    mirror = item({"type": "agent_message", "message": ""}, "event_msg")
    outcome = fix(
        rollout(tmp_path, user("go"), reasoning(), mirror, say(""), say(" "), user("again"), say("ok"))
    )
    assert applied(outcome) == [("TD103", 5, "remove"), ("TD103", 6, "remove")]
    assert outcome.after == joined([item(META, "session_meta"), user("go"), mirror, user("again"), say("ok")])


def test_reasoning_that_also_produced_a_call_stays(tmp_path: Path) -> None:
    rows = [user("go"), reasoning(), say("  \n"), call("c1"), output("c1"), say("done")]
    outcome = fix(rollout(tmp_path, *rows))
    assert applied(outcome) == [("TD103", 4, "remove")]
    assert outcome.after == joined([item(META, "session_meta"), *rows[:2], *rows[3:]])


def test_contentless_reasoning_turn_is_removed(tmp_path: Path) -> None:
    rows = [user("go"), reasoning(None), user("again"), say("ok")]
    outcome = fix(rollout(tmp_path, *rows))
    assert applied(outcome) == [("TD103", 3, "remove")]
    assert outcome.after == joined([item(META, "session_meta"), rows[0], *rows[2:]])


def test_unanswered_client_tool_search_is_not_promised(tmp_path: Path) -> None:
    """A client tool_search_output has no text field to carry the synthetic text."""
    search = item({"type": "tool_search_call", "call_id": "t1", "execution": "client", "arguments": {}})
    path = rollout(tmp_path, user("go"), search, user("next"), say("ok"))
    report = lint_bytes(path.name, path.read_bytes())
    assert [(f.finding.rule.code, f.fixable) for f in report.findings] == [("TD301", False)]
    assert not fix(path).changed


def test_removals_in_one_group_compose_in_either_order(tmp_path: Path) -> None:
    """The fixer applies a group's actions to one editor in finding order; the reasoning
    decision must not depend on that order."""
    rows = [user("go"), reasoning(), say(""), say(" "), user("again"), say("ok")]
    path = rollout(tmp_path, *rows)
    source = sniff(path.name, path.read_bytes())
    (conversation,) = READER.read(source)
    transcript = Transcript(READER, source, [conversation])
    empty = [m for m in conversation.messages if m.parts and m.parts[0].kind is PartKind.TEXT]
    empty = [m for m in empty if m.role is Role.ASSISTANT and not m.visible_text.strip()]
    assert [m.origin.line for m in empty] == [4, 5]
    expected = joined([item(META, "session_meta"), rows[0], *rows[4:]])
    for order in (empty, empty[::-1]):
        edit = Lines(source)
        for message in order:
            assert READER.repair.apply(transcript, RemoveMessage(message), edit) == "remove"
        assert splice(source.data, edit.splices()) == expected


def test_output_line_displaced_from_a_call_in_the_replacement_history(tmp_path: Path) -> None:
    """Only the payload can join the array (its items have no envelope); the line goes."""
    history = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "next"}]},
    ]
    moved = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    path = rollout(
        tmp_path, item({"message": "", "replacement_history": history}, "compacted"), item(moved), say("ok")
    )
    outcome = fix(path)
    assert applied(outcome) == [("TD304", 3, "move")]
    repaired = {"message": "", "replacement_history": [*history[:2], moved, history[2]]}
    assert outcome.after == joined([item(META, "session_meta"), item(repaired, "compacted"), say("ok")])
