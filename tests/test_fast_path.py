"""The fast paths never change a finding or a repaired byte.

Readers may prove a file (or a conversation) clean without building its model (the
message-list screen, ``analysis/screen.py``, and the typed fast path of Claude Code
sessions, ``readers/claude_code/fast.py``, of Pi sessions, ``readers/pi/fast.py``, of Mistral
Vibe sessions, ``readers/mistral_vibe/fast.py``, of openworker conversations,
``readers/openworker/fast.py``, of Qwen Code sessions, ``readers/qwen_code/fast.py``, of
Codex rollouts, ``readers/codex/fast.py``, of Copilot CLI event logs,
``readers/copilot_cli/fast.py``, and of the lines of Anthropic and OpenAI fine-tuning
files, ``readers/anthropic_messages/fast.py`` and ``readers/openai_chat/fast.py``, a line
it does not prove read alone; ``opencode export`` documents screened as parsed,
``readers/opencode/screening.py``; Gemini CLI streams replayed from typed records,
``readers/gemini_cli/fast.py``, a line that does not decode read alone; Gemini CLI sessions and Qwen Code chains screened from their
records or their built conversation, ``gemini_cli/reader._plain_turns`` and
``gemini_content.screen_turns``), and detection asks only the readers whose
``first_keys`` the file's first record holds (and settles a Claude Code session from the
typed records of its proof, ``Reader.decide``, with no head parsed; a session whose chain
lines each name the one before is proven without deriving its tree).  ``engine.Options.screen`` turns every such
shortcut off.  Here every fixture and every
file of the shared corpus (``shared/corpus`` beside the checkout, as the developers'
worktrees have it; absent on a bare clone, where only the fixtures run) is linted and
fixed both ways, and the findings (as ``-o json`` prints them), the repaired bytes and
the repairs applied must be identical.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import FIXTURES, SHARED, _catalog, corpus_id, json_files

from transcript_doctor import engine, fixer, readers
from transcript_doctor.checks import Selection
from transcript_doctor.reporters import record
from transcript_doctor.source import Container, NotJson, sniff

FILES = [*json_files(FIXTURES), *json_files(SHARED)]
_id = corpus_id


def _options(screen: bool, unsafe: bool = False) -> engine.Options:
    return engine.Options(Selection.build(("ALL",)), _catalog(), screen=screen, unsafe_fixes=unsafe)


def test_there_are_files_to_compare() -> None:
    assert len(json_files(FIXTURES)) > 100
    if SHARED.is_dir():
        assert any(p.parent.name == "claude-code" for p in json_files(SHARED))


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_fast_and_full_paths_agree(path: Path) -> None:
    data = path.read_bytes()
    name = path.name
    reports = [engine.lint_bytes(name, data, _options(screen)) for screen in (True, False)]
    fast, full = ([record(r, f) for f in r.findings] for r in reports)
    assert fast == full
    assert (reports[0].reader, reports[0].skipped, reports[0].error) == (
        reports[1].reader,
        reports[1].skipped,
        reports[1].error,
    )
    if not full:
        return  # nothing to repair: fix writes the bytes back as they are
    for unsafe in (False, True):
        fast_fix, full_fix = (
            fixer.fix_bytes(name, data, _options(screen, unsafe)) for screen in (True, False)
        )
        assert fast_fix.after == full_fix.after
        assert [(a.rule, a.line, a.action) for a in fast_fix.applied] == [
            (a.rule, a.line, a.action) for a in full_fix.applied
        ]
        assert fast_fix.error == full_fix.error


CLAUDE = sorted(
    p
    for p in [
        *(FIXTURES / "claude-code").glob("*.jsonl"),
        *(FIXTURES / "wild" / "claude-code").glob("*.jsonl"),
    ]
    if p.stat().st_size < 40_000
)


def _variants(data: bytes) -> list[bytes]:
    """Damage of every kind a line can take, one line at a time: the file without it,
    with it twice, cut in its middle, glued to the next, with a byte that is not UTF-8,
    with a lone surrogate, with a number beyond a double (JSON.parse reads it, orjson
    does not, msgspec skips it), with a line of blanks after it, and with CRLF."""
    lines = data.split(b"\n")
    found: list[bytes] = []
    for i, line in enumerate(lines[:60]):
        if not line:
            continue
        before, after = lines[:i], lines[i + 1 :]
        for changed in (
            [],
            [line, line],
            [line[: len(line) // 2]],
            [line + (after[0] if after else b"")],
            [line.replace(b'"text":"', b'"text":"\xff', 1)],
            [line.replace(b'"text":"', b'"text":"\\ud800', 1)],
            [line.replace(b'"timestamp":"', b'"n":1e400,"timestamp":"', 1)],
            [line, b"  "],
            [line + b"\r"],
        ):
            found.append(b"\n".join([*before, *changed, *after]))
    return found


def _replaced(lines: list[bytes], i: int, edits: tuple[tuple[bytes, bytes], ...]) -> list[bytes]:
    """The file once per edit whose old bytes line ``i`` holds, that line edited (once)."""
    line = lines[i]
    return [
        b"\n".join([*lines[:i], line.replace(old, new, 1), *lines[i + 1 :]])
        for old, new in edits
        if old in line
    ]


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.name)
def test_claude_code_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of a Claude Code session lints the same with and without the fast
    path: a proof that misses damage would show here as a missing finding."""
    for data in _variants(path.read_bytes()):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]


def _content_damage(data: bytes) -> list[bytes]:
    """Damage that keeps a session's structure (every line decodes, every link holds), one
    line at a time: what the typed proof covers and hands to the screen, which doubts, so
    that the model is built from the proof's chain from the screen's cut on.  A text made
    empty, blank, given a trailing blank or a placeholder, a thinking block unsigned, a
    result answering another call, a call id repeated, a line marked an API error, a line
    written twice (every third)."""
    lines = data.split(b"\n")
    found: list[bytes] = []
    for i, line in enumerate(lines[:80]):
        found += _replaced(
            lines,
            i,
            (
                (b'"text":"', b'"text":"  "  ,"x":"'),
                (b'"text":"', b'"text":"","x":"'),
                (b'"text":"', b'"text":"[Request interrupted by user]","x":"'),
                (b'","type":"text"', b' ","type":"text"'),
                (b'"signature":"', b'"signature":"","x":"'),
                (b'"tool_use_id":"', b'"tool_use_id":"other-'),
                (b'"type":"tool_use","id":"', b'"type":"tool_use","id":"toolu_again","x":"'),
                (b'"type":"assistant"', b'"isApiErrorMessage":true,"type":"assistant"'),
            ),
        )
        if b'"uuid"' in line and i % 3 == 0:
            found.append(b"\n".join([*lines[: i + 1], line, *lines[i + 1 :]]))  # written twice
    return found


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.name)
def test_claude_code_doubted_sessions_build_the_same(path: Path) -> None:
    """A session the typed proof covers and the screen doubts is built from the proof's
    chain, from the screen's cut on (``reader._doubted``): its findings and its repairs
    (safe and unsafe) are the full read's, for content damage on any line."""
    for data in _content_damage(path.read_bytes()):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        if not full.findings:
            continue
        for unsafe in (False, True):
            fast_fix, full_fix = (
                fixer.fix_bytes(path.name, data, _options(screen, unsafe)) for screen in (True, False)
            )
            assert fast_fix.after == full_fix.after
            assert [(a.rule, a.line, a.action) for a in fast_fix.applied] == [
                (a.rule, a.line, a.action) for a in full_fix.applied
            ]


@pytest.mark.parametrize("path", CLAUDE[:12], ids=lambda p: p.name)
def test_claude_code_doubted_sessions_with_empty_lines_build_the_same(path: Path) -> None:
    """Empty lines are no records, but they count as lines: a session built from the
    proof's chain reports the line numbers of the full read (a message's own line too)."""
    for data in _content_damage(path.read_bytes()):
        for variant in (b"\n\n" + data, data.replace(b"\n", b"\n\n", 3)):
            fast, full = (engine.lint_bytes(path.name, variant, _options(screen)) for screen in (True, False))
            assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.name)
def test_claude_code_doubted_sessions_link_as_the_full_read(path: Path) -> None:
    """What a fix re-points (``FileRef``: children, versions, the leaf's path…) is the full
    read's for a session built from the proof's chain, a line written twice included."""
    for data in _content_damage(path.read_bytes()):
        fast, full = (engine.inspect(path.name, data, _options(screen))[1] for screen in (True, False))
        assert fast is not None and full is not None
        if fast.conversations:
            assert [c.ref for c in fast.conversations] == [c.ref for c in full.conversations]


def test_a_doubted_claude_code_session_is_read_from_the_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean session with damage in its last turn is not read in full (the full read is
    made to fail), and only the lines from the screen's cut on are parsed for parts."""
    from transcript_doctor.readers.claude_code import reader as claude

    path = FIXTURES / "claude-code" / "damaged-duplicate-tool-result.jsonl"
    data = path.read_bytes()
    full = engine.lint_bytes(path.name, data, _options(False))
    built: list[int] = []
    doubted = claude._doubted

    def spy(source: object, doubt: object, start: int, dialect: object) -> object:
        built.append(start)
        return doubted(source, doubt, start, dialect)  # type: ignore[arg-type]

    def refuse(self: object, source: object) -> object:
        raise AssertionError("the full read ran")

    monkeypatch.setattr(claude, "_doubted", spy)
    monkeypatch.setattr(claude.ClaudeCodeReader, "read", refuse)
    fast = engine.lint_bytes(path.name, data, _options(True))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert [f.finding.rule.code for f in fast.findings] == ["TD303"]
    assert built == [9]


def test_a_doubted_linear_claude_code_session_makes_entries_only_from_the_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The proof of a linear session the screen doubts makes an ``Entry`` only for the
    chain lines the reader builds (from the screen's cut): one per line before it cost as
    much as the proof on a long session doubted near its end."""
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.readers.claude_code import fast as claude_fast

    path = FIXTURES / "claude-code" / "damaged-duplicate-tool-result.jsonl"
    data = path.read_bytes()
    screen = Screen(_catalog())
    doubt = claude_fast.prove(data, screen)
    assert isinstance(doubt, claude_fast.Doubt)
    chain = [entry.index for entry in doubt.chain]
    assert screen.cut == 9 and len(doubt.written) > len(chain) - screen.cut
    made: list[int] = []
    entries = claude_fast._entries

    def counted(records: Any, at: list[int]) -> Any:
        made.extend(at)
        return entries(records, at)

    monkeypatch.setattr(claude_fast, "_entries", counted)
    full = engine.lint_bytes(path.name, data, _options(False))
    made.clear()
    fast = engine.lint_bytes(path.name, data, _options(True))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert made == chain[screen.cut :]


CLAUDE_SHARED = [p for p in json_files(SHARED) if "claude" in p.parent.name and p.suffix == ".jsonl"]


def _proof(data: bytes, shortcut: bool) -> tuple[object, ...]:
    """What the typed proof concludes of a session: proven, doubted (and the screen's cut,
    the chain and leaf it hands the reader), or not covered."""
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.readers.claude_code import fast

    screen = Screen(_catalog())
    records = fast.decoded(data, fast._DECODER)
    proof = fast.prove(data, screen) if shortcut else fast.prove_records(records, screen, False, data)
    if isinstance(proof, fast.Doubt):
        leaf = proof.leaf.uuid if proof.leaf is not None else None
        chain = [e.index for e in proof.chain]
        return ("doubt", screen.cut, chain, leaf, sorted(proof.written), proof.copies)
    return (proof,)


@pytest.mark.parametrize("path", CLAUDE + CLAUDE_SHARED, ids=lambda p: p.name)
def test_claude_code_linear_sessions_prove_as_their_tree_does(path: Path) -> None:
    """The proof takes a session whose chain lines each name the one before (progress
    lines bridged) as its own chain, without ``newest_leaf`` and ``walk``: it concludes
    what deriving the tree concludes, for every session and every damage of it."""
    data = path.read_bytes()
    variants = [data] if path.stat().st_size > 40_000 else [data, *_variants(data), *_content_damage(data)]
    for variant in variants:
        assert _proof(variant, True) == _proof(variant, False)


def _session(*lines: tuple[str, str, str | None]) -> bytes:
    """A Claude Code session of (type, uuid, parentUuid) lines: prompts, replies, progress."""
    out = []
    for number, (kind, uuid, parent) in enumerate(lines):
        record: dict[str, object] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "sessionId": "s",
            "type": kind,
            "uuid": uuid,
            "timestamp": f"2026-01-01T00:00:{number:02d}.000Z",
        }
        if kind == "user":
            record["message"] = {"role": "user", "content": f"question {uuid}"}
        elif kind == "assistant":
            record["message"] = {
                "id": f"msg_{uuid}",
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
            }
        else:
            record["data"] = {"type": "hook_progress"}
        out.append(orjson.dumps(record))
    return b"\n".join(out) + b"\n"


LINKS = {
    "linear": _session(
        ("user", "u1", None), ("assistant", "a1", "u1"), ("user", "u2", "a1"), ("assistant", "a2", "u2")
    ),
    "progress bridged": _session(
        ("progress", "p0", None),
        ("user", "u1", "p0"),
        ("assistant", "a1", "u1"),
        ("progress", "p1", "a1"),
        ("progress", "p2", "p1"),
        ("user", "u2", "p2"),
        ("assistant", "a2", "u2"),
        ("progress", "p3", "a2"),
    ),
    "progress linked forwards": _session(
        ("user", "u1", None),
        ("assistant", "a1", "u1"),
        ("progress", "p1", "p2"),
        ("progress", "p2", "a1"),
        ("user", "u2", "p1"),
        ("assistant", "a2", "u2"),
    ),
    "progress its own parent": _session(
        ("user", "u1", None),
        ("assistant", "a1", "u1"),
        ("progress", "p1", "p1"),
        ("user", "u2", "p1"),
        ("assistant", "a2", "u2"),
    ),
    "root's parent a later line": _session(
        ("user", "u1", "a2"),
        ("assistant", "a1", "u1"),
        ("user", "u2", "a1"),
        ("assistant", "a2", "u2"),
    ),
    "root's parent a progress line": _session(
        ("progress", "p0", "a2"),
        ("user", "u1", "p0"),
        ("assistant", "a1", "u1"),
        ("user", "u2", "a1"),
        ("assistant", "a2", "u2"),
    ),
    "root's parent unknown": _session(("user", "u1", "gone"), ("assistant", "a1", "u1")),
    "rewound": _session(
        ("user", "u1", None),
        ("assistant", "a1", "u1"),
        ("user", "u2", "a1"),
        ("user", "u3", "a1"),
        ("assistant", "a3", "u3"),
    ),
    "progress after the last turn": _session(
        ("user", "u1", None), ("progress", "p0", "u1"), ("progress", "p1", "p0")
    ),
    "a prompt last": _session(("user", "u1", None), ("assistant", "a1", "u1"), ("user", "u2", "a1")),
}


@pytest.mark.parametrize("name", LINKS)
def test_claude_code_links_are_followed_as_the_tree_follows_them(name: str) -> None:
    """Links the linear shortcut must hand to the tree (forwards, cycles, broken): the
    proof and the lint are the full read's."""
    data = LINKS[name]
    assert _proof(data, True) == _proof(data, False)
    fast, full = (engine.lint_bytes("s.jsonl", data, _options(screen)) for screen in (True, False))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert fast.reader == full.reader == "claude-code"


def test_the_fast_path_proves_clean_sessions_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clean Claude Code sessions are not read into a model at all (the full read is made
    to fail here), and with the fast paths off they are."""
    from transcript_doctor.readers.claude_code.reader import ClaudeCodeReader

    clean = [p for p in CLAUDE if not engine.lint_bytes(p.name, p.read_bytes(), _options(False)).findings]

    def refuse(self: object, source: object) -> object:
        raise AssertionError("the full read ran")

    monkeypatch.setattr(ClaudeCodeReader, "read", refuse)
    assert len(clean) > 10
    for path in clean:
        report = engine.lint_bytes(path.name, path.read_bytes(), _options(True))
        assert (report.reader, report.findings, report.error) == ("claude-code", [], None), path.name
    with pytest.raises(AssertionError, match="the full read ran"):
        engine.lint_bytes(clean[0].name, clean[0].read_bytes(), _options(False))


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_readers_declare_only_first_keys_their_detection_requires(path: Path) -> None:
    """A reader that claims a file (asked directly, as without dispatch) finds one of its
    ``first_keys`` in the file's first record: dispatch never hides a file from it."""
    try:
        source = sniff(path.name, path.read_bytes())
    except NotJson:
        return
    if source.container is Container.JSON and source.value is None:
        return  # does not parse: no reader is asked
    keys = readers.first_keys(source)
    for reader in readers.all_readers():
        if reader.first_keys is not None and readers.claim(reader, source) is not None:
            assert not reader.first_keys.isdisjoint(keys), reader.name


PI = sorted(
    p for p in (FIXTURES / "pi").rglob("*.jsonl") if "sessions" in p.parts or p.parent.name == "derived"
)


@pytest.mark.parametrize("path", PI, ids=lambda p: p.name)
def test_pi_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of a Pi session (``_variants``) lints the same with and without the
    typed fast path (``readers/pi/fast.py``)."""
    for data in _variants(path.read_bytes()):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]


# Recorded sessions of plain turns (text, thinking, tool calls and results): the fast path's
# domain.  Compactions, error or aborted attempts and branches are read in full.
PI_PLAIN = ("clean", "tools", "parallel", "thinking", "fixed-resume", "kill-stream-step2")


def test_the_pi_fast_path_proves_clean_sessions_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clean Pi sessions of plain turns are not read into a model at all (the full read is
    made to fail here); a session with findings is."""
    from transcript_doctor.readers.pi.reader import PiReader

    plain = [p for p in PI if "sessions" in p.parts and p.parents[2].name in PI_PLAIN]
    damaged = [p for p in PI if engine.lint_bytes(p.name, p.read_bytes(), _options(False)).findings]

    def refuse(self: object, source: object) -> object:
        raise AssertionError("the full read ran")

    monkeypatch.setattr(PiReader, "read", refuse)
    assert len(plain) == len(PI_PLAIN)
    for path in plain:
        report = engine.lint_bytes(path.name, path.read_bytes(), _options(True))
        assert (report.reader, report.findings, report.error) == ("pi", [], None), path.name
    for path in damaged:
        with pytest.raises(AssertionError, match="the full read ran"):
            engine.lint_bytes(path.name, path.read_bytes(), _options(True))


GEMINI = sorted(p for p in FIXTURES.rglob("*.jsonl") if "gemini-cli" in p.parts and p.stat().st_size < 40_000)


def _gemini_variants(data: bytes) -> list[bytes]:
    """``_variants`` and the stream's own edits damaged: a ``$rewindTo`` or ``$set`` whose
    value is of another type, an id that is not a string."""
    found = _variants(data)
    for old, new in (
        (b'"$rewindTo":"', b'"$rewindTo":1,"x":"'),
        (b'"$set":{', b'"$set":[{'),
        (b'"$set":{', b'"$set":null,"y":{'),
        (b'"id":"', b'"id":7,"x":"'),
        (b'"messages":[', b'"messages":{"x":['),
    ):
        start = data.find(old)
        while start >= 0:
            found.append(data[:start] + new + data[start + len(old) :])
            start = data.find(old, start + 1)
    return found


@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.name)
def test_gemini_cli_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of a Gemini CLI stream lints the same whether it is replayed from
    typed records (``readers/gemini_cli/fast.py``) or from parsed lines."""
    for data in _gemini_variants(path.read_bytes()):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        assert (fast.reader, fast.skipped, fast.error) == (full.reader, full.skipped, full.error)


def test_gemini_cli_streams_are_replayed_from_typed_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream whose every line decodes is replayed without the full read (made to fail):
    from its typed records, or from the records detection parsed when it is shorter than
    the head (every stream here; tests/test_gemini_fast.py forces the typed replay on
    each), and its findings are the full read's."""
    from transcript_doctor.readers.gemini_cli.reader import GeminiCliReader

    def refuse(self: object, source: object) -> object:
        raise AssertionError("the full read ran")

    checked = 0
    for path in GEMINI:
        data = path.read_bytes()
        full = engine.lint_bytes(path.name, data, _options(False))
        if full.reader != "gemini-cli" or any(f.finding.rule.code == "TD001" for f in full.findings):
            continue
        checked += 1
        with monkeypatch.context() as patch:
            patch.setattr(GeminiCliReader, "_stream", refuse)
            fast = engine.lint_bytes(path.name, data, _options(True))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings], path.name
    assert checked > 10


VIBE = sorted(
    p
    for p in (FIXTURES / "mistral-vibe").rglob("messages*.jsonl")
    if p.stat().st_size < 40_000 and ("sessions" in p.parts or "damaged" in p.parts)
)


def _vibe_variants(data: bytes) -> list[bytes]:
    """``_variants``, and a Vibe line's own fields damaged: a key the screen does not
    read, ``content`` or ``tool_call_id`` of another type, a call without its id, an
    invalid byte, a lone surrogate, a raw control character and a number beyond a double
    where msgspec skips them (a call's arguments, ``message_id``), NaN, nesting deeper
    than orjson takes, empty lines, and a BOM."""
    found = _variants(data)
    deep = b"[" * 1100 + b"]" * 1100
    for old, new in (
        (b'"content": "', b'"content": "\xff'),
        (b'"content": "', b'"reasoning_content": "x", "content": "'),
        (b'"content": "', b'"content": 7, "x": "'),
        (b'"content": "', b'"content": null, "x": "'),
        (b'"tool_call_id": "', b'"tool_call_id": 1, "x": "'),
        (b'"id": "', b'"id": null, "x": "'),
        (b'"arguments": "', b'"arguments": "\xc3\x28'),
        (b'"arguments": "', b'"arguments": "\\udc00'),
        (b'"arguments": "', b'"arguments": "\x01'),
        (b'"message_id": "', b'"message_id": 1e400, "x": "'),
        (b'"message_id": "', b'"message_id": NaN, "x": "'),
        (b'"message_id": "', b'"message_id": ' + deep + b', "x": "'),
        (b'"injected": false', b'"injected": "no"'),
        (b'"reasoning_content": "', b'"reasoning_content": " ", "x": "'),
        (b'"reasoning_content": "', b'"reasoning_content": 5, "y": "'),
        (b'"content": "', b'"reasoning_content": "hm", "content": "'),
        (b'"content": "', b'"reasoning_content": "hm", "content": " ", "x": "'),
        (b'"content": "', b'"reasoning_content": "hm", "content": "", "x": "'),
        (b'"content": "', b'"images": [], "content": "'),
        (b"\n", b"\n\n"),
        (b"\n", b"\r\n"),
    ):
        start = data.find(old)
        while start >= 0:
            found.append(data[:start] + new + data[start + len(old) :])
            start = data.find(old, start + 1)
    found += [b"\n" + data, b"\xef\xbb\xbf" + data, data + b"\n"]
    return found


@pytest.mark.parametrize("path", VIBE, ids=lambda p: p.parent.name)
def test_mistral_vibe_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of a Mistral Vibe session lints the same with and without the typed
    fast path (``readers/mistral_vibe/fast.py``)."""
    name = f"{path.parent.name}/messages.jsonl"  # Vibe's own path when it is one
    for data in _vibe_variants(path.read_bytes()):
        fast, full = (engine.lint_bytes(name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        assert (fast.reader, fast.skipped, fast.error) == (full.reader, full.skipped, full.error)


def test_the_mistral_vibe_fast_path_proves_clean_sessions_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clean Vibe sessions of text and tool exchanges are not parsed into dicts at all (the
    line parser is made to fail); a session with findings is read in full."""
    from transcript_doctor.source import Source

    recorded = [p for p in VIBE if "sessions" in p.parts]
    clean = [p for p in recorded if not engine.lint_bytes(p.name, p.read_bytes(), _options(False)).findings]
    damaged = [p for p in VIBE if engine.lint_bytes(p.name, p.read_bytes(), _options(False)).findings]

    def refuse(self: object, lines: object = None) -> object:
        raise AssertionError("the full read ran")

    monkeypatch.setattr(Source, "records", refuse)
    proved = 0
    for path in clean:
        data = path.read_bytes()
        roles = [json.loads(line)["role"] for line in data.splitlines()]
        if any(a == b == "user" for a, b in itertools.pairwise(roles)):
            continue  # two prompts in a row (TD403 possible)
        report = engine.lint_bytes(path.name, data, _options(True))
        assert (report.reader, report.findings, report.error) == ("mistral-vibe", [], None), path
        proved += 1
    assert proved >= 15
    assert damaged
    for path in damaged:
        with pytest.raises(AssertionError, match="the full read ran"):
            engine.lint_bytes(path.name, path.read_bytes(), _options(True))


ANTHROPIC_DOCUMENTS = sorted(
    p
    for p in (FIXTURES / "anthropic-messages").glob("*.json")
    if p.stat().st_size < 200_000 and p.name not in ("task_metadata.json", "ui_messages.json")
)


def _message_list_variants(value: object) -> list[object]:
    """A message list changed one message at a time: left out, written twice, its content
    emptied, made a string, made a whitespace text or given a Roo reasoning block or an
    unsigned thinking block first, its blocks reordered, one left out or written twice,
    its first text alone, a result block added; and a Roo reasoning item put before it."""
    items = value if isinstance(value, list) else value["messages"]  # type: ignore[index]
    found: list[list[object]] = []
    for i, item in enumerate(items[:40]):
        before, after = items[:i], items[i + 1 :]
        changed: list[list[object]] = [[], [item, item], [{"type": "reasoning", "summary": []}, item]]
        if isinstance(item, dict):
            content = item.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
            for new in (
                [],
                "",
                " ",
                "Done.\n",
                [{"type": "reasoning", "text": "hm"}, *blocks],
                [{"type": "thoughtSignature", "thoughtSignature": "c2ln"}, *blocks],
                [{"type": "reasoning", "text": ""}],
                [{"type": "thinking", "thinking": "hm"}, *blocks],
                blocks[1:],
                # Cline's text answers: reordered, one left out or written twice, alone as
                # a string, beside a result block.
                blocks[::-1],
                [*blocks[:1], *blocks],
                [*blocks[:1], *blocks[2:]],
                str(blocks[0].get("text", "")) if blocks and isinstance(blocks[0], dict) else "",
                [*blocks, {"type": "tool_result", "tool_use_id": "toolu_x", "content": "ok"}],
            ):
                changed.append([{**item, "content": new}])
        found += [[*before, *change, *after] for change in changed]
    if isinstance(value, list):
        return list(found)
    return [{**value, "messages": messages} for messages in found]  # type: ignore[dict-item]


@pytest.mark.parametrize("path", ANTHROPIC_DOCUMENTS, ids=lambda p: p.name)
def test_anthropic_message_list_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of an Anthropic / Cline / Roo Code message list lints the same with and
    without the screen (bookkeeping keys, Roo reasoning items and blocks are screened)."""
    for value in _message_list_variants(json.loads(path.read_bytes())):
        data = json.dumps(value).encode()
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        assert (fast.reader, fast.skipped, fast.error) == (full.reader, full.skipped, full.error)


def test_a_doubted_mistral_vibe_session_is_read_from_the_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session the typed proof covers and the screen doubts is parsed only from the
    screen's cut (the lines before it are never parsed into dicts), and finds what the
    full read finds."""
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.source import Source

    path = (
        FIXTURES
        / "mistral-vibe"
        / "tools"
        / "sessions"
        / "session_20261202_003735_343a3d07"
        / "messages.jsonl"
    )
    lines = path.read_bytes().splitlines(keepends=True)
    data = b"".join([*lines, lines[0]])  # a new prompt after the last answer: nothing to flag
    data += b'{"role": "assistant", "content": "", "injected": false, "message_id": "m-empty"}\n'  # TD103
    full = engine.lint_bytes(path.name, data, _options(False))
    assert [f.finding.rule.code for f in full.findings] == ["TD103"]
    parsed: list[int] = []
    records = Source.records

    def counting(self: Source, chosen: object = None) -> object:
        for line, value in records(self, chosen):  # type: ignore[arg-type]
            parsed.append(line.index)
            yield line, value

    monkeypatch.setattr(Source, "records", counting)
    fast = engine.lint_bytes(path.name, data, _options(True))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert parsed == list(range(len(lines), len(lines) + 2))
    source = sniff(path.name, data)
    reader = readers.by_name("mistral-vibe")
    assert reader is not None
    (built,) = reader.read_screened(source, Screen(_options(True).catalog))
    assert built.messages[0].origin.line == len(lines) + 1


OPENWORKER = sorted((FIXTURES / "openworker").glob("*.jsonl"))


def _openworker_variants(data: bytes) -> list[bytes]:
    """``_variants``, and an openworker line's own fields damaged: a role, kind, id, ``ts``
    or sidecar of another type, a thinking block unsigned or of another kind, a content
    part that is no text, a stamp shared by two prompts, an invalid byte, a number beyond
    a double and nesting where msgspec skips them, NaN, empty lines, and a BOM."""
    found = _variants(data)
    deep = b"[" * 1100 + b"]" * 1100
    for old, new in (
        (b'"role": "user"', b'"role": 5'),
        (b'"role": "assistant"', b'"role": "model"'),
        (b'"kind": "', b'"kind": 1, "x": "'),
        (b'"tool_call_id": "', b'"tool_call_id": null, "x": "'),
        (b'"id": "', b'"id": 7, "x": "'),
        (b'"id": "', b'"id": null, "x": "'),
        (b'"ts": ', b'"ts": true, "x": '),
        (b'"ts": ', b'"ts": "1", "x": '),
        (b'"ts": ', b'"ts": 1786543211.7514741, "x": '),
        (b'"ts": ', b'"ts": 1e400, "x": '),
        (b'"ts": ', b'"ts": NaN, "x": '),
        (b'"_anthropic": {', b'"_anthropic": "x", "y": {'),
        (b'"blocks": [', b'"blocks": {"x": ['),
        (b'"signature": "', b'"signature": "", "x": "'),
        (b'"signature": "', b'"signature": 3, "x": "'),
        (b'"type": "thinking"', b'"type": "text"'),
        (b'"type": "redacted_thinking"', b'"type": "thinking"'),
        (b'"content": "', b'"content": [{"type": "text", "text": "a"}], "x": "'),
        (b'"content": "', b'"content": [{"type": "image_url"}], "x": "'),
        (b'"content": "', b'"content": [], "x": "'),
        (b'"content": "', b'"content": 3, "x": "'),
        (b'"content": "', b'"content": "\xff'),
        (b'"arguments": "', b'"arguments": "\\udc00'),
        (b'"usage": {', b'"usage": {"n": 1e400, "d": ' + deep + b", "),
        (b"\n", b"\n\n"),
    ):
        start = data.find(old)
        while start >= 0:
            found.append(data[:start] + new + data[start + len(old) :])
            start = data.find(old, start + 1)
    found += [b"\n" + data, b"\xef\xbb\xbf" + data]
    return found


@pytest.mark.parametrize("path", OPENWORKER, ids=lambda p: p.name)
def test_openworker_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of an openworker conversation lints the same with and without the
    typed proof (``readers/openworker/fast.py``)."""
    for data in _openworker_variants(path.read_bytes()):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        assert (fast.reader, fast.skipped, fast.error) == (full.reader, full.skipped, full.error)


def test_the_openworker_fast_path_proves_clean_conversations_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean openworker conversation, however short, is not parsed into dicts at all
    (neither its head for detection nor its lines), and one the screen doubts is parsed
    only from the screen's cut."""
    from transcript_doctor.source import Source

    clean = FIXTURES / "openworker" / "clean-sidecars.jsonl"
    data = clean.read_bytes()
    lines = data.splitlines(keepends=True)
    assert len(lines) < 40  # shorter than the proof took before: streamed from the head then
    damaged = (
        data + lines[2] + b'{"role": "assistant", "content": ""}\n'
    )  # a new prompt, an empty answer: TD103
    full = engine.lint_bytes(clean.name, damaged, _options(False))
    assert full.findings
    parsed: list[int] = []
    records, head = Source.records, Source.head

    def counting(self: Source, chosen: object = None) -> object:
        for line, value in records(self, chosen):  # type: ignore[arg-type]
            parsed.append(line.index)
            yield line, value

    def counted_head(self: Source, count: int = 20) -> list[object]:
        parsed.append(-1)
        return head(self, count)

    monkeypatch.setattr(Source, "records", counting)
    monkeypatch.setattr(Source, "head", counted_head)
    report = engine.lint_bytes(clean.name, data, _options(True))
    assert (report.reader, report.findings, parsed) == ("openworker", [], [])
    fast = engine.lint_bytes(clean.name, damaged, _options(True))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert [f.finding.rule.code for f in full.findings] == ["TD103"]
    assert parsed == [len(lines), len(lines) + 1]


@pytest.mark.parametrize(
    ("reasoning", "content", "rules"),
    [
        ("Think first.", "Done.", []),
        ("Think first.", "", []),  # thinking with text: not empty (TD103), doubted by the screen
        (" ", "", ["TD103"]),
        ("", " ", ["TD103"]),
        ("Think first.", "Done. ", []),  # Vibe sends no final text as prefill: no TD102
    ],
)
def test_mistral_vibe_reasoning_is_screened_as_the_full_read_finds(
    reasoning: str, content: str, rules: list[str]
) -> None:
    """A Vibe turn's ``reasoning_content`` is a thinking part no rule flags: a session of
    such turns is screened, and finds what the full read finds."""
    lines = [
        {"role": "user", "content": "Hi", "injected": False, "message_id": "u1"},
        {
            "role": "assistant",
            "content": content,
            "injected": False,
            "reasoning_content": reasoning,
            "reasoning_message_id": "r1",
            "message_id": "a1",
        },
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    name = "session_20261202_003735_343a3d07/messages.jsonl"
    fast, full = (engine.lint_bytes(name, data, _options(screen)) for screen in (True, False))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert [f.finding.rule.code for f in full.findings] == rules


def test_large_mistral_vibe_sessions_are_decoded_a_line_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ``_WRAP_LIMIT`` the proof decodes line by line (``typed_lines.decoded``, no
    copy of the text) and comes to the same verdict and cut on every variant."""
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.readers.mistral_vibe import fast

    catalog = _options(True).catalog
    compared = 0
    for path in VIBE[:8]:
        for data in _vibe_variants(path.read_bytes())[:80]:
            screen = Screen(catalog)
            wrapped = (fast.prove(data, screen), screen.cut, screen.before)
            with monkeypatch.context() as patch:
                patch.setattr(fast, "_WRAP_LIMIT", 0)
                screen = Screen(catalog)
                assert (fast.prove(data, screen), screen.cut, screen.before) == wrapped
            compared += 1
    assert compared > 300


def _gemini_cli_files() -> list[Path]:
    """Every fixture and corpus file Gemini CLI's reader claims (streams and documents),
    each content once (the corpus holds copies of fixtures)."""
    found = []
    seen: set[bytes] = set()
    for path in FILES:
        data = path.read_bytes()
        if data in seen:
            continue
        seen.add(data)
        try:
            source = sniff(path.name, data)
        except NotJson:
            continue
        claim = readers.detect(source)
        if claim is not None and claim[0].name == "gemini-cli" and claim[1].transcript:
            found.append(path)
    return found


GEMINI_CLI_FILES = _gemini_cli_files()


def _gemini_document_variants(data: bytes) -> list[bytes]:
    """A legacy Gemini CLI session damaged one message at a time: without it, with it
    twice, moved after the next one, its text blanked, a prompt's text changed or made responses, its
    calls' results removed, copied, answering another call or holding other parts, and
    a record of another type in its place."""
    import json

    value = json.loads(data)
    messages = value["messages"]
    found: list[bytes] = []
    for index, message in enumerate(messages[:25]):
        variants: list[list[object]] = [
            messages[:index] + messages[index + 1 :],
            messages[: index + 1] + messages[index:],
            messages[:index] + messages[index + 1 : index + 2] + [message] + messages[index + 2 :],
            [*messages[:index], {**message, "content": " "}, *messages[index + 1 :]],
            [*messages[:index], {**message, "type": "info"}, *messages[index + 1 :]],
        ]
        if isinstance(message, dict) and message.get("type") == "user":
            response = {"functionResponse": {"id": "r", "name": "x", "response": {"output": "o"}}}
            for content in (
                [{"text": "/help"}],
                [{"text": " "}, {"text": "go on"}],
                [{"text": "a", "b": 1}],
                [response, response],
                [response, {"functionResponse": {"name": "x", "response": {}}}],
                [{**response, "thoughtSignature": "s"}],
                [response, {"text": "and"}],
            ):
                variants.append([*messages[:index], {**message, "content": content}, *messages[index + 1 :]])
        calls = message.get("toolCalls") if isinstance(message, dict) else None
        if isinstance(calls, list) and calls:
            bare = [{k: v for k, v in c.items() if k != "result"} for c in calls]
            twice = [*calls, *calls]
            response = {"functionResponse": {"id": "another", "name": "x", "response": {"output": "o"}}}
            beside = [{**c, "result": [response, {"text": "beside"}, {}, 1]} for c in calls]
            other = [{**c, "result": [{}, response, "text"][: 2 + (k % 2)]} for k, c in enumerate(calls)]
            for changed in (bare, twice, beside, other):
                variants.append(
                    [*messages[:index], {**message, "toolCalls": changed}, *messages[index + 1 :]]
                )
        for changed_messages in variants:
            found.append(json.dumps({**value, "messages": changed_messages}).encode())
    return found


@pytest.mark.parametrize("path", [p for p in GEMINI_CLI_FILES if p.suffix == ".json"], ids=lambda p: p.name)
def test_gemini_cli_document_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of a legacy Gemini CLI session lints the same whether the screen
    proves it clean from its records (``reader._plain_turns``), from the built
    conversation (``gemini_content.screen_turns``) or not at all."""
    for data in _gemini_document_variants(path.read_bytes()):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]


@pytest.mark.parametrize("path", GEMINI_CLI_FILES, ids=_id)
def test_gemini_cli_plain_turns_are_the_built_conversations(path: Path) -> None:
    """The screen's turns read from Gemini CLI records without building them are exactly
    those of the built conversation, wherever the records give them; and damaged
    variants of each file as well."""
    from transcript_doctor.analysis.screen import OTHER
    from transcript_doctor.readers.gemini_cli import reader as gemini
    from transcript_doctor.readers.gemini_content import screen_turns

    data = path.read_bytes()
    variants = _gemini_variants(data) if path.suffix == ".jsonl" else _gemini_document_variants(data)
    compared = 0
    for changed in [data, *variants[:400]]:
        try:
            source = sniff(path.name, changed)
        except NotJson:
            continue
        source.loader = gemini.READER.loader
        if source.container is Container.JSONL:
            replay = gemini._Replay()
            for line, value in source.records():
                gemini._stream_record(replay, value, line)
            survivors = replay.survivors(source)
            turns = gemini._plain_turns(enumerate(value for value, *_ in survivors))
            built = gemini.READER._conversation(gemini._entries(survivors), replay)
        else:
            value = source.value
            messages = value.get("messages") if isinstance(value, dict) else None
            if not isinstance(messages, list):
                continue
            turns = gemini._plain_turns((i, m) for i, m in enumerate(messages) if isinstance(m, dict))
            built = gemini.READER._document(messages)
        if turns is not None:
            compared += 1
            # A prompt's plain turn holds where a build may start (the screen's cut).
            assert [(k, t, () if k == OTHER else i) for k, t, i in turns] == screen_turns(built)
    if path.name.startswith(("codemie__session", "gen-unanswered-tool-response")):
        assert compared  # clean sessions: the records give their turns


QWEN = sorted(
    {p.read_bytes(): p for p in FILES if "qwen" in p.name or "qwen-code" in p.parts}.values(),
    key=lambda p: p.as_posix(),
)


@pytest.mark.parametrize("path", QWEN, ids=_id)
def test_qwen_code_typed_turns_are_the_built_chains(path: Path) -> None:
    """The screen's turns of a Qwen Code chain read from typed records
    (``readers/qwen_code/fast.py``) are exactly those of the built chain wherever the
    records give them, for the file and each of its damaged variants; and every
    variant lints the same with and without the fast path."""
    from transcript_doctor.readers.gemini_content import screen_turns
    from transcript_doctor.readers.qwen_code import fast
    from transcript_doctor.readers.qwen_code.reader import READER

    data = path.read_bytes()
    for changed in [data, *_variants(data)]:
        fast_report, full_report = (
            engine.lint_bytes(path.name, changed, _options(screen)) for screen in (True, False)
        )
        assert [record(fast_report, f) for f in fast_report.findings] == [
            record(full_report, f) for f in full_report.findings
        ]
        turns = fast.turns(changed)
        if turns is None:
            continue
        source = sniff(path.name, changed)
        source.loader = READER.loader
        built = READER.read(source)
        assert len(built) == 1
        assert turns == screen_turns(built[0])


def test_the_qwen_code_fast_path_proves_clean_sessions_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clean Qwen Code sessions of plain turns are not read into a model at all (the full
    read is made to fail here); a session with findings is."""
    from transcript_doctor.readers.qwen_code.reader import QwenCodeReader

    reports = {p: engine.lint_bytes(p.name, p.read_bytes(), _options(False)) for p in QWEN}
    clean = [p for p, r in reports.items() if r.reader == "qwen-code" and not r.findings]
    damaged = [p for p, r in reports.items() if r.reader == "qwen-code" and r.findings]

    def refuse(self: object, source: object) -> object:
        raise AssertionError("the full read ran")

    monkeypatch.setattr(QwenCodeReader, "read", refuse)
    proven = [p for p in clean if not p.name.startswith("compressed")]
    assert len(proven) >= 4
    for path in proven:
        report = engine.lint_bytes(path.name, path.read_bytes(), _options(True))
        assert (report.reader, report.findings, report.error) == ("qwen-code", [], None), path.name
    assert damaged
    for path in damaged:
        with pytest.raises(AssertionError, match="the full read ran"):
            engine.lint_bytes(path.name, path.read_bytes(), _options(True))


def test_a_gemini_cli_stream_torn_at_its_end_is_replayed_from_typed_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line that does not decode is read alone the reader's own way (``fast.Records.failed``):
    a session torn at its end, or with a glued or non-object line, is not read in full, and
    its findings are the full read's."""
    from transcript_doctor.readers.gemini_cli.reader import GeminiCliReader

    def refuse(self: object, source: object) -> object:
        raise AssertionError("the full read ran")

    checked = 0
    for path in GEMINI:
        data = path.read_bytes().rstrip(b"\n")
        lines = data.split(b"\n")
        for changed in (
            data[:-7],  # torn final line
            b"\n".join([*lines[:-1], b"null", lines[-1]]),  # not an object
            b"\n".join([*lines[:-2], lines[-2] + lines[-1]]),  # glued
        ):
            full = engine.lint_bytes(path.name, changed, _options(False))
            if full.reader != "gemini-cli":
                continue
            with monkeypatch.context() as patch:
                patch.setattr(GeminiCliReader, "_stream", refuse)
                fast = engine.lint_bytes(path.name, changed, _options(True))
            assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
            assert any(f.finding.rule.code == "TD001" for f in full.findings)
            checked += 1
    assert checked > 20


CODEX = sorted(
    p
    for p in [*(FIXTURES / "codex").glob("*.jsonl"), *(FIXTURES / "wild" / "codex").glob("*.jsonl")]
    if p.stat().st_size < 70_000
)


def _codex_variants(data: bytes, tail: bool = False) -> list[bytes]:
    """``_variants`` and damage that keeps every line decodable, one line at a time: what
    the typed proof of a rollout (``readers/codex/fast.py``) regroups and hands to the
    screen.  A reply made empty, blank, given a trailing blank or a placeholder, a
    prompt turned into context or a reply, an output answering another call, a call id
    repeated, a rollback, a compaction without its replacement history, a number beyond
    a double in a value, and a prompt line written twice.  ``tail``: the last 40 lines
    only (where a long rollout's cut falls), without ``_variants``."""
    lines = data.split(b"\n")
    found = [] if tail else _variants(data)
    for i, line in enumerate(lines if tail else lines[:60]):
        if tail and i < len(lines) - 40:
            continue
        found += _replaced(
            lines,
            i,
            (
                (b'"type":"output_text","text":"', b'"type":"output_text","text":"","x":"'),
                (b'"type":"output_text","text":"', b'"type":"output_text","text":" \\n","x":"'),
                (
                    b'"type":"output_text","text":"',
                    b'"type":"output_text","text":"[Request interrupted by user]","x":"',
                ),
                (b'","type":"output_text"', b' ","type":"output_text"'),
                (b'"type":"input_text","text":"', b'"type":"input_text","text":"<environment_context>'),
                (b'"role":"user"', b'"role":"assistant"'),
                (b'"role":"developer"', b'"role":"user"'),
                (
                    b'"type":"function_call_output","call_id":"',
                    b'"type":"function_call_output","call_id":"other-',
                ),
                (b'"type":"function_call","name":"', b'"type":"function_call","call_id":"again","x":"'),
                (b'"type":"token_count"', b'"type":"thread_rolled_back","num_turns":1'),
                (b'"replacement_history":', b'"message":"summary","x":'),
                (b'"type":"reasoning"', b'"type":"local_shell_call"'),
                (b'"timestamp":"', b'"timestamp":"2026-01-01T00:00:00.000Z","n":[1.5E+400],"t":"'),
            ),
        )
        if b'"role":"user"' in line:
            found.append(b"\n".join([*lines[: i + 1], line, *lines[i + 1 :]]))  # a prompt line twice
    return found


@pytest.mark.parametrize("path", CODEX, ids=lambda p: p.name)
def test_codex_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of a Codex rollout (``_codex_variants``) lints the same with and
    without the typed fast path (``readers/codex/fast.py``)."""
    for data in _codex_variants(path.read_bytes()):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        if not full.findings or path.stat().st_size > 16_000:
            continue
        for unsafe in (False, True):  # a doubted rollout is built from the cut: the same repairs
            fast_fix, full_fix = (
                fixer.fix_bytes(path.name, data, _options(screen, unsafe)) for screen in (True, False)
            )
            assert fast_fix.after == full_fix.after
            assert [(a.rule, a.line, a.action) for a in fast_fix.applied] == [
                (a.rule, a.line, a.action) for a in full_fix.applied
            ]


# Rollouts of plain turns (prompts, context, replies, reasoning, calls and outputs, one
# compaction): the fast path's domain.
CODEX_PLAIN = (
    "excerpt-compacted-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
    "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
    "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
    "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    "superseded-unanswered-call.jsonl",
    "acy-rollout-transcript-sample.jsonl",
)


def test_the_codex_fast_path_proves_clean_rollouts_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clean rollouts of plain turns are not read into a model at all (building is made
    to fail here); a rollout with findings, and a legacy one, are."""
    from transcript_doctor.readers.codex import reader

    every = sorted([*(FIXTURES / "codex").glob("*.jsonl"), *(FIXTURES / "wild" / "codex").glob("*.jsonl")])
    plain = [p for p in every if p.name in CODEX_PLAIN]
    damaged = [p for p in every if engine.lint_bytes(p.name, p.read_bytes(), _options(False)).findings]
    legacy = FIXTURES / "codex" / "legacy-rollout.jsonl"

    def refuse(source: object) -> object:
        raise AssertionError("the model was built")

    monkeypatch.setattr(reader, "History", refuse)
    assert len(plain) == len(CODEX_PLAIN)
    for path in plain:
        report = engine.lint_bytes(path.name, path.read_bytes(), _options(True))
        assert (report.reader, report.findings, report.error) == ("codex", [], None), path.name
    assert damaged
    for path in [*damaged, legacy]:
        with pytest.raises(AssertionError, match="the model was built"):
            engine.lint_bytes(path.name, path.read_bytes(), _options(True))


def test_a_doubted_codex_rollout_is_read_from_the_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long rollout with an unanswered call near its end is read from the screen's cut: the
    lines before it are neither parsed nor built, and the findings are the full read's."""
    from transcript_doctor import source as source_module

    path = FIXTURES / "codex" / "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
    data = path.read_bytes()
    full = engine.lint_bytes(path.name, data, _options(False))
    assert [f.finding.rule.code for f in full.findings] == ["TD301"]
    parsed: list[int] = []
    records = source_module.Source.records

    def counted(self: source_module.Source, lines: object = None) -> object:
        for line, value in records(self, lines):  # type: ignore[arg-type]
            parsed.append(line.index)
            yield line, value

    monkeypatch.setattr(source_module.Source, "records", counted)
    fast = engine.lint_bytes(path.name, data, _options(True))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert parsed and min(parsed) > 700


def test_a_doubted_compacted_rollout_leaves_the_lines_before_its_compaction_unparsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rollout the proof covers but the screen doubts with no cut (an orphan output right
    after the compaction) is built from the compaction on: the lines before it, known to
    parse, are not parsed again for TD001, and the findings are the full read's."""
    from transcript_doctor import source as source_module

    path = (
        FIXTURES
        / "codex"
        / "excerpt-compacted-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
    )
    lines = path.read_bytes().split(b"\n")
    compaction = next(i for i, line in enumerate(lines) if b'"type":"compacted"' in line)
    last = max(i for i, line in enumerate(lines) if b'"type":"function_call_output","call_id":"' in line)
    lines[last] = lines[last].replace(b'"call_id":"', b'"call_id":"other-', 1)
    data = b"\n".join(lines)
    full = engine.lint_bytes(path.name, data, _options(False))
    assert [f.finding.rule.code for f in full.findings] == ["TD306", "TD302"]
    read: list[int] = []
    records, one = source_module.Source.records, source_module.Source.record

    def counted(self: source_module.Source, lines: object = None) -> object:
        for line, value in records(self, lines):  # type: ignore[arg-type]
            read.append(line.index)
            yield line, value

    def counted_one(self: source_module.Source, line: Any) -> Any:
        read.append(line.index)
        return one(self, line)

    monkeypatch.setattr(source_module.Source, "records", counted)
    monkeypatch.setattr(source_module.Source, "record", counted_one)
    fast = engine.lint_bytes(path.name, data, _options(True))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert read and min(read) == compaction


def test_doubted_codex_rollouts_build_the_same_from_the_cut() -> None:
    """Damage at the end of a long rollout (``_codex_variants``, tail): built from the
    screen's cut, or whole where a call id crosses it, with the full read's findings and
    repairs (safe and unsafe)."""
    path = FIXTURES / "codex" / "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
    for data in _codex_variants(path.read_bytes(), tail=True):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        for unsafe in (False, True):
            fast_fix, full_fix = (
                fixer.fix_bytes(path.name, data, _options(screen, unsafe)) for screen in (True, False)
            )
            assert fast_fix.after == full_fix.after
            assert [(a.rule, a.line, a.action) for a in fast_fix.applied] == [
                (a.rule, a.line, a.action) for a in full_fix.applied
            ]


COPILOT = sorted(p for p in (FIXTURES / "copilot-cli").rglob("events.jsonl") if "session-state" in p.parts)


def _copilot_variants(data: bytes, tail: bool = False) -> list[bytes]:
    """Damage that keeps every line an event, one line at a time: what the proof of an
    event log (``readers/copilot_cli/fast.py``) replays and hands to the screen.  A reply
    made empty, blank, given a trailing blank or a placeholder, escapes, or content that
    is no string (the proof decodes a reply's raw content), a system message's content
    that is no string, a call or completion given another id or none, a request that is
    no object, a late prompt (also recorded before the results of open calls), a
    sub-agent's event, an event id written twice, and a line of another envelope."""
    lines = data.split(b"\n")
    found: list[bytes] = []
    for i, line in enumerate(lines if tail else lines[:40]):
        if tail and i < len(lines) - 25:
            continue  # ``tail``: the last lines only
        found += _replaced(
            lines,
            i,
            (
                (b'"model":"fake-model","content":"', b'"model":"fake-model","content":"","x":"'),
                (b'"model":"fake-model","content":"', b'"model":"fake-model","content":" \\n","x":"'),
                (
                    b'"model":"fake-model","content":"',
                    b'"model":"fake-model","content":"[Request interrupted by user]","x":"',
                ),
                (
                    b'"model":"fake-model","content":"',
                    b'"model":"fake-model","content":"\\u0020\\n\\t","x":"',
                ),
                (b'"model":"fake-model","content":"', b'"model":"fake-model","content":"\\u00e9 ok","x":"'),
                (b'"model":"fake-model","content":"', b'"model":"fake-model","content":5,"x":"'),
                (b'"model":"fake-model","content":"', b'"model":"fake-model","content":null,"x":"'),
                (b'"model":"fake-model","content":"', b'"model":"fake-model","content":["a"],"x":"'),
                (b'"role":"system","content":"', b'"role":"system","content":{"a":1},"x":"'),
                (b'"toolCallId":"', b'"toolCallId":"other-'),
                (b'"toolCallId":"', b'"toolCallId":null,"x":"'),
                (b'"toolRequests":[', b'"toolRequests":[1,'),
                (b'"delivery":"', b'"delivery":"queued","x":"'),
                (b'"type":"assistant.message",', b'"agentId":"sub","type":"assistant.message",'),
                (b'"type":"tool.execution_complete",', b'"agentId":"sub","type":"tool.execution_complete",'),
                (b'"parentId":', b'"extra":1,"parentId":'),
            ),
        )
        if b'"type":"user.message"' in line:
            found.append(b"\n".join([*lines[: i + 1], line, *lines[i + 1 :]]))  # the same event twice
            late = line.replace(b'"delivery":"', b'"delivery":"queued","x":"', 1)
            for back in (1, 2):  # recorded before the results of the calls before it
                if i >= back:
                    found.append(
                        b"\n".join([*lines[: i - back], late, *lines[i - back : i], *lines[i + 1 :]])
                    )
    return found


@pytest.mark.parametrize("short", [True, False], ids=["parsed", "typed"])
@pytest.mark.parametrize("path", COPILOT, ids=lambda p: p.parent.parent.parent.name)
def test_copilot_damage_is_found_by_both_paths(
    path: Path, short: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every variant of a Copilot event log lints the same with and without the fast path,
    screened from the records detection parsed (a short log) and decoded by msgspec (a
    doubted one then read from the screen's cut, and repaired the same)."""
    from transcript_doctor.readers.copilot_cli import reader

    if not short:
        monkeypatch.setattr(reader, "_SHORT_LINES", 0)
    data = path.read_bytes()
    for variant in [*_copilot_variants(data), *(_variants(data) if short else [])]:
        fast, full = (engine.lint_bytes(path.name, variant, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        if short or not full.findings:
            continue
        # A doubted log is read from the screen's cut: the same repairs.
        fast_fix, full_fix = (
            fixer.fix_bytes(path.name, variant, _options(screen, True)) for screen in (True, False)
        )
        assert fast_fix.after == full_fix.after
        assert [(a.rule, a.line, a.action) for a in fast_fix.applied] == [
            (a.rule, a.line, a.action) for a in full_fix.applied
        ]


def test_doubted_copilot_logs_build_the_same_from_the_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long log (a recorded one's turns told six times, ids made unique) damaged near its
    end is read from the screen's cut, with the full read's findings and repairs."""
    from transcript_doctor.readers.copilot_cli.reader import CopilotCliReader

    lines = (FIXTURES / "copilot-cli" / "tools").rglob("events.jsonl").__next__().read_bytes().split(b"\n")
    body = b"\n".join(lines[1:]).strip(b"\n")
    told = [
        body.replace(b'"id":"', b'"id":"%d-' % k).replace(b'"toolCallId":"', b'"toolCallId":"%d-' % k)
        for k in range(6)
    ]
    data = b"\n".join([lines[0], *told]) + b"\n"
    assert not engine.lint_bytes("events.jsonl", data, _options(False)).findings
    cuts: list[int] = []
    build = CopilotCliReader._from

    def counted(self: CopilotCliReader, source: Any, start: int) -> Any:
        cuts.append(start)
        return build(self, source, start)

    monkeypatch.setattr(CopilotCliReader, "_from", counted)
    for variant in _copilot_variants(data, tail=True):
        fast, full = (
            engine.lint_bytes("events.jsonl", variant, _options(screen)) for screen in (True, False)
        )
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        for unsafe in (False, True):
            fast_fix, full_fix = (
                fixer.fix_bytes("events.jsonl", variant, _options(screen, unsafe)) for screen in (True, False)
            )
            assert fast_fix.after == full_fix.after
            assert [(a.rule, a.line, a.action) for a in fast_fix.applied] == [
                (a.rule, a.line, a.action) for a in full_fix.applied
            ]
    assert max(cuts) > len(data.split(b"\n")) // 2


@pytest.mark.parametrize("short", [True, False], ids=["parsed", "typed"])
def test_the_copilot_fast_path_proves_clean_logs_clean(short: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Clean Copilot event logs are not read into a model at all (building is made to fail
    here); a log with findings is."""
    from transcript_doctor.readers.copilot_cli import reader

    if not short:
        monkeypatch.setattr(reader, "_SHORT_LINES", 0)
    every = [(p, engine.lint_bytes(p.name, p.read_bytes(), _options(False)).findings) for p in COPILOT]
    plain = [p for p, findings in every if not findings]
    damaged = [p for p, findings in every if findings]

    def refuse(self: object, source: object, records: object = None) -> object:
        raise AssertionError("the full read ran")

    monkeypatch.setattr(reader.CopilotCliReader, "_build", refuse)
    assert len(plain) > 15
    assert damaged
    for path in plain:
        report = engine.lint_bytes(path.name, path.read_bytes(), _options(True))
        assert (report.reader, report.findings, report.error) == ("copilot-cli", [], None), path
    for path in damaged:
        with pytest.raises(AssertionError, match="the full read ran"):
            engine.lint_bytes(path.name, path.read_bytes(), _options(True))


OPENCODE = sorted(
    p for p in FIXTURES.rglob("export*.json") if p.parts[len(FIXTURES.parts)].startswith("opencode")
)


def _opencode_variants(data: bytes) -> list[bytes]:
    """An ``opencode export`` damaged one message or part at a time, as values (the
    screen reads the parsed document, ``readers/opencode/screening.py``): a message left
    out, written twice, of another role or none; an assistant message errored, aborted;
    a part made empty, blank, a placeholder, a trailing blank, no object, of no type,
    a tool part running, without its id or with another's, and a step marker alone."""
    import copy
    import json

    value = json.loads(data)
    messages = value["messages"]
    found: list[Any] = []

    def variant(change: Callable[[list[Any]], object]) -> None:
        changed = copy.deepcopy(value)
        change(changed["messages"])
        found.append(changed)

    for k, message in enumerate(messages):
        variant(lambda m, k=k: m.pop(k))
        variant(lambda m, k=k: m.insert(k, copy.deepcopy(m[k])))
        variant(lambda m, k=k: m[k]["info"].update(role="system"))
        variant(lambda m, k=k: m[k].update(info=None))
        variant(lambda m, k=k: m[k]["info"].update(error={"name": "MessageAbortedError", "data": {}}))
        variant(lambda m, k=k: m[k]["info"].update(error={"name": "APIError", "data": {}}))
        variant(lambda m, k=k: m[k].update(parts=[{"type": "step-start"}]))
        for j, part in enumerate(message["parts"]):
            variant(lambda m, k=k, j=j: m[k]["parts"].__setitem__(j, 7))
            variant(lambda m, k=k, j=j: m[k]["parts"][j].pop("type"))
            if part.get("type") == "text":
                for text in ("", "  ", "[Request interrupted by user]", part.get("text", "") + " \n"):
                    variant(lambda m, k=k, j=j, text=text: m[k]["parts"][j].update(text=text))
            if part.get("type") == "tool":
                variant(lambda m, k=k, j=j: m[k]["parts"][j]["state"].update(status="running"))
                variant(lambda m, k=k, j=j: m[k]["parts"][j].pop("callID"))
                variant(lambda m, k=k, j=j: m[k]["parts"][j].update(callID="other"))
    return [json.dumps(v, indent=2).encode() for v in found]


@pytest.mark.parametrize("path", OPENCODE, ids=_id)
def test_opencode_export_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of an ``opencode export`` lints the same with and without the screen."""
    for data in _opencode_variants(path.read_bytes()):
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        assert fast.reader == full.reader


def test_clean_opencode_exports_are_screened_unbuilt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clean exports are not read into a model at all (the full read is made to fail
    here); an export with findings is."""
    from transcript_doctor.readers.opencode.reader import OpenCodeReader

    every = [(p, engine.lint_bytes(p.name, p.read_bytes(), _options(False))) for p in OPENCODE]
    # The screen doubts a final reply ending in a blank (TD102's question, though OpenCode's
    # final text is never prefill): that session is built.
    plain = [
        p
        for p, report in every
        if report.reader == "opencode" and not report.findings and p.parent.name != "tui-abort-stream"
    ]
    damaged = [p for p, report in every if report.reader == "opencode" and report.findings]

    def refuse(self: object, source: object) -> object:
        raise AssertionError("the full read ran")

    monkeypatch.setattr(OpenCodeReader, "read", refuse)
    assert len(plain) > 5
    assert damaged
    for path in plain:
        report = engine.lint_bytes(path.name, path.read_bytes(), _options(True))
        assert (report.reader, report.findings, report.error) == ("opencode", [], None), path
    for path in damaged:
        with pytest.raises(AssertionError, match="the full read ran"):
            engine.lint_bytes(path.name, path.read_bytes(), _options(True))


_PI_CLEAN = sorted((FIXTURES / "pi" / "clean" / "sessions").rglob("*.jsonl"))


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES / "claude-code" / "clean-rewound-branch.jsonl",
        *_PI_CLEAN[:1],
        FIXTURES / "gemini-cli" / "rewound-prompt.jsonl",
    ],
    ids=_id,
)
def test_a_line_nested_deeper_than_msgspec_decodes_is_found_by_both_paths(path: Path) -> None:
    """msgspec raises RecursionError (not DecodeError) past its depth limit: the typed
    decoding (``typed_lines.decoded``) hands such a file to the full read, which reports
    the line (TD001), instead of the run ending with "nested too deeply to check"; a fast
    path with its own decoding loop (Gemini CLI's) is caught by the engine, which reads
    the file as with the screen off."""
    from transcript_doctor.readers.claude_code import fast as claude_fast
    from transcript_doctor.readers.typed_lines import decoded

    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].rstrip(b"}") + b',"deep":' + b"[" * 1100 + b"]" * 1100 + b"}"
    data = b"\n".join(lines)
    assert decoded(data, claude_fast._DECODER) is None
    fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
    assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
    assert ("TD001", 2) in [(f.finding.rule.code, f.origin.line) for f in fast.findings]


FINE_TUNING = sorted(
    p
    for p in [
        *(FIXTURES / "anthropic-messages").glob("*fine-tuning*.jsonl"),
        *(FIXTURES / "openai-chat").glob("*fine-tuning*.jsonl"),
        *(FIXTURES / "wild" / "openai-ft").glob("*.jsonl"),
    ]
    if p.stat().st_size < 60_000
)
# Replies of each kind the screen tells apart (see tests/test_screen.py SAID).
_REPLIES = (
    "",
    " ",
    "Done.\n",
    "(request timeout)",
    "It said (request timeout).",
    "Wait [Response interrupted by user]",
)


def _many_lines(data: bytes) -> bytes:
    """The file's lines written again until there are enough for a proof to pay
    (``listing.provable``: a file of few lines was parsed for detection already)."""
    lines = [line for line in data.split(b"\n") if line.strip()]
    return b"\n".join(lines * (50 // len(lines) + 1)) + b"\n"


def _fine_tuning_variants(data: bytes) -> list[bytes]:
    """A fine-tuning file changed one line at a time: the byte damage of ``_variants`` (a
    number beyond a double put in the line's first object, escaped quotes inside text), and
    its conversation changed: its last message's content replaced by each reply of
    ``_REPLIES`` or by blocks, a message appended, one given a key the screen does not
    cover, made a number, given another role; ``messages`` left out, null, a string,
    empty; a message line put in its place."""
    lines = data.split(b"\n")
    rest = b"\n".join(lines[8:])
    found = [head + b"\n" + rest for head in _variants(b"\n".join(lines[:8]))]
    for i, line in enumerate(lines[:8]):  # (a file of a few lines written again: each of them)
        if not line.strip():
            continue
        before, after = lines[:i], lines[i + 1 :]
        changed: list[bytes] = [
            line.replace(b"{", b'{"n":1e400,', 1),
            line.replace(b"{", b'{"n":[1E+309],', 1),
            line.replace(b'"content":', b'"content":"say \\"hi\\"","c":', 1),
        ]
        value = json.loads(line)
        messages = value.get("messages") if isinstance(value, dict) else None
        if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
            last = messages[-1]
            news: list[object] = [*_REPLIES, [{"type": "text", "text": "Done."}], None, 5]
            rows: list[list[object]] = [[*messages[:-1], {**last, "content": new}] for new in news]
            rows += [
                [*messages, {"role": "user", "content": "And?"}],
                [*messages, {"role": "assistant", "content": "More. "}],
                [*messages[:-1], {**last, "id": "m1"}],
                [*messages[:-1], *[{"role": "user", "content": "Hi", "id": "m1"}] * 2, last],  # TD403
                [*messages[:-1], {**last, "role": "tool"}],
                [*messages[:-1], {**last, "role": ["assistant"]}],
                [*messages[:-1], 5],
                [{"role": "assistant", "content": "Hi."}, *messages],
            ]
            changed += [json.dumps({**value, "messages": row}).encode() for row in rows]
            changed += [json.dumps({**value, "messages": new}).encode() for new in (None, "x", [])]
            changed.append(json.dumps({k: v for k, v in value.items() if k != "messages"}).encode())
            changed.append(json.dumps(messages[0]).encode())
        found += [b"\n".join([*before, new, *after]) for new in changed]
    return found


@pytest.mark.parametrize("path", FINE_TUNING, ids=_id)
def test_fine_tuning_line_damage_is_found_by_both_paths(path: Path) -> None:
    """Every variant of a fine-tuning file (``_fine_tuning_variants``) lints the same with
    and without the typed proof of its lines (``readers/anthropic_messages/fast.py``,
    ``readers/openai_chat/fast.py``)."""
    variants = _fine_tuning_variants(_many_lines(path.read_bytes()))
    for data in variants:
        fast, full = (engine.lint_bytes(path.name, data, _options(screen)) for screen in (True, False))
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings]
        assert (fast.reader, fast.skipped, fast.error) == (full.reader, full.skipped, full.error)
    for data in variants[:: max(1, len(variants) // 12)]:  # repairs read the same lines
        for unsafe in (False, True):
            fast_fix, full_fix = (
                fixer.fix_bytes(path.name, data, _options(screen, unsafe)) for screen in (True, False)
            )
            assert fast_fix.after == full_fix.after


def test_clean_fine_tuning_lines_are_proven_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines of a clean fine-tuning file are proven from their bytes: none is parsed for
    the read; a damaged line is, alone, and a file with a BOM or a number beyond a double
    is read in full."""
    from transcript_doctor.source import Source

    parsed: list[int] = []
    records = Source.records

    def counted(self: Source, lines: list[Any] | None = None) -> Any:
        for line, value in records(self, lines):
            parsed.append(line.number)
            yield line, value

    monkeypatch.setattr(Source, "records", counted)
    for name in ("anthropic-messages/fine-tuning-with-system.jsonl", "openai-chat/clean-fine-tuning.jsonl"):
        data = _many_lines((FIXTURES / name).read_bytes())
        assert engine.lint_bytes(name, data, _options(True)).findings == []
        assert parsed == []
        lines = data.split(b"\n")
        torn = b"\n".join([lines[0], lines[1][:20], *lines[2:]])
        report = engine.lint_bytes(name, torn, _options(True))
        assert [f.finding.rule.code for f in report.findings] == ["TD001"]
        assert parsed == [2]
        parsed.clear()
        for whole in (b"\xef\xbb\xbf" + data, data.replace(b"{", b'{"n":1e400,', 1)):
            engine.lint_bytes(name, whole, _options(True))
            assert len(parsed) == len(lines) - 1
            parsed.clear()


def test_a_proof_is_made_only_where_it_pays_and_is_exact() -> None:
    """``listing.provable``: a file of many short lines of UTF-8 with no number beyond a
    double; not one of few lines (parsed for detection already) or of long lines (the
    checks of its bytes cost what the proof saves), nor one with a BOM, a byte that is not
    UTF-8 or such a number."""
    from transcript_doctor.readers.listing import provable
    from transcript_doctor.source import sniff

    line = b'{"messages": [{"role": "user", "content": "Hi \xc3\xa9"}, {"role": "assistant", "content": "Hello"}]}'

    def asked(data: bytes) -> bool:
        return provable(sniff("train.jsonl", data))

    assert asked(b"\n".join([line] * 50))
    assert not asked(b"\n".join([line] * 30))
    long = line.replace(b"Hello", b"Hello" * 500)
    assert not asked(b"\n".join([long] * 50))
    assert not asked(b"\xef\xbb\xbf" + b"\n".join([line] * 50))
    assert not asked(b"\n".join([line.replace(b"Hi", b"Hi \xff")] + [line] * 50))
    assert not asked(b"\n".join([line.replace(b"{", b'{"n": 1e400, ', 1)] + [line] * 50))


def test_the_lines_a_proof_leaves_are_the_source_lines() -> None:
    """``listing._lines_at`` makes of segment numbers the lines ``Source.lines`` has: blank
    and whitespace-only segments are no lines, a CRLF line ends before its CR."""
    from transcript_doctor.readers.listing import _lines_at
    from transcript_doctor.source import sniff

    pieces = [
        b'{"a":1}',
        b"",
        b" ",
        b"\r",
        b'{"a":2}\r',
        b"\t\x0c\x0b",
        b' {"a":3} ',
        b"\x0c{",
        b"x\r",
        b"\r\r",
    ]
    for size in range(1, 5):
        for chosen in itertools.product(pieces, repeat=size):
            for end in (b"", b"\n"):
                data = b'{"a":0}\n' + b"\n".join(chosen) + end
                segments = data.split(b"\n")
                lines = sniff("f.jsonl", data).lines
                for numbers in ({line.number for line in lines}, {lines[-1].number}, {1}):
                    assert _lines_at(segments, numbers) == [line for line in lines if line.number in numbers]
