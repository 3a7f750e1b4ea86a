"""Reader mistral-vibe: detection, look-alikes, each damage shape, the repairs it makes
and the ones it refuses (meta.json counts the lines), negative controls on every file
Mistral Vibe 2.18.4 wrote (fixtures/mistral-vibe/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import FIXTURES, detected, detected_bytes, findings, fix, text_findings

from transcript_doctor import fixer
from transcript_doctor.actions import InsertResult, RemoveDuplicate, RemoveMessage, RemoveResult
from transcript_doctor.model import PartKind, Role
from transcript_doctor.readers.mistral_vibe import READER
from transcript_doctor.readers.mistral_vibe.repair import REPAIR
from transcript_doctor.source import Container, Source, sniff

DIR = FIXTURES / "mistral-vibe"
# Every messages.jsonl the CLI wrote (no hand-made damage).
RECORDED = sorted(p for p in DIR.glob("*/sessions/*/messages.jsonl"))
CLEAN = [p for p in RECORDED if "orphan-resume" not in str(p)]
DAMAGED = DIR / "damaged"
FOLDER = "session_20261202_003735_343a3d07"
TOOLS = DIR / "tools" / "sessions" / FOLDER / "messages.jsonl"


def damaged(shape: str) -> Path:
    return DAMAGED / shape / FOLDER / "messages.jsonl"


def vibe_lines(*messages: dict[str, object]) -> str:
    """Lines as SessionLogger.persist_messages writes them."""
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)


def user(text: str, mid: str) -> dict[str, object]:
    return {"role": "user", "content": text, "injected": False, "message_id": mid}


def assistant(text: str | None, mid: str, *calls: tuple[str, str]) -> dict[str, object]:
    message: dict[str, object] = {"role": "assistant"}
    if text is not None:
        message["content"] = text
    message["injected"] = False
    if calls:
        message["tool_calls"] = [
            {"id": i, "function": {"name": n, "arguments": "{}"}, "type": "function"} for i, n in calls
        ]
    message["message_id"] = mid
    return message


def tool(call_id: str, name: str, text: str = "ok") -> dict[str, object]:
    return {"role": "tool", "content": text, "injected": False, "name": name, "tool_call_id": call_id}


SESSION_PATH = f"/home/u/.vibe/logs/session/{FOLDER}/messages.jsonl"


# -- detection -----------------------------------------------------------------------


def test_every_recorded_file_is_found() -> None:
    assert len(RECORDED) == 24  # 18 scenarios, resumes in their own folders


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: str(p.relative_to(DIR)))
def test_detects_every_recorded_file(path: Path) -> None:
    assert detected(path) == "mistral-vibe"


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: str(p.relative_to(DIR)))
def test_wins_over_openai_chat_without_the_folder(path: Path) -> None:
    """`injected` on every line is enough: a copy outside its session folder stays Vibe's."""
    assert detected_bytes("copy.jsonl", path.read_bytes()) == "mistral-vibe"


def test_meta_json_is_a_skipped_companion() -> None:
    meta = TOOLS.parent / "meta.json"
    claim = READER.detect(sniff(str(meta), meta.read_bytes()))
    assert claim is not None and claim.transcript is False


@pytest.mark.parametrize(
    "text",
    [
        # Plain Chat Completions JSONL: openai-chat's.
        '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n',
        '{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}\n'
        '{"role": "tool", "tool_call_id": "c1", "content": "x"}\n',
        # openworker (float ts, notices).
        '{"role": "user", "content": "hi", "ts": 1.5}\n{"role": "notice", "kind": "error", "content": "x", "ts": 2.5}\n',
        # Vibe's request log (requests-N.jsonl): not a session.
        '{"phase": 1, "body": {"messages": [{"role": "user", "content": "hi"}]}}\n',
        # A role Vibe's LLMMessage rejects.
        '{"role": "developer", "content": "x", "injected": false}\n',
    ],
)
def test_does_not_claim_look_alikes(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(text)
    assert detected(path) != "mistral-vibe"


def test_plain_chat_jsonl_in_a_session_folder_needs_a_vibe_key(tmp_path: Path) -> None:
    folder = tmp_path / "session_20260101_000000_abcdef12"
    folder.mkdir()
    path = folder / "messages.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n')
    assert detected(path) == "openai-chat"
    path.write_text('{"role": "user", "content": "hi", "message_id": "m1"}\n')
    assert detected(path) == "mistral-vibe"


def test_request_logs_and_meta_are_not_transcripts() -> None:
    for path in DIR.glob("*/requests-*.jsonl"):
        assert detected(path) != "mistral-vibe"


# -- reading --------------------------------------------------------------------------


def test_reads_calls_results_and_reasoning_with_their_lines() -> None:
    path = DIR / "thinking" / "sessions" / "session_20261202_004622_374e5ac9" / "messages.jsonl"
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    roles = [m.role for m in conversation.messages]
    assert roles == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    first = conversation.messages[1]
    assert [p.kind for p in first.parts] == [PartKind.THINKING, PartKind.TEXT, PartKind.TOOL_CALL]
    assert first.parts[0].origin.pointer == "/reasoning_content"
    assert first.parts[2].origin.line == 2 and first.parts[2].origin.pointer == "/tool_calls/0"
    result = conversation.messages[2].parts[0]
    assert (result.kind, result.call_id, result.name, result.origin.line) == (
        PartKind.TOOL_RESULT,
        first.parts[2].call_id,
        "bash",
        3,
    )


def test_results_in_completion_order_pair_by_id() -> None:
    path = DIR / "parallel" / "sessions" / "session_20261202_003803_8d34f270" / "messages.jsonl"
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    results = conversation.messages[2]
    assert [p.call_id for p in results.parts] == ["P2bbbbbbb", "P1aaaaaaa", "P3ccccccc"]
    assert findings(path) == []


def test_system_lines_are_not_replayed() -> None:
    text = vibe_lines({"role": "system", "content": "x"}, user("hi", "u1"), assistant("hello", "a1"))
    (conversation,) = READER.read(sniff(SESSION_PATH, text.encode()))
    assert [m.role for m in conversation.messages] == [Role.USER, Role.ASSISTANT]


# -- negative controls ---------------------------------------------------------------


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: str(p.relative_to(DIR)))
def test_every_file_vibe_wrote_without_damage_is_clean(path: Path) -> None:
    """Tool-call-only assistants without `content` or with `""`, two user lines after an
    upstream failure or an Escape (#255), a tool result followed by a prompt, persisted
    `<user_cancellation>` results: all legitimate."""
    assert findings(path) == []


def test_tool_call_only_assistant_is_not_empty() -> None:
    text = vibe_lines(
        user("go", "u1"), assistant(None, "a1", ("Abcdefgh1", "bash")), tool("Abcdefgh1", "bash")
    )
    assert text_findings(SESSION_PATH, text + vibe_lines(assistant("done", "a2"))) == []


def test_prompt_typed_twice_has_two_ids_and_is_not_td403() -> None:
    text = vibe_lines(user("again", "u1"), user("again", "u2"), assistant("ok", "a1"))
    assert text_findings(SESSION_PATH, text) == []


def test_final_text_ending_in_whitespace_is_not_prefill() -> None:
    """Vibe appends the next prompt before it calls the model: TD102 does not apply."""
    assert text_findings(SESSION_PATH, vibe_lines(user("hi", "u1"), assistant("hello \n", "a1"))) == []


# -- damage shapes at their lines ------------------------------------------------------


def test_orphan_resume_leaves_the_call_unanswered_in_the_same_folder() -> None:
    """Vibe's interactive resume inserted the placeholder in memory only (fixtures README)."""
    path = DIR / "orphan-resume" / "sessions" / "session_20261202_004636_4387d5b5" / "messages.jsonl"
    assert findings(path) == [("TD301", 4, "/tool_calls/0")]
    resumed = DIR / "orphan-resume" / "sessions" / "session_20261202_004648_69a48131" / "messages.jsonl"
    assert findings(resumed) == []  # the programmatic resume persisted it


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ("displaced-result", [("TD304", 7, None)]),
        ("orphan-result", [("TD302", 4, None)]),
        ("duplicate-result", [("TD303", 4, None)]),
        ("empty-turn", [("TD103", 6, None)]),
        ("duplicated-user", [("TD403", 8, None)]),
        ("torn-final-line", [("TD001", 10, None)]),
        ("glued-line", [("TD001", 9, None)]),
        ("pending-call", [("TD306", 8, "/tool_calls/0")]),
    ],
)
def test_damage_shapes(shape: str, expected: list[tuple[str, int, str | None]]) -> None:
    assert findings(damaged(shape)) == expected


def test_every_damaged_fixture_is_tested() -> None:
    shapes = sorted(p.name for p in DAMAGED.iterdir() if p.is_dir())
    assert shapes == sorted(
        [
            "displaced-result",
            "orphan-result",
            "duplicate-result",
            "empty-turn",
            "duplicated-user",
            "torn-final-line",
            "glued-line",
            "pending-call",
        ]
    )


# -- repairs ---------------------------------------------------------------------------


def test_displaced_result_moves_back_to_the_bytes_vibe_wrote() -> None:
    """TD304 (#1114): the only line moved is the result; it lands right after its call's
    turn, and the file becomes byte for byte the one Vibe wrote."""
    outcome = fix(damaged("displaced-result"))
    assert [a.rule for a in outcome.applied] == ["TD304"]
    assert outcome.after == TOOLS.read_bytes()


def test_displaced_result_is_not_moved_by_default() -> None:
    outcome = fix(damaged("displaced-result"), unsafe=False)
    assert outcome.applied == [] and outcome.after == outcome.before


def test_torn_final_line_is_dropped_by_default() -> None:
    path = damaged("torn-final-line")
    outcome = fix(path, unsafe=False)
    assert [a.rule for a in outcome.applied] == ["TD001"]
    whole = path.read_bytes().rsplit(b"\n", 1)[0] + b"\n"
    assert outcome.after == whole
    # The torn write was never counted: the drop leaves the count meta.json holds.
    meta = json.loads((path.parent / "meta.json").read_text())
    assert outcome.after.count(b"\n") == meta["total_messages"]


def test_glued_line_keeps_the_whole_record() -> None:
    outcome = fix(damaged("glued-line"), unsafe=False)
    assert [a.rule for a in outcome.applied] == ["TD001"]
    assert outcome.after == TOOLS.read_bytes()


def _in_memory(path: Path) -> fixer.Outcome:
    from support import _catalog

    from transcript_doctor import engine
    from transcript_doctor.checks import Selection

    options = engine.Options(Selection.build(("ALL",)), _catalog(), unsafe_fixes=True)
    return fixer.fix_bytes(str(path), path.read_bytes(), options)


@pytest.mark.parametrize(
    "path",
    [
        *(damaged(s) for s in ["orphan-result", "duplicate-result", "empty-turn", "duplicated-user"]),
        DIR / "orphan-resume" / "sessions" / "session_20261202_004636_4387d5b5" / "messages.jsonl",
    ],
    ids=lambda p: p.parent.parent.name,
)
def test_repairs_that_change_the_line_count_need_meta_json(path: Path) -> None:
    """meta.json total_messages must keep matching the lines: bytes in memory (no
    meta.json to write with them) are not repaired, and fix says why
    (tests/fixes/test_mistral_vibe_fix.py repairs both files)."""
    outcome = _in_memory(path)
    assert outcome.applied == [] and outcome.after == outcome.before
    ((_, why),) = outcome.remaining
    assert "which Mistral Vibe also counts in meta.json total_messages" in why
    assert why.endswith("not the meta.json beside it")


@pytest.mark.parametrize("action", [InsertResult, RemoveResult, RemoveMessage, RemoveDuplicate])
def test_line_count_repairs_are_supported_and_name_meta_json(action: type) -> None:
    made = action.__new__(action)
    assert REPAIR.supports(made)
    why = REPAIR.needs_companion(made)
    assert why is not None and "meta.json total_messages" in why


def test_lint_marks_line_count_repairs_fixable() -> None:
    """lint cannot tell whether fix will see meta.json: the repair is offered (safe or
    unsafe as the rule decides), and fix refuses it where meta.json is missing."""
    from support import lint_bytes

    path = damaged("duplicate-result")
    (located,) = lint_bytes(str(path), path.read_bytes()).findings
    assert located.fixable is True and located.blocked is None


# -- hostile input ---------------------------------------------------------------------


def _lint(data: bytes, screen: bool = True, claimed: bool = True) -> list[tuple[str, int]]:
    from support import _catalog

    from transcript_doctor import engine
    from transcript_doctor.checks import Selection
    from transcript_doctor.plain import replace

    options = engine.Options(Selection.build(("ALL",)), _catalog(), screen=screen)
    report = engine.lint_bytes(SESSION_PATH, data, replace(options))
    assert report.error is None, report.error
    assert (report.reader == "mistral-vibe") is claimed
    return [(f.finding.rule.code, f.origin.line) for f in report.findings]


def test_bytes_vibes_loader_cannot_read_are_td001_at_their_line() -> None:
    """json.loads (Vibe's parser) takes a lone surrogate and NaN; a BOM, NUL bytes and
    invalid UTF-8 are reported (decode_safe reads the latter in another codec)."""
    lines = TOOLS.read_bytes().splitlines(keepends=True)
    damaged = [b"\xef\xbb\xbf" + lines[0], *lines[1:4]]
    damaged.append(b'{"role": "user", "content": "caf\xe9", "injected": false}\n')
    damaged.append(b'{"role": "user", "content": "\\ud800", "injected": false}\n')
    damaged.append(b'{"role": "user", "content": "x", "injected": false, "n": NaN}\n')
    damaged.append(b"\0" * 40 + b"\n")
    damaged.extend(lines[4:])
    data = b"".join(damaged)
    found = [c for c in _lint(data) if c[0] == "TD001"]
    assert found == [("TD001", 1), ("TD001", 5), ("TD001", 8)]
    assert _lint(data, screen=False) == _lint(data)


@pytest.mark.parametrize(
    "line",
    [
        b'{"role": "assistant", "content": 7, "injected": false}',
        b'{"role": "assistant", "content": "x", "injected": false, "tool_calls": "c1"}',
        b'{"role": "assistant", "content": "x", "injected": false, "tool_calls": [7, {"id": null}]}',
        b'{"role": "assistant", "content": [{"text": 1}, "s"], "injected": false}',
        b'{"role": "tool", "content": null, "injected": false, "tool_call_id": ["x"]}',
        b'{"role": "user", "content": "x", "injected": false, "images": "a.png"}',
        b'{"role": "user", "content": "x", "injected": false, "message_id": 5}',
        b'{"role": "assistant", "content": "", "injected": false, "reasoning_content": ["x"]}',
        b'{"role": ["user"], "content": "x", "injected": false}',
        b"[1, 2]",
        b'"text"',
    ],
)
def test_wrong_types_are_findings_or_nothing_never_an_error(line: bytes) -> None:
    data = TOOLS.read_bytes() + line + b"\n"
    claimed = not line.startswith(b'{"role": [')  # LLMMessage rejects it: not Vibe's line
    assert _lint(data, claimed=claimed) == _lint(data, screen=False, claimed=claimed)
    from support import _catalog

    from transcript_doctor import engine, fixer
    from transcript_doctor.checks import Selection

    options = engine.Options(Selection.build(("ALL",)), _catalog(), unsafe_fixes=True)
    outcome = fixer.fix_bytes(SESSION_PATH, data, options)
    assert outcome.error is None
    assert fixer.undo(outcome.after, outcome.steps) == data


def test_crlf_and_no_final_newline_read_like_vibes_own_file() -> None:
    """decode_safe turns CRLF into LF before the split on "\\n"."""
    lf = TOOLS.read_bytes()
    crlf = lf.replace(b"\n", b"\r\n").rstrip(b"\r\n")
    assert _lint(crlf) == _lint(lf) == []


@pytest.mark.parametrize(
    ("tail", "line", "more"),
    [
        (b"\n", 11, 0),  # two newlines at the end: Vibe drops only one trailing ""
        (b"  ", 11, 0),  # whitespace after the last newline
        (b"\n\n", 11, 1),
    ],
)
def test_blank_lines_fail_vibes_loader_and_are_td001(tail: bytes, line: int, more: int) -> None:
    data = TOOLS.read_bytes() + tail
    assert _lint(data) == [("TD001", line)] == _lint(data, screen=False)
    from support import lint_bytes

    (finding,) = lint_bytes(SESSION_PATH, data).findings
    assert ("more blank line" in finding.finding.message) is bool(more)


def test_a_blank_line_in_the_middle_is_td001_and_not_repaired() -> None:
    lines = TOOLS.read_bytes().splitlines(keepends=True)
    data = b"".join([*lines[:3], b"\r\n", *lines[3:]])
    assert _lint(data) == [("TD001", 4)]
    from support import _catalog

    from transcript_doctor import engine, fixer
    from transcript_doctor.checks import Selection

    options = engine.Options(Selection.build(("ALL",)), _catalog(), unsafe_fixes=True)
    assert fixer.fix_bytes(SESSION_PATH, data, options).after == data


def test_crlf_lines_are_not_blank() -> None:
    assert _lint(TOOLS.read_bytes().replace(b"\n", b"\r\n")) == []


# What Vibe 2.18.4's SessionLoader.load_session did with each damage
# (tests/fakemodel/recipes/mistral_vibe_loader.py, output in docs/formats/mistral-vibe.md §5).
_LOADER_VERDICTS = {
    "blank-middle": False,
    "two-newlines-at-end": False,
    "crlf": True,
    "bom": False,
    "torn-final": False,
    "nul-run-end": False,
    "invalid-utf8": True,  # loads, but the whole file is decoded in another codec
    "surrogate": True,
    "nan": True,
    "content-int": True,
    "not-object": False,
}


def _loader_case(name: str) -> bytes:
    src = TOOLS.read_bytes()
    lines = src.splitlines(keepends=True)
    return {
        "blank-middle": b"".join([*lines[:3], b"\n", *lines[3:]]),
        "two-newlines-at-end": src + b"\n",
        "crlf": src.replace(b"\n", b"\r\n"),
        "bom": b"\xef\xbb\xbf" + src,
        "torn-final": src + lines[0][:30],
        "nul-run-end": src + b"\0" * 20,
        "invalid-utf8": src + b'{"role": "user", "content": "caf\xe9", "injected": false}\n',
        "surrogate": src + b'{"role": "user", "content": "\\ud800", "injected": false}\n',
        "nan": src + b'{"role": "user", "content": "x", "injected": false, "n": NaN}\n',
        "content-int": src + b'{"role": "user", "content": 7}\n',
        "not-object": src + b"[1, 2]\n",
    }[name]


@pytest.mark.parametrize("name", sorted(_LOADER_VERDICTS))
def test_td001_where_vibes_own_loader_fails(name: str) -> None:
    """TD001 exactly where Vibe cannot load the session, and for invalid UTF-8, which
    loads garbled; nothing for what json.loads reads."""
    found = [code for code, _ in _lint(_loader_case(name)) if code == "TD001"]
    assert bool(found) is (not _LOADER_VERDICTS[name] or name == "invalid-utf8")


def _blank_by_pattern(data: bytes) -> tuple[int, int] | None:
    """What ``BLANK`` finds: the first match's line number and how many matches."""
    import re

    from transcript_doctor.readers.mistral_vibe.reader import BLANK

    matches = list(re.finditer(BLANK, data))
    if not matches:
        return None
    first = matches[0]
    start = first.start() + (1 if first.group().startswith(b"\n") else 0)
    return data.count(b"\n", 0, start) + 1, len(matches)


_PIECES = [b"\n", b"\r\n", b" ", b"\t", b"\r", b"\f", b"\v", b"{}", b'{"a": 1}', b"x", b"\xef\xbb\xbf"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_blank_lines_are_what_the_pattern_finds(pieces: list[bytes]) -> None:
    from transcript_doctor.readers.mistral_vibe.reader import blank_lines

    data = b"".join(pieces)
    assert blank_lines(data, Source("m.jsonl", data, Container.JSONL).lines) == _blank_by_pattern(data)


def test_blank_lines_on_every_recorded_file_match_the_pattern() -> None:
    from transcript_doctor.readers.mistral_vibe.reader import blank_lines

    for path in RECORDED:
        data = path.read_bytes()
        for variant in (data, data + b"\n", b"\n" + data, data.replace(b"\n", b"\n \n", 1), data + b" \t"):
            assert blank_lines(
                variant, Source("m.jsonl", variant, Container.JSONL).lines
            ) == _blank_by_pattern(variant)


_LINE_PIECES = [
    b'{"role": "user", "content": "a"}',
    b'{"role": "assistant", "content": "b", "injected": false}',
    b"{}",
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b" ",
    b"\r",
    b"\n",
    b'"',
    b'"x"',
    b":",
    b'"role"',
    b"1e400",
    b"\xff",
    b"\xc3\xa9",
    b'{"role": "user", "content": "',
    b'"}',
    b'{"tool_calls": [{"id": "a"}',
    b"]}",
]


@settings(max_examples=4000, deadline=None)
@given(st.lists(st.sampled_from(_LINE_PIECES), max_size=12))
# Two records on one line and one record across two: as many values as lines.
@example([b'{"role": "user"} {"role": "user"}\n{"role":\n"user"}'])
@example([b'{"role": "user"}] [{"role": "user"}\n{"tool_calls": [[\n]]}'])
@example([b'{"role": "user"},{"role": "user"}\n{"role": "user", "content": "a\nb"}\n'])
def test_wrapped_lines_decode_as_each_line_alone(pieces: list[bytes]) -> None:
    """``fast._lines`` (all lines in one call) takes a text only when each line alone is
    one record, and then gives exactly what ``typed_lines.decoded`` (a line at a time)
    gives."""
    from transcript_doctor.readers.mistral_vibe import fast
    from transcript_doctor.readers.typed_lines import decoded

    data = b"".join(pieces)
    segments = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    wrapped = fast._lines(data)
    if wrapped is not None and len(wrapped) == segments:
        assert decoded(data, fast._DECODER) == wrapped


def test_two_user_lines_in_a_row_are_proven_unless_their_ids_may_be_one() -> None:
    """Two user lines in a row with different ``message_id`` values cannot be TD403 (it
    compares the whole records): the typed proof takes them as the full read's screen
    does.  The same id, written alike or escaped, is a doubt for both, and both paths
    find the repeat."""
    from transcript_doctor import catalog, engine
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.checks import Selection
    from transcript_doctor.readers.mistral_vibe import fast
    from transcript_doctor.readers.mistral_vibe.reader import _plain_turns

    def lint(text: str, screen: bool) -> list[tuple[str, int]]:
        options = engine.Options(Selection.build(("ALL",)), catalog.load(), screen=screen)
        report = engine.lint_bytes(SESSION_PATH, text.encode(), options)
        return [(f.finding.rule.code, f.origin.line) for f in report.findings]

    def doubted(text: str) -> tuple[bool, bool]:
        """Whether the typed proof, and the full read's turns, doubt the session."""
        records = [json.loads(line) for line in text.splitlines()]
        return fast.prove(text.encode(), Screen(catalog.load())) is not True, None in _plain_turns(records)

    differ = vibe_lines(user("again", "u1"), user("again", "u2"), assistant("ok", "a1"))
    unnamed = vibe_lines(
        {"role": "user", "content": "a", "injected": False}, user("b", "u2"), assistant("ok", "a1")
    )
    same = vibe_lines(user("again", "u1"), user("again", "u1"), assistant("ok", "a1"))
    escaped = same.replace(
        '"message_id": "u1"}\n{"role": "user"', '"message_id": "\\u00751"}\n{"role": "user"', 1
    )
    other_escaped = differ.replace('"message_id": "u1"', '"message_id": "\\u00752"', 1)
    assert escaped != same and other_escaped != differ
    assert doubted(differ) == doubted(unnamed) == (False, False)
    assert doubted(same) == doubted(escaped) == (True, True)
    assert doubted(other_escaped) == (True, True)  # the full read doubts it for the same id
    for text, expected in ((differ, []), (unnamed, []), (same, [("TD403", 2)]), (escaped, [("TD403", 2)])):
        assert lint(text, True) == lint(text, False) == expected
