"""The plain-conversation screen: a speed-up that must never change a finding.

Fine-tuning readers skip building conversations the screen proves clean.  Every test
here compares lint with the screen against lint without it, and pins what it finds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neurolink_rows import conversation
from neurolink_rows import row as _row
from support import FIXTURES, _catalog, lint_bytes

from transcript_doctor import catalog, checks, engine, readers
from transcript_doctor.analysis.screen import ASSISTANT, OTHER, Screen
from transcript_doctor.checks import Selection
from transcript_doctor.model import Role, Rule, Screening, Severity
from transcript_doctor.reporters import record
from transcript_doctor.source import sniff

FILES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl"))


def both(name: str, data: bytes, loaded: catalog.Catalog | None = None) -> list[dict[str, object]]:
    """The findings of one file, asserted equal with and without the screen."""
    loaded = loaded or _catalog()
    results = []
    for screen in (True, False):
        options = engine.Options(Selection.build(("ALL",)), loaded, screen=screen)
        report = engine.lint_bytes(name, data, options)
        assert report.error is None, report.error
        results.append([record(report, f) for f in report.findings])
    assert results[0] == results[1]
    return results[0]


def test_every_rule_was_considered_by_the_screen() -> None:
    """A new rule fails here until analysis/screen.py was revisited for it: asked (the
    screen asks the rule's question), excluded (readers screen no conversation with the
    feature it reads) or file-level."""
    by_treatment: dict[str, list[str]] = {}
    for rule in checks.rules():
        if rule.screen is not Screening.NONE:  # not screened yet: see the test below
            by_treatment.setdefault(rule.screen.value, []).append(rule.code)
    assert by_treatment == {
        "file": ["TD001", "TD002"],
        "asked": ["TD101", "TD102", "TD103", "TD201", "TD202", "TD203",
                  "TD301", "TD302", "TD303", "TD304", "TD305", "TD306"],
        "excluded": ["TD104", "TD401", "TD402", "TD403", "TD404", "TD405"],
    }  # fmt: skip


def test_a_rule_the_screen_does_not_answer_for_turns_the_screen_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new rule (``Screening.NONE``) is never missed on a conversation the screen would
    have called clean: while it is selected, every conversation is built."""
    new = Rule("TD999", "new-rule", Severity.ERROR, "A new rule.", screen=Screening.NONE)
    entries = (*checks.registry(), checks.Registered(new, None))
    monkeypatch.setattr(checks, "registry", lambda: entries)
    checks.screenable.cache_clear()
    seen: list[object] = []
    reader = readers.by_name("openai-chat")
    assert reader is not None
    real = type(reader).read_screened
    monkeypatch.setattr(
        type(reader),
        "read_screened",
        lambda self, source, screen: seen.append(screen) or real(self, source, screen),
    )
    try:
        data = (FIXTURES / "openai-chat" / "clean-parallel-tools.json").read_bytes()
        for selection, screened in ((("TD301",), True), (("TD301", "TD999"), False)):
            seen.clear()
            options = engine.Options(Selection.build(selection), _catalog())
            assert engine.lint_bytes("c.json", data, options).findings == []
            assert [s is not None for s in seen] == [screened]
    finally:
        checks.screenable.cache_clear()


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixtures_lint_the_same_with_and_without_the_screen(path: Path) -> None:
    both(str(path), path.read_bytes())


# One plain conversation per line, each with the rule it must raise (None: clean).
REPLIES: list[tuple[list[tuple[str, str]], str | None]] = [
    ([("user", "Hi"), ("assistant", "Hello!")], None),
    ([("user", "Hi"), ("assistant", "Hello! \n")], "TD102"),
    ([("user", "Hi"), ("assistant", "Hello! "), ("user", "Bye ")], None),  # not the final turn
    ([("user", "Hi"), ("assistant", "  "), ("user", "?")], "TD103"),
    ([("user", "Hi"), ("assistant", "")], "TD103"),
    ([("user", "Hi"), ("assistant", " (request timeout) "), ("user", "again")], "TD201"),
    (
        [("user", "Hi"), ("assistant", "[The previous response was interrupted before it completed.]")],
        "TD202",
    ),
    (
        [("user", "Hi"), ("assistant", "Sure. [The previous response was interrupted before it completed.]")],
        "TD203",
    ),
    ([("user", "Hi"), ("assistant", "Let me look\n\n[Response interrupted by API Error]")], "TD101"),
    # Mentions are not placeholders: the full check runs and finds nothing.
    ([("user", "What did it say?"), ("assistant", "It said (request timeout), then recovered.")], None),
    ([("user", "Hi"), ("assistant", "No response requested.")], "TD201"),
    ([("user", "Hi"), ("assistant", "any text a harness_only pattern would match")], None),
]


def _lines(layout: str) -> bytes:
    rows = []
    for turns, _ in REPLIES:
        messages = [{"role": role, "content": text} for role, text in turns]
        row = {"messages": messages} if layout == "openai" else {"system": "Be brief.", "messages": messages}
        rows.append(json.dumps(row))
    return ("\n".join(rows) + "\n").encode()


@pytest.mark.parametrize(
    ("layout", "reader"), [("openai", "openai-chat"), ("anthropic", "anthropic-messages")]
)
def test_plain_fine_tuning_lines_find_exactly_their_rule(layout: str, reader: str) -> None:
    found = both(f"train-{layout}.jsonl", _lines(layout))
    assert {f["reader"] for f in found} == {reader}
    expected = [(rule, line) for line, (_, rule) in enumerate(REPLIES, 1) if rule]
    assert [(f["rule"], f["line"]) for f in found] == expected


def _call(*ids: str, content: str | None = None) -> dict[str, object]:
    calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": content, "tool_calls": calls}


def _result(call_id: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


ASK = {"role": "user", "content": "Do it"}
DONE = {"role": "assistant", "content": "Done."}
# Tool exchanges of Chat Completions lines, each with the rules it must raise.
EXCHANGES: list[tuple[list[dict[str, object]], tuple[str, ...]]] = [
    ([ASK, _call("a", "b"), _result("b"), _result("a"), DONE], ()),  # parallel, any order
    ([ASK, _call("a", content=""), _result("a"), DONE], ()),
    ([ASK, _call("a"), ASK, DONE], ("TD301",)),
    ([ASK, _result("a"), DONE], ("TD302",)),
    ([ASK, _call("a"), _result("a"), _result("a"), DONE], ("TD303",)),
    ([ASK, _call("a"), ASK, _result("a"), DONE], ("TD304",)),
    ([ASK, _call("a", "a"), _result("a"), DONE], ("TD301", "TD305")),
    ([ASK, _call("a"), _result("a"), _call("a"), _result("a"), DONE], ("TD305",)),
    ([ASK, _call("a")], ("TD306",)),
    ([ASK, {"role": "assistant", "content": None, "tool_calls": []}, ASK], ("TD103",)),
    (
        [
            ASK,
            _call("a", content="[The previous response was interrupted before it completed.]"),
            _result("a"),
        ],
        ("TD203",),
    ),
    ([ASK, _call("a"), _result("a"), {"role": "assistant", "content": "Done.\n"}], ("TD102",)),
]


def test_tool_exchanges_in_fine_tuning_lines_find_exactly_their_rules() -> None:
    data = "".join(json.dumps({"messages": messages}) + "\n" for messages, _ in EXCHANGES).encode()
    found = both("train.jsonl", data)
    expected = [(rule, line) for line, (_, rules) in enumerate(EXCHANGES, 1) for rule in rules]
    assert [(f["rule"], f["line"]) for f in found] == expected


def test_plain_line_with_an_identity_is_still_checked_for_duplicates() -> None:
    prompt = {"role": "user", "content": "Hi", "id": "m1"}
    row = {"messages": [prompt, prompt, {"role": "assistant", "content": "Hello"}]}
    found = both("train.jsonl", (json.dumps(row) + "\n").encode())
    assert [(f["rule"], f["pointer"]) for f in found] == [("TD403", "/messages/1")]


def _user_catalog(tmp_path: Path, patterns: dict[str, str]) -> catalog.Catalog:
    entries = [
        {
            "id": name,
            "kind": "placeholder",
            "pattern": pattern,
            "example": example,
            "distinctive": False,
            "vendor": "me",
            "source": "test",
        }
        for name, (pattern, example) in patterns.items()
    ]
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"markers": entries}))
    return catalog.load((path,))


@pytest.mark.parametrize(
    "pattern",
    [
        ("^busy, try later$", "busy, try later"),  # anchored: matches the trimmed text only
        ("(busy), try later", "busy, try later"),  # a group: cannot join one search
        ("(?i)BUSY, try later", "busy, try later"),  # inline flags: cannot join one search
    ],
)
def test_user_catalog_patterns_are_screened_like_they_match(tmp_path: Path, pattern: tuple[str, str]) -> None:
    loaded = _user_catalog(tmp_path, {"busy": pattern})
    turns = [("user", "Hi"), ("assistant", " busy, try later\n"), ("user", "And now?")]
    row = {"messages": [{"role": role, "content": text} for role, text in turns]}
    found = both("train.jsonl", (json.dumps(row) + "\n").encode(), loaded)
    assert [f["rule"] for f in found] == ["TD201"]


def _content(role: str, *parts: dict[str, object]) -> dict[str, object]:
    return {"role": role, "parts": list(parts)}


def _fc(name: str, call_id: str | None = None, signature: str | None = "c2ln") -> dict[str, object]:
    call: dict[str, object] = {"name": name, "args": {}}
    if call_id is not None:
        call["id"] = call_id
    part: dict[str, object] = {"functionCall": call}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _fr(name: str, call_id: str | None = None) -> dict[str, object]:
    response: dict[str, object] = {"name": name, "response": {"output": "ok"}}
    if call_id is not None:
        response["id"] = call_id
    return {"functionResponse": response}


PROMPT = _content("user", {"text": "Read it"})
ANSWER = _content("model", {"text": "It says hello."})
# Gemini Content[] histories, each with the rules it must raise.
HISTORIES: list[tuple[list[dict[str, object]], tuple[str, ...]]] = [
    ([PROMPT, _content("model", _fc("read", "r1")), _content("user", _fr("read", "r1")), ANSWER], ()),
    ([PROMPT, _content("model", _fc("read")), _content("user", _fr("read")), ANSWER], ()),
    # Two id-less calls of one name pair by position: the screen leaves them to the full read.
    (
        [
            PROMPT,
            _content("model", _fc("read"), _fc("read")),
            _content("user", _fr("read"), _fr("read")),
            ANSWER,
        ],
        (),
    ),
    ([PROMPT, _content("model", _fc("a"), _fc("b")), _content("user", _fr("b"), _fr("a")), ANSWER], ()),
    (
        [PROMPT, _content("model", _fc("read", "r1", None)), _content("user", _fr("read", "r1")), ANSWER],
        ("TD401",),
    ),
    (
        [
            PROMPT,
            _content("model", _fc("a", "1", None), _fc("b", "2")),
            _content("user", _fr("a", "1"), _fr("b", "2")),
        ],
        ("TD401",),
    ),
    (
        [PROMPT, _content("model", _fc("read", "r1")), _content("user", _fr("read", "r1")), PROMPT, ANSWER],
        ("TD104",),
    ),
    (
        [PROMPT, _content("model", _fc("read", "r1")), _content("user", _fr("read", "r2")), ANSWER],
        ("TD301", "TD302"),
    ),
    # An id'd call and an id-less response never pair, whatever the id says.
    (
        [PROMPT, _content("model", _fc("read", "read")), _content("user", _fr("read")), ANSWER],
        ("TD301", "TD302"),
    ),
    ([PROMPT, _content("model", _fc("read", "r1"))], ("TD306",)),
    ([PROMPT, _content("model", {"text": "It says hello. "})], ()),
    ([PROMPT, _content("model", {"text": "It says "}, {"text": ""})], ()),
    ([PROMPT, _content("model", {"text": " "}), PROMPT, ANSWER], ("TD103",)),
    (
        [PROMPT, _content("model", {"text": "[The previous response was interrupted before it completed.]"})],
        ("TD202",),
    ),
    ([PROMPT, _content("model", {"text": "Done."}), _content("model", {"text": "More."})], ()),
    ([PROMPT, _content("model", {"text": "thinking", "thought": True}, {"text": "Done."})], ()),
]


@pytest.mark.parametrize(("history", "rules"), HISTORIES)
def test_gemini_histories_find_exactly_their_rules(
    history: list[dict[str, object]], rules: tuple[str, ...]
) -> None:
    data = json.dumps(history, indent=2).encode()
    assert lint_bytes("checkpoint.json", data).reader == "gemini-checkpoint"
    assert tuple(f["rule"] for f in both("checkpoint.json", data)) == rules


def _blocks(role: str, *blocks: dict[str, object]) -> dict[str, object]:
    return {"role": role, "content": list(blocks)}


def _text(text: str) -> dict[str, object]:
    return {"type": "text", "text": text}


def _think(signature: str | None = "RXFB") -> dict[str, object]:
    block: dict[str, object] = {"type": "thinking", "thinking": "Let me look."}
    if signature is not None:
        block["signature"] = signature
    return block


def _use(call_id: str) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": "a"}}


def _res(call_id: str) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "hello"}


ASKS = {"role": "user", "content": "Read a"}
SAYS = _blocks("assistant", _text("It says hello."))
# Anthropic MessageParam lists (one request body), each with the rules it must raise.
PARAMS: list[tuple[list[dict[str, object]], tuple[str, ...]]] = [
    (
        [
            ASKS,
            _blocks("assistant", _think(), _text("Reading."), _use("t1")),
            _blocks("user", _res("t1")),
            SAYS,
        ],
        (),
    ),
    (
        [
            ASKS,
            _blocks("assistant", {"type": "redacted_thinking", "data": "x"}, _use("t1")),
            _blocks("user", _res("t1")),
        ],
        (),
    ),
    (
        [
            ASKS,
            _blocks("assistant", _use("t1"), _use("t2")),
            _blocks("user", _text("both:"), _res("t2"), _res("t1")),
            SAYS,
        ],
        (),
    ),
    ([ASKS, _blocks("assistant", _think(None), _use("t1")), _blocks("user", _res("t1")), SAYS], ("TD402",)),
    ([ASKS, _blocks("assistant", _think(""), _text("Hi."))], ("TD402",)),
    ([ASKS, _blocks("assistant", _use("t1")), ASKS, _blocks("user", _res("t1")), SAYS], ("TD304",)),
    (
        [ASKS, _blocks("assistant", _use("t1")), _blocks("user"), _blocks("user", _res("t1")), SAYS],
        ("TD304",),
    ),
    ([_blocks("user"), SAYS], ()),
    (
        [
            ASKS,
            _blocks("assistant", _use("t1")),
            _blocks("user", _text("[read_file for 'a'] Result:\nhello")),
            SAYS,
        ],
        (),
    ),
    ([ASKS, _blocks("assistant", _think())], ()),
    (
        [
            ASKS,
            _blocks("assistant", _text("Sure. [generation was interrupted]"), _use("t1")),
            _blocks("user", _res("t1")),
        ],
        ("TD203",),
    ),
    ([ASKS, _blocks("assistant", _use("t1")), _blocks("user", _res("t1"), _res("t1")), SAYS], ("TD303",)),
]


@pytest.mark.parametrize(("params", "rules"), PARAMS)
def test_anthropic_message_lists_find_exactly_their_rules(
    params: list[dict[str, object]], rules: tuple[str, ...]
) -> None:
    data = json.dumps(
        {"model": "claude-sonnet-4-5", "system": "Be brief.", "messages": params}, indent=2
    ).encode()
    assert lint_bytes("request.json", data).reader == "anthropic-messages"
    assert tuple(f["rule"] for f in both("request.json", data)) == rules


def _ow(role: str, content: object = "", **extra: object) -> dict[str, object]:
    return {"role": role, "content": content, **extra}


def _ow_call(*ids: str, content: str = "", **extra: object) -> dict[str, object]:
    calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]
    return _ow("assistant", content, tool_calls=calls, **extra)


def _ow_result(call_id: str) -> dict[str, object]:
    return _ow("tool", "ok", tool_call_id=call_id)


ASK_1, ASK_2 = _ow("user", "Go", ts=1.5), _ow("user", "Go", ts=2.5)
REPLY = _ow("assistant", "Done.")
ERROR = {"role": "notice", "kind": "error", "text": "503"}
SIGNED = {"blocks": [{"type": "thinking", "thinking": "t", "signature": "RXFB"}]}
# openworker conversations, each with the rules it must raise.
SESSIONS: list[tuple[list[dict[str, object]], tuple[str, ...]]] = [
    (
        [
            ASK_1,
            _ow_call("call_0"),
            _ow_result("call_0"),
            REPLY,
            ASK_2,
            _ow_call("call_0"),
            _ow_result("call_0"),
            REPLY,
        ],
        (),
    ),
    ([ASK_1, _ow_call("a", "a"), _ow_result("a"), REPLY], ("TD301", "TD305")),
    (
        [ASK_1, _ow_call("x"), _ow_result("x"), _ow_call("x (line 5)"), _ow_call("x")],
        ("TD301", "TD305", "TD306"),
    ),
    ([ASK_1, ERROR, ASK_2, REPLY], ()),
    ([ASK_1, ASK_1, REPLY], ("TD403",)),
    ([_ow("user", "Go"), _ow("user", "Go"), REPLY], ("TD403",)),
    ([_ow("user", "Go"), _ow("user", "Go!"), REPLY], ()),
    ([ASK_1, REPLY, ERROR], ("TD101",)),
    ([ASK_1, REPLY, ERROR, ASK_2, REPLY], ()),
    ([ASK_1, _ow_call("a"), ERROR, _ow_result("a"), REPLY], ()),
    (
        [ASK_1, _ow("assistant", "Hi.", _anthropic={"blocks": [{"type": "thinking", "thinking": "t"}]})],
        ("TD402",),
    ),
    ([ASK_1, _ow("assistant", "", _anthropic=SIGNED), ASK_2, REPLY], ("TD103",)),
    ([ASK_1, _ow("assistant", [{"type": "text", "text": "Hi. "}], _anthropic=SIGNED)], ("TD102",)),
]


@pytest.mark.parametrize(("session", "rules"), SESSIONS)
def test_openworker_sessions_find_exactly_their_rules(
    session: list[dict[str, object]], rules: tuple[str, ...]
) -> None:
    data = "".join(json.dumps(line) + "\n" for line in session).encode()
    name = "conversations/s1.jsonl"
    assert lint_bytes(name, data).reader == "openworker"
    assert tuple(f["rule"] for f in both(name, data)) == rules


def _nl_call(n: int, tool: str, call_id: str | None = None) -> dict[str, object]:
    extra: dict[str, object] = {"tool": tool, "args": {}}
    if call_id is not None:
        extra["toolCallId"] = call_id
    return _row("tool_call", "", n, **extra)


def _nl_result(n: int, tool: str, call_id: str | None = None) -> dict[str, object]:
    extra: dict[str, object] = {"tool": tool, "result": {"success": True}}
    if call_id is not None:
        extra["toolCallId"] = call_id
    return _row("tool_result", "{}", n, **extra)


CAP = "[Tool execution limit reached after 20 steps. The model continued requesting tool calls beyond the limit.]"
# NeuroLink conversation objects, each with the rules it must raise.
ROWS: list[tuple[list[dict[str, object]], tuple[str, ...]]] = [
    (
        [
            _row("user", "Go", 1),
            _nl_call(2, "w", "c1"),
            _nl_result(3, "w", "c1"),
            _row("assistant", "Done", 4),
        ],
        (),
    ),
    (
        [
            _row("user", "Go", 1),
            _nl_call(2, "a"),
            _nl_call(3, "b"),
            _nl_result(4, "b"),
            _nl_result(5, "a"),
            _row("assistant", "Done", 6),
        ],
        (),
    ),
    (
        [
            _row("user", "Go", 1),
            _nl_call(2, "a"),
            _row("assistant", "", 3, tool="a"),
            _nl_result(4, "a"),
            _row("assistant", "Done", 5),
        ],
        (),
    ),
    (
        [
            _row("user", "Go", 1),
            _nl_call(2, "a"),
            _nl_result(3, "a"),
            _nl_result(4, "a"),
            _row("assistant", "Done", 5),
        ],
        ("TD303",),
    ),
    ([_row("user", "Go", 1), _row("user", "Go", 1), _row("assistant", "Done", 2)], ("TD403",)),
    ([_row("user", "Go", 1), _row("user", "Go", 2), _row("assistant", "Done", 3)], ()),
    (
        [_row("user", "Go", 1), _nl_call(2, "a"), _row("user", "Hello?", 3), _row("assistant", "Done", 4)],
        ("TD301",),
    ),
    ([_row("user", "Go", 1), _row("assistant", CAP, 2)], ("TD201",)),
    (
        [
            _row("user", "Go", 1),
            _row("assistant", " ", 2),
            _row("user", "Hm", 3),
            _row("assistant", "Done", 4),
        ],
        ("TD103",),
    ),
    (
        [
            _row("user", "Go", 1),
            _nl_call(2, "a", "c1"),
            _nl_result(3, "b", "c2"),
            _row("assistant", "Done", 4),
        ],
        ("TD301", "TD302"),
    ),
]


@pytest.mark.parametrize(("rows", "rules"), ROWS)
def test_neurolink_conversations_find_exactly_their_rules(
    rows: list[dict[str, object]], rules: tuple[str, ...]
) -> None:
    data = conversation(rows).encode()
    assert lint_bytes("conversation.json", data).reader == "neurolink"
    assert tuple(f["rule"] for f in both("conversation.json", data)) == rules


def test_neurolink_rows_before_the_summary_cut_are_not_screened() -> None:
    rows = [_row("user", "Go", 1), _nl_call(2, "a"), _row("user", "Again", 3), _row("assistant", "Done", 4)]
    cut = {"summarizedUpToMessageId": rows[1]["id"], "summarizedMessage": "Earlier: a call."}
    assert both("conversation.json", conversation(rows, **cut).encode()) == []


# -- cuts: a doubted conversation is built from the last prompt before the doubt -----------


def _exchange(layout: str, call: str) -> list[dict[str, object]]:
    """A prompt, one answered call, a closing answer: nothing to flag."""
    if layout == "openai":
        return [ASK, _call(call), _result(call), DONE]
    if layout == "anthropic":
        return [ASKS, _blocks("assistant", _use(call)), _blocks("user", _res(call)), SAYS]
    return [PROMPT, _content("model", _fc("read", call)), _content("user", _fr("read", call)), ANSWER]


def _document(layout: str, messages: list[dict[str, object]]) -> tuple[str, bytes]:
    if layout == "gemini":
        return "checkpoint.json", json.dumps(messages, indent=2).encode()
    return "request.json", json.dumps({"messages": messages}, indent=2).encode()


# Damage after three clean exchanges (calls "a", "b", "c"), with the rules it raises and
# the message the conversation is built from (12: the last exchange's prompt is the cut;
# 0: the part after the cut names a call id of the part before it, so all is built).
CUT_CASES: list[tuple[str, int, tuple[str, ...]]] = [
    ("unanswered", 12, ("TD301",)),  # a call the next prompt leaves unanswered
    ("pending", 12, ("TD306",)),
    ("answered-again", 0, ("TD303",)),  # a second result for "a": a duplicate, not an orphan
    ("called-again", 0, ("TD305",)),  # "a" called again
]


def _damage(layout: str, case: str) -> list[dict[str, object]]:
    exchange = _exchange(layout, "d")
    prompt, call, result, answer = exchange
    if case == "unanswered":
        return [prompt, call, prompt, answer]
    if case == "pending":
        return [prompt, call]
    if case == "answered-again":
        if layout == "openai":
            return [prompt, call, result, _result("a"), answer]
        if layout == "anthropic":
            return [prompt, call, _blocks("user", _res("d"), _res("a")), answer]
        return [prompt, call, _content("user", _fr("read", "d"), _fr("read", "a")), answer]
    return [prompt, *_exchange(layout, "a")[1:]]


@pytest.mark.parametrize("layout", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize(("case", "start", "rules"), CUT_CASES)
def test_a_doubted_conversation_is_built_from_the_cut(
    layout: str, case: str, start: int, rules: tuple[str, ...]
) -> None:
    messages = [m for call in "abc" for m in _exchange(layout, call)] + _damage(layout, case)
    name, data = _document(layout, messages)
    assert tuple(f["rule"] for f in both(name, data)) == rules
    source = sniff(name, data)
    claim = readers.detect(source)
    assert claim is not None
    (built,) = claim[0].read_screened(source, Screen(_catalog()))
    first = next(m for m in built.messages if m.role is not Role.SYSTEM)
    assert first.origin.pointer == ("/messages" if layout != "gemini" else "") + f"/{start}"


def test_a_message_the_screen_does_not_know_ends_the_screened_part() -> None:
    """A legacy function call is not plain: the conversation is built from the prompt
    before it, and finds what the whole finds."""
    legacy = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
    messages = [m for call in "ab" for m in _exchange("openai", call)] + [ASK, legacy, ASK, DONE]
    name, data = _document("openai", messages)
    assert tuple(f["rule"] for f in both(name, data)) == ("TD301",)
    reader = readers.by_name("openai-chat")
    assert reader is not None
    (built,) = reader.read_screened(sniff(name, data), Screen(_catalog()))
    assert built.messages[0].origin.pointer == "/messages/8"


# openworker sessions after three exchanges (ids "call_0" each time when ``reused``, as
# Gemini writes them), with their rules and the line the conversation is built from.
OW_CUTS: list[tuple[bool, list[dict[str, object]], tuple[str, ...], int]] = [
    (False, [_ow("user", "Go", ts=9.5), _ow_call("d"), REPLY, ERROR], ("TD301", "TD101"), 12),
    (
        False,
        [_ow("user", "Go", ts=9.5), _ow_call("d"), _ow_result("d"), _ow_result("a"), REPLY],
        ("TD303",),
        0,
    ),
    (
        True,
        [_ow("user", "Go", ts=9.5), _ow_call("call_0"), _ow_result("call_0"), REPLY, ERROR],
        ("TD101",),
        0,
    ),
]


@pytest.mark.parametrize(("reused", "damage", "rules", "start"), OW_CUTS)
def test_a_doubted_openworker_session_is_built_from_the_cut(
    reused: bool, damage: list[dict[str, object]], rules: tuple[str, ...], start: int
) -> None:
    session = []
    for number, call in enumerate("abc"):
        call_id = "call_0" if reused else call
        session += [_ow("user", "Go", ts=number + 0.5), _ow_call(call_id), _ow_result(call_id), REPLY]
    data = "".join(json.dumps(line) + "\n" for line in session + damage).encode()
    name = "conversations/s1.jsonl"
    assert tuple(f["rule"] for f in both(name, data)) == rules
    reader = readers.by_name("openworker")
    assert reader is not None
    (built,) = reader.read_screened(sniff(name, data), Screen(_catalog()))
    assert built.messages[0].origin.record == start


# NeuroLink rows after three exchanges (id-less calls when not ``ids``), with their rules
# and the row the conversation is built from.
NL_CUTS: list[tuple[bool, str, tuple[str, ...], int]] = [
    (True, "unanswered", ("TD301",), 12),
    (False, "unanswered", ("TD301",), 12),
    (True, "answered-again", ("TD303",), 0),
    (False, "displaced", ("TD304",), 12),
]


def _nl_exchange(n: int, ids: bool) -> list[dict[str, object]]:
    call_id = f"c{n}" if ids else None
    return [
        _row("user", "Go", n),
        _nl_call(n + 1, "w", call_id),
        _nl_result(n + 2, "w", call_id),
        _row("assistant", "Done", n + 3),
    ]


@pytest.mark.parametrize(("ids", "case", "rules", "start"), NL_CUTS)
def test_a_doubted_neurolink_conversation_is_built_from_the_cut(
    ids: bool, case: str, rules: tuple[str, ...], start: int
) -> None:
    rows = [r for n in (0, 4, 8) for r in _nl_exchange(n, ids)]
    prompt, call, result, answer = _nl_exchange(12, ids)
    if case == "unanswered":
        rows += [prompt, call, _row("user", "Again", 16), _row("assistant", "Ok", 17)]
    elif case == "answered-again":
        rows += [prompt, call, result, _nl_result(16, "w", "c0"), answer]
    else:
        rows += [prompt, call, _row("user", "Wait", 16), result, answer]
    data = conversation(rows).encode()
    assert tuple(f["rule"] for f in both("conversation.json", data)) == rules
    reader = readers.by_name("neurolink")
    assert reader is not None
    (built,) = reader.read_screened(sniff("conversation.json", data), Screen(_catalog()))
    assert built.messages[0].origin.pointer == f"/messages/{start}"


def test_roo_code_bookkeeping_and_reasoning_are_screened() -> None:
    """A clean Roo Code history (``ts``, condensing marks, reasoning items and blocks) is
    proved clean without being built; with an unsigned Claude thinking block added, it is
    built and TD402 found, as the full read finds it."""
    path = FIXTURES / "anthropic-messages" / "roo-condensed-history.json"
    data = path.read_bytes()
    source = sniff(path.name, data)
    reader = readers.by_name("anthropic-messages")
    assert reader is not None
    assert reader.read_screened(source, Screen(_catalog())) == []
    value = json.loads(data)
    last = max(i for i, m in enumerate(value) if m.get("role") == "assistant")
    value[last]["content"] = [{"type": "thinking", "thinking": "hm"}, *value[last]["content"]]
    damaged = json.dumps(value).encode()
    assert [f["rule"] for f in both(path.name, damaged)] == ["TD402"]
    assert reader.read_screened(sniff(path.name, damaged), Screen(_catalog())) != []


def test_cline_text_answers_are_screened_as_results() -> None:
    """Cline's text answers to the calls just made (``[tool for 'x'] Result:``) are the
    results ``_pair_text_results`` makes of them: a clean text-protocol history is proved
    clean without being built; with an answer left out, it is built and the call found
    unanswered, as the full read finds it."""
    path = FIXTURES / "anthropic-messages" / "cline-text-protocol-results.json"
    data = path.read_bytes()
    reader = readers.by_name("anthropic-messages")
    assert reader is not None
    assert reader.read_screened(sniff(path.name, data), Screen(_catalog())) == []
    value = json.loads(data)
    answer = next(i for i, block in enumerate(value[2]["content"]) if "] Result:" in block.get("text", ""))
    del value[2]["content"][answer]
    damaged = json.dumps(value).encode()
    assert [f["rule"] for f in both(path.name, damaged)] == ["TD301"]
    assert reader.read_screened(sniff(path.name, damaged), Screen(_catalog())) != []


# Replies of every kind the screen tells apart: clean, blank, ending in whitespace, a whole
# marker, a mention, a distinctive marker inside, a partial suffix, a harness-only pattern.
SAID = (
    "ok",
    "",
    " ",
    "Done.\n",
    "(request timeout)",
    " (no content) ",
    "It said (request timeout), then recovered.",
    "Sure. [generation was interrupted] and more",
    "Let me look [Response interrupted by user]",
    "Let me look [Response interrupted by user]  ",
    "any text a harness_only pattern would match",
)


def test_doubted_replies_answer_as_clean_does() -> None:
    """``doubted_replies`` of many conversations of prompts and replies (every shape of up
    to three turns), asked at once, doubts exactly those ``clean`` does not prove clean."""
    import itertools

    screen = Screen(_catalog())
    turns_of = [("prompt", None), *(("reply", text) for text in SAID)]
    shapes = [list(shape) for size in range(4) for shape in itertools.product(turns_of, repeat=size)]
    texts: list[str] = []
    owners: list[int] = []
    finals: set[int] = set()
    for number, shape in enumerate(shapes):
        for kind, text in shape:
            if kind == "reply":
                assert text is not None
                texts.append(text)
                owners.append(number)
        if shape and shape[-1][0] == "reply":
            finals.add(len(texts) - 1)
    doubted = {owners[i] for i in screen.doubted_replies(texts, finals)}
    for number, shape in enumerate(shapes):
        turns = [
            (ASSISTANT, text, ()) if kind == "reply" else (OTHER, None, (i,))
            for i, (kind, text) in enumerate(shape)
        ]
        assert screen.clean(turns, exact_end=True) is (number not in doubted), shape
    assert 0 < len(doubted) < len(shapes)


def test_a_partial_suffix_answered_by_a_prompt_is_proven_clean() -> None:
    """TD101 asks for a partial suffix only where it ends the history: a reply that ends
    with one and is answered by the user's next prompt (Cline keeps ``[Response interrupted
    by API Error]`` in its history) is proven clean where the turns end as the history does
    (``exact_end``), not built; the same reply at the end is doubted, and found."""
    loaded = _catalog()
    reply = "Let me look [Response interrupted by user]"
    assert loaded.partial_suffix(reply) is not None
    screen = Screen(loaded)
    answered = [(OTHER, None, (0,)), (ASSISTANT, reply, ()), (OTHER, None, (2,))]
    assert screen.clean(answered, exact_end=True)
    assert not screen.clean(answered[:2], exact_end=True)
    # Without ``exact_end`` the last turn may be a prompt appended for the screen
    # (``gemini_content.closing``): every reply is asked, as TD101 asks the final one.
    assert not screen.clean(answered)
    assert not screen.clean([*answered[:2], (OTHER, None, ())])
    assert screen.doubted_replies([reply, reply], {1}) == [1]

    def history(*texts: str) -> bytes:
        items = [
            {"role": ("user", "assistant")[i % 2], "content": [{"type": "text", "text": text}], "ts": i}
            for i, text in enumerate(texts)
        ]
        return json.dumps(items).encode()

    reader = readers.by_name("anthropic-messages")
    assert reader is not None
    clean = history("look at it", reply, "go on")
    assert reader.read_screened(sniff("api_conversation_history.json", clean), Screen(loaded)) == []
    assert both("api_conversation_history.json", clean) == []
    ended = history("look at it", reply)
    assert [f["rule"] for f in both("api_conversation_history.json", ended)] == ["TD101"]


def test_an_opencode_export_ending_in_whitespace_is_proven_clean() -> None:
    """OpenCode sends the next prompt after the final text (no prefill: no TD102), so an
    export whose final reply ends with whitespace is proven clean, not built; one whose
    final reply ends with a partial suffix is still doubted."""
    from transcript_doctor.readers.opencode import screening

    def export(reply: str) -> list[dict[str, object]]:
        user = {"info": {"role": "user"}, "parts": [{"type": "text", "text": "go"}]}
        parts = [{"type": "step-start"}, {"type": "text", "text": reply}]
        return [user, {"info": {"role": "assistant"}, "parts": parts}]

    screen = Screen(_catalog())
    assert screen.clean(screening.turns(export("a long reply that stops ")))
    assert not screen.clean(screening.turns(export("Let me look [Response interrupted by user]")))
