"""fix on NeuroLink exports: exact bytes, only the named rows of the message list change.

NeuroLink has no corpus: the files are the spec-derived fixtures, and targeted damage is
made on the clean ones.  Both writers round-trip through ``json.dumps`` exactly (compact
``JSON.stringify`` for the Redis value, ``JSON.stringify(…, null, 2)`` for the CLI export),
so damaged variants are built from values and are byte-for-byte what NeuroLink would write.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, findings, fix

from transcript_doctor import jsonspan
from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT

DIR = FIXTURES / "neurolink"
NEW = "new"  # a row fix wrote
STRIPPED = "stripped"  # a row whose content lost its trailing whitespace

REPAIRED = {
    "compaction-repair-1280.json": ["TD303"],
    "missing-result.json": ["TD301"],
    "step-cap-bracketed.json": ["TD201"],
    "step-cap-prose.json": ["TD201"],
    "id-era-damaged.json": ["TD303", "TD302", "TD304"],
    "id-era-history-interrupted.json": ["TD301"],
    "damaged-turns.json": ["TD103", "TD102"],
    "summary-cut-mid-batch.json": ["TD302"],
}

# The rows after the fix, as indices of the original rows (in their new order).
ROWS_AFTER: dict[str, list[int | str]] = {
    "compaction-repair-1280.json": [0, 1, 3, 4, 5, 6, 7, 8],  # the placeholder (2) goes
    "missing-result.json": [0, 1, 2, 3, NEW, 4, 5, 6, 7, 8],
    "step-cap-bracketed.json": [0, 2, 3],
    "step-cap-prose.json": list(range(11)),
    "id-era-damaged.json": [0, 1, 2, 3, 6, 4, 5, 7, 8, 11],
    "id-era-history-interrupted.json": [0, 1, 2, 3, NEW, 4, 5],
    "damaged-turns.json": [0, 2, STRIPPED],
    "summary-cut-mid-batch.json": [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11],
}


def _array(data: bytes) -> jsonspan.Span:
    root = jsonspan.index(data)
    return root.child("messages") if root.members is not None else root


def _rows(data: bytes) -> list[bytes]:
    """Every message element's bytes, exactly as in the file."""
    return [data[s.start : s.end] for s in _array(data).items or []]


def _outside(data: bytes) -> tuple[bytes, bytes]:
    """The bytes around the message list: envelope, separators after it, final newline."""
    span = _array(data)
    return data[: span.start + 1], data[span.end - 1 :]


def _compact(value: Any) -> bytes:
    return (json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def _pretty(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def _write(tmp_path: Path, data: bytes, name: str = "damaged.json") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _is_synthetic(raw: bytes, tool: str, call_id: str | None = None) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(raw)
    keys = ["id", "role", "content", "timestamp", "tool", *(["toolCallId"] if call_id else []), "result"]
    assert list(value) == keys
    assert uuid.UUID(value["id"]).version == 4
    assert value["role"] == "tool_result" and value["content"] == SYNTHETIC_RESULT_TEXT
    assert value["tool"] == tool and value.get("toolCallId") == call_id
    assert value["result"] == {"success": False, "error": SYNTHETIC_RESULT_TEXT}
    return value


def _placeholder(tool: str, timestamp: str) -> dict[str, Any]:
    """``repairToolPairs``' synthetic result as the vendor writes it."""
    return {
        "id": "repair-result-5b0e7c1a-8d3f-4f21-9a6c-2e7d14b9c035",
        "role": "tool_result",
        "content": "[Tool result unavailable - conversation was compacted]",
        "tool": tool,
        "timestamp": timestamp,
        "metadata": {"truncated": True},
    }


# -- the fixtures ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/neurolink.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name]


@pytest.mark.parametrize("name", sorted(ROWS_AFTER))
def test_only_named_rows_change(name: str) -> None:
    outcome = fix(DIR / name)
    before, after = _rows(outcome.before), _rows(outcome.after)
    assert _outside(outcome.after) == _outside(outcome.before)
    expected = ROWS_AFTER[name]
    assert len(after) == len(expected)
    for raw, origin in zip(after, expected, strict=True):
        if isinstance(origin, int):
            assert raw == before[origin]
        elif origin == NEW:
            assert json.loads(raw)["content"] == SYNTHETIC_RESULT_TEXT
        else:
            (original,) = [r for r in before if json.loads(r)["id"] == json.loads(raw)["id"]]
            assert raw == original.replace(b'\\n"', b'"')


@pytest.mark.parametrize("name", sorted(n for n in REPAIRED if not n.startswith("id-era-history")))
def test_compact_redis_value_stays_one_line(name: str) -> None:
    after = fix(DIR / name).after
    assert after.count(b"\n") == 1 and after.endswith(b"}\n")


def test_1280_keeps_the_real_output_and_drops_the_placeholder() -> None:
    """Deviation from spec §7 (lead's decision): the placeholder comes first here."""
    outcome = fix(DIR / "compaction-repair-1280.json")
    (applied,) = outcome.applied
    (edit,) = applied.edits
    assert (applied.rule, applied.action, edit.action, edit.pointer) == (
        "TD303",
        "remove",
        "remove",
        "/messages/2",
    )
    assert b"[Tool result unavailable - conversation was compacted]" in edit.old
    assert b"export function parseConfig(raw: string): Config" in outcome.after
    assert b"repair-result-" not in outcome.after


def test_adjacency_synthetic_result() -> None:
    outcome = fix(DIR / "missing-result.json")
    (applied,) = outcome.applied
    (edit,) = applied.edits
    assert (applied.rule, applied.action, edit.pointer) == ("TD301", "insert", "/messages/4")
    value = _is_synthetic(edit.new, "getQuote")
    assert value["timestamp"] == json.loads(_rows(outcome.before)[3])["timestamp"]  # the preceding row
    assert b"toolCallId" not in outcome.after


def test_id_era_synthetic_result_in_the_2_space_export() -> None:
    outcome = fix(DIR / "id-era-history-interrupted.json")
    (applied,) = outcome.applied
    (edit,) = applied.edits
    _is_synthetic(edit.new, "backupDatabase", "call_Jt5Wq8Bn2e")
    # Pure insertion of one indented element plus its separator: nothing else moved.
    block = b"  " + edit.new + b",\n"
    assert edit.new.startswith(b'{\n    "id": ') and edit.new.endswith(b"\n  }")
    assert outcome.after.replace(block, b"", 1) == outcome.before


def test_synthetic_ids_are_reproducible_and_distinct(tmp_path: Path) -> None:
    value = json.loads((DIR / "clean-redis-object.json").read_bytes())
    del value["messages"][3:5]  # both weather results of the parallel batch
    path = _write(tmp_path, _compact(value))
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD301", "TD301"]
    rows = _rows(outcome.after)
    new = [_is_synthetic(rows[i], "getWeather") for i in (3, 4)]
    assert new[0]["id"] != new[1]["id"]
    assert {n["timestamp"] for n in new} == {value["messages"][2]["timestamp"]}
    assert fix(path).after == outcome.after


# -- targeted damage on the clean files ------------------------------------------------------


def test_adjacency_result_goes_to_its_calls_position(tmp_path: Path) -> None:
    """searchTrains' result is lost; holdSeat's stays: the vendor pairs call[i] with
    result[i], so the synthetic result goes before holdSeat's."""
    clean = (DIR / "clean-redis-object.json").read_bytes()
    value = json.loads(clean)
    del value["messages"][9]
    outcome = fix(_write(tmp_path, _compact(value)))
    assert [a.rule for a in outcome.applied] == ["TD301"]
    before, after = _rows(clean), _rows(outcome.after)
    assert after[:9] == before[:9] and after[10:] == before[10:]
    _is_synthetic(after[9], "searchTrains")


def test_displaced_adjacency_result_moves_back(tmp_path: Path) -> None:
    clean = (DIR / "clean-redis-object.json").read_bytes()
    value = json.loads(clean)
    rows = value["messages"]
    rows.insert(11, rows.pop(10))  # holdSeat's result after the reply
    path = _write(tmp_path, _compact(value))
    assert findings(path) == [("TD304", 1, "/messages/11")]
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD304"]
    assert outcome.after == clean


def test_displaced_id_era_result_in_the_2_space_export(tmp_path: Path) -> None:
    clean = (DIR / "id-era-history.json").read_bytes()
    value = json.loads(clean)
    value.append({**value[1], "id": "6a0c2e18-4b7d-4f35-8e91-d3a5c7b20f46", "content": "And the second?"})
    value.append(value.pop(6))  # call_9Hc2Pn4eRx's result after the reply and a new prompt
    damaged = _pretty(value)
    outcome = fix(_write(tmp_path, damaged))
    assert [a.rule for a in outcome.applied] == ["TD304"]
    before = _rows(damaged)
    # id pairing: after the batch's other results, before the reply
    assert _rows(outcome.after) == [*before[:9], before[11], *before[9:11]]


def test_placeholder_after_the_real_result_is_removed(tmp_path: Path) -> None:
    clean = (DIR / "clean-redis-object.json").read_bytes()
    value = json.loads(clean)
    value["messages"].insert(5, _placeholder("getWeather", value["messages"][2]["timestamp"]))
    path = _write(tmp_path, _compact(value))
    assert [f[0] for f in findings(path)] == ["TD303"]
    assert fix(path).after == clean


def test_same_named_calls_keep_the_real_outputs(tmp_path: Path) -> None:
    """The #1280 shape with two calls of one tool: the placeholder shifts the adjacency
    pairing, so the surplus shows on the second call; the placeholder still goes."""
    clean = (DIR / "clean-redis-object.json").read_bytes()
    value = json.loads(clean)
    rows = value["messages"]
    rows.insert(2, _placeholder("getWeather", rows[1]["timestamp"]))
    path = _write(tmp_path, _compact(value))
    assert findings(path) == [("TD303", 1, "/messages/5")]
    assert fix(path).after == clean


def test_id_era_placeholder_before_the_real_result(tmp_path: Path) -> None:
    clean = (DIR / "id-era-history.json").read_bytes()
    value = json.loads(clean)
    value.insert(6, {**_placeholder("runQuery", value[2]["timestamp"]), "toolCallId": "call_5Zq1Lw0aTm"})
    path = _write(tmp_path, _pretty(value))
    assert [(rule, pointer) for rule, _, pointer in findings(path)] == [("TD303", "/9")]
    assert fix(path).after == clean


def test_placeholder_in_the_slot_and_the_real_result_displaced(tmp_path: Path) -> None:
    """The placeholder goes (TD303) and the real output then moves into the batch's
    results (TD304, a new error fix repairs in the same run)."""
    value = json.loads((DIR / "id-era-history.json").read_bytes())
    real = value.pop(8)
    value.insert(6, {**_placeholder("runQuery", value[5]["timestamp"]), "toolCallId": real["toolCallId"]})
    reply = value[-1]
    value += [{**value[1], "id": "2f8c6d1e-93a4-4b70-8e15-c7d0a9b36e42", "content": "Again?"}, real]
    value.append({**reply, "id": "b41e7a93-6c25-4d08-9f3e-58a2d0c71e6b"})
    damaged = _pretty(value)
    path = _write(tmp_path, damaged)
    assert [rule for rule, _, _ in findings(path)] == ["TD303"]
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD303", "TD304"]
    before = _rows(damaged)
    assert _rows(outcome.after) == [*before[:6], *before[7:10], before[12], *before[10:12], before[13]]


def test_two_placeholders_and_two_real_results(tmp_path: Path) -> None:
    """Every duplicate finding of one call removes a distinct row: both placeholders go,
    the first real result stays."""
    clean = (DIR / "id-era-history.json").read_bytes()
    value = json.loads(clean)
    real = value[8]
    second = {**real, "id": "7d3e1b59-0c84-4a2f-b6e7-95f0a1c42d83", "timestamp": "2026-08-12T10:00:09.000Z"}
    value[6:6] = [
        {**_placeholder("runQuery", value[5]["timestamp"]), "toolCallId": real["toolCallId"]},
        {**_placeholder("runQuery", value[5]["timestamp"]), "toolCallId": real["toolCallId"], "id": "x"},
    ]
    value.insert(-1, second)
    path = _write(tmp_path, _pretty(value))
    assert [f[0] for f in findings(path)] == ["TD303", "TD303", "TD303"]
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD303", "TD303", "TD303"]
    assert outcome.after == clean


# -- bytes the fix does not touch ----------------------------------------------------------


def test_missing_final_newline_stays_missing(tmp_path: Path) -> None:
    data = (DIR / "missing-result.json").read_bytes()
    outcome = fix(_write(tmp_path, data.rstrip(b"\n")))
    assert outcome.after == fix(DIR / "missing-result.json").after.rstrip(b"\n")


def test_crlf_export_keeps_crlf(tmp_path: Path) -> None:
    data = (DIR / "id-era-history-interrupted.json").read_bytes().replace(b"\n", b"\r\n")
    outcome = fix(_write(tmp_path, data))
    assert [a.rule for a in outcome.applied] == ["TD301"]
    assert b"\n" not in outcome.after.replace(b"\r\n", b"")
    (edit,) = outcome.applied[0].edits
    assert outcome.after.replace(b"  " + edit.new + b",\r\n", b"", 1) == data
