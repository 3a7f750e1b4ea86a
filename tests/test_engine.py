"""How the engine runs a lint, beyond what it finds."""

from __future__ import annotations

import gc

import orjson
from support import lint_bytes


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
