"""Reader openai-chat: detection, every applicable rule, negative controls."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import FIXTURES, detected, findings, text_findings

DIR = FIXTURES / "openai-chat"


@pytest.mark.parametrize(
    "text",
    [
        '[{"type": "human", "data": {"content": "hi"}}]',  # LangChain messages_to_dict
        '{"conversations": [{"from": "human", "value": "hi"}]}',  # ShareGPT
        '[{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]',  # Responses items
        '[{"role": "model", "parts": [{"text": "hi"}]}]',  # Gemini Content[]
        '[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]',
        '{"name": "pkg", "version": "1.0.0", "type": "module"}',
    ],
)
def test_does_not_claim_look_alikes(tmp_path, text: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    assert detected(path) != "openai-chat"


def test_reply_mentioning_a_placeholder_is_not_one() -> None:
    # clean-parallel-tools.json line 11 says "...once answered (request timeout), but..."
    assert "(request timeout)" in (DIR / "clean-parallel-tools.json").read_text()
    assert findings(DIR / "clean-parallel-tools.json") == []


def test_trailing_pending_call_is_info_not_damage() -> None:
    assert findings(DIR / "pending-tool-call.jsonl") == [("TD306", 2, "/tool_calls/0")]


def test_tool_pairing_damage() -> None:
    assert findings(DIR / "damaged-tool-pairing.json") == [
        ("TD304", 9, "/4"),
        ("TD303", 10, "/5"),
        ("TD302", 11, "/6"),
        ("TD305", 13, "/7/tool_calls/0"),
    ]


def test_turn_damage() -> None:
    assert findings(DIR / "damaged-turns.json") == [
        ("TD103", 4, "/messages/1"),
        ("TD403", 6, "/messages/3"),
        ("TD201", 7, "/messages/4"),
        ("TD102", 9, "/messages/6/content/0"),
    ]


def test_fine_tuning_damage_names_the_line_and_message() -> None:
    assert findings(DIR / "damaged-fine-tuning.jsonl") == [("TD301", 3, "/messages/1/tool_calls/0")]


def test_legacy_function_calls_pair_by_adjacency_and_say_so() -> None:
    from support import records

    (found,) = records(DIR / "legacy-function-call.json")
    assert (found["rule"], found["line"], found["pointer"]) == ("TD301", 7, "/5/function_call")
    assert "paired by adjacency and name" in str(found["message"])


def test_unanswered_call_before_a_user_message_is_td301() -> None:
    text = (
        '[{"role":"user","content":"go"},'
        '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},'
        '{"role":"user","content":"next"}]'
    )
    assert text_findings("x.json", text) == [("TD301", 1, "/1/tool_calls/0")]


def test_final_text_without_trailing_whitespace_is_clean() -> None:
    text = '[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello."}]'
    assert text_findings("x.json", text) == []


def test_wrong_field_types_do_not_crash() -> None:
    text = (
        '[{"role":"user","content":"hi"},'
        '{"role":"assistant","content":null,"tool_calls":"oops"},'
        '{"role":"assistant","content":null,"tool_calls":[{"id":null,"function":"x"}]},'
        '{"role":"tool","tool_call_id":5,"content":"x"}]'
    )
    result = text_findings("x.json", text, reader="openai-chat")
    assert ("TD103", 1, "/1") in result
    assert ("TD302", 1, "/3") in result


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from(["user", "assistant", "tool", "system", "model", "text", ""]),
    st.lists(
        st.dictionaries(
            st.sampled_from(["type", "text", "source"]), st.sampled_from(["text", "tool_use", "image"])
        )
    ),
)


@settings(max_examples=2000, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["role", "content", "ts", "modelInfo", "metrics", "tool_calls", "x"]), _VALUES
    )
)
def test_a_plain_message_is_what_the_full_tests_take(item: dict[str, object]) -> None:
    """Detection's shortcut for the usual message (``_api_messages``) says what
    ``_is_message``, ``_anthropic_only`` and ``_openai_only`` would: a message of this API
    and of no other, and whether it holds something only this API has."""
    from transcript_doctor.readers.openai_chat.reader import (
        _anthropic_only,
        _api_messages,
        _is_message,
        _openai_only,
    )

    def asked(items: list[object]) -> object:
        try:
            return _api_messages(items)
        except TypeError as exc:  # an unhashable role: as the full tests raise it
            return str(exc)

    try:
        expected: object = _openai_only(item) if _is_message(item) and not _anthropic_only(item) else None
    except TypeError as exc:
        expected = str(exc)
    assert asked([item]) == expected
    assert asked([item, item]) == expected


def test_conversation_lines_answers_as_sample_does() -> None:
    """``listing.conversation_lines`` (asked when a file is read) is ``sample``'s answer."""
    from transcript_doctor.readers.listing import conversation_lines, sample
    from transcript_doctor.source import NotJson, sniff

    asked = 0
    for path in sorted(FIXTURES.rglob("*.json*")):
        try:
            source = sniff(path.name, path.read_bytes())
        except NotJson:
            continue
        for keys in (("messages",), ("history", "messages")):
            assert conversation_lines(source, keys) is sample(source, keys)[1], path
            asked += conversation_lines(source, keys)
    assert asked > 5


# -- the screen of fine-tuning lines of prompts and replies --------------------------------

_REPLY_TEXTS = [
    "Paris.",
    "Hello! \n",
    "Hello! ",
    "  ",
    "",
    " (request timeout) ",
    "[The previous response was interrupted before it completed.]",
    "Sure. [The previous response was interrupted before it completed.]",
    "Let me look\n\n[Response interrupted by API Error]",
    "It said (request timeout), then recovered.",
    "No response requested.",
]
_LINE_MESSAGES: list[dict[str, object]] = [
    {"role": "user", "content": "Hi"},
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
    {"role": "user", "content": "Hi", "name": "ann"},
    {"role": "assistant", "content": "Paris.", "weight": 0},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    *({"role": "assistant", "content": text} for text in _REPLY_TEXTS),
]


def test_fine_tuning_lines_the_line_screen_proves_clean_have_no_finding() -> None:
    """Every line of up to three messages (prompts, replies of every catalog case, calls):
    lint finds the same with and without the screen, and nothing on a line the line screen
    proves clean (``reader._line_cut``)."""
    import json
    from itertools import product

    from support import _catalog, lint_bytes

    from transcript_doctor import engine
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.checks import Selection
    from transcript_doctor.readers.openai_chat.reader import _line_cut

    lines = [list(messages) for length in range(1, 4) for messages in product(_LINE_MESSAGES, repeat=length)]
    data = "".join(json.dumps({"messages": messages}) + "\n" for messages in lines).encode()
    assert lint_bytes("train.jsonl", data).reader == "openai-chat"
    found = []
    for screen in (True, False):
        options = engine.Options(Selection.build(("ALL",)), _catalog(), screen=screen)
        report = engine.lint_bytes("train.jsonl", data, options)
        found.append([(f.finding.rule.code, f.origin.line, f.origin.pointer) for f in report.findings])
    assert found[0] == found[1]
    flagged = {line for _, line, _ in found[1]}
    cut = _line_cut(Screen(_catalog()))
    proven = {number for number, messages in enumerate(lines, 1) if cut(messages) is None}
    assert proven and flagged and not proven & flagged
