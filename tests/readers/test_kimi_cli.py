"""Reader kimi-cli: detection and look-alikes, what Kimi's loader keeps, repairs in Kimi's
own record shape (fixtures/kimi-cli/, recorded from Kimi CLI 1.51.0; damaged/README.md says
how each damaged file was made).  Every fixture's exact findings and fix diffs are pinned
in tests/expectations/kimi-cli.json; these tests hold what that data cannot say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import FIXTURES, _catalog, detected, detected_bytes, findings, fix, lint_bytes

from transcript_doctor import engine, fixer, readers
from transcript_doctor.checks import Selection
from transcript_doctor.model import PartKind, Role
from transcript_doctor.readers.kimi_cli import READER
from transcript_doctor.source import sniff

DIR = FIXTURES / "kimi-cli"
DAMAGED = DIR / "damaged"
RECORDED = sorted(DIR.glob("*/session/context*.jsonl"))  # context_1.jsonl: rotated by /clear, /compact
WIRES = sorted(DIR.glob("*/session/wire.jsonl"))
SYNTHETIC = (
    b'{"role":"tool","content":"<system>ERROR: Tool result missing from the transcript (the turn was '
    b'interrupted); inserted by transcript-doctor.</system>","tool_call_id":"ReadFile:1"}'
)


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def default_fix(path: Path) -> fixer.Outcome:
    options = engine.Options(Selection.build(["ALL"]), _catalog())
    outcome = fixer.fix_bytes(path.name, path.read_bytes(), options)
    assert outcome.error is None, outcome.error
    return outcome


# -- detection --------------------------------------------------------------------------


def test_every_recorded_session_is_read() -> None:
    assert len(RECORDED) == 22
    assert {detected(p) for p in RECORDED} == {"kimi-cli"}
    assert {detected(p) for p in DAMAGED.glob("*.jsonl")} == {"kimi-cli"}


def test_kimi_replays_the_synthetic_result_fix_wrote() -> None:
    """fixed-resume: the recipe damaged a session, ran fix --in-place and resumed it with
    Kimi CLI 1.51.0, which sent the inserted line as the call's tool message."""
    folder = DIR / "fixed-resume"
    damaged = folder / "context.damaged.jsonl"
    assert default_fix(damaged).after == (folder / "context.fixed.jsonl").read_bytes()
    (request,) = [json.loads(line) for line in lines(folder / "requests-2.jsonl") if line]
    sent = [(m["role"], m.get("tool_call_id")) for m in request["body"]["messages"]]
    assert sent[3:7] == [
        ("tool", "Shell:0"),
        ("assistant", None),
        ("tool", "ReadFile:1"),
        ("assistant", None),
    ]
    assert request["body"]["messages"][5]["content"] == json.loads(SYNTHETIC)["content"]


def test_a_compacted_history_is_the_summary_and_the_kept_tail() -> None:
    """compact: /compact rotated the history to context_1.jsonl and wrote a summary user
    message and the last exchange (call, result, answer) with no control lines between."""
    path = DIR / "compact" / "session" / "context.jsonl"
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    assert [(m.role, m.origin.line) for m in conversation.messages] == [
        (Role.SYSTEM, 1),
        (Role.USER, 3),
        (Role.ASSISTANT, 4),
        (Role.USER, 5),
        (Role.ASSISTANT, 6),
        (Role.USER, 9),
        (Role.ASSISTANT, 12),
    ]
    assert conversation.messages[3].parts[0].call_id == "ReadFile:1"


def test_the_undamaged_copy_of_the_orphan_session_is_clean() -> None:
    assert findings(DIR / "orphan-resume" / "context.before-damage.jsonl") == []
    assert findings(DIR / "orphan-resume" / "context.damaged.jsonl") == [("TD301", 11, "/tool_calls/0")]


@pytest.mark.parametrize("path", WIRES, ids=lambda p: p.parent.parent.name)
def test_wire_logs_are_companions_not_transcripts(path: Path) -> None:
    claim = readers.detect(sniff(str(path), path.read_bytes()))
    assert claim is not None
    assert claim[1].reader == "kimi-cli" and not claim[1].transcript
    report = lint_bytes(str(path), path.read_bytes())
    assert report.findings == [] and report.skipped is not None and "wire.jsonl" in report.skipped


def test_the_other_files_of_a_session_folder_are_not_transcripts() -> None:
    others = [*DIR.glob("*/requests-*.jsonl"), *DIR.glob("*/kimi.json"), *DIR.glob("*/session/state.json")]
    assert len(others) > 30
    for path in others:
        report = lint_bytes(str(path), path.read_bytes())
        assert report.findings == [] and report.reader is None, path


def test_openai_chat_does_not_claim_a_kimi_history() -> None:
    chat = readers.by_name("openai-chat")
    assert chat is not None
    for path in RECORDED:
        assert readers.claim(chat, sniff(str(path), path.read_bytes())) is None


def test_plain_openai_chat_jsonl_is_not_claimed() -> None:
    """The same messages without Kimi's control records are a Chat Completions list."""
    for path in RECORDED:
        kept = [line for line in lines(path) if line and not json.loads(line)["role"].startswith("_")]
        data = b"\n".join(kept) + b"\n"
        if kept:
            assert readers.claim(READER, sniff("chat.jsonl", data)) is None
            assert detected_bytes("chat.jsonl", data) == "openai-chat"


def test_no_other_layout_is_claimed() -> None:
    for path in sorted(FIXTURES.rglob("*.json*")):
        if "kimi-cli" in path.parts:
            continue
        try:
            source = sniff(str(path), path.read_bytes())
        except ValueError:
            continue
        assert readers.claim(READER, source) is None, path


def test_kimi_code_wire_records_are_not_taken_for_kimi_cli_wire_logs() -> None:
    """Kimi Code (the TypeScript successor) replays its wire.jsonl; its records are typed at
    the top level (new-vendors.md §3; the record shapes of MoonshotAI/kimi-code
    apps/vis/server/test/fixtures/sessions/sample-main/agents/main/wire.jsonl).  No Kimi
    Code file was recorded, so it is not read: it is skipped with a reason that says so,
    never taken for Kimi CLI's wire log (not replayed) nor silently passed over."""
    data = (
        b'{"type":"metadata","protocol_version":"1.1","created_at":1779256791085}\n'
        b'{"type":"turn.prompt","input":[{"type":"text","text":"hi"}],"origin":{"kind":"user"},"time":1779256800000}\n'
        b'{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"hi"}],'
        b'"toolCalls":[]},"time":1779256800001}\n'
    )
    claim = readers.claim(READER, sniff("wire.jsonl", data))
    assert claim is not None and not claim.transcript and claim.score < 100
    report = lint_bytes("wire.jsonl", data)
    assert report.findings == [] and report.skipped == (
        "Kimi Code wire.jsonl (Kimi Code's own session history: no reader for its layout yet, "
        "nothing in it was checked)"
    )


def test_control_records_are_no_turns() -> None:
    path = DIR / "tools" / "session" / "context.jsonl"
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    roles = [(m.role, m.origin.line) for m in conversation.messages]
    assert roles == [
        (Role.SYSTEM, 1),
        (Role.USER, 3),
        (Role.ASSISTANT, 6),
        (Role.USER, 8),
        (Role.ASSISTANT, 11),
        (Role.USER, 13),
        (Role.ASSISTANT, 16),
        (Role.USER, 19),
        (Role.ASSISTANT, 22),
        (Role.USER, 24),
        (Role.ASSISTANT, 27),
    ]
    calls = [(p.call_id, p.name) for m in conversation.messages for p in m.tool_calls]
    assert calls == [("Shell:0", "Shell"), ("ReadFile:1", "ReadFile"), ("Shell:2", "Shell")]


def test_parallel_results_form_one_slot_across_control_records() -> None:
    path = DIR / "parallel" / "session" / "context.jsonl"
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    results = [m for m in conversation.messages if m.tool_results]
    assert [[p.call_id for p in m.parts] for m in results] == [["Shell:0", "ReadFile:1", "Shell:2"]]


def test_think_parts_are_thinking_and_text_is_visible() -> None:
    path = DIR / "thinking" / "session" / "context.jsonl"
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    last = conversation.messages[-1]
    assert [p.kind for p in last.parts] == [PartKind.THINKING, PartKind.TEXT]
    assert last.visible_text == "There is one file: notes.txt."


# -- damage at its line -------------------------------------------------------------------


def test_what_kimis_loader_skips_is_said_in_the_finding() -> None:
    report = lint_bytes("c.jsonl", (DAMAGED / "raw-cr.jsonl").read_bytes())
    assert report.findings[1].finding.message == (
        "a raw carriage return (CR) inside the record: Kimi CLI reads the file with universal "
        "newlines, ends the line there and skips both halves"
    )
    report = lint_bytes("c.jsonl", (DAMAGED / "unloadable-message.jsonl").read_bytes())
    assert report.findings[0].finding.message == (
        "Kimi CLI cannot load this message (a tool call's arguments are not a string): resume leaves it out"
    )


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ({"role": "assistant", "tool_calls": []}, "it has no content"),
        ({"role": "user", "content": 5}, "its content is neither a string nor a list of parts"),
        ({"role": "user", "content": [{"text": "x"}]}, "a content part has no type"),
        ({"role": "user", "content": [{"type": "text"}]}, "a text part has no text"),
        ({"role": "tool", "content": "x", "tool_call_id": 5}, "its tool_call_id is not a string"),
        ({"role": "assistant", "content": [], "tool_calls": {}}, "its tool_calls is not a list"),
        ({"role": "assistant", "content": [], "tool_calls": [{"id": 1}]}, "a tool call has no string id"),
        (
            {"role": "assistant", "content": [], "tool_calls": [{"id": "a", "function": {"name": "x"}}]},
            "a tool call's function has no arguments",
        ),
    ],
)
def test_messages_kosong_rejects_are_left_out_and_reported(record: dict[str, object], why: str) -> None:
    """Each rejection was checked against kosong 1.51.0's Message.model_validate."""
    head = (DIR / "clean" / "session" / "context.jsonl").read_bytes()
    data = head + json.dumps(record).encode() + b"\n"
    report = lint_bytes("c.jsonl", data)
    assert [(f.finding.rule.code, f.origin.line) for f in report.findings] == [("TD001", 8)]
    assert (
        report.findings[0].finding.message
        == f"Kimi CLI cannot load this message ({why}): resume leaves it out"
    )


@pytest.mark.parametrize(
    "record",
    [
        {"role": "assistant", "content": None, "tool_calls": None},  # None content is []: TD103
        {"role": "user", "content": [{"type": "video_url", "video_url": {"url": "x"}}], "extra": 1},
        {"role": "user", "content": [{"type": "newpart", "x": 1}]},  # a newer release's part
        {"role": "_future", "x": 1},  # a newer release's control record
        {"role": "developer", "content": "x"},  # no kosong role: Kimi skips it, not damage
    ],
)
def test_what_kimi_reads_or_a_newer_release_may_write_is_not_td001(record: dict[str, object]) -> None:
    head = (DIR / "clean" / "session" / "context.jsonl").read_bytes()
    data = head + json.dumps(record).encode() + b"\n"
    codes = [f.finding.rule.code for f in lint_bytes("c.jsonl", data).findings]
    assert "TD001" not in codes
    assert codes == (["TD103"] if record.get("content", "x") is None else [])


def test_a_result_marked_as_an_error_by_kimi_is_an_error_result() -> None:
    (conversation,) = READER.read(sniff("c.jsonl", (DAMAGED / "glued.jsonl").read_bytes()))
    assert not any(p.is_error for m in conversation.messages for p in m.tool_results)
    outcome = default_fix(DAMAGED / "glued.jsonl")
    (conversation,) = READER.read(sniff("c.jsonl", outcome.after))
    assert [p.call_id for m in conversation.messages for p in m.tool_results if p.is_error] == ["Shell:2"]


# -- repairs ------------------------------------------------------------------------------


def test_an_orphan_call_gets_a_tool_message_in_kimis_shape_after_its_step() -> None:
    path = DIR / "orphan-resume" / "session" / "context.jsonl"
    outcome = default_fix(path)
    before = lines(path)
    assert lines_after(outcome) == [*before[:12], SYNTHETIC, *before[12:]]  # after line 12, its _usage
    assert fix(path, unsafe=False).after == outcome.after  # re-lints clean, a second fix is a no-op
    # What Kimi CLI 1.51.0 would have written: tool_result_to_message of a ToolError with a
    # message and no output is one <system>ERROR: …</system> text part, dumped as a string.
    assert json.loads(SYNTHETIC) == {
        "role": "tool",
        "content": "<system>ERROR: Tool result missing from the transcript (the turn was interrupted); "
        "inserted by transcript-doctor.</system>",
        "tool_call_id": "ReadFile:1",
    }


def lines_after(outcome: fixer.Outcome) -> list[bytes]:
    return outcome.after.split(b"\n")


def test_a_result_lost_to_a_raw_cr_is_answered_before_the_torn_line() -> None:
    path = DAMAGED / "raw-cr.jsonl"
    before = lines(path)
    outcome = fix(path, unsafe=False)
    synthetic = SYNTHETIC.replace(b"ReadFile:1", b"Shell:0")
    assert lines_after(outcome) == [*before[:7], synthetic, *before[7:]]  # the torn line stays (TD001)
    assert [(f.finding.rule.code, f.origin.line) for f, _ in outcome.remaining] == [("TD001", 9)]


def test_a_glued_line_is_split_and_its_lost_result_answered() -> None:
    path = DAMAGED / "glued.jsonl"
    before = lines(path)
    outcome = fix(path, unsafe=False)
    synthetic = SYNTHETIC.replace(b"ReadFile:1", b"Shell:2")
    checkpoint = b'{"role": "_checkpoint", "id": 6}'
    assert before[23].endswith(checkpoint)
    assert lines_after(outcome) == [*before[:23], synthetic, checkpoint, *before[24:]]


def test_crlf_files_get_crlf_lines() -> None:
    path = DAMAGED / "crlf.jsonl"
    data = path.read_bytes()
    torn = data.replace(b'{"role":"tool","content":[{"type":"text","text":"<system>2 lines', b'{"x":[{"', 1)
    torn = b"\r\n".join(line for line in torn.split(b"\r\n") if not line.startswith(b'{"x":'))
    options = engine.Options(Selection.build(["ALL"]), _catalog())
    outcome = fixer.fix_bytes("c.jsonl", torn, options)
    assert outcome.changed and b"\r\n" + SYNTHETIC + b"\r\n" in outcome.after
    assert b"\n" not in outcome.after.replace(b"\r\n", b"")


def test_a_call_id_with_a_lone_surrogate_is_no_crash_of_fix() -> None:
    """Found by the fuzzer: the synthetic line failed to encode (a crash of fix).  Written
    with the escape, the answer would hold the same unreadable id: fix rolls it back."""
    head = (DIR / "clean" / "session" / "context.jsonl").read_bytes()
    call = (
        b'{"role":"assistant","content":[],"tool_calls":[{"type":"function","id":"a\\ud800",'
        b'"function":{"name":"Shell","arguments":"{}"}}]}'
    )
    data = head + call + b'\n{"role":"user","content":"go on"}\n'
    report = lint_bytes("c.jsonl", data)
    assert [(f.finding.rule.code, f.origin.line) for f in report.findings] == [("TD001", 8), ("TD301", 8)]
    outcome = fixer.fix_bytes("c.jsonl", data, engine.Options(Selection.build(["ALL"]), _catalog()))
    assert outcome.error is None and outcome.after == data
    assert outcome.rolled_back == [
        "TD301: the repair would add errors that fix cannot repair with these options (TD001)"
    ]


def test_a_record_with_an_unhashable_role_hides_no_layout() -> None:
    path = DIR / "tools" / "session" / "context.jsonl"
    data = path.read_bytes().replace(b'{"role": "_checkpoint", "id": 0}', b'{"role": {"v": 1}, "id": 0}')
    assert detected_bytes("c.jsonl", data) == "kimi-cli"
    assert findings_of(data) == []


def findings_of(data: bytes) -> list[tuple[str, int]]:
    return [(f.finding.rule.code, f.origin.line) for f in lint_bytes("c.jsonl", data).findings]


def test_a_line_with_a_list_role_after_a_call_ends_its_step() -> None:
    """Found by the fuzzer: finding where the call's step ends hashed a list role (a crash of fix)."""
    path = DIR / "orphan-resume" / "session" / "context.jsonl"
    data = path.read_bytes().replace(
        b'{"role": "_usage", "token_count": 110}', b'{"role": ["_usage"], "token_count": 110}', 2
    )
    outcome = fixer.fix_bytes("c.jsonl", data, engine.Options(Selection.build(["ALL"]), _catalog()))
    assert outcome.error is None
    after = outcome.after.split(b"\n")
    assert after[11:13] == [SYNTHETIC, b'{"role": ["_usage"], "token_count": 110}']  # right after the call


# -- TD405: malformed tool-call arguments (kimi-cli#2165) ---------------------------------

BAD_ARGS = DIR / "bad-args" / "session" / "context.jsonl"
SHELL_ARGS = b'"{\\"command\\": \\"echo hi\\", \\"run_in_background\\": false, description\\": \\"greet\\"}"'


def test_malformed_arguments_kimi_wrote_are_reported_at_the_call() -> None:
    """bad-args: Kimi CLI 1.51.0 stored the Shell call's broken arguments verbatim (line 6)
    next to a SetTodoList call with empty arguments, which it ran: only the first is TD405."""
    assert SHELL_ARGS in lines(BAD_ARGS)[5]
    assert findings(BAD_ARGS) == [("TD405", 6, "/tool_calls/0")]
    (message,) = [
        m for m in READER.read(sniff(str(BAD_ARGS), BAD_ARGS.read_bytes()))[0].messages if m.tool_calls
    ]
    assert [(p.call_id, p.arguments) for p in message.tool_calls] == [
        ("Shell:0", json.loads(SHELL_ARGS)),
        ("SetTodoList:1", ""),
    ]


def test_kimi_replays_stored_arguments_verbatim() -> None:
    """The evidence the rule rests on: the broken text goes back on the next request of the
    run and after a resume, unchanged (a server that parses it answers 400, #2165)."""
    for name in ("requests-1.jsonl", "requests-2.jsonl"):
        sent = [json.loads(line) for line in lines(DIR / "bad-args" / name) if line][-1]
        (calls,) = [m["tool_calls"] for m in sent["body"]["messages"] if m.get("tool_calls")]
        assert [c["function"]["arguments"] for c in calls] == [json.loads(SHELL_ARGS), ""], name


def test_malformed_arguments_are_replaced_with_empty_object_only_when_unsafe() -> None:
    outcome = default_fix(BAD_ARGS)
    assert not outcome.changed
    after = fix(BAD_ARGS).after  # --unsafe-fixes; support.fix checks idempotence and undo
    expected = lines(BAD_ARGS)
    expected[5] = expected[5].replace(SHELL_ARGS, b'"{}"')
    assert after == b"\n".join(expected)


def test_kimi_resumes_the_repaired_arguments() -> None:
    """bad-args-fixed: the recipe ran fix --in-place --unsafe-fixes on the CLI's file and
    resumed it: Kimi sent "{}" for Shell:0 and kept "" for SetTodoList:1."""
    folder = DIR / "bad-args-fixed"
    assert fix(folder / "context.damaged.jsonl").after == (folder / "context.fixed.jsonl").read_bytes()
    assert (
        (folder / "session" / "context.jsonl")
        .read_bytes()
        .startswith((folder / "context.fixed.jsonl").read_bytes())
    )
    assert findings(folder / "session" / "context.jsonl") == []
    (request,) = [json.loads(line) for line in lines(folder / "requests-2.jsonl") if line]
    (calls,) = [m["tool_calls"] for m in request["body"]["messages"] if m.get("tool_calls")]
    assert [c["function"]["arguments"] for c in calls] == ["{}", ""]


def _with_arguments(arguments: object) -> bytes:
    """The tools session with the Shell call's arguments replaced (None: null, which kosong
    accepts; without the key kosong rejects the message, a TD001 of its own)."""
    records = [json.loads(line) for line in lines(DIR / "tools" / "session" / "context.jsonl") if line]
    (call,) = records[5]["tool_calls"]
    assert call["id"] == "Shell:0"
    call["function"]["arguments"] = arguments
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


@pytest.mark.parametrize(
    ("arguments", "flagged"),
    [
        ('{"command": "echo hi', True),  # cut short (#1171's shape)
        ('{"command": "echo hi",}', True),  # a trailing comma
        ("   ", True),  # blank is not empty: Kimi's json.loads fails on it
        ("", False),  # what Kimi writes for a call without arguments; read as {}
        (None, False),  # null: no text at all (kosong: arguments may be None)
        ('{"command": "echo\thi"}', False),  # a raw tab: json.loads(strict=False) reads it
        ('{"command": "\\ud800"}', False),  # a lone surrogate escape: json.loads reads it
        ("[1]", False),  # parses, no object: no report shows a server rejecting it
        ('{"command": "echo hi"}', False),
    ],
)
def test_what_is_malformed_is_what_kimi_cannot_parse(arguments: str | None, flagged: bool) -> None:
    report = lint_bytes("context.jsonl", _with_arguments(arguments))
    got = [(f.finding.rule.code, f.origin.line, f.origin.pointer) for f in report.findings]
    assert got == ([("TD405", 6, "/tool_calls/0")] if flagged else [])


def test_the_screen_does_not_hide_malformed_arguments() -> None:
    """Kimi's screen would call the tools session's turns clean; with broken arguments it
    doubts, so the screened and unscreened lint agree."""
    data = _with_arguments('{"command": "echo hi')
    options = engine.Options(Selection.build(["TD405"]), _catalog())
    screened = engine.lint_bytes("context.jsonl", data, options)
    unscreened = engine.lint_bytes(
        "context.jsonl", data, engine.Options(Selection.build(["TD405"]), _catalog(), screen=False)
    )
    assert [f.origin for f in screened.findings] == [f.origin for f in unscreened.findings] != []


def test_other_chat_layouts_are_not_judged_on_their_arguments() -> None:
    """openai-chat stores the same field, but nothing shows its consumers replaying broken
    text to a server that parses it: its reader gives no arguments, TD405 stays silent."""
    chat = [
        {"role": "user", "content": "Run echo"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": '{"cmd": "echo'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "error"},
        {"role": "assistant", "content": "Done."},
    ]
    data = json.dumps(chat).encode()
    assert detected_bytes("chat.json", data) == "openai-chat"
    assert [f.finding.rule.code for f in lint_bytes("chat.json", data).findings] == []


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ({"role": "user"}, "it has no content"),
        ({"role": "user", "content": "hi"}, None),
        ({"role": "user", "content": None}, None),
        ({"role": "user", "content": 3}, "its content is neither a string nor a list of parts"),
        ({"role": "user", "content": [{"type": "text", "text": "a"}]}, None),
        ({"role": "user", "content": [{"type": "text"}]}, "a text part has no text"),
        ({"role": "user", "content": ["a"]}, "a content part has no type"),
        ({"role": "assistant", "content": "", "tool_calls": {}}, "its tool_calls is not a list"),
        (
            {"role": "assistant", "content": 3, "tool_calls": {}},
            "its content is neither a string nor a list of parts",
        ),
        ({"role": "assistant", "content": "", "tool_calls": [{"id": 1}]}, "a tool call has no string id"),
        ({"role": "tool", "content": "", "tool_call_id": 5, "name": 5}, "its tool_call_id is not a string"),
        ({"role": "tool", "content": "", "tool_call_id": "c", "name": 5}, "its name is not a string"),
        ({"role": "tool", "content": "", "tool_call_id": None, "name": "n"}, None),
    ],
)
def test_why_kosong_cannot_load_a_message(record: dict[str, object], why: str | None) -> None:
    """``records.unloadable`` names the first field kosong rejects, in the order it checks."""
    from transcript_doctor.readers.kimi_cli import records

    assert records.unloadable(record) == why
