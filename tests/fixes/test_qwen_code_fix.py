"""fix on qwen-code sessions: exact bytes, only the named records change, the chain stays whole."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from qwen_sessions import jsonl, rec
from support import FIXTURES, findings, fix

from transcript_doctor import catalog, engine, fixer
from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT
from transcript_doctor.checks import Selection

DIR = FIXTURES / "qwen-code"
TOOL = DIR / "gen-tool-call-with-thought__307abf63-a3fe-471e-9f54-adcb69726de9.jsonl"
DANGLING = DIR / "gen-crash-dangling-functionCall__471593a1-a491-4074-aa20-fce1b0ea9995.jsonl"
CONTINUED = DIR / "gen-crash-then-continue__471593a1-a491-4074-aa20-fce1b0ea9995.jsonl"
REJECTED = DIR / "gen-degraded-rejected-0.24.4__3221d822-9cf7-49c5-b956-9ab2a7fc37c3.jsonl"
PERSISTED = DIR / "gen-request-timeout-persisted-0.15.6__e008e66c-179a-4d66-a640-2a542fd723be.jsonl"

# Every damaged fixture: the rules fix applies, in order, and the original lines it may
# touch (1-based; removed or edited).  Every other line must survive byte for byte.
REPAIRED: dict[str, tuple[list[str], set[int]]] = {
    CONTINUED.name: (["TD301"], {5}),
    PERSISTED.name: (["TD201"], {3, 4}),
    "compressed-placeholder.jsonl": (["TD201"], {8}),
    "damaged-broken-parent-link.jsonl": (["TD404"], {3}),
    "damaged-displaced-result.jsonl": (["TD304"], {5, 10}),
    "damaged-duplicate-result.jsonl": (["TD303"], {9}),
    "damaged-duplicate-result-run.jsonl": (["TD303", "TD303", "TD303"], {7, 8, 9}),
    "damaged-empty-turn.jsonl": (["TD103"], {8}),
    "damaged-interruption-marker.jsonl": (["TD202"], {3, 4}),
    "damaged-orphan-results.jsonl": (["TD302", "TD302"], {2, 3, 7}),
    "damaged-parallel-unanswered.jsonl": (["TD301", "TD301"], {5}),
    "damaged-placeholder-run.jsonl": (["TD201", "TD201"], {3, 4, 5}),
    "damaged-repeated-prompt-line.jsonl": (["TD403"], {2}),
    "damaged-torn-lines.jsonl": (["TD001", "TD001"], {5, 8}),
    "damaged-trailing-whitespace.jsonl": (["TD102"], {8}),
}


def lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def record(line: bytes) -> dict[str, Any]:
    value = json.loads(line)
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/qwen-code.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name][0]


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_only_named_records_change(name: str) -> None:
    outcome = fix(DIR / name)
    before = outcome.before.decode().splitlines()
    after = outcome.after.decode().splitlines()
    gone = Counter(before) - Counter(after)
    assert gone == Counter(before[number - 1] for number in REPAIRED[name][1])


def test_persisted_placeholder_is_removed_as_the_spec_says() -> None:
    # qwen-code.md §7: delete line 3, line 4's parentUuid 8c5d1b4e-… -> e222ea20-… (line 2).
    outcome = fix(PERSISTED)
    old = lines(outcome.before)
    assert record(old[2])["uuid"] == "8c5d1b4e-56ac-4131-99b9-bd5d2f2964db"
    relinked = old[3].replace(
        b'"parentUuid":"8c5d1b4e-56ac-4131-99b9-bd5d2f2964db"',
        b'"parentUuid":"e222ea20-673f-4c0b-8f73-09420617ef3f"',
    )
    assert outcome.after == b"\n".join([*old[:2], relinked, *old[4:]])
    (applied,) = outcome.applied
    assert (applied.rule, applied.line, applied.action) == ("TD201", 3, "remove")


def test_synthetic_result_is_the_spec_example() -> None:
    outcome = fix(CONTINUED)
    old, new = lines(outcome.before), lines(outcome.after)
    inserted = record(new[4])
    call = record(old[3])
    assert uuid.UUID(inserted["uuid"]).version == 4
    assert inserted["uuid"] not in outcome.before.decode()
    # The spec's record, with the cwd it shortened and the uuid fix derived.
    spec = (
        '{"uuid":"' + inserted["uuid"] + '","parentUuid":"e7eb90b8-9302-46fe-841e-74e56fe71050",'
        '"sessionId":"471593a1-a491-4074-aa20-fce1b0ea9995","timestamp":"2026-11-29T21:40:40.521Z",'
        '"type":"tool_result","provenance":"tool_result","cwd":"/tmp/qsess/q2/proj","version":"0.24.4",'
        '"message":{"role":"user","parts":[{"functionResponse":{"id":"call_fake_ls_1","name":"run_shell_command",'
        '"response":{"error":"' + SYNTHETIC_RESULT_TEXT + '"}}}]},'
        '"toolCallResult":{"callId":"call_fake_ls_1","status":"error"}}'
    )
    assert new[4] == spec.encode()
    assert inserted["parentUuid"] == call["uuid"]
    assert record(new[5])["parentUuid"] == inserted["uuid"]  # the former child
    assert new[5] == old[4].replace(call["uuid"].encode(), inserted["uuid"].encode())
    (applied,) = outcome.applied
    assert (applied.rule, applied.line, applied.action) == ("TD301", 4, "insert")


def test_synthetic_result_ids_are_stable() -> None:
    assert fix(CONTINUED).after == fix(CONTINUED).after


def test_two_unanswered_calls_get_two_chained_results() -> None:
    outcome = fix(DIR / "damaged-parallel-unanswered.jsonl")
    new = lines(outcome.after)
    call, first, second, child = (record(line) for line in new[3:7])
    assert first["parentUuid"] == call["uuid"]
    assert second["parentUuid"] == first["uuid"]
    assert child["parentUuid"] == second["uuid"]
    answered = [r["message"]["parts"][0]["functionResponse"]["id"] for r in (first, second)]
    assert answered == ["call_fake_ls_1", "call_fake_ls_2"]


def test_displaced_result_moves_with_its_bytes_and_only_its_parent_changed() -> None:
    outcome = fix(DIR / "damaged-displaced-result.jsonl")
    old, new = lines(outcome.before), lines(outcome.after)
    call, moved = record(old[3]), old[9]
    assert new[4] == moved.replace(
        b'"parentUuid":"54b17341-952b-4f48-8ff6-0f3d7a56a836"', f'"parentUuid":"{call["uuid"]}"'.encode()
    )
    assert record(new[5])["parentUuid"] == record(moved)["uuid"]
    assert new[6:10] == old[5:9]
    (applied,) = outcome.applied
    assert (applied.rule, applied.line, applied.action) == ("TD304", 10, "move")


@pytest.mark.parametrize(
    "name", ["damaged-orphan-results.jsonl", "damaged-duplicate-result-run.jsonl", "damaged-torn-lines.jsonl"]
)
def test_derived_damage_is_undone_exactly(name: str) -> None:
    # Each was made from TOOL; the torn one lost the tail of its last line for good.
    expected = TOOL.read_bytes()
    if name == "damaged-torn-lines.jsonl":
        expected = b"".join(TOOL.read_bytes().splitlines(keepends=True)[:7])
    assert fix(DIR / name).after == expected


@pytest.mark.parametrize("name", ["damaged-placeholder-run.jsonl", "damaged-interruption-marker.jsonl"])
def test_placeholders_are_removed_like_the_corpus_one(name: str) -> None:
    # A run of two placeholders (parent and child) re-links their child to line 2.
    assert fix(DIR / name).after == fix(PERSISTED).after


def test_repeated_line_copy_is_removed_without_relinking() -> None:
    outcome = fix(DIR / "damaged-repeated-prompt-line.jsonl")
    assert outcome.after == TOOL.read_bytes()
    (applied,) = outcome.applied
    assert applied.line == 2


def test_broken_link_points_at_the_nearest_preceding_record() -> None:
    outcome = fix(DIR / "damaged-broken-parent-link.jsonl")
    new = lines(outcome.after)
    assert record(new[2])["parentUuid"] == record(new[1])["uuid"]


@pytest.mark.parametrize(
    "path",
    [
        CONTINUED,
        PERSISTED,
        DIR / "damaged-trailing-whitespace.jsonl",
        DIR / "damaged-broken-parent-link.jsonl",
        DIR / "damaged-parallel-unanswered.jsonl",
    ],
    ids=lambda p: p.name[:40],
)
def test_crlf_and_missing_final_newline_are_kept(tmp_path: Path, path: Path) -> None:
    crlf = tmp_path / path.name
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n").removesuffix(b"\r\n"))
    expected = fix(path).after.replace(b"\n", b"\r\n").removesuffix(b"\r\n")
    assert fix(crlf).after == expected


# -- shapes the corpus does not have -----------------------------------------------------


def call(call_id: str) -> dict[str, Any]:
    return {"functionCall": {"id": call_id, "name": "read_file", "args": {}}}


def result(call_id: str) -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": "read_file", "response": {"output": "x"}}}


def write(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text(jsonl(*records))
    return path


def chain_of(data: bytes) -> list[tuple[str, str | None]]:
    return [(r["uuid"], r["parentUuid"]) for r in map(record, data.splitlines())]


def test_merged_record_goes_whole_and_every_child_is_relinked(tmp_path: Path) -> None:
    # One uuid on two lines is one record; a dead-branch child (rewind) is re-linked too.
    path = write(
        tmp_path,
        rec("u1", None, "user", [{"text": "go"}]),
        rec("a1", "u1", "assistant", [{"text": "(request "}]),
        rec("a1", "u1", "assistant", [{"text": "timeout)"}]),
        rec("dead", "a1", "user", [{"text": "old"}]),
        rec("u2", "a1", "user", [{"text": "again"}]),
        rec("a2", "u2", "assistant", [{"text": "hi"}]),
    )
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD201"]
    assert chain_of(outcome.after) == [("u1", None), ("dead", "u1"), ("u2", "u1"), ("a2", "u2")]


def test_compressed_history_is_edited_inside_its_line(tmp_path: Path) -> None:
    history = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [call("k")]},
        {"role": "user", "parts": [{"text": "next"}]},
        {"role": "model", "parts": [{"text": "ok"}]},
        {"role": "user", "parts": [result("zz"), result("k")]},
        {"role": "model", "parts": [call("m"), call("n")]},
        {"role": "user", "parts": [result("m"), result("m")]},
        {"role": "model", "parts": [{"text": "(empty content)"}]},
    ]
    path = write(
        tmp_path,
        rec("u1", None, "user", [{"text": "go"}]),
        rec(
            "s",
            "u1",
            "system",
            subtype="chat_compression",
            systemPayload={"info": {}, "compressedHistory": history},
        ),
        rec("u2", "s", "user", [{"text": "more"}]),
        rec("a2", "u2", "assistant", [{"text": "fine"}]),
    )
    pointer = "/systemPayload/compressedHistory"
    assert findings(path) == [
        ("TD201", 2, f"{pointer}/7"),
        ("TD301", 2, f"{pointer}/5/parts/1"),
        ("TD302", 2, f"{pointer}/4/parts/0"),
        ("TD303", 2, f"{pointer}/6/parts/1"),
        ("TD304", 2, f"{pointer}/4/parts/1"),
    ]
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD201", "TD303", "TD302", "TD304", "TD301"]
    old, new = outcome.before.splitlines(), outcome.after.splitlines()
    assert [new[0], *new[2:]] == [old[0], *old[2:]]
    missing = {"id": "n", "name": "read_file", "response": {"error": SYNTHETIC_RESULT_TEXT}}
    assert record(new[1])["systemPayload"]["compressedHistory"] == [
        history[0],
        history[1],
        {"role": "user", "parts": [result("k")]},
        history[2],
        history[3],
        history[5],
        {"role": "user", "parts": [{"functionResponse": missing}]},
        {"role": "user", "parts": [result("m")]},
    ]


def test_two_results_moved_across_each_other(tmp_path: Path) -> None:
    # rb sits right after c1 and moves away while ra moves in after c1: the insertion is
    # placed after the removed line so that the two edits never meet at one offset.
    path = write(
        tmp_path,
        rec("u1", None, "user", [{"text": "go"}]),
        rec("c0", "u1", "assistant", [call("b")]),
        rec("p", "c0", "user", [{"text": "and?"}]),
        rec("c1", "p", "assistant", [call("a")]),
        rec("rb", "c1", "tool_result", [result("b")]),
        rec("x", "rb", "assistant", [{"text": "hm"}]),
        rec("ra", "x", "tool_result", [result("a")]),
        rec("z", "ra", "assistant", [{"text": "done"}]),
    )
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD304", "TD304"]
    assert chain_of(outcome.after) == [
        ("u1", None),
        ("c0", "u1"),
        ("rb", "c0"),
        ("p", "rb"),
        ("c1", "p"),
        ("ra", "c1"),
        ("x", "ra"),
        ("z", "x"),
    ]


def test_link_dangling_at_the_top_becomes_a_root_and_idless_calls_get_idless_results(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        rec("u1", "gone", "user", [{"text": "go"}]),
        rec("a1", "u1", "assistant", [{"functionCall": {"name": "ls", "args": {}}}]),
        rec("u2", "a1", "user", [{"text": "again"}]),
        rec("a2", "u2", "assistant", [{"text": "hi"}]),
    )
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD404", "TD301"]
    new = [record(line) for line in outcome.after.splitlines()]
    assert new[0]["parentUuid"] is None
    assert "toolCallResult" not in new[2]
    assert new[2]["message"]["parts"] == [
        {"functionResponse": {"name": "ls", "response": {"error": SYNTHETIC_RESULT_TEXT}}}
    ]


def test_idless_calls_of_one_name_are_not_guessed(tmp_path: Path) -> None:
    ls = {"functionCall": {"name": "ls", "args": {}}}
    path = write(
        tmp_path,
        rec("u1", None, "user", [{"text": "go"}]),
        rec("a1", "u1", "assistant", [ls, ls]),
        rec("r1", "a1", "tool_result", [{"functionResponse": {"name": "ls", "response": {"output": "."}}}]),
        rec("a2", "r1", "assistant", [{"text": "hi"}]),
    )
    # Lint calls it fixable (the action type is supported); apply refuses, fix rolls back.
    options = engine.Options(Selection.build(("ALL",)), catalog.load())
    outcome = fixer.fix_bytes(path.name, path.read_bytes(), options)
    assert not outcome.changed
    assert [(f.finding.rule.code, why) for f, why in outcome.remaining] == [
        ("TD301", "rolled back: line 2: several calls without ids share this name")
    ]


def test_git_branch_is_copied_from_the_calling_record(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        rec("u1", None, "user", [{"text": "go"}], gitBranch="main"),
        rec("a1", "u1", "assistant", [call("k")], gitBranch="main"),
        rec("u2", "a1", "user", [{"text": "again"}], gitBranch="main"),
        rec("a2", "u2", "assistant", [{"text": "hi"}], gitBranch="main"),
    )
    inserted = record(fix(path).after.splitlines()[2])
    assert list(inserted) == [
        "uuid", "parentUuid", "sessionId", "timestamp", "type", "cwd", "version", "gitBranch",
        "message", "toolCallResult",
    ]  # fmt: skip
    assert inserted["gitBranch"] == "main"


def test_result_recorded_after_a_model_text_moves_right_after_its_call(tmp_path: Path) -> None:
    """Record order (rules.md TD3): the model text between call and result displaces it."""
    call = {"functionCall": {"id": "call_1", "name": "read_file", "args": {}}}
    result = {"functionResponse": {"id": "call_1", "name": "read_file", "response": {"output": "hi"}}}
    records = [
        rec("u1", None, "user", [{"text": "hi"}]),
        rec("u2", "u1", "assistant", [call]),
        rec("u3", "u2", "assistant", [{"text": "Reading it now."}]),
        rec("u4", "u3", "tool_result", [result]),
        rec("u5", "u4", "assistant", [{"text": "ok"}]),
    ]
    outcome = fix(write(tmp_path, *records))
    assert [a.rule for a in outcome.applied] == ["TD304"]
    moved = {**records[3], "parentUuid": "u2"}
    text = {**records[2], "parentUuid": "u4"}
    last = {**records[4], "parentUuid": "u3"}
    assert outcome.after == jsonl(records[0], records[1], moved, text, last).encode()
