"""How the engine runs a lint, beyond what it finds."""

from __future__ import annotations

import gc
import sys

import orjson
from support import FIXTURES, lint_bytes

from transcript_doctor import engine


def test_a_lint_frees_what_it_read_before_the_collector_is_back() -> None:
    """The collector is off while a file is read; turned back on with the transcript still
    alive, its first pass would walk every object of it (a tenth of lint time)."""
    turns = [{"role": "user", "content": f"q{i}"} for i in range(3000)]
    for turn in turns[1::2]:
        turn["role"] = "assistant"
    turns[-1]["content"] = "a partial answer "  # TD102: the conversation is built
    data = orjson.dumps({"messages": turns})
    lint_bytes("chat.json", data)  # what a first lint loads (modules, caches) stays
    passes: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            passes.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        report = lint_bytes("chat.json", data)
    finally:
        gc.callbacks.remove(count)
    assert gc.isenabled()
    assert [f.finding.rule.code for f in report.findings] == ["TD102"]
    assert passes == []


def test_modules_a_lint_imports_are_frozen_with_those_of_start_up() -> None:
    """Readers, rules and repairs are imported by the first file that needs them: frozen
    then, the collections of the rest of the run do not walk their objects (twice: they
    would reach the oldest generation last)."""
    data = (FIXTURES / "openai-chat" / "clean-fine-tuning.jsonl").read_bytes()
    gc.unfreeze()
    engine._IMPORTED[0] = 0  # as if the file imported modules
    lint_bytes("chat.jsonl", data)
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert engine._IMPORTED[0] == len(sys.modules)
    lint_bytes("chat.jsonl", data)  # nothing imported: nothing more frozen
    assert gc.get_freeze_count() <= frozen


def test_only_parse_errors_are_reported_of_a_file_whose_conversations_are_proven_clean() -> None:
    """The engine runs no rule on a file with no conversation left and no parse error:
    only FILE rules run on such a file, and of those only TD001 has a check (the source's
    parse errors; TD002 is the engine's).  A new FILE rule must revisit engine.inspect."""
    from transcript_doctor import checks
    from transcript_doctor.model import Screening

    file_rules = {e.rule.code: e.check for e in checks.registry() if e.rule.screen is Screening.FILE}
    assert set(file_rules) == {"TD001", "TD002"} and file_rules["TD002"] is None
    clean = FIXTURES / "openai-chat" / "clean-fine-tuning.jsonl"
    data = clean.read_bytes()
    assert lint_bytes("chat.jsonl", data).findings == []
    torn = data + data.splitlines(keepends=True)[0][:20]  # every conversation proven clean
    report = lint_bytes("chat.jsonl", torn)
    assert [(f.finding.rule.code, f.origin.line) for f in report.findings] == [
        ("TD001", data.count(b"\n") + 1)
    ]
