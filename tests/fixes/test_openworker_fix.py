"""fix on openworker files: exact bytes, only the named lines change (spec §7).

There is no openworker corpus: the damaged files are the spec-derived fixtures, and the
cases no fixture shows (torn line, placeholders, CRLF, no final newline) are targeted
damage applied here to the clean fixture or a damaged one.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from support import FIXTURES, fix, lint_bytes

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT
from transcript_doctor.fixer import Outcome
from transcript_doctor.readers.openworker import READER
from transcript_doctor.source import sniff

DIR = FIXTURES / "openworker"

REPAIRED = {
    "damaged-tool-pairing.jsonl": ["TD303", "TD302", "TD301"],
    "damaged-turns.jsonl": ["TD103", "TD102"],
    "displaced-gemini-results.jsonl": ["TD304", "TD304", "TD301"],
    "displaced-result.jsonl": ["TD304"],
    "duplicated-user-turn.jsonl": ["TD403", "TD301"],
    "partial-turn-stacked.jsonl": ["TD101", "TD101"],
    "partial-turn-tail.jsonl": ["TD101"],
}


def lines(data: bytes) -> list[bytes]:
    return data.splitlines()


def diff(outcome: Outcome) -> tuple[Counter[bytes], Counter[bytes]]:
    """Lines gone from the file and lines new in it (moved lines are in neither)."""
    before, after = Counter(lines(outcome.before)), Counter(lines(outcome.after))
    return before - after, after - before


def synthetic(call_id: str) -> bytes:
    """Spec §7's TD301 line: PR #350's shape, JSON-in-string, no ts, json.dumps style."""
    line = {"role": "tool", "tool_call_id": call_id, "content": json.dumps({"error": SYNTHETIC_RESULT_TEXT})}
    return json.dumps(line).encode()


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/openworker.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name]
    for line in lines(outcome.after):  # kept and new lines alike: the vendor's writer style
        assert json.dumps(json.loads(line)).encode() == line


def test_partials_go_and_every_notice_stays() -> None:
    outcome = fix(DIR / "partial-turn-stacked.jsonl")
    original = lines(outcome.before)
    assert lines(outcome.after) == [original[i] for i in (0, 1, 3, 4, 6)]
    assert [a.action for a in outcome.applied] == ["remove", "remove"]


def test_turn_repairs_touch_only_their_lines() -> None:
    outcome = fix(DIR / "damaged-turns.jsonl")
    original = lines(outcome.before)
    stripped = original[6].replace(b'write docs.\\n\\n"', b'write docs."')
    assert lines(outcome.after) == [*original[:2], *original[3:6], stripped]
    strip = outcome.applied[1]
    assert (strip.action, [(e.pointer, e.old, e.new) for e in strip.edits]) == (
        "strip",
        [
            (
                "line 6 /content",  # after TD103's removal: lines as they are then
                b'"TODO.md lists three items: ship 1.2, fix Windows paths and write docs.\\n\\n"',
                b'"TODO.md lists three items: ship 1.2, fix Windows paths and write docs."',
            )
        ],
    )


def test_pairing_repairs_keep_the_first_result_and_answer_the_open_call() -> None:
    outcome = fix(DIR / "damaged-tool-pairing.jsonl")
    original = lines(outcome.before)
    gone, new = diff(outcome)
    assert gone == Counter([original[7], original[8]])  # the later duplicate and the orphan
    assert new == Counter([synthetic("call_Ii9Jj0Kk1Ll2Mm3Nn4Oo5Pp6")])
    # Inserted after the turn's existing result, before the next prompt.
    assert lines(outcome.after)[2:5] == [original[2], original[3], synthetic("call_Ii9Jj0Kk1Ll2Mm3Nn4Oo5Pp6")]
    assert lines(outcome.after)[7] == original[6]  # the first of the duplicates is kept


def test_synthetic_result_is_the_spec_line_and_reads_as_an_error() -> None:
    outcome = fix(DIR / "duplicated-user-turn.jsonl")
    insert = outcome.applied[1]
    (edit,) = insert.edits
    assert (insert.rule, insert.line, insert.action) == ("TD301", 3, "insert")
    assert edit.new == (
        b'{"role": "tool", "tool_call_id": "call_c1Lp9Xw2Vr6Qk3Tz8Ny5Mb4J", "content": "{\\"error\\": '
        b'\\"Tool result missing from the transcript (the turn was interrupted); inserted by '
        b'transcript-doctor.\\"}"}'
    )
    (conversation,) = READER.read(sniff("x.jsonl", outcome.after))
    (result,) = conversation.messages[3].parts
    assert result.is_error and result.call_id == "call_c1Lp9Xw2Vr6Qk3Tz8Ny5Mb4J"


def test_duplicate_user_turn_loses_the_later_copy() -> None:
    outcome = fix(DIR / "duplicated-user-turn.jsonl")
    original = lines(outcome.before)
    remove = outcome.applied[0]
    assert (remove.rule, remove.line, [e.pointer for e in remove.edits]) == ("TD403", 5, ["line 5"])
    assert lines(outcome.after) == [
        *original[:3],
        synthetic("call_c1Lp9Xw2Vr6Qk3Tz8Ny5Mb4J"),
        original[3],
        original[5],
    ]


def test_issue_331_result_moves_before_the_prompt() -> None:
    outcome = fix(DIR / "displaced-result.jsonl")
    original = lines(outcome.before)
    assert lines(outcome.after) == [original[i] for i in (0, 1, 2, 4, 3, 5)]
    assert outcome.applied[0].action == "move"


def test_displaced_gemini_results_move_in_call_order_and_reused_ids_pair_with_their_turn() -> None:
    outcome = fix(DIR / "displaced-gemini-results.jsonl")
    original = lines(outcome.before)
    # call_1 answered first (line 5), call_0 second (line 6): moved after line 3 in
    # tool_calls order; line 7's open call_1 is answered after line 8, not line 3's.
    assert lines(outcome.after) == [
        *[original[i] for i in (0, 1, 2, 5, 4, 3, 6, 7)],
        synthetic("call_1"),
        *original[8:],
    ]
    # Every sidecar line (`_gemini`) kept its bytes.
    assert all(line in lines(outcome.after) for line in original if b'"_gemini"' in line)
    # The first move of the turn moves both results; the second finds its line moved.
    first, second, _ = outcome.applied
    assert [e.action for e in first.edits] == ["remove", "insert", "remove", "insert"]
    assert [e.new for e in first.edits if e.action == "insert"] == [original[5], original[4]]
    assert (second.action, second.edits) == ("move", ())
    left = lint_bytes("x.jsonl", outcome.after, "openworker")
    assert left.findings == []


def test_torn_final_line_is_dropped(tmp_path: Path) -> None:
    clean = (DIR / "clean-sidecars.jsonl").read_bytes()
    path = tmp_path / "torn.jsonl"
    path.write_bytes(clean + b'{"role": "user", "content": "Thanks! Now can you al')
    outcome = fix(path)
    assert [(a.rule, a.line, a.action) for a in outcome.applied] == [("TD001", 27, "remove")]
    assert outcome.after == clean


def test_placeholder_and_interruption_turns_are_removed(tmp_path: Path) -> None:
    clean = lines((DIR / "clean-sidecars.jsonl").read_bytes())
    damaged = list(clean)
    # Line 16 (after a result, before a prompt) and line 20 (before notices and a prompt).
    for index, text in (
        (15, "[The previous response was interrupted before it completed.]"),
        (19, "(request timeout)"),
    ):
        record = json.loads(damaged[index])
        record["content"] = text
        damaged[index] = json.dumps(record).encode()
    path = tmp_path / "placeholders.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in damaged))
    outcome = fix(path)
    assert [(a.rule, a.line) for a in outcome.applied] == [("TD201", 20), ("TD202", 16)]
    assert outcome.after == b"".join(line + b"\n" for i, line in enumerate(clean) if i not in (15, 19))


def test_final_assistant_text_in_a_content_list_is_stripped(tmp_path: Path) -> None:
    original = lines((DIR / "damaged-turns.jsonl").read_bytes())
    record = json.loads(original[6])
    record["content"] = [{"type": "text", "text": "TODO.md lists three items. \n"}]
    path = tmp_path / "list.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in [*original[3:6], json.dumps(record).encode()]))
    outcome = fix(path)
    ((edit,),) = [a.edits for a in outcome.applied]
    assert (edit.pointer, edit.new) == ("line 4 /content/0/text", b'"TODO.md lists three items."')


@pytest.mark.parametrize(
    "name", ["displaced-gemini-results.jsonl", "damaged-turns.jsonl", "damaged-tool-pairing.jsonl"]
)
def test_crlf_and_missing_final_newline_survive(tmp_path: Path, name: str) -> None:
    """Moves, inserts, removals and a strip on the last line, on a file copied through
    Windows and cut before its final newline: kept lines keep their bytes, new lines
    take the file's CRLF, and the file still ends without a newline."""
    lf = fix(DIR / name).after
    path = tmp_path / name
    path.write_bytes((DIR / name).read_bytes().replace(b"\n", b"\r\n").removesuffix(b"\r\n"))
    outcome = fix(path)
    assert outcome.after == lf.replace(b"\n", b"\r\n").removesuffix(b"\r\n")


def test_a_partial_exposed_by_another_repair_is_repaired_in_the_same_run(tmp_path: Path) -> None:
    """Removing the last partial exposes the empty turn before it as the partial, so TD101
    alone does not clear; once TD103 has removed that turn, TD101 is tried again (found by
    the long fuzz run: a second fix used to remove what the first left)."""
    lines = [
        {"role": "user", "content": "Why does it fail?", "ts": 1.5},
        {"role": "assistant", "content": "", "ts": 2.5},
        {"role": "assistant", "content": "", "ts": 2.5},
        {"role": "notice", "kind": "interrupted", "ts": 3.5},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD103", "TD101"]
    assert outcome.rolled_back == []
    assert (
        outcome.after == path.read_bytes().split(b"\n", 1)[0] + b"\n" + json.dumps(lines[3]).encode() + b"\n"
    )
