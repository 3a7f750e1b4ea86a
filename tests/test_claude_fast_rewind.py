"""The proof's shortcut for rewinds (``fast._rewound``): a session whose chain lines each
name the line before but at rewinds, which name an earlier line (Esc-Esc, a prompt
edited), is proven from its runs of lines without deriving the tree.  It concludes what
deriving the tree concludes (``prove_records`` without the shortcut), hands the screen the
tree's chain, and lints as the full read: rewinds to every earlier line (an abandoned one
too), one or two of them, with progress lines, system lines, sidechain lines, parallel
results, a response's message.id again off the chain, timestamps rising, falling, equal or
unparseable, and every damage of a line; the fixtures' and corpus's sessions and their
damage are compared in tests/test_fast_path.py (``test_claude_code_linear_sessions_prove_as_their_tree_does``)
and below (their chains)."""

from __future__ import annotations

import itertools
import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from claude_sessions import assistant, call, entry, result, text, user
from support import FIXTURES
from test_claude_fast_parallel import _chains, _shortcut, taken_chains_are_the_trees
from test_fast_path import CLAUDE, CLAUDE_SHARED, _content_damage, _options, _proof, _variants

from transcript_doctor import engine
from transcript_doctor.reporters import record

TIMES = ("rising", "falling", "equal", "leaf unparseable", "others unparseable", "all unparseable")
DECORATIONS = ("", "progress", "system", "sidechain abandoned", "sidechain leaf", "parallel", "same message")


def _turn(tag: str, parent: str | None, decoration: str) -> list[dict[str, Any]]:
    """A prompt, a call, its result and a reply (a progress line after the call, and the
    result hanging off it; or two parallel calls, each result off its own call's line;
    or the reply of the message of the session's first call)."""
    lines = [user(f"u{tag}", parent, 0, f"prompt {tag}")]
    lines.append(assistant(f"a{tag}", f"u{tag}", 0, f"m{tag}", call(f"c{tag}")))
    answered = f"a{tag}"
    if decoration == "progress":
        lines.append(entry("progress", f"p{tag}", f"a{tag}", 0, data={"type": "hook_progress"}))
        answered = f"p{tag}"
    if decoration == "parallel":
        lines.append(assistant(f"A{tag}", f"a{tag}", 0, f"m{tag}", call(f"C{tag}")))
        lines.append(user(f"R{tag}", f"A{tag}", 0, result(f"C{tag}")))
    lines.append(user(f"r{tag}", answered, 0, result(f"c{tag}")))
    reply = "m0" if decoration == "same message" and tag != "0" else f"n{tag}"
    lines.append(assistant(f"b{tag}", f"r{tag}", 0, reply, text(f"done {tag}")))
    if decoration == "system":
        lines.append(entry("system", f"s{tag}", f"b{tag}", 0, subtype="turn_duration"))
    return lines


def _session(targets: tuple[int | None, ...], times: str, decoration: str) -> bytes:
    """Two turns, then per target a rewind: a turn whose prompt names the line at that
    index of those written before (None: no parent), timestamps set by ``times``."""
    records = _turn("0", None, decoration)
    records += _turn("1", records[-1]["uuid"], decoration)
    segments = [0, len(records)]  # where each segment's lines start
    for n, target in enumerate(targets):
        parent = records[target]["uuid"] if target is not None else None
        records += _turn(str(n + 2), parent, decoration)
        segments.append(len(records))
    total = len(records)
    for n, each in enumerate(records):
        second = {"rising": n, "falling": total - n, "equal": 7}.get(times, n)
        each["timestamp"] = entry("user", "x", None, second)["timestamp"]
        unparseable = {
            "leaf unparseable": n == total - 1,
            "others unparseable": n != total - 1,
            "all unparseable": True,
        }.get(times, False)
        if unparseable:
            each["timestamp"] = "soon"
    if decoration == "sidechain abandoned":
        for each in records[segments[-3] : segments[-2]]:
            each["isSidechain"] = True
    if decoration == "sidechain leaf":
        for each in records[segments[-2] :]:
            each["isSidechain"] = True
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode()


def _shapes(decoration: str) -> list[tuple[int | None, ...]]:
    """One rewind to every line written before it (or to none), and two: the second to
    every line written before it, after a rewind to the session's start or to its middle."""
    size = 2 * len(_turn("0", None, decoration))
    one: list[tuple[int | None, ...]] = [(None,), *((i,) for i in range(size))]
    turn = len(_turn("0", None, decoration))
    two = [(first, second) for first in (0, turn - 1) for second in (None, *range(size + turn))]
    return one + two


@pytest.mark.parametrize("decoration", DECORATIONS)
@pytest.mark.parametrize("times", TIMES)
def test_rewinds_prove_as_their_tree_does(
    times: str, decoration: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    shortcuts = 0
    for targets in _shapes(decoration):
        data = _session(targets, times, decoration)
        assert _proof(data, True) == _proof(data, False), targets
        chains = _chains(data, monkeypatch)
        if len(chains) == 2:
            assert chains[0] == chains[1], targets
        shortcuts += _shortcut(data)
    if decoration in ("", "progress", "system", "sidechain abandoned", "sidechain leaf"):
        assert shortcuts  # the shortcut's own cases are among them
    if decoration == "same message":
        assert shortcuts < len(_shapes(decoration))  # the tree recovers a line off the chain


def test_the_shortcut_is_taken_where_it_is_exact() -> None:
    """A rewind to the first turn's reply, times rising: the leaf is the last turn; the
    abandoned branch newer: its leaf is; both without the tree.  Parallel results after
    the rewind are the tree's to recover."""
    for times in ("rising", "falling"):
        data = _session((3,), times, "")
        assert _shortcut(data)
        assert _proof(data, True) == _proof(data, False) == (True,)
    assert not _shortcut(_session((3,), "rising", "parallel"))
    fixture = (FIXTURES / "claude-code" / "clean-rewound-branch.jsonl").read_bytes()
    assert _shortcut(fixture)


@pytest.mark.parametrize("decoration", ("", "progress", "system"))
def test_rewinds_lint_as_the_full_read(decoration: str) -> None:
    for targets, times in itertools.product(_shapes(decoration)[::3], TIMES[:3]):
        data = _session(targets, times, decoration)
        fast_report, full = (engine.lint_bytes("s.jsonl", data, _options(screen)) for screen in (True, False))
        assert [record(fast_report, f) for f in fast_report.findings] == [
            record(full, f) for f in full.findings
        ], (targets, times)
        assert fast_report.reader == full.reader == "claude-code"


@pytest.mark.parametrize("decoration", ("", "progress", "system"))
def test_damaged_rewinds_prove_as_their_tree_does(decoration: str) -> None:
    """Every damage of a line (``_variants``) and of its content (``_content_damage``: the
    screen doubts, and the model is built from the proof's chain), in sessions the
    shortcut takes."""
    taken = [
        data
        for targets in _shapes(decoration)[::4]
        if _shortcut(data := _session(targets, "rising", decoration))
    ]
    assert len(taken) > 3
    for data in taken:
        for variant in [*_variants(data), *_content_damage(data)]:
            assert _proof(variant, True) == _proof(variant, False)


@pytest.mark.parametrize("path", CLAUDE + CLAUDE_SHARED, ids=lambda p: p.name)
def test_the_chain_is_the_trees_in_every_session_the_shortcut_takes(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fixture and corpus session, and every damage of it, that rewinds."""
    taken_chains_are_the_trees(path, "_rewound", monkeypatch)


def _rewinds_of(data: bytes) -> list[bytes]:
    """The session with a rewind made of each of its first prompts after the first: the
    prompt names the parent of a prompt before it (the previous one, and the first), as
    Claude Code writes a prompt edited with Esc-Esc."""
    try:
        records = [json.loads(line) for line in data.splitlines()]
    except ValueError:
        return []
    prompts = [
        i
        for i, r in enumerate(records)
        if isinstance(r, dict)
        and r.get("type") == "user"
        and isinstance((r.get("message") or {}).get("content"), str)
    ]
    found: list[bytes] = []
    for before, at in itertools.islice(pairwise(prompts), 12):
        for earlier in {prompts[0], before}:
            changed = [dict(r) if isinstance(r, dict) else r for r in records]
            changed[at]["parentUuid"] = records[earlier].get("parentUuid")
            found.append("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in changed).encode())
    return found


@pytest.mark.parametrize("path", CLAUDE + CLAUDE_SHARED, ids=lambda p: p.name)
def test_rewinds_made_in_every_session_prove_as_their_tree_does(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fixture and corpus session with a prompt rewound: the shapes real sessions
    hold (progress lines, sidechains, parallel results, API errors) around a rewind."""
    for variant in _rewinds_of(path.read_bytes()):
        assert _proof(variant, True) == _proof(variant, False)
        chains = _chains(variant, monkeypatch)
        if len(chains) == 2:
            assert chains[0] == chains[1]
