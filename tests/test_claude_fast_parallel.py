"""The proof's shortcut for parallel results (``fast._answers``, ``fast._parallel``): a
session whose only branching is a response's parallel tool calls, each result hanging off
its call's line, is proven as its chain in file order.  It concludes what deriving the
tree concludes (``prove_records`` without the shortcut), and lints as the full read, for
every way results can hang off a response's lines, in every order, with every kind of
timestamp, sidechain and line after them; the fixtures' and corpus's sessions and their
damage are compared in tests/test_fast_path.py (``test_claude_code_linear_sessions_prove_as_their_tree_does``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from claude_sessions import assistant, call, entry, result, text, user
from support import FIXTURES
from test_fast_path import _options, _proof

from transcript_doctor import engine
from transcript_doctor.readers import typed_lines
from transcript_doctor.readers.claude_code import fast
from transcript_doctor.reporters import record

CALLS = 3


def _lines(
    parents: tuple[int, ...],
    order: tuple[int, ...],
    times: str,
    after: str,
    progress: bool = False,
    side: str = "",
    before: bool = False,
) -> bytes:
    """A prompt, a response of ``CALLS`` call lines (message m1), their results (result i
    answers call i, hangs off the line ``parents[i]``, in file order ``order``), then
    ``after``: nothing, a reply, a system line, a reply of message m1 again, a prompt off
    the first call line, a reply off the first result.  ``before``: the response's first
    call and its result come first (streamed tool execution: a line of message m1 before
    the response's run)."""
    records: list[dict[str, Any]] = [user("u0", None, 0, "go")]
    previous = "u0"
    if before:
        records.append(assistant("b", previous, 0, "m1", call("cb")))
        records.append(user("rb", "b", 1, result("cb")))
        previous = "rb"
    for i in range(CALLS):
        uuid = f"a{i}"
        records.append(assistant(uuid, previous, 1 + i, "m1", call(f"c{i}")))
        previous = uuid
        if progress:
            records.append(entry("progress", f"p{i}", uuid, 1 + i, data={"type": "hook_progress"}))
    seconds = {
        "rising": [10 + n for n in range(CALLS)],
        "equal": [10] * CALLS,
        "falling": [20 - n for n in range(CALLS)],
        "newer than the reply": [40 + n for n in range(CALLS)],
        "unparseable": [10 + n for n in range(CALLS)],
    }[times]
    for n, i in enumerate(order):
        parent = f"p{parents[i]}" if progress and n % 2 else f"a{parents[i]}"
        records.append(user(f"r{i}", parent, seconds[n], result(f"c{i}")))
    last = f"r{order[-1]}"
    if after == "reply":
        records.append(assistant("z", last, 30, "m2", text("done")))
    elif after == "system":
        records.append(entry("system", "s", last, 30, subtype="turn_duration"))
    elif after == "the same message":
        records.append(assistant("z", last, 30, "m1", text("done")))
    elif after == "a prompt off a call":
        records.append(user("z", "a0", 30, "again"))
    elif after == "a reply off a result":
        records.append(assistant("z", f"r{order[0]}", 30, "m2", text("done")))
    for each in records:
        if times == "unparseable" and each["type"] == "user" and each["uuid"].startswith("r"):
            each["timestamp"] = "soon"
        if side == "all" or (side == "results" and each["uuid"].startswith("r")):
            each["isSidechain"] = True
        if side == "leaf" and each["uuid"] == "z":
            each["isSidechain"] = True
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode()


AFTER = ("", "reply", "system", "the same message", "a prompt off a call", "a reply off a result")
TIMES = ("rising", "equal", "falling", "newer than the reply", "unparseable")
SHAPES = [
    (parents, order)
    for parents in itertools.product(range(CALLS), repeat=CALLS)
    for order in itertools.permutations(range(CALLS))
]


@pytest.mark.parametrize("after", AFTER)
@pytest.mark.parametrize("times", TIMES)
def test_parallel_results_prove_as_their_tree_does(times: str, after: str) -> None:
    shortcuts = 0
    for (parents, order), progress, before in itertools.product(SHAPES, (False, True), (False, True)):
        data = _lines(parents, order, times, after, progress, before=before)
        assert _proof(data, True) == _proof(data, False), (parents, order, progress)
        shortcuts += _shortcut(data)
    if times == "rising" and after in ("", "reply", "system"):
        assert shortcuts  # the shortcut's own case is among them


@pytest.mark.parametrize("side", ("all", "results", "leaf"))
@pytest.mark.parametrize("after", ("", "reply"))
def test_sidechains_prove_as_their_tree_does(side: str, after: str) -> None:
    for parents, order in SHAPES:
        data = _lines(parents, order, "rising", after, side=side)
        assert _proof(data, True) == _proof(data, False), (parents, order)


@pytest.mark.parametrize("times", TIMES)
def test_parallel_results_lint_as_the_full_read(times: str) -> None:
    for (parents, order), after in itertools.product(SHAPES[::4], AFTER):
        data = _lines(parents, order, times, after, progress=bool(order[0] % 2))
        fast_report, full = (engine.lint_bytes("s.jsonl", data, _options(screen)) for screen in (True, False))
        assert [record(fast_report, f) for f in fast_report.findings] == [
            record(full, f) for f in full.findings
        ], (parents, order, after)
        assert fast_report.reader == full.reader == "claude-code"


def _shortcut(data: bytes) -> bool:
    """Whether the proof concluded without deriving the tree."""
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.catalog import load

    derived: list[bool] = []
    tree = fast._prove_tree

    def spy(*args: Any) -> Any:
        derived.append(True)
        return tree(*args)

    fast._prove_tree = spy  # type: ignore[assignment]
    try:
        fast.prove_records(typed_lines.decoded(data, fast._DECODER), Screen(load()), True, data)
    finally:
        fast._prove_tree = tree  # type: ignore[assignment]
    return not derived


def test_a_sub_agent_session_of_parallel_calls_is_proven_without_its_tree() -> None:
    """A 2.1.x sub-agent session (parallel calls, progress lines): the shortcut's case."""
    path: Path = FIXTURES / "wild" / "claude-code" / "fabien-agent-a13e7f99d4492b.jsonl"
    data = path.read_bytes()
    assert _proof(data, True) == _proof(data, False) == (True,)
    assert _shortcut(data)


@pytest.mark.parametrize("after", ("", "reply", "system"))
def test_damaged_parallel_results_prove_as_their_tree_does(after: str) -> None:
    """Every damage of a line (``_variants``) and of its content (``_content_damage``: the
    screen doubts, and the model is built from the proof's chain), in sessions the
    shortcut takes."""
    from test_fast_path import _content_damage, _variants

    taken = [
        data
        for parents, order in SHAPES[::3]
        if _shortcut(data := _lines(parents, order, "rising", after, progress=bool(parents[0] % 2)))
    ]
    assert len(taken) > 10
    for data in taken:
        for variant in [*_variants(data), *_content_damage(data)]:
            assert _proof(variant, True) == _proof(variant, False)


def _chains(data: bytes, monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The chains the proof hands the screen (record indexes), with and without the
    shortcut: ``_proof`` compares conclusions, and a clean session's results in another
    order may be clean too."""
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.catalog import load

    seen: list[list[int]] = []
    turns = fast._turns

    def spy(chain: list[int], *args: Any) -> Any:
        seen.append(list(chain))
        return turns(chain, *args)

    with monkeypatch.context() as patched:
        patched.setattr(fast, "_turns", spy)
        for shortcut in (True, False):
            fast.prove_records(typed_lines.decoded(data, fast._DECODER), Screen(load()), shortcut, data)
    return seen


@pytest.mark.parametrize("after", ("", "reply", "system"))
def test_the_chain_is_the_trees(after: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for (parents, order), progress, before in itertools.product(SHAPES, (False, True), (False, True)):
        data = _lines(parents, order, "rising", after, progress, before=before)
        taken, derived = _chains(data, monkeypatch)
        assert taken == derived, (parents, order, progress)
    data = (FIXTURES / "wild" / "claude-code" / "fabien-agent-a13e7f99d4492b.jsonl").read_bytes()
    taken, derived = _chains(data, monkeypatch)
    assert taken == derived


def _corpus() -> list[Path]:
    from test_fast_path import CLAUDE, CLAUDE_SHARED

    return [p for p in CLAUDE + CLAUDE_SHARED if b'"tool_result"' in p.read_bytes()]


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_the_chain_is_the_trees_in_every_session_the_shortcut_takes(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fixture and corpus session, and every damage of it, with parallel results."""
    taken_chains_are_the_trees(path, "_parallel", monkeypatch)


def taken_chains_are_the_trees(path: Path, step: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a session and every damage of it whose proof asks ``fast.<step>`` (a shortcut's
    own check), the chain the proof hands the screen is the tree's."""
    from test_fast_path import _content_damage, _variants

    data = path.read_bytes()
    variants = [data] if len(data) > 40_000 else [data, *_variants(data), *_content_damage(data)]
    asked: list[bool] = []
    real = getattr(fast, step)

    def spy(*args: Any) -> Any:
        asked.append(True)
        return real(*args)

    monkeypatch.setattr(fast, step, spy)
    for variant in variants:
        asked.clear()
        chains = _chains(variant, monkeypatch)
        if asked and len(chains) == 2:
            assert chains[0] == chains[1]
