"""fix on Gemini checkpoints: exact bytes, only the named Contents and parts change.

Every fixture re-serialises byte for byte with ``json.dumps(…, indent=2,
ensure_ascii=False)`` (= ``JSON.stringify(…, null, 2)``), so the expected result of each
repair is written as an edit of the parsed value and compared as whole-file bytes: that
pins the new elements' shape and proves nothing else moved.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, fix

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT

DIR = FIXTURES / "gemini-checkpoint"
ERROR = {"error": SYNTHETIC_RESULT_TEXT}
SKIP = "skip_thought_signature_validator"

REPAIRED = {
    "empty-model-turn.json": ["TD103"],
    "interrupted-placeholder.json": ["TD202"],
    "unanswered-call-bare.json": ["TD301"],
    "unanswered-parallel-call.json": ["TD301"],
    "orphan-response.json": ["TD302"],
    "duplicate-response.json": ["TD303"],
    "displaced-response.json": ["TD304"],
    "missing-signature.json": ["TD401"],
}

INTRODUCED = {
    "empty-model-turn.json": ["TD104"],
    "interrupted-placeholder.json": ["TD104"],
    "displaced-response.json": ["TD104"],
}


def history(value: Any) -> list[Any]:
    found = value["history"] if isinstance(value, dict) else value
    assert isinstance(found, list)
    return found


def response(call: dict[str, Any]) -> dict[str, Any]:
    body = {"id": call["id"]} if "id" in call else {}
    return {"functionResponse": {**body, "name": call["name"], "response": ERROR}}


def _sign(h: list[Any]) -> None:
    h[1]["parts"][0]["thoughtSignature"] = SKIP


def _answer_in_new_content(h: list[Any]) -> None:
    h.insert(2, {"role": "user", "parts": [response(h[1]["parts"][0]["functionCall"])]})


def _answer_after_responses(h: list[Any]) -> None:
    h[2]["parts"].insert(1, response(h[1]["parts"][1]["functionCall"]))


def _move_to_head(h: list[Any]) -> None:
    h[2]["parts"].insert(0, h.pop(4)["parts"][0])


EXPECTED: dict[str, Callable[[list[Any]], None]] = {
    "empty-model-turn.json": lambda h: h.pop(3),
    "interrupted-placeholder.json": lambda h: h.pop(3),
    "unanswered-call-bare.json": _answer_in_new_content,
    "unanswered-parallel-call.json": _answer_after_responses,
    "orphan-response.json": lambda h: h.pop(1),  # the user Content is left with no parts
    "duplicate-response.json": lambda h: h[2]["parts"].pop(1),
    "displaced-response.json": _move_to_head,
    "missing-signature.json": _sign,
}


def dumps(value: Any) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False).encode()


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/gemini-checkpoint.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name]
    assert sorted(f.finding.rule.code for f in outcome.introduced) == INTRODUCED.get(name, [])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_only_named_elements_change(name: str) -> None:
    outcome = fix(DIR / name)
    assert dumps(json.loads(outcome.before)) == outcome.before  # the premise of this test
    expected = json.loads(outcome.before)
    EXPECTED[name](history(expected))
    assert outcome.after == dumps(expected)


@pytest.mark.parametrize("name", ["unanswered-parallel-call.json", "displaced-response.json"])
def test_crlf_and_a_final_newline_are_kept(tmp_path: Path, name: str) -> None:
    """New and moved parts take the document's line ends; a final newline stays."""
    data = (DIR / name).read_bytes()
    path = tmp_path / name
    path.write_bytes(data.replace(b"\n", b"\r\n") + b"\r\n")
    expected = fix(DIR / name).after.replace(b"\n", b"\r\n") + b"\r\n"
    assert fix(path).after == expected


# -- composition and shape cases, on corpus-derived documents ------------------------------


def corpus() -> dict[str, Any]:
    value: dict[str, Any] = json.loads((DIR / "gen-chat-save__checkpoint-mytag.json").read_bytes())
    return value


def write(tmp_path: Path, value: Any) -> Path:
    path = tmp_path / "checkpoint-t.json"
    path.write_bytes(dumps(value))
    return path


def test_placeholder_reply_is_removed(tmp_path: Path) -> None:
    value = corpus()
    value["history"][3]["parts"][0]["text"] = "(request timeout)"
    outcome = fix(write(tmp_path, value))
    assert [a.rule for a in outcome.applied] == ["TD201"]
    del value["history"][3]
    assert outcome.after == dumps(value)


def test_two_duplicates_in_one_content_both_go(tmp_path: Path) -> None:
    value = corpus()
    parts = value["history"][2]["parts"]
    parts += [copy.deepcopy(parts[0]), copy.deepcopy(parts[0])]
    outcome = fix(write(tmp_path, value))
    assert [a.rule for a in outcome.applied] == ["TD303", "TD303"]
    assert outcome.after == dumps(corpus())


def test_content_of_two_orphans_is_removed_once(tmp_path: Path) -> None:
    value = corpus()
    answers = value["history"].pop(2)
    answers["parts"].append(copy.deepcopy(answers["parts"][0]))
    value["history"][1:2] = [answers]  # the call turn is gone: both responses are orphans
    outcome = fix(write(tmp_path, value))
    assert [a.rule for a in outcome.applied] == ["TD302", "TD302"]
    del value["history"][1]
    assert outcome.after == dumps(value)


def test_id_less_call_gets_an_id_less_response_in_call_order(tmp_path: Path) -> None:
    """Bare Content[] without ids pairs by position and name: the response names the call."""
    value = json.loads((DIR / "bare-id-less.json").read_bytes())
    calls = value[1]["parts"]
    calls.append({"functionCall": {"name": "list_directory", "args": {"dir_path": "."}}})
    value[2]["parts"].append({"text": "are you done?"})
    outcome = fix(write(tmp_path, value))
    assert [a.rule for a in outcome.applied] == ["TD301"]
    value[2]["parts"].insert(1, {"functionResponse": {"name": "list_directory", "response": ERROR}})
    assert outcome.after == dumps(value)
