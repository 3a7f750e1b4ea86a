"""Reader codex: detection, every applicable rule on real and derived rollouts, negative controls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, findings, records, text_findings

from transcript_doctor import readers
from transcript_doctor.model import Conversation, PartKind, Role
from transcript_doctor.readers.codex import READER
from transcript_doctor.readers.codex.history import ItemRef
from transcript_doctor.readers.codex.reader import Layout
from transcript_doctor.source import sniff

DIR = FIXTURES / "codex"
TS = "2026-02-23T12:00:00.000Z"
META = {
    "id": "019c8a70-dda7-7f33-98ea-f30553347322",
    "timestamp": TS,
    "cwd": "/w",
    "originator": "codex_cli_rs",
}


def line(kind: str, payload: Any, ts: str = TS) -> str:
    """One RolloutLine in Codex's serde style (compact, key order timestamp/type/payload)."""
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, separators=(",", ":"))


def rollout(*items: str) -> str:
    return "\n".join([line("session_meta", META), *items]) + "\n"


def item(payload: dict[str, Any], ts: str = TS) -> str:
    return line("response_item", payload, ts)


def user(text: str, ts: str = TS) -> str:
    return item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}, ts)


def developer(text: str) -> str:
    return item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]})


def say(text: str) -> str:
    return item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})


def reasoning(encrypted: str | None = "gAAAAB…") -> str:
    return item({"type": "reasoning", "summary": [], "content": None, "encrypted_content": encrypted})


def call(call_id: str, name: str = "exec_command", kind: str = "function_call") -> str:
    if kind == "custom_tool_call":
        return item(
            {
                "type": kind,
                "status": "completed",
                "call_id": call_id,
                "name": name,
                "input": "*** Begin Patch",
            }
        )
    return item({"type": kind, "name": name, "arguments": "{}", "call_id": call_id})


def output(
    call_id: str,
    text: str = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok",
    kind: str = "function_call_output",
) -> str:
    return item({"type": kind, "call_id": call_id, "output": text})


def lint(text: str) -> list[tuple[str, int, str | None]]:
    return text_findings("rollout.jsonl", text)


def read(path: Path) -> Conversation:
    (conversation,) = READER.read(sniff(str(path), path.read_bytes()))
    return conversation


def read_text(text: str) -> Conversation:
    (conversation,) = READER.read(sniff("rollout.jsonl", text.encode()))
    return conversation


# -- detection ------------------------------------------------------------------------------


def claim(tmp_path: Path, text: str, name: str = "x.jsonl") -> tuple[str, str, int, bool] | None:
    path = tmp_path / name
    path.write_text(text)
    found = readers.detect(sniff(str(path), path.read_bytes()))
    if found is None:
        return None
    return found[1].reader, found[1].reason, found[1].score, found[1].transcript


def test_detection_reasons(tmp_path: Path) -> None:
    assert claim(tmp_path, rollout(user("hi"))) == (
        "codex",
        "Codex RolloutLine envelope with session_meta",
        100,
        True,
    )
    # A torn first line: still a rollout, by the envelope of the lines that parse.
    torn = '{"timestamp":"2026-02-23T1\n' + user("hi") + "\n" + say("hello") + "\n"
    assert claim(tmp_path, torn) == (
        "codex",
        "Codex RolloutLine envelope (first line is not session_meta)",
        50,
        True,
    )
    assert claim(tmp_path, (DIR / "legacy-rollout.jsonl").read_text()) == (
        "codex",
        "legacy Codex rollout",
        50,
        True,
    )


def test_newer_ordinal_envelope_is_claimed(tmp_path: Path) -> None:
    text = (
        json.dumps({"timestamp": TS, "ordinal": 0, "type": "session_meta", "payload": META})
        + "\n"
        + json.dumps({"timestamp": TS, "ordinal": 1, "type": "world_state", "payload": {}})
        + "\n"
    )
    assert claim(tmp_path, text) == ("codex", "Codex RolloutLine envelope with session_meta", 100, True)


def test_companion_files_are_skipped_not_linted(tmp_path: Path) -> None:
    index = '{"id":"019c8a70-dda7-7f33-98ea-f30553347322","thread_name":"fix tests","updated_at":"2026-02-23T12:00:00Z"}\n'
    history = '{"session_id":"019c8a70-dda7-7f33-98ea-f30553347322","ts":1771848000,"text":"fix the tests"}\n'
    older = (
        '{"conversation_id":"019c8a70-dda7-7f33-98ea-f30553347322","ts":1771848000,"text":"fix the tests"}\n'
    )
    assert claim(tmp_path, index, "session_index.jsonl") == (
        "codex",
        "Codex session_index.jsonl (thread names; not a transcript)",
        50,
        False,
    )
    assert claim(tmp_path, history * 2, "history.jsonl") == (
        "codex",
        "Codex history.jsonl (prompt history; not a transcript)",
        50,
        False,
    )
    assert claim(tmp_path, older, "history.jsonl") is not None
    assert lint(index) == []


@pytest.mark.parametrize(
    "text",
    [
        # Claude Code (corpus: claude-code/codemie-incremental-simple-turn-1.jsonl, trimmed)
        '{"type":"summary","summary":"Conversation Cleared","leafUuid":"d3b5f9ba-bf7f-462b-89e5-00d18a80c036"}\n'
        '{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/r","sessionId":"3fb7","version":"2.1.7",'
        '"type":"user","message":{"role":"user","content":"show tools"},"uuid":"a1","timestamp":"2026-01-15T17:24:23.974Z"}\n',
        # Qwen Code (corpus: qwen-code/gen-crash-dangling-functionCall__…, trimmed)
        '{"uuid":"e7a8","parentUuid":null,"sessionId":"4715","timestamp":"2026-11-29T21:40:40.223Z","type":"user",'
        '"cwd":"/tmp","version":"0.24.4","message":{"role":"user","parts":[{"text":"Run the long computation"}]}}\n',
        # Gemini CLI JSONL (corpus: gemini-cli/gen-resumed-dup-response__…, trimmed)
        '{"sessionId":"2c95","projectHash":"036c","startTime":"2026-11-29T21:45:50.642Z","lastUpdated":"2026-11-29T21:45:50.642Z","kind":"main"}\n'
        '{"$set":{"messages":[{"id":"d049","timestamp":"2026-11-29T21:45:50.642Z","type":"user","content":[{"text":"hi"}]}]}}\n',
        # OpenAI Chat Completions messages, one per line
        '{"role":"user","content":"hi"}\n{"role":"assistant","content":"hello"}\n',
        # Bare Responses API items (Agents SDK dumps) without the legacy meta line
        '{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}\n'
        '{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}\n',
        # An envelope with a foreign key, and a session_meta that is not first
        '{"timestamp":"t","type":"session_meta","payload":{},"uuid":"x"}\n',
        '{"timestamp":"t","type":"note","payload":{}}\n{"timestamp":"t","type":"session_meta","payload":{}}\n',
        # A bare {id, timestamp} line followed by something that is not a ResponseItem
        '{"id":"x","timestamp":"t"}\n{"role":"user","content":"hi"}\n',
    ],
)
def test_does_not_claim_look_alikes(tmp_path: Path, text: str) -> None:
    assert (claim(tmp_path, text) or ("",))[0] != "codex"


# -- real files -----------------------------------------------------------------------------


def test_trailing_call_at_eof_is_exactly_one_pending_call() -> None:
    name = "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
    assert findings(DIR / name) == [("TD306", 18, None)]


def test_real_unanswered_call_mid_file() -> None:
    name = "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
    (found,) = records(DIR / name)
    assert (found["rule"], found["line"], found["pointer"], found["record"]) == ("TD301", 826, None, 825)
    assert "call_BpTazJ89W9PntRqGPwDNfwEY (exec_command)" in str(found["message"])
    # The developer note Codex writes while a tool runs (line 809, between the call on line
    # 807 and its output on line 810) is context, not a displacement.
    text = (DIR / name).read_text().splitlines()
    assert '"role":"developer"' in text[808] and "call_ySQUR7bFMvErO8HXpdBY207E" in text[809]


# -- damaged variants -----------------------------------------------------------------------


def test_turn_damage() -> None:
    assert findings(DIR / "damaged-turns.jsonl") == [("TD103", 34, None), ("TD201", 61, None)]


def test_trailing_whitespace_of_the_final_answer() -> None:
    assert findings(DIR / "damaged-trailing-whitespace.jsonl") == [("TD102", 61, "/payload/content/0")]


def test_tool_pairing_damage() -> None:
    assert findings(DIR / "damaged-tool-pairing.jsonl") == [
        ("TD302", 18, None),
        ("TD303", 28, None),
        ("TD305", 44, None),
    ]


def test_output_behind_a_new_prompt_is_displaced() -> None:
    assert findings(DIR / "damaged-displaced-output.jsonl") == [("TD304", 13, None)]


def test_torn_final_line() -> None:
    assert findings(DIR / "damaged-torn-final-line.jsonl") == [("TD306", 18, None), ("TD001", 19, None)]


def test_item_inside_replacement_history_is_reported_at_the_compacted_line() -> None:
    assert findings(DIR / "damaged-compacted-history.jsonl") == [
        ("TD103", 10, "/payload/replacement_history/7")
    ]


def test_history_before_the_compacted_line_is_not_replayed() -> None:
    assert findings(DIR / "superseded-unanswered-call.jsonl") == []


def test_legacy_layout() -> None:
    assert findings(DIR / "legacy-rollout.jsonl") == [("TD301", 9, None)]


# -- pairing and turn model -----------------------------------------------------------------


def test_parallel_and_sequential_calls_pair_without_findings() -> None:
    parallel = rollout(
        user("go"), reasoning(), call("c1"), call("c2"), output("c2"), output("c1"), say("done")
    )
    sequential = rollout(
        user("go"), call("c1"), output("c1"), reasoning(), call("c2"), output("c2"), say("done")
    )
    assert lint(parallel) == []
    assert lint(sequential) == []
    roles = [m.role for m in read_text(parallel).messages]
    assert roles == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]


def test_turn_is_the_run_of_assistant_items_between_inputs() -> None:
    conversation = read_text(
        rollout(user("go"), reasoning(), say("Looking."), call("c1"), output("c1"), say("Done."))
    )
    kinds = [[p.kind for p in m.parts] for m in conversation.messages]
    assert kinds == [
        [PartKind.TEXT],
        [PartKind.THINKING, PartKind.TEXT, PartKind.TOOL_CALL],
        [PartKind.TOOL_RESULT],
        [PartKind.TEXT],
    ]
    turn = conversation.messages[1]
    assert turn.origin.line == 4  # turn-level findings name the assistant message, not the reasoning
    assert turn.parts[0].signature == "gAAAAB…"
    assert conversation.messages[2].parts[0].name == "exec_command"


def test_context_between_call_and_output_is_not_a_displacement() -> None:
    text = rollout(
        user("go"),
        call("c1"),
        call("c2"),
        output("c1"),
        developer('Approved command prefix saved:\n- ["ls"]'),
        user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
        output("c2"),
        say("done"),
    )
    assert lint(text) == []
    roles = [m.role for m in read_text(text).messages]
    assert roles == [Role.USER, Role.ASSISTANT, Role.USER, Role.SYSTEM, Role.SYSTEM, Role.ASSISTANT]


def test_new_prompt_between_call_and_output_is_a_displacement() -> None:
    text = rollout(user("go"), call("c1"), user("wait, also check the logs"), output("c1"), say("ok"))
    assert lint(text) == [("TD304", 5, None)]


def test_interrupted_turn_markers_are_legitimate() -> None:
    aborted = (
        "<turn_aborted>\nThe user interrupted the previous turn on purpose. If any tools/commands were "
        "aborted, they may have partially executed; verify current state before retrying.\n</turn_aborted>"
    )
    text = rollout(
        user("run the tests"),
        call("c1"),
        output("c1", "Exit code: 130\nWall time: 3 seconds\nOutput:\npartial\ncommand aborted by user"),
        line("event_msg", {"type": "turn_aborted", "turn_id": "t1", "reason": "interrupted"}),
        user(aborted),
        developer(aborted),
        user("try again"),
        say("Retrying."),
    )
    assert lint(text) == []


def test_injected_context_is_system_like() -> None:
    conversation = read_text(
        rollout(
            developer("<permissions instructions>\nAsk first.\n</permissions instructions>"),
            user("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>"),
            user("<ENVIRONMENT_CONTEXT>\n<cwd>/w</cwd>\n</ENVIRONMENT_CONTEXT>"),
            user("what does this repo do?"),
        )
    )
    assert [m.role for m in conversation.messages] == [Role.SYSTEM, Role.SYSTEM, Role.SYSTEM, Role.USER]


def test_unanswered_call_followed_only_by_context_is_pending() -> None:
    assert lint(rollout(user("go"), call("c1"), developer("note"))) == [("TD306", 3, None)]


def test_custom_local_shell_and_tool_search_calls_pair_by_call_id() -> None:
    text = rollout(
        user("go"),
        call("p1", "apply_patch", "custom_tool_call"),
        output("p1", '{"output":"Success."}', "custom_tool_call_output"),
        item(
            {
                "type": "local_shell_call",
                "call_id": "s1",
                "status": "completed",
                "action": {"type": "exec", "command": ["ls"]},
            }
        ),
        output("s1"),
        item(
            {
                "type": "tool_search_call",
                "call_id": "t1",
                "execution": "client",
                "arguments": {"query": "calendar"},
            }
        ),
        item(
            {
                "type": "tool_search_output",
                "call_id": "t1",
                "execution": "client",
                "status": "completed",
                "tools": [],
            }
        ),
        item(
            {"type": "tool_search_call", "call_id": "t2", "execution": "server", "arguments": {"query": "x"}}
        ),
        item(
            {
                "type": "tool_search_output",
                "call_id": "t2",
                "execution": "server",
                "status": "completed",
                "tools": [],
            }
        ),
        item({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "q"}}),
        item(
            {"type": "local_shell_call", "status": "completed", "action": {"type": "exec", "command": ["ls"]}}
        ),
        item({"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
        say("done"),
    )
    assert lint(text) == []


def test_unanswered_custom_tool_call_before_a_new_prompt() -> None:
    text = rollout(user("go"), call("p1", "apply_patch", "custom_tool_call"), user("next"))
    assert lint(text) == [("TD301", 3, None)]


def test_orphan_duplicate_and_repeated_ids() -> None:
    text = rollout(
        user("go"),
        output("nobody"),
        call("c1"),
        output("c1"),
        output("c1"),
        call("c1"),
        output("c1"),
    )
    assert lint(text) == [("TD302", 3, None), ("TD303", 6, None), ("TD305", 7, None)]


def test_reasoning_only_turn_is_not_empty_but_bare_empty_items_are() -> None:
    assert lint(rollout(user("go"), reasoning(), user("again"), say("ok"))) == []
    assert lint(rollout(user("go"), reasoning(None), user("again"), say("ok"))) == [("TD103", 3, None)]
    assert lint(rollout(user("go"), say(""), user("again"), say("ok"))) == [("TD103", 3, None)]


def test_empty_message_after_reasoning_is_its_own_empty_turn() -> None:
    text = rollout(user("go"), reasoning(), say("  \n"), call("c1"), output("c1"), say("done"))
    assert lint(text) == [("TD103", 4, None)]


def test_empty_text_beside_a_call_is_not_an_empty_turn() -> None:
    assert lint(rollout(user("go"), call("c1"), say(""), output("c1"), say("done"))) == []


def test_final_answer_without_trailing_whitespace_is_clean() -> None:
    assert lint(rollout(user("go"), say("Done."))) == []


def test_reply_mentioning_a_placeholder_is_not_one() -> None:
    text = rollout(user("go"), say("LiteLLM may write (request timeout) here; this reply is real."))
    assert lint(text) == []


def test_harness_duplicated_prompt_line() -> None:
    assert lint(rollout(user("go"), user("go"))) == [("TD403", 3, None)]
    assert lint(rollout(user("go"), user("go", "2026-02-23T12:00:09.000Z"))) == []


def test_event_mirrors_are_not_replayed() -> None:
    text = rollout(
        user("go"),
        line("event_msg", {"type": "user_message", "message": "go", "images": []}),
        line("event_msg", {"type": "agent_message", "message": ""}),
        line("turn_context", {"cwd": "/w", "model": "gpt-5"}),
        say("done"),
        line("event_msg", {"type": "task_complete", "turn_id": "t", "last_agent_message": "done"}),
    )
    assert lint(text) == []


def test_compacted_without_replacement_history_restarts_from_the_summary() -> None:
    text = rollout(
        user("go"),
        call("c1"),
        user("next"),
        line("compacted", {"message": "Summary of the work so far."}),
        say("Continuing."),
    )
    assert lint(text) == []
    conversation = read_text(text)
    assert [m.role for m in conversation.messages] == [Role.USER, Role.ASSISTANT]
    assert conversation.messages[0].parts[0].origin.pointer == "/payload/message"


def test_only_the_last_compaction_is_rebuilt_but_every_line_is_still_checked() -> None:
    """Lines before the last ``compacted`` line are not built (its replacement is the
    history), yet a torn record among them is still TD001."""

    def compacted(*history: dict[str, Any]) -> str:
        return line("compacted", {"message": "", "replacement_history": list(history)})

    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    hanging = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c9"}
    text = rollout(
        user("go"),
        call("c1"),  # unanswered, but replaced by both compactions
        compacted(prompt, hanging),  # line 4: its hanging call is replaced by the next one
        '{"timestamp":"2026-02-23T12:00:00Z","type":"respo',  # torn mid-file: still TD001
        user("more"),
        compacted(prompt),  # line 7: the history from here on
        call("c2"),
        user("next"),
    )
    assert lint(text) == [("TD001", 5, None), ("TD301", 8, None)]
    assert [m.role for m in read_text(text).messages] == [Role.USER, Role.ASSISTANT, Role.USER]


def test_rollback_drops_the_newest_user_turns() -> None:
    rolled_back = line("event_msg", {"type": "thread_rolled_back", "num_turns": 1})
    assert lint(rollout(user("go"), say("ok"), user("oops"), call("c1"), rolled_back, user("instead"))) == []
    # More turns than exist: every prompt goes, context before them stays.
    text = rollout(developer("ctx"), user("go"), call("c1"), rolled_back.replace(":1}", ":5}"), user("again"))
    assert lint(text) == []
    assert [m.role for m in read_text(text).messages] == [Role.SYSTEM, Role.USER]


# -- refs for a later fix -------------------------------------------------------------------


def test_refs_name_lines_and_replacement_history_entries() -> None:
    conversation = read(
        DIR / "excerpt-compacted-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
    )
    assert conversation.ref == Layout("rollout", 9)
    first = conversation.messages[0]
    assert first.ref == [ItemRef(9, "message", 0)]
    assert first.parts[0].ref == ItemRef(9, "message", 0, 0)
    calls = [p for m in conversation.messages for p in m.parts if p.kind is PartKind.TOOL_CALL]
    assert [p.ref for p in calls] == [
        ItemRef(17, "function_call"),
        ItemRef(18, "function_call"),
        ItemRef(19, "function_call"),
    ]
    results = conversation.messages[-1]
    assert results.ref == [
        ItemRef(21, "function_call_output"),
        ItemRef(22, "function_call_output"),
        ItemRef(23, "function_call_output"),
    ]


def test_legacy_layout_ref() -> None:
    assert read(DIR / "legacy-rollout.jsonl").ref == Layout("legacy", None)


# -- robustness -----------------------------------------------------------------------------


def test_wrong_field_types_do_not_crash() -> None:
    text = rollout(
        line("response_item", "not an item"),
        line("response_item", None),
        item({"type": "message", "role": "user", "content": "plain string"}),
        item({"type": "message", "role": "assistant", "content": {"type": "output_text"}}),
        item({"type": "message", "role": 7, "content": [None, 3, {"type": "input_text", "text": 5}]}),
        item({"type": "reasoning", "summary": "x", "content": 5, "encrypted_content": 9}),
        item({"type": "function_call", "name": None, "arguments": {}, "call_id": None}),
        item({"type": "custom_tool_call", "call_id": 12, "name": ["x"]}),
        item({"type": "function_call_output", "call_id": None, "output": {"content": "x", "success": False}}),
        item({"type": "tool_search_call", "call_id": None}),
        item({"type": "future_item_kind", "x": 1}),
        line("compacted", {"message": 5, "replacement_history": "nope"}),
        line("compacted", "nope"),
        line("event_msg", {"type": "thread_rolled_back", "num_turns": "2"}),
        line("event_msg", "nope"),
        "[1, 2]",
        "nul\x00",
    )
    result = lint(text)
    assert ("TD001", 18, None) in result


def test_forced_reader_on_a_foreign_file_does_not_crash() -> None:
    # The array line is no record of any JSONL layout (issue #16 D9).
    assert text_findings("x.jsonl", '{"role":"user","content":"hi"}\n[]\n', reader="codex") == [
        ("TD001", 2, None)
    ]
    assert text_findings(
        "x.jsonl",
        '{"id":"x","timestamp":"t"}\n{"type":"message","role":"assistant","content":[]}\n',
        reader="codex",
    ) == [("TD103", 2, None)]


def test_the_proof_reads_a_replacement_history_as_its_lines() -> None:
    """The typed proof decodes a replacement history's contents with the list
    (``fast._Item``): a context message there (``history._is_context``), a prompt, a reply
    and a call regroup as the same items written as lines do, and a context opener is told
    by ``fast._opens_context`` exactly as by ``history._is_context``."""
    from transcript_doctor.readers.codex import fast, history

    contents: list[Any] = [
        [{"type": "input_text", "text": "  <environment_context>\n<cwd>/w</cwd>"}],
        [{"type": "input_text", "text": "# AGENTS.md instructions for /w\n\nbe brief"}],
        [{"type": "input_text", "text": "hi"}, {"type": "input_text", "text": "<USER_INSTRUCTIONS>x"}],
        [{"type": "input_text", "text": "fix the <div> please"}],
        [{"type": "input_image", "image_url": "data:"}],
        "<environment_context>",
        None,
        [],
    ]
    for content in contents:
        decoded = fast._CONTENT.decode(json.dumps(content).encode())  # ``_Item.content``'s type
        assert fast._opens_context(decoded) == history._is_context(content), content
    items = [
        {"type": "message", "role": "user", "content": contents[0]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "on it"}]},
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "message", "role": "user", "content": contents[1]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ]
    replayed = fast._HISTORY.decode(json.dumps(items).encode())
    payloads = [fast._DECODER.decode(line("response_item", item).encode()).payload for item in items]
    written = [payload for payload in payloads if payload is not None]
    assert len(written) == len(items)
    from_history = fast._regrouped([(item, None) for item in replayed])
    from_lines = fast._regrouped([(item, index) for index, item in enumerate(written)])
    assert [kind for kind, _, _ in from_history] == [kind for kind, _, _ in from_lines]
    assert [m[1:] for m in from_history if m[0] in (fast._TURN, fast._OUTPUTS)] == [
        m[1:] for m in from_lines if m[0] in (fast._TURN, fast._OUTPUTS)
    ]
    assert [kind for kind, _, _ in from_history] == [
        fast._CONTEXT,
        fast._PROMPT,
        fast._TURN,
        fast._OUTPUTS,
        fast._CONTEXT,
        fast._TURN,
    ]


def test_only_an_opener_start_lowers_to_an_opener_start() -> None:
    """``fast._opens_context`` tells a prompt by its first character before lowering it:
    no other character of Unicode lowers to text that starts as an opener does."""
    from transcript_doctor.readers.codex import fast

    assert sorted(fast._OPENER_STARTS) == ["#", "<"]
    starts = tuple(fast._OPENER_STARTS)
    lowered = [c for c in map(chr, range(0x110000)) if c not in starts and c.lower().startswith(starts)]
    assert lowered == []
    assert fast._opens_context([fast._Block("input_text", "  <ENVIRONMENT_CONTEXT>")])
    assert not fast._opens_context([fast._Block("input_text", "<div>"), fast._Block("input_text", "")])
