"""fix on gemini-cli recordings: exact bytes, only the effective definitions named change."""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, fix

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT, RemoveMessage
from transcript_doctor.editing import EditError
from transcript_doctor.plain import replace
from transcript_doctor.readers.base import Transcript, editor
from transcript_doctor.readers.gemini_cli import READER
from transcript_doctor.readers.gemini_cli.refs import MessageRef, StreamRef
from transcript_doctor.source import sniff

DIR = FIXTURES / "gemini-cli"
DUP = "gen-resumed-dup-response__session-2026-11-29T21-45-2c95bea0.jsonl"
ERROR = {"error": SYNTHETIC_RESULT_TEXT}

REPAIRED = {
    "torn-final-line.jsonl": ["TD001"],
    "empty-model-turn.jsonl": ["TD103"],
    "placeholder-reply-checkpointed.jsonl": ["TD201"],
    "interruption-placeholder-checkpoint.jsonl": ["TD202"],
    "unanswered-call-lines.jsonl": ["TD301"],
    "unanswered-call-checkpoint.jsonl": ["TD301"],
    "orphan-responses-checkpoint.jsonl": ["TD302", "TD302"],
    DUP: ["TD303"],
    "displaced-response.jsonl": ["TD304"],
    "duplicated-prompt.jsonl": ["TD403"],
    "codemie-file-ops-damaged.json": ["TD103", "TD301"],
}

# Lines (1-based) of the original that are gone or rewritten, and lines of the result
# that are new or rewritten: every other line keeps its bytes.
TOUCHED = {
    "torn-final-line.jsonl": ([10], []),
    "empty-model-turn.jsonl": ([5], []),
    # The checkpoint loses the placeholder and its later upsert goes; line 10 (before the
    # checkpoint, superseded by it) stays.
    "placeholder-reply-checkpointed.jsonl": ([12, 13], [12]),
    "interruption-placeholder-checkpoint.jsonl": ([12], [12]),
    "unanswered-call-lines.jsonl": ([], [8]),
    "unanswered-call-checkpoint.jsonl": ([15], [15]),
    "orphan-responses-checkpoint.jsonl": ([15], [15]),
    DUP: ([15], [15]),
    "displaced-response.jsonl": ([8, 12], [8]),
    "duplicated-prompt.jsonl": ([5], []),
}

# Warnings the repairs leave behind, reported with them (spec: TD104 is the durable shape).
INTRODUCED = {
    "interruption-placeholder-checkpoint.jsonl": ["TD104"],
    "unanswered-call-lines.jsonl": ["TD104"],
    "displaced-response.jsonl": ["TD104"],
    "codemie-file-ops-damaged.json": ["TD104"],
}


def records(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode().splitlines()]


def compact(*values: dict[str, Any]) -> bytes:
    """Lines as the CLI appends them: JSON.stringify(record) + newline."""
    return b"".join(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode() + b"\n" for v in values)


def derived_id(message_id: str, call_id: str) -> str:
    digest = hashlib.sha256(f"{message_id}\0{call_id}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_fix(name: str) -> None:
    """Which repairs make the fixed bytes, in order (the bytes themselves, with and
    without --unsafe-fixes, are pinned by tests/expectations/gemini-cli.json)."""
    outcome = fix(DIR / name)
    assert [a.rule for a in outcome.applied] == REPAIRED[name]
    assert sorted(f.finding.rule.code for f in outcome.introduced) == INTRODUCED.get(name, [])


@pytest.mark.parametrize("name", sorted(TOUCHED))
def test_only_named_lines_change(name: str) -> None:
    outcome = fix(DIR / name)
    before, after = outcome.before.splitlines(), outcome.after.splitlines()
    gone: list[int] = []
    new: list[int] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag != "equal":
            gone += range(i1 + 1, i2 + 1)
            new += range(j1 + 1, j2 + 1)
    assert (gone, new) == TOUCHED[name]


def test_torn_line_is_dropped_and_nothing_else() -> None:
    outcome = fix(DIR / "torn-final-line.jsonl")
    source = DIR / "gen-unanswered-tool-response__session-2026-11-29T21-42-1ea4ff33.jsonl"
    assert outcome.after == source.read_bytes()


def test_duplicate_response_drops_the_second_user_message() -> None:
    """Spec §7: line 15 keeps the `_response` turn and loses the recorded copy after it."""
    outcome = fix(DIR / DUP)
    before, after = records(outcome.before), records(outcome.after)
    expected = copy.deepcopy(before[14])
    kept = expected["$set"]["messages"]
    assert [m["id"] for m in kept[3:5]] == [
        "87ee1f40-6d53-4193-ab18-c3f9c4d3691e_response",
        "3ef9a899-ccc4-4eac-a582-6387bef3e4e1",
    ]
    del kept[4]
    assert after[14] == expected
    assert after[:14] + after[15:] == before[:14] + before[15:]


def test_result_for_a_call_in_message_lines_is_a_new_user_line() -> None:
    outcome = fix(DIR / "unanswered-call-lines.jsonl")
    (applied,) = outcome.applied
    (edit,) = applied.edits
    call = "read_file__read_file_1795988562252_0"
    line = {
        "id": derived_id("7c1034bd-7ee7-40bd-89e4-12bff88f41ed", call),
        "timestamp": "2026-11-29T21:42:42.295Z",  # the calling line's
        "type": "user",
        "content": [{"functionResponse": {"id": call, "name": "read_file", "response": ERROR}}],
    }
    assert edit.new + b"\n" == compact(line)
    assert (applied.line, applied.action, edit.pointer) == (7, "insert", "after line 7")
    assert uuid.UUID(str(line["id"])).version == 4


def test_result_for_a_call_in_a_checkpoint_joins_the_array() -> None:
    outcome = fix(DIR / "unanswered-call-checkpoint.jsonl")
    before, after = records(outcome.before), records(outcome.after)
    expected = copy.deepcopy(before[14])
    messages = expected["$set"]["messages"]
    call = messages[2]["content"][1]
    call_id = call["functionCall"]["id"]
    messages.insert(
        3,
        {
            "id": derived_id(messages[2]["id"], call_id),
            "timestamp": messages[2]["timestamp"],
            "type": "user",
            "content": [{"functionResponse": {"id": call_id, "name": "list_directory", "response": ERROR}}],
        },
    )
    assert after[14] == expected


def test_legacy_document_gets_the_result_in_its_tool_call_entry() -> None:
    """Only the named elements change; the result sits where the CLI writes it (after args)."""
    path = DIR / "codemie-file-ops-damaged.json"
    outcome = fix(path)
    value = json.loads(outcome.before)
    messages = value["messages"]
    entry = messages[9]["toolCalls"][0]
    result = [{"functionResponse": {"id": entry["id"], "name": entry["name"], "response": ERROR}}]
    messages[9]["toolCalls"][0] = {
        **{k: entry[k] for k in ("id", "name", "args")},
        "result": result,
        **{k: v for k, v in entry.items() if k not in ("id", "name", "args")},
    }
    del messages[7]
    assert outcome.after == json.dumps(value, indent=2, ensure_ascii=False).encode()
    assert not outcome.after.endswith(b"\n")


def test_displaced_response_moves_to_the_head_of_the_next_user_message() -> None:
    outcome = fix(DIR / "displaced-response.jsonl")
    before, after = records(outcome.before), records(outcome.after)
    prompt = copy.deepcopy(before[7])
    prompt["content"].insert(0, before[11]["content"][0])
    assert after == [*before[:7], prompt, *before[8:11], *before[12:]]
    (applied,) = outcome.applied
    assert [e.pointer for e in applied.edits] == ["line 12", "line 8 /content/0"]


@pytest.mark.parametrize(
    "name", ["empty-model-turn.jsonl", "unanswered-call-lines.jsonl", "torn-final-line.jsonl"]
)
def test_crlf_and_a_missing_final_newline_are_kept(tmp_path: Path, name: str) -> None:
    """JSON strings hold no raw newline, so the CRLF file is the LF file line for line."""
    data = (DIR / name).read_bytes()
    crlf = data.replace(b"\n", b"\r\n").removesuffix(b"\r\n")
    path = tmp_path / name
    path.write_bytes(crlf)
    plain = fix(DIR / name).after.replace(b"\n", b"\r\n")
    expected = plain if name == "torn-final-line.jsonl" else plain.removesuffix(b"\r\n")
    assert fix(path).after == expected


# -- the edit log: composition and ordering cases, on corpus-derived text -------------------


def lines_of(name: str) -> list[dict[str, Any]]:
    return records((DIR / name).read_bytes())


def test_removal_keeps_the_line_a_rewind_needs(tmp_path: Path) -> None:
    """A message rewound and written again: only the definition after the rewind goes, so the
    `$rewindTo` still finds its target (deleting it would make the loader clear everything)."""
    base = lines_of("empty-model-turn.jsonl")
    empty = base[4]
    rewind = {"$rewindTo": empty["id"]}
    path = tmp_path / "session-rewound.jsonl"
    path.write_bytes(compact(*base, rewind, empty, base[5]))
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD103"]
    assert outcome.after == compact(*base, rewind, base[5])


def test_rewind_target_is_never_deleted() -> None:
    """The guard of spec §7, for an edit log whose refs would name such a line."""
    path = DIR / "empty-model-turn.jsonl"
    source = sniff(str(path), path.read_bytes())
    (conversation,) = READER.read(source)
    message = conversation.messages[-1]
    assert isinstance(conversation.ref, StreamRef) and isinstance(message.ref, MessageRef)
    conversation.ref = replace(conversation.ref, rewinds=((5, str(message.ref.message_id)),))
    with pytest.raises(EditError, match="rewindTo"):
        READER.repair.apply(
            Transcript(READER, source, [conversation]), RemoveMessage(message), editor(source)
        )


def test_new_result_is_written_before_the_next_message_is_first_written(tmp_path: Path) -> None:
    """A record takes its place when first written: the prompt written between the two
    definitions of the calling message would otherwise come before the new result."""
    base = lines_of("unanswered-call-lines.jsonl")
    first, update = base[4], base[6]
    prompt, reply = base[7], base[9]
    path = tmp_path / "session-interleaved.jsonl"
    path.write_bytes(compact(*base[:4], first, prompt, update, reply))
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD301"]
    (applied,) = outcome.applied
    assert applied.edits[0].pointer == "after line 5"
    result = records(outcome.after)[5]
    assert result["type"] == "user" and result["content"][0]["functionResponse"]["response"] == ERROR


def test_id_less_tool_call_is_answered_in_its_own_entry(tmp_path: Path) -> None:
    base = lines_of("unanswered-call-lines.jsonl")
    del base[6]["toolCalls"][0]["id"]
    path = tmp_path / "session-id-less.jsonl"
    path.write_bytes(compact(*base))
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD301"]
    entry = records(outcome.after)[6]["toolCalls"][0]
    assert list(entry)[:4] == ["name", "args", "result", "status"]
    assert entry["result"] == [{"functionResponse": {"name": "read_file", "response": ERROR}}]


def test_duplicate_inside_a_stored_result_loses_only_the_copy(tmp_path: Path) -> None:
    value = json.loads((DIR / "codemie__session-2025-12-01T21-45-5b959dae.json").read_bytes())
    result = value["messages"][3]["toolCalls"][0]["result"]
    result.append(copy.deepcopy(result[0]))
    path = tmp_path / "session-dup.json"
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False))
    outcome = fix(path)
    assert [a.rule for a in outcome.applied] == ["TD303"]
    assert outcome.after == (DIR / "codemie__session-2025-12-01T21-45-5b959dae.json").read_bytes()


def test_two_orphans_in_one_checkpoint_each_take_their_message() -> None:
    outcome = fix(DIR / "orphan-responses-checkpoint.jsonl")
    after = records(outcome.after)[14]["$set"]["messages"]
    assert [m["type"] for m in after] == ["user", "user", "gemini"]
    assert [e.pointer for a in outcome.applied for e in a.edits] == [
        "line 15 /$set/messages/2",
        "line 15 /$set/messages/3",
    ]


def test_null_result_is_replaced_in_place(tmp_path: Path) -> None:
    damaged = json.loads((DIR / "codemie-file-ops-damaged.json").read_bytes())
    messages = damaged["messages"]
    entry = messages[9]["toolCalls"][0]
    messages[9]["toolCalls"][0] = {**{k: entry[k] for k in ("id", "name", "args")}, "result": None}
    messages[9]["toolCalls"][0].update({k: v for k, v in entry.items() if k not in ("id", "name", "args")})
    path = tmp_path / "session-null.json"
    path.write_text(json.dumps(damaged, indent=2, ensure_ascii=False))
    outcome = fix(path, select=("TD301",))
    assert [a.rule for a in outcome.applied] == ["TD301"]
    assert outcome.after == fix(DIR / "codemie-file-ops-damaged.json", select=("TD301",)).after


def test_call_without_id_in_a_checkpoint_is_not_guessed(tmp_path: Path) -> None:
    base = lines_of("unanswered-call-checkpoint.jsonl")
    del base[14]["$set"]["messages"][2]["content"][1]["functionCall"]["id"]
    path = tmp_path / "session-no-id.jsonl"
    path.write_bytes(compact(*base))
    outcome = fix(path, select=("TD301",))
    assert not outcome.changed
    ((located, why),) = outcome.remaining
    assert (located.finding.rule.code, located.fixable) == ("TD301", False)
    assert why == "this case cannot be repaired without guessing"
