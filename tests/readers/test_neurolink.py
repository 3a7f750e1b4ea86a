"""Reader neurolink: detection both ways, adjacency and id pairing, every applicable rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neurolink_rows import ENVELOPE
from neurolink_rows import conversation as _conversation
from neurolink_rows import row as _row
from support import FIXTURES, detected, findings, records, text_findings

from transcript_doctor import readers
from transcript_doctor.model import PartKind, Role
from transcript_doctor.source import sniff

DIR = FIXTURES / "neurolink"
ADJACENCY = " (the format has no call ids: paired by adjacency and name)"


def _read(text: str) -> list[tuple[Role, list[tuple[PartKind, str | None, str]]]]:
    """(role, [(kind, call_id, paired_by)]) of every message the reader produces."""
    reader = readers.by_name("neurolink")
    assert reader is not None
    (conversation,) = reader.read(sniff("x.json", text.encode()))
    return [(m.role, [(p.kind, p.call_id, p.paired_by) for p in m.parts]) for m in conversation.messages]


# -- detection -----------------------------------------------------------------------


def test_detection_scores() -> None:
    def claim(text: str) -> tuple[str, int] | None:
        found = readers.detect(sniff("x.json", text.encode()))
        return (found[1].reason, found[1].score) if found and found[0].name == "neurolink" else None

    assert claim((DIR / "clean-redis-object.json").read_text()) == ("NeuroLink conversation object", 100)
    partial = json.dumps({"id": "c1", "title": "t", "messages": [{"role": "user", "content": "hi"}]})
    assert claim(partial) == ("NeuroLink conversation object", 50)
    assert claim((DIR / "id-era-history.json").read_text()) == ("NeuroLink ChatMessage list", 50)
    stamped = json.dumps([_row("user", "hi", 0), _row("assistant", "hello", 1)])
    assert claim(stamped) == ("NeuroLink ChatMessage list", 50)
    bare_tools = json.dumps([{"role": "tool_call", "content": "", "tool": "f"}])
    assert claim(bare_tools) == ("NeuroLink ChatMessage list", 50)


@pytest.mark.parametrize(
    "path",
    sorted(
        p for p in FIXTURES.glob("*/*") if p.is_file() and p.parent.name != "neurolink" and p.suffix != ".md"
    ),
)
def test_does_not_claim_other_readers_fixtures(path: Path) -> None:
    assert detected(path) != "neurolink"


@pytest.mark.parametrize(
    "text",
    [
        # plain role/content list: indistinguishable from openai-chat, left to it
        '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]',
        # openai-chat: role tool, tool_calls, tool_call_id
        '[{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",'
        ' "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c", "content": "x"}]',
        # anthropic-messages: content blocks
        '[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]',
        # Gemini Content[]
        '[{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}]',
        # Gemini CLI legacy session object
        '{"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",'
        ' "lastUpdated": "2026-01-01T00:00:01Z", "messages": [{"id": "1", "timestamp": "t", "type": "user", "content": "hi"}]}',
        # Cline SDK messages file: one envelope key only, MessageParam content blocks
        '{"version": 1, "updated_at": "x", "sessionId": "s", "messages": [{"role": "user",'
        ' "content": [{"type": "text", "text": "hi"}]}]}',
        # a conversation-like object whose messages are another API's
        '{"id": "1", "title": "t", "sessionId": "s", "messages": [{"role": "tool", "content": "x"}]}',
        # NeuroLink roles but one row of another API
        '[{"role": "tool_call", "content": ""}, {"role": "model", "content": "x"}]',
        '{"id": "1", "messages": [{"role": "tool_call", "content": ""}]}',  # one envelope key
        "[]",
        '{"name": "pkg", "version": "1.0.0"}',
    ],
)
def test_does_not_claim_look_alikes(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    assert detected(path) != "neurolink"


def test_jsonl_is_not_claimed(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(_row("tool_call", "", 0, tool="f")) + "\n")
    assert detected(path) != "neurolink"


# -- clean files and negative controls -------------------------------------------------


def test_reply_mentioning_the_step_limit_is_not_a_placeholder() -> None:
    assert "the 20-step limit for a single turn" in (DIR / "clean-redis-object.json").read_text()
    assert findings(DIR / "clean-redis-object.json") == []


def test_longer_reply_quoting_a_cap_text() -> None:
    prose = (
        "I reached the 20-step limit for a single turn before I could finish. Please narrow the "
        "request or break it into smaller asks and I'll continue."
    )
    bracketed = (
        "[Tool execution limit reached after 20 steps. The model continued requesting tool calls "
        "beyond the limit.]"
    )
    rows = [
        _row("user", "why did it stop?", 0),
        _row("assistant", f"Last time I answered: {prose} Here is the rest.", 1),
        _row("user", "and before?", 2),
        _row("assistant", f"Earlier the reply was {bracketed}, a harness marker.", 3),
    ]
    # The prose is ordinary wording; only the bracketed marker is distinctive (TD203).
    assert text_findings("x.json", _conversation(rows)) == [("TD203", 1, "/messages/3")]


def test_prose_cap_without_tool_calls_is_a_placeholder() -> None:
    rows = [
        _row("user", "go", 0),
        _row(
            "assistant",
            "I reached the 8-step limit for a single turn before I could finish. Please narrow the "
            "request or break it into smaller asks and I'll continue.",
            1,
        ),
    ]
    assert text_findings("x.json", _conversation(rows)) == [("TD201", 1, "/messages/1")]


# -- the model ---------------------------------------------------------------------------


def test_batch_is_one_turn_and_result_run_one_user_message() -> None:
    text = (DIR / "clean-redis-object.json").read_text()
    shape = [(role, [kind for kind, _, _ in parts]) for role, parts in _read(text)]
    call, result, txt = PartKind.TOOL_CALL, PartKind.TOOL_RESULT, PartKind.TEXT
    assert shape == [
        (Role.USER, [txt]),
        (Role.ASSISTANT, [call, call]),
        (Role.USER, [result, result]),
        (Role.ASSISTANT, [txt]),
        (Role.USER, [txt]),
        (Role.ASSISTANT, [call, call]),
        (Role.USER, [result, result]),
        (Role.ASSISTANT, [txt]),
        (Role.USER, [txt]),
        (Role.ASSISTANT, [call]),
        (Role.USER, [result]),
        # the empty tool-only assistant row with `events` is never replayed: no message
    ]


def test_adjacency_pairs_share_synthetic_ids() -> None:
    rows = [
        _row("user", "go", 0),
        _row("tool_call", "", 1, tool="a"),
        _row("tool_call", "", 2, tool="b"),
        _row("tool_result", "B", 3, tool="b"),  # answered out of order: paired by name
        _row("tool_result", "A", 4, tool="a"),
        _row("assistant", "done", 5),
    ]
    messages = _read(_conversation(rows))
    calls = messages[1][1]
    results = messages[2][1]
    assert [c[2] for c in calls + results] == ["adjacency"] * 4
    assert results[0][1] == calls[1][1] and results[1][1] == calls[0][1]
    assert calls[0][1] != calls[1][1]
    assert text_findings("x.json", _conversation(rows)) == []


def test_id_era_pairs_by_tool_call_id() -> None:
    parts = [p for _, ps in _read((DIR / "id-era-history.json").read_text()) for p in ps]
    tool_parts = [p for p in parts if p[0] in (PartKind.TOOL_CALL, PartKind.TOOL_RESULT)]
    assert {p[2] for p in tool_parts} == {"id"}
    assert sorted(p[1] for p in tool_parts if p[0] is PartKind.TOOL_RESULT) == sorted(
        p[1] for p in tool_parts if p[0] is PartKind.TOOL_CALL
    )


def test_refs_are_message_indices() -> None:
    reader = readers.by_name("neurolink")
    assert reader is not None
    (conversation,) = reader.read(sniff("x.json", (DIR / "compaction-repair-1280.json").read_bytes()))
    assert conversation.ref == "/messages"
    assert [m.ref for m in conversation.messages] == [0, 1, 2, 3, 4, 6, 7, 8]
    assert [p.ref for p in conversation.messages[4].parts] == [4, 5]


# -- damage ------------------------------------------------------------------------------


def test_1280_compaction_repair_is_a_duplicate_result() -> None:
    (found,) = records(DIR / "compaction-repair-1280.json")
    assert (found["rule"], found["line"], found["pointer"]) == ("TD303", 1, "/messages/4")
    assert str(found["message"]).endswith(ADJACENCY)


def test_batch_with_a_missing_result() -> None:
    (found,) = records(DIR / "missing-result.json")
    assert (found["rule"], found["line"], found["pointer"]) == ("TD301", 1, "/messages/2")
    assert str(found["message"]).endswith(ADJACENCY)


def test_step_cap_placeholders() -> None:
    assert findings(DIR / "step-cap-bracketed.json") == [("TD201", 1, "/messages/1")]
    assert findings(DIR / "step-cap-prose.json") == [("TD201", 1, "/messages/11")]


def test_id_era_damage() -> None:
    assert findings(DIR / "id-era-damaged.json") == [
        ("TD304", 1, "/messages/6"),
        ("TD303", 1, "/messages/9"),
        ("TD302", 1, "/messages/10"),
    ]
    assert not any(ADJACENCY in str(r["message"]) for r in records(DIR / "id-era-damaged.json"))


def test_id_era_missing_result_in_the_cli_export() -> None:
    (found,) = records(DIR / "id-era-history-interrupted.json")
    assert (found["rule"], found["line"], found["pointer"]) == ("TD301", 8, "/1")
    assert ADJACENCY not in str(found["message"])


def test_turn_damage() -> None:
    assert findings(DIR / "damaged-turns.json") == [
        ("TD103", 1, "/messages/1"),
        ("TD102", 1, "/messages/3/content"),
    ]


def test_replay_starts_after_the_summary_pointer() -> None:
    assert findings(DIR / "summary-cut-mid-batch.json") == [("TD302", 1, "/messages/8")]
    # Without a summary text the vendor replays every row: the batch is whole again.
    value = json.loads((DIR / "summary-cut-mid-batch.json").read_text())
    value["summarizedMessage"] = ""
    assert text_findings("x.json", json.dumps(value)) == []
    value["summarizedMessage"] = "s"
    value["summarizedUpToMessageId"] = "no-such-row"
    assert text_findings("x.json", json.dumps(value)) == []


def test_displaced_adjacency_result_and_orphan() -> None:
    rows = [
        _row("user", "go", 0),
        _row("tool_call", "", 1, tool="a"),
        _row("user", "hurry", 2),
        _row("tool_result", "A", 3, tool="a"),
        _row("tool_result", "Z", 4, tool="z"),
        _row("assistant", "done", 5),
    ]
    assert text_findings("x.json", _conversation(rows)) == [
        ("TD304", 1, "/messages/3"),
        ("TD302", 1, "/messages/4"),
    ]


def test_pending_calls_at_the_end_are_info() -> None:
    rows = [_row("user", "go", 0), _row("tool_call", "", 1, tool="a")]
    assert text_findings("x.json", _conversation(rows)) == [("TD306", 1, "/messages/1")]


def test_error_results_are_marked() -> None:
    rows = [
        _row("user", "go", 0),
        _row("tool_call", "", 1, tool="a"),
        _row("tool_result", "boom", 2, tool="a", result={"success": False, "error": "boom"}),
    ]
    reader = readers.by_name("neurolink")
    assert reader is not None
    (conversation,) = reader.read(sniff("x.json", _conversation(rows).encode()))
    assert conversation.messages[2].parts[0].is_error


def test_user_row_stored_twice() -> None:
    rows = [_row("user", "go", 0), _row("user", "go", 0), _row("assistant", "ok", 1)]
    assert text_findings("x.json", _conversation(rows)) == [("TD403", 1, "/messages/1")]
    rows[1] = _row("user", "go", 1)  # typed again later: a new id and time
    assert text_findings("x.json", _conversation(rows)) == []


def test_pretty_printed_lines() -> None:
    text = json.dumps(
        [_row("user", "go", 0), _row("tool_call", "", 1, tool="a"), _row("user", "x", 2)], indent=2
    )
    assert text_findings("x.json", text) == [("TD301", 8, "/1")]


# -- robustness -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rows",
    [
        [1, None, "x", []],
        [{"role": "user", "content": None}, {"role": "assistant", "content": 5}],
        [{"role": "tool_call", "content": "", "tool": 7, "toolCallId": None, "args": "x"}],
        [{"role": "tool_result", "content": "", "tool": None, "toolCallId": 3, "result": "x"}],
        [{"role": "assistant", "content": "", "events": "x", "metadata": []}],
        [{"role": "tool_result", "content": "x"}, {"role": "tool_result", "content": "y", "tool": "f"}],
    ],
)
def test_malformed_rows_do_not_crash(rows: list[object]) -> None:
    text = json.dumps({**ENVELOPE, "summarizedUpToMessageId": 5, "summarizedMessage": [], "messages": rows})
    text_findings("x.json", text, reader="neurolink")


@pytest.mark.parametrize(
    "text", ['{"messages": "x", "title": "t", "id": 1}', '{"id": 1, "title": "t"}', '"x"', "3", "null"]
)
def test_malformed_documents_do_not_crash(text: str) -> None:
    text_findings("x.json", text, reader="neurolink")


def test_id_less_rows_of_one_jsonl_line_pair_by_their_position() -> None:
    """A forced reader on a line per conversation: the rows share the line's record, so
    id-less calls are named by their place in the list (else all would share one name
    and a second answer to one call would hide the other call's missing answer)."""
    rows = [
        _row("user", "Go", 1),
        _row("tool_call", "", 2, tool="a"),
        _row("tool_call", "", 3, tool="b"),
        _row("tool_result", "{}", 4, tool="b"),
        _row("tool_result", "{}", 5, tool="b"),
        _row("assistant", "Done", 6),
    ]
    line = json.dumps({"messages": rows}) + "\n"
    assert text_findings("x.jsonl", line, reader="neurolink") == [
        ("TD301", 1, "/messages/1"),
        ("TD303", 1, "/messages/4"),
    ]


# -- the screen's positional pairing ------------------------------------------------------

# Rows of every kind ``_turns`` tells apart: prompts and replies, a tool-only marker,
# id-less calls and results of two tools and of none, rows with ids, and rows it skips.
_KINDS: list[object] = [
    _row("user", "Go", 1),
    _row("assistant", "Done", 2),
    _row("assistant", "", 3, tool="a"),
    _row("tool_call", "", 4, tool="a"),
    _row("tool_call", "", 5, tool="b"),
    _row("tool_call", "", 6),
    _row("tool_call", "", 7, tool="a", toolCallId="c1"),
    _row("tool_result", "ok", 8, tool="a"),
    _row("tool_result", "ok", 9, tool="b"),
    _row("tool_result", "ok", 10),
    _row("tool_result", "ok", 11, tool="a", toolCallId="c1"),
    _row("tool_result", "ok", 12, tool="", toolCallId=""),
    _row("system", "Be brief", 13),
    _row("developer", "x", 14),
    7,
]


def _both_ways(items: list[object], document: object = None) -> None:
    from transcript_doctor.readers.neurolink.reader import _turns

    assert list(_turns(items, document)) == list(_turns(items, document, positional=False))


def test_positional_pairing_turns_every_short_list_as_the_pairing_does() -> None:
    from itertools import product

    for length in range(1, 5):
        for items in product(_KINDS, repeat=length):
            _both_ways(list(items))


def test_positional_pairing_turns_long_lists_as_the_pairing_does() -> None:
    import random

    chance = random.Random(19)
    for _ in range(4000):
        _both_ways([chance.choice(_KINDS) for _ in range(chance.randint(5, 16))])


@pytest.mark.parametrize("path", sorted(DIR.glob("*.json")), ids=lambda p: p.name)
def test_positional_pairing_turns_every_fixture_as_the_pairing_does(path: Path) -> None:
    value = json.loads(path.read_text())
    items = value.get("messages") if isinstance(value, dict) else value
    assert isinstance(items, list)
    _both_ways(items, value)
