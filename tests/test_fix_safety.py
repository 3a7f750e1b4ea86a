"""Fix safety: what fix applies by default, what needs --unsafe-fixes, what it refuses.

A repair that deletes or replaces what may be real model or tool output is unsafe; the
class is decided per finding from what the repair destroys.  Verification keeps the
reader (and the layout detection) that read the input, and rolls back only the repairs
that fail.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from claude_sessions import assistant, call, jsonl, text, user
from snapshots import Text
from support import FIXTURES, ROOT, _catalog, cli, detected_bytes, lint_bytes

from transcript_doctor import checks, engine, fixer
from transcript_doctor.checks import Selection
from transcript_doctor.editing import EditError
from transcript_doctor.model import Applicability

BOTH = FIXTURES / "openai-chat" / "damaged-tool-pairing.json"  # safe TD303, unsafe TD302/TD304
REPRO = ROOT / "tests" / "data" / "repro"
REPROS = sorted(p for p in REPRO.rglob("*") if p.suffix in (".json", ".jsonl"))
SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE


def _options(unsafe: bool = False) -> engine.Options:
    return engine.Options(Selection.build(["ALL"]), _catalog(), unsafe_fixes=unsafe)


def _classes(name: str, data: str | bytes) -> list[tuple[str, int, Applicability | None]]:
    raw = data.encode() if isinstance(data, str) else data
    report = lint_bytes(name, raw)
    return [(f.finding.rule.code, f.origin.line, f.applicability) for f in report.findings]


def _lines(text_: str) -> list[str]:
    return text_.splitlines(keepends=True)


# -- the classes, per rule and per finding -------------------------------------------


def test_every_fixable_rule_declares_its_classes_and_docs_name_them() -> None:
    for rule in checks.rules():
        assert bool(rule.fix) == bool(rule.applicability), rule.code
        doc = (ROOT / "rules" / "docs" / f"{rule.code}.md").read_text()
        if rule.fix:
            assert "## Fix safety" in doc, rule.code


def test_rule_table_shows_the_class() -> None:
    result = cli("rules")
    rows = {line[:5]: line for line in result.stdout.splitlines()}
    assert rows["TD301"].startswith("TD301  error    safe         unanswered-tool-call")
    assert rows["TD302"].startswith("TD302  error    unsafe       orphan-tool-result")
    assert rows["TD303"].startswith("TD303  error    safe/unsafe  duplicate-tool-result")
    assert rows["TD305"].startswith("TD305  error    -            duplicate-tool-call-id")


def test_duplicate_result_is_safe_only_as_a_byte_copy() -> None:
    def chat(second: str) -> str:
        return json.dumps(
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
                {"role": "tool", "tool_call_id": "c1", "content": second},
                {"role": "assistant", "content": "ok"},
            ],
            indent=1,
        )

    assert _classes("c.json", chat("a.txt")) == [("TD303", 25, SAFE)]
    assert _classes("c.json", chat("b.txt")) == [("TD303", 25, UNSAFE)]


def test_duplicated_user_turn_is_safe_only_as_a_byte_copy() -> None:
    """openworker: same ``ts`` and content is a harness copy; other bytes make it unsafe."""
    system = '{"role": "system", "content": "You are Coworker."}\n'
    prompt = '{"role": "user", "content": "Split utils.py", "ts": 1786548211.7391284}\n'
    reordered = '{"content": "Split utils.py", "role": "user", "ts": 1786548211.7391284}\n'
    answer = '{"role": "assistant", "content": "Done.", "ts": 1786548213.4782567}\n'
    assert _classes("c.jsonl", system + prompt + prompt + answer) == [("TD403", 3, SAFE)]
    assert _classes("c.jsonl", system + prompt + reordered + answer) == [("TD403", 3, UNSAFE)]


def test_empty_turn_is_safe_but_a_thinking_only_turn_is_not() -> None:
    session = jsonl(
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", {"type": "thinking", "thinking": "hmm", "signature": "s"}),
        user("u2", "a1", 2, "again"),
        assistant("a2", "u2", 3, "m2", text("  ")),
        user("u3", "a2", 4, "more"),
        assistant("a3", "u3", 5, "m3", text("done")),
    )
    assert _classes("s.jsonl", session) == [("TD103", 2, UNSAFE), ("TD103", 4, SAFE)]


def test_placeholder_turn_with_thinking_is_unsafe() -> None:
    def chat(*blocks: dict[str, Any]) -> str:
        return json.dumps(
            [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": list(blocks)},
                {"role": "user", "content": "again"},
                {"role": "assistant", "content": "fine"},
            ]
        )

    placeholder = {"type": "text", "text": "(request timeout)"}
    thinking = {"type": "thinking", "thinking": "let me see", "signature": "sig"}
    assert _classes("a.json", chat(placeholder)) == [("TD201", 1, SAFE)]
    assert _classes("a.json", chat(thinking, placeholder)) == [("TD201", 1, UNSAFE)]


# -- fix: safe by default, the rest with --unsafe-fixes --------------------------------


def test_fix_default_applies_only_the_safe_repairs(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    shutil.copyfile(BOTH, path)
    report = tmp_path / "r.json"
    result = cli("fix", "--in-place", "--report", str(report), str(path))
    assert result.returncode == 1
    before = _lines(BOTH.read_text())
    assert path.read_text() == "".join(before[:9] + before[10:])  # only the byte copy (line 10) went
    assert result.stdout.splitlines()[0] == f"{path}: fixed 1 finding(s) (TD303)"
    assert result.stdout.splitlines()[-1] == "2 hidden fixes can be enabled with the `--unsafe-fixes` option."
    (entry,) = json.loads(report.read_text())["files"]
    assert [(f["rule"], f["action"], f["applicability"]) for f in entry["fixes"]] == [
        ("TD303", "remove", "safe")
    ]
    assert [(u["rule"], u["fix_applicability"], u["why"]) for u in entry["unfixed"]] == [
        (
            "TD304",
            "unsafe",
            "unsafe fix not applied (moves a real tool result; if the pairing is wrong it lands "
            "after the wrong call); apply it with --unsafe-fixes",
        ),
        (
            "TD302",
            "unsafe",
            "unsafe fix not applied (removes a tool result, which may be real tool output whose "
            "call was lost or mis-paired); apply it with --unsafe-fixes",
        ),
        ("TD305", None, "no automatic fix for this rule"),
    ]
    again = cli("fix", "--in-place", str(path))
    assert again.returncode == 1
    assert path.read_text() == "".join(before[:9] + before[10:])


def test_fix_unsafe_applies_the_rest_and_says_which_class_each_was(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    shutil.copyfile(BOTH, path)
    report = tmp_path / "r.json"
    result = cli("fix", "--in-place", "--unsafe-fixes", "--report", str(report), str(path))
    assert result.returncode == 1  # TD305 has no fix
    before = _lines(BOTH.read_text())
    assert path.read_text() == "".join(before[:7] + before[8:9] + before[7:8] + before[11:])
    (entry,) = json.loads(report.read_text())["files"]
    assert [(f["rule"], f["applicability"]) for f in entry["fixes"]] == [
        ("TD303", "safe"),
        ("TD302", "unsafe"),
        ("TD304", "unsafe"),
    ]
    assert entry["fixes"][1]["safety"].startswith("removes a tool result")
    assert [u["rule"] for u in entry["unfixed"]] == ["TD305"]


def test_fix_of_a_file_with_only_unsafe_repairs_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copyfile(FIXTURES / "qwen-code" / "damaged-broken-parent-link.jsonl", path)
    result = cli("fix", "--diff", str(path))
    assert result.returncode == 1  # the finding is left
    assert result.stdout == ""
    assert "[not fixed: unsafe fix not applied (re-links the chain" in result.stderr


# -- lint: ruff's marker and summary ---------------------------------------------------


def test_lint_summary_counts_hidden_fixes() -> None:
    result = cli("lint", "-o", "concise", str(BOTH.relative_to(ROOT)))
    assert result.stdout.splitlines()[-1] == (
        "[*] 1 fixable with `transcript-doctor fix` (2 hidden fixes can be enabled with the "
        "`--unsafe-fixes` option)."
    )
    unsafe = cli("lint", "-o", "concise", "--unsafe-fixes", str(BOTH.relative_to(ROOT)))
    assert unsafe.stdout.splitlines()[-1] == "[*] 3 fixable with `transcript-doctor fix --unsafe-fixes`."


def test_lint_summary_with_only_hidden_fixes() -> None:
    path = FIXTURES / "qwen-code" / "damaged-broken-parent-link.jsonl"
    result = cli("lint", str(path.relative_to(ROOT)))
    assert result.stdout.splitlines()[-1] == (
        "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    )
    assert "[*]" not in result.stdout


def test_json_fixable_means_applicable_under_the_settings() -> None:
    def rows(*extra: str) -> list[tuple[str, bool, str | None]]:
        result = cli("lint", "-o", "json", *extra, str(BOTH))
        return [(r["rule"], r["fixable"], r["fix_applicability"]) for r in json.loads(result.stdout)]

    assert rows() == [
        ("TD304", False, "unsafe"),
        ("TD303", True, "safe"),
        ("TD302", False, "unsafe"),
        ("TD305", False, None),
    ]
    assert rows("--unsafe-fixes") == [
        ("TD304", True, "unsafe"),
        ("TD303", True, "safe"),
        ("TD302", True, "unsafe"),
        ("TD305", False, None),
    ]


def test_sarif_fixes_only_for_applicable_repairs() -> None:
    def fixed(*extra: str) -> list[str]:
        result = cli("lint", "-o", "sarif", *extra, str(BOTH))
        results = json.loads(result.stdout)["runs"][0]["results"]
        return [r["ruleId"] for r in results if "fixes" in r]

    assert fixed() == ["TD303"]
    assert fixed("--unsafe-fixes") == ["TD304", "TD303", "TD302"]


def test_show_fixes_lists_what_fix_would_do(snapshot: Any) -> None:
    paths = [
        "fixtures/openai-chat/damaged-tool-pairing.json",
        "fixtures/openai-chat/damaged-turns.json",
        "fixtures/qwen-code/damaged-broken-parent-link.jsonl",
    ]
    concise = cli("lint", "-o", "concise", "--show-fixes", *paths)
    full = cli("lint", "--show-fixes", "--unsafe-fixes", *paths)
    assert (concise.returncode, full.returncode) == (1, 1)
    assert concise.stdout + "\n---\n" + full.stdout == snapshot(extension_class=Text)


# -- the contradiction guard ------------------------------------------------------------

CONTRADICTION = """[
  {"role": "user", "parts": [{"text": "list the files"}]},
  {"role": "model", "parts": [{"functionCall": {"id": "ls-1", "name": "list_directory", "args": {}}, "thoughtSignature": "skip_thought_signature_validator"}]},
  {"role": "user", "parts": [{"functionResponse": {"id": "list_directory-1751899028178-d7ab369acc9b6", "name": "list_directory", "response": {"output": "a.txt"}}}]},
  {"role": "model", "parts": [{"text": "There is one file."}]}
]
"""


def test_a_result_removed_and_a_result_inserted_for_the_same_name_is_a_pairing_failure() -> None:
    report = lint_bytes("c.json", CONTRADICTION.encode())
    assert [(f.finding.rule.code, f.origin.line, f.fixable, f.applicability) for f in report.findings] == [
        ("TD301", 3, False, None),
        ("TD302", 4, False, None),
    ]
    assert report.findings[0].finding.message.endswith(
        "(likely a pairing failure: the result at line 4 at /2/parts/0 in the next turn has the "
        "same name and may answer it; not repaired)"
    )
    outcome = fixer.fix_bytes("c.json", CONTRADICTION.encode(), _options(unsafe=True))
    assert not outcome.changed
    assert [why for _, why in outcome.remaining] == [
        "pairing failure: the result at line 4 at /2/parts/0 and the call list_directory at line 3 "
        "at /1/parts/0 in the turn before it most likely answer each other; neither is repaired"
    ] * 2


def test_a_pairing_failure_is_explained_once_when_two_results_of_the_name_follow() -> None:
    second = {"functionResponse": {"id": "ls-other", "name": "list_directory", "response": {"output": "b"}}}
    history = json.loads(CONTRADICTION)
    history[2]["parts"].append(second)
    report = lint_bytes("c.json", json.dumps(history).encode())
    (insert,) = [f for f in report.findings if f.finding.rule.code == "TD301"]
    assert insert.finding.message.count("likely a pairing failure") == 1


def test_a_byte_copy_removed_beside_an_insert_is_no_contradiction() -> None:
    calls = [
        {"functionCall": {"id": "m", "name": "read_file", "args": {}}},
        {"functionCall": {"id": "n", "name": "read_file", "args": {}}},
    ]
    answer = {"functionResponse": {"id": "m", "name": "read_file", "response": {"output": "x"}}}
    history = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": calls},
        {"role": "user", "parts": [answer, answer]},
        {"role": "model", "parts": [{"text": "ok"}]},
    ]
    report = lint_bytes("c.json", json.dumps(history).encode())
    assert [(f.finding.rule.code, f.fixable) for f in report.findings if f.finding.rule.code != "TD401"] == [
        ("TD301", True),
        ("TD303", True),
    ]


# -- rollback granularity (issue #15 item 9) ------------------------------------------


def test_only_the_repair_that_fails_is_rolled_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A relink exposes a TD301 whose result cannot be inserted: the relink goes back, the
    independent placeholder removal stays, and both say why."""
    from transcript_doctor.readers.claude_code import plan as _claude_code_fix

    session = jsonl(
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", call("toolu_1", "Bash")),
        user("u2", "gone", 2, "next"),
        assistant("a2", "u2", 3, "m2", text("No response requested."), model="<synthetic>"),
        user("u3", "a2", 4, "again"),
        assistant("a3", "u3", 5, "m3", text("fine")),
    ).encode()

    def cannot(*_: object) -> str:
        raise EditError("no place for the result")

    monkeypatch.setattr(_claude_code_fix.Plan, "insert_result", cannot)
    outcome = fixer.fix_bytes("s.jsonl", session, _options(unsafe=True))
    assert [(a.rule, a.action) for a in outcome.applied] == [("TD201", "remove")]
    lines = session.splitlines(keepends=True)
    assert outcome.after == b"".join(lines[:3] + lines[4:]).replace(
        b'"parentUuid":"a2"', b'"parentUuid":"u2"'
    )
    assert [(f.finding.rule.code, why) for f, why in outcome.remaining] == [
        ("TD404", "rolled back: its repair exposed errors that could not be repaired (TD301)")
    ]
    assert outcome.rolled_back == ["TD404: its repair exposed errors that could not be repaired (TD301)"]


def test_terminal_says_why_each_repair_was_rolled_back(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copyfile(REPRO / "nonidem-2000000-12665" / "pending-tool-call.jsonl", path)
    result = cli("fix", "--diff", str(path))
    assert result.stderr.splitlines() == [
        f"{path}:2: TD001 a torn record glued to the next one on one line [not fixed: rolled back: "
        "the repaired file would be detected as anthropic-messages, not openai-chat, and read differently]",
        "Would fix 0 finding(s) in 0 file(s); 1 left.",  # --diff wrote nothing (issue 17)
    ]


def test_a_failing_half_does_not_take_the_other_half_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two placeholders: removing the second fails; the first still goes."""
    from transcript_doctor.readers.claude_code import plan as _claude_code_fix

    session = jsonl(
        user("u1", None, 0, "go"),
        assistant("a1", "u1", 1, "m1", text("No response requested."), model="<synthetic>"),
        user("u2", "a1", 2, "next"),
        assistant("a2", "u2", 3, "m2", text("No response requested."), model="<synthetic>"),
        user("u3", "a2", 4, "again"),
        assistant("a3", "u3", 5, "m3", text("fine")),
    ).encode()
    real = _claude_code_fix.Plan.remove_turn

    def picky(self: Any, lines: Any) -> str:
        if any(ref.uuid == "a2" for ref in lines):
            raise EditError("refused for the test")
        return real(self, lines)

    monkeypatch.setattr(_claude_code_fix.Plan, "remove_turn", picky)
    outcome = fixer.fix_bytes("s.jsonl", session, _options())
    assert [(a.rule, a.line) for a in outcome.applied] == [("TD201", 2)]
    assert [(f.finding.rule.code, f.origin.line, why) for f, why in outcome.remaining] == [
        ("TD201", 3, "rolled back: line 3: refused for the test")
    ]


# -- D7/D8: the repaired file is read as the input was ----------------------------------


@pytest.mark.parametrize("path", REPROS, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("unsafe", [False, True], ids=["default", "unsafe"])
def test_repaired_file_keeps_its_layout_and_a_second_fix_changes_nothing(path: Path, unsafe: bool) -> None:
    data = path.read_bytes()
    options = _options(unsafe)
    outcome = fixer.fix_bytes(path.name, data, options)
    assert detected_bytes(path.name, outcome.after) == detected_bytes(path.name, data)
    errors_before = {f.finding.rule.code for f in engine.lint_bytes(path.name, data, options).findings}
    errors_after = {
        f.finding.rule.code for f in engine.lint_bytes(path.name, outcome.after, options).findings
    }
    assert "TD002" not in errors_after - errors_before
    again = fixer.fix_bytes(path.name, outcome.after, options)
    assert again.after == outcome.after, "a second fix changed the repaired file"


def test_a_repair_that_would_lose_the_layout_is_rolled_back_d8() -> None:
    """The repair used to be rolled back: removing the duplicated line brought the junk
    ``[...]`` line into the detection head and the copy became TD002.  Detection now skips
    non-object lines (D9, a TD001 of their own), so the repair keeps the layout and stays."""
    path = REPRO / "moreerrors-9696" / "damaged-duplicated-line.jsonl"
    outcome = fixer.fix_bytes(path.name, path.read_bytes(), _options())
    assert [(a.rule, a.line) for a in outcome.applied] == [("TD403", 16)]
    assert [(f.finding.rule.code, f.origin.line) for f, _ in outcome.remaining] == [("TD001", 20)]
    assert detected_bytes(path.name, outcome.after) == "claude-code"
