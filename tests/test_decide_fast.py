"""Detection settled from the typed fast paths' records (``Reader.decide``) for Codex,
Copilot CLI, Pi and Qwen Code: the same answer as the head gives, for every fixture and
corpus file of those layouts and for every change of their first lines that changes what
the head shows (a line left out, blank or torn, a number orjson refuses, a key of a
reader listed before, the deciding value changed or of another type, a key written twice
or escaped); and the common files of each layout decided with no head parsed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_registry import FILES, _detected, _id

from transcript_doctor import readers
from transcript_doctor.source import Source, sniff

_LINES = 23  # the head's 20 records and the lines a change brings into it


def _layout(path: Path) -> str | None:
    found = readers.detect(sniff(path.name, path.read_bytes()), every=True)
    return found[0].name if found else None


_JSONL = [p for p in FILES if p.suffix == ".jsonl"]
_OF = {p: _layout(p) for p in _JSONL}


def _files(name: str) -> list[Path]:
    return [p for p in _JSONL if _OF[p] == name]


def _before(module: str) -> list[bytes]:
    """Every key of the JSONL registry entries listed before ``module`` (what they are
    shown a file by, and what rules them out)."""
    keys: set[str] = set()
    for entry in readers._MODULES:
        if entry.module == module:
            break
        if entry.jsonl:
            keys |= entry.jsonl
        keys |= entry.unless
    return [key.encode() for key in sorted(keys)]


def _damaged(data: bytes, module: str, edits: tuple[tuple[bytes, bytes], ...]) -> list[bytes]:
    """Each of the first lines of ``data`` changed in the ways that change what the head
    shows, one change at a time."""
    lines = data.split(b"\n")
    keys = _before(module)
    found: list[bytes] = []
    for i, line in enumerate(lines[:_LINES]):
        if not line.startswith(b"{"):
            continue
        changed = [
            b"",  # left out
            b"  ",  # a line of blanks
            b"null",  # no object
            b"[" + line + b"]",
            line[: len(line) // 2],  # torn
            b'{"n":1e400,' + line[1:],  # a number beyond a double: orjson refuses it
            b'{"n":-1e400,' + line[1:],
            b'{"n":1' + b"0" * 400 + b"," + line[1:],
            b'{"\\u0075uid":"x",' + line[1:],  # a key escaped
            b'{"\\u0069d":5,' + line[1:],
        ]
        changed += [b'{"%s":"x",' % key + line[1:] for key in keys]
        changed += [b'{"%s":null,' % key + line[1:] for key in keys]
        changed += [b'{"%s":{},' % key + line[1:] for key in keys]
        for old, new in edits:
            if old in line:
                changed.append(line.replace(old, new, 1))
        # A key written twice: orjson keeps the last.
        if line.endswith(b"}"):
            changed += [line[:-1] + b',"type":"x"}', line[:-1] + b',"type":5}', line[:-1] + b',"id":null}']
        found += [b"\n".join([*lines[:i], c, *lines[i + 1 :]]) for c in changed]
        found.append(b"\n".join([*lines[:i], b"", *lines[i:]]))  # an empty line before it
        found.append(b"\n".join([*lines[:i], b'{"n":1e400}', *lines[i:]]))
    return found + _hidden(data, keys)


def _hidden(data: bytes, keys: list[bytes]) -> list[bytes]:
    """A line orjson refuses brings the next line into the head: the file made longer than
    the head (its last line written again), a line among the first refused, and the
    first line after the head given each key, of each kind of value."""
    lines = [line for line in data.split(b"\n") if line]
    if len(lines) < 3:
        return []
    lines += [lines[-1]] * (22 - len(lines))
    found = []
    for key in keys:
        for value in (b'"x"', b"{}"):
            graft = b'{"%s":%s,' % (key, value) + lines[20][1:]
            found.append(
                b"\n".join([*lines[:2], b'{"n":1e400,' + lines[2][1:], *lines[3:20], graft, *lines[21:]])
            )
    return found


def _same(data: bytes, name: str = "s.jsonl") -> None:
    fast = readers.detect(sniff(name, data))
    every = readers.detect(sniff(name, data), every=True)
    assert (fast and (fast[0].name, fast[1])) == (every and (every[0].name, every[1]))


def _decided_without_a_head(
    monkeypatch: pytest.MonkeyPatch, paths: list[Path], name: Callable[[Path], str] = lambda p: "s.jsonl"
) -> list[Path]:
    """The paths detected with ``Source.head`` made to fail (each the same answer as the
    head gives); those it fails on are left out."""
    expected = {path: _detected(path.read_bytes(), every=True) for path in paths}

    def refuse(self: Source, count: int = 20) -> list[object]:
        raise AssertionError("the head was parsed")

    decided = []
    with monkeypatch.context() as patched:
        patched.setattr(Source, "head", refuse)
        for path in paths:
            try:
                found = readers.detect(sniff(name(path), path.read_bytes()))
            except AssertionError:
                continue
            assert (found and (found[0].name, found[1])) == expected[path]
            decided.append(path)
    return decided


# -- Codex ------------------------------------------------------------------------------

CODEX = _files("codex")
_CODEX_EDITS = (
    (b'"type":"session_meta"', b'"type":"session_metax"'),
    (b'"type":"session_meta"', b'"type":["session_meta"]'),
    (b'"type":"session_meta"', b'"type":"response_item"'),
    (b'"timestamp":"', b'"timestamp":5,"x":"'),
    (b'"payload":', b'"payload_":'),
    (b'"payload":', b'"ordinal":1,"payload":'),
    (b'"payload":', b'"other":1,"payload":'),
    (b'"type":"session_meta"', b'"type":"session_meta","type":"x"'),
    (b'"type":"session_meta"', b'"type":"x","type":"session_meta"'),
)


@pytest.mark.parametrize("path", CODEX, ids=_id)
def test_a_codex_decision_is_what_the_head_gives(path: Path) -> None:
    data = path.read_bytes()
    for variant in [data, *_damaged(data, "codex", _CODEX_EDITS)] if len(data) < 40_000 else [data]:
        _same(variant)


def test_codex_rollouts_are_detected_without_a_head(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rollout whose first line is ``session_meta`` is decided from its typed records."""
    rollouts = [
        p
        for p in CODEX
        if p.read_bytes().startswith(b'{"timestamp":"') and b'"session_meta"' in p.read_bytes()[:200]
    ]
    assert len(rollouts) > 10
    decided = _decided_without_a_head(monkeypatch, rollouts)
    assert len(decided) > len(rollouts) * 0.8
    first = CODEX[0].read_bytes()
    assert _detected(b'{"n":1e400}\n' + first) == _detected(b'{"n":1e400}\n' + first, every=True)


# -- Qwen Code --------------------------------------------------------------------------

QWEN = _files("qwen-code")
_QWEN_EDITS = (
    (b'"type":"user"', b'"type":"summary"'),
    (b'"type":"user"', b'"type":5'),
    (b'"type":"', b'"type":["x"],"x":"'),
    (b'"type":"tool_result"', b'"type":"system"'),
    (b'"uuid":"', b'"uuid":5,"x":"'),
    (b'"sessionId":"', b'"sessionId":5,"x":"'),
    (b'"timestamp":"', b'"timestamp":null,"x":"'),
    (b'"cwd":"', b'"cwd":{},"x":"'),
    (b'"version":"', b'"version":1,"x":"'),
    (b'"cwd":"', b'"cwd_":"'),
    (b'"parentUuid":null', b'"parentUuid":5'),
    (b'"parentUuid":', b'"parentUuid_":'),
    (b'"message":{', b'"message":{"content":"x",'),
    (b'"message":{', b'"message":null,"x":{'),
    (b'"message":{', b'"message":"x","y":{'),
    (b'"message":{', b'"message_":{'),
    (b'"role":"user"', b'"role":"assistant"'),
    (b'"role":"model"', b'"role":"assistant"'),
    (b'"role":"user"', b'"role":"x"'),
    (b'"role":"model"', b'"role":5'),
    (b'"parts":[', b'"parts":null,"x":['),
    (b'"parts":[', b'"parts": ['),
    (b'"parts":[', b'"parts":{"x":['),
    (b'"systemPayload":', b'"systemPayload_":'),
    (b"{", b'{"userType":"external",'),
    (b"{", b'{"toolUseResult":{},'),
    (b'"type":"user"', b'"type":"user","type":"summary"'),
)


def _qwen_variants(data: bytes) -> list[bytes]:
    """``_damaged``, and the file without the records that make a head Qwen's own."""
    unfeatured = data.replace(b'"message":{', b'"m":{')
    bare = unfeatured.replace(b'"systemPayload":', b'"s":').replace(
        b'"type":"tool_result"', b'"type":"system"'
    )
    found = [*_damaged(data, "qwen_code", _QWEN_EDITS), unfeatured, bare]
    # One record of its own, which orjson refuses (it is not in the head) or not.
    lines = data.split(b"\n")
    for i, line in enumerate(lines[:_LINES]):
        if b'"message":{' in line:
            rest = [b"\n".join(lines[:i]), b"\n".join(lines[i + 1 :])]
            mine = [
                part.replace(b'"message":{', b'"m":{')
                .replace(b'"systemPayload":', b'"s":')
                .replace(b'"type":"tool_result"', b'"type":"system"')
                for part in rest
            ]
            for changed in (line, b'{"n":1e400,' + line[1:]):
                found.append(b"\n".join([mine[0], changed, mine[1]]) if i else b"\n".join([changed, mine[1]]))
    return found


@pytest.mark.parametrize("path", QWEN, ids=_id)
def test_a_qwen_code_decision_is_what_the_head_gives(path: Path) -> None:
    data = path.read_bytes()
    for variant in [data, *_qwen_variants(data)] if len(data) < 40_000 else [data]:
        _same(variant)


def test_qwen_code_sessions_are_detected_without_a_head(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(QWEN) > 10
    decided = _decided_without_a_head(monkeypatch, QWEN)
    assert len(decided) > len(QWEN) * 0.8


# -- Readers ruled out by the head's first record (Copilot CLI, Pi) ----------------------
#
# Codex and Pi are shown a file by ``id``, which every Copilot CLI event and Pi entry
# holds: no key a decision proves absent rules them out.  Their ``refuses`` does, from the
# head's first record the decision holds (``Decided.first``).


def _settled(module: str, data: bytes, name: str = "s.jsonl") -> tuple[str, object] | None:
    """The decision of ``module``'s reader on ``data`` when the registry takes it, else None."""
    reader = readers._loaded(module)
    decided = reader.decide(sniff(name, data))
    if decided is None:
        return None
    (others,) = [entry[3] for entry in readers._DECIDERS if entry[0] == module]
    return (reader.name, decided.detection) if readers._settled(decided, others) else None


def _refusals_hold(data: bytes, name: str = "s.jsonl") -> None:
    """A reader that refuses the head's first record makes no claim on the file."""
    source = sniff(name, data)
    head = source.head()
    if not head:
        return
    for module in ("codex", "pi"):
        reader = readers._loaded(module)
        if reader.refuses(head[0]):
            assert readers.claim(reader, source) is None, (module, data[:200])


@pytest.mark.parametrize("path", _JSONL, ids=_id)
def test_a_reader_that_refuses_the_first_record_claims_no_file(path: Path) -> None:
    _refusals_hold(path.read_bytes(), path.name)


COPILOT = _files("copilot-cli")
_COPILOT_EDITS = (
    (b'"type":"session.start"', b'"type":"session.resume"'),
    (b'"type":"session.start"', b'"type":5'),
    (b'"type":"session.start"', b'"type":"session","cwd":"/x"'),
    (b'"type":"session.start"', b'"type":"label"'),
    (b'"type":"session.start"', b'"type":"message","message":{"role":"user"}'),
    (b'"type":"session.start"', b'"type":"session.start","type":"x"'),
    (b'"type":"session.start"', b'"type":"x","type":"session.start"'),
    (b'"producer":"copilot-agent"', b'"producer":"x"'),
    (b'"producer":"copilot-agent"', b'"producer":5'),
    (b'"producer":"copilot-agent"', b'"producer":"x","producer":"copilot-agent"'),
    (b'"producer":"copilot-agent"', b'"producer":"copilot-agent","producer":null'),
    (b'"producer":', b'"\\u0070roducer":'),
    (b'"data":{', b'"data":null,"x":{'),
    (b'"data":{', b'"data_":{'),
    (b'"parentId":null', b'"parentId":5'),
    (b'"parentId":', b'"parentId_":'),
    (b'"id":"', b'"id":5,"x":"'),
    (b'"timestamp":"', b'"timestamp":5,"x":"'),
    (b"{", b'{"agentId":"a",'),
    (b"{", b'{"ephemeral":true,'),
    (b"{", b'{"other":1,'),
    (b"{", b'{"payload":{},'),
)


def _copilot_variants(data: bytes) -> list[bytes]:
    return [data, *_damaged(data, "copilot_cli", _COPILOT_EDITS)] if len(data) < 40_000 else [data]


@pytest.mark.parametrize("path", COPILOT, ids=_id)
def test_a_copilot_cli_decision_is_what_the_head_gives(path: Path) -> None:
    for variant in _copilot_variants(path.read_bytes()):
        settled = _settled("copilot_cli", variant)
        if settled is not None:
            assert settled == _detected(variant, every=True)
        _refusals_hold(variant)
        _same(variant)


def test_copilot_cli_logs_are_decided_from_their_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log whose first line is session.start is decided with no head parsed, every
    reader listed before ruled out; not the CLI's backup of a log (a companion)."""
    assert len(COPILOT) > 10
    started = [p for p in COPILOT if p.read_bytes().startswith(b'{"type":"session.start"')]
    expected = {p: _detected(p.read_bytes(), every=True) for p in started}

    def refuse(self: Source, count: int = 20) -> list[object]:
        raise AssertionError("the head was parsed")

    decided = []
    with monkeypatch.context() as patched:
        patched.setattr(Source, "head", refuse)
        for path in started:
            found = readers._loaded("copilot_cli").decide(sniff("events.jsonl", path.read_bytes()))
            if found is not None:
                assert ("copilot-cli", found.detection) == expected[path]
                decided.append(path)
    assert len(decided) > len(started) * 0.8
    assert all(_settled("copilot_cli", p.read_bytes()) == expected[p] for p in decided)
    backup = "events.jsonl.backup-before-recovery-0a1b"
    assert readers._loaded("copilot_cli").decide(sniff(backup, decided[0].read_bytes())) is None


PI = _files("pi")
_PI_EDITS = (
    (b'"type":"session"', b'"type":"sessionx"'),
    (b'"type":"session"', b'"type":5'),
    (b'"type":"session"', b'"type":"session","parentId":null'),
    (b'"type":"session"', b'"type":"session","type":"x"'),
    (b'"type":"session"', b'"type":"x","type":"session"'),
    (b'"type":"session"', b'"type":"session_meta","payload":{}'),
    (b'"cwd":"', b'"cwd":5,"x":"'),
    (b'"cwd":"', b'"cwd_":"'),
    (b'"id":"', b'"id":5,"x":"'),
    (b'"id":"', b'"\\u0069d":"'),
    (b'"version":3', b'"version":"3"'),
    (b'"version":3', b'"version":1' + b"0" * 30),
    (b'"version":3', b'"version_":3'),
    (b'"type":"message"', b'"type":"messagex"'),
    (b'"type":"message"', b'"type":"label"'),
    (b'"parentId":', b'"parentId_":'),
    (b'"parentId":null', b'"parentId":5'),
    (b'"parentId":"', b'"parentId":5,"x":"'),
    (b'"role":"user"', b'"role":"x"'),
    (b'"role":"user"', b'"role":5'),
    (b'"message":{', b'"message":null,"x":{'),
    (b'"message":{', b'"message":"x","y":{'),
    (b"{", b'{"payload":{},'),
)


def _pi_variants(data: bytes) -> list[bytes]:
    first = data.split(b"\n", 1)[0]
    alone = [
        first,
        first + b"\n",
        first.replace(b'"version":3', b'"version":3.0'),
        first.replace(b'"version":3,', b""),
    ]
    # The header and one record that is no entry (or, refused by orjson, not in the head).
    second = (data.split(b"\n")[1:2] or [b""])[0]
    alone += [b"\n".join([first, second.replace(old, new, 1)]) for old, new in _PI_EDITS if old in second]
    alone.append(b"\n".join([first, b'{"n":1e400,' + second[1:]]))
    return [data, *alone, *_damaged(data, "pi", _PI_EDITS)] if len(data) < 40_000 else [data]


@pytest.mark.parametrize("path", PI, ids=_id)
def test_a_pi_decision_is_what_the_head_gives(path: Path) -> None:
    for variant in _pi_variants(path.read_bytes()):
        settled = _settled("pi", variant)
        if settled is not None:
            assert settled == _detected(variant, every=True)
        _refusals_hold(variant)
        _same(variant)


def test_pi_sessions_are_decided_from_their_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session whose first line is its header and second an entry is decided with no
    head parsed, every reader listed before ruled out."""
    assert len(PI) > 10
    expected = {p: _detected(p.read_bytes(), every=True) for p in PI}

    def refuse(self: Source, count: int = 20) -> list[object]:
        raise AssertionError("the head was parsed")

    decided = []
    with monkeypatch.context() as patched:
        patched.setattr(Source, "head", refuse)
        for path in PI:
            found = readers._loaded("pi").decide(sniff("s.jsonl", path.read_bytes()))
            if found is not None:
                assert ("pi", found.detection) == expected[path]
                decided.append(path)
    assert len(decided) > len(PI) * 0.8
    assert all(_settled("pi", p.read_bytes()) == expected[p] for p in decided)


# -- Claude Code: what a decision says of the head ----------------------------------------


def _claude_variants() -> list[bytes]:
    from test_registry import CLAUDE, _decisive, _metadata_variants

    found = list(_metadata_variants())
    for path in CLAUDE:
        data = path.read_bytes()
        found += [data, *_decisive(data)] if len(data) < 40_000 else [data]
    return found


def test_a_claude_code_decision_names_keys_of_one_head_record() -> None:
    """A decision's keys (one value for every file) are held by one record of the head,
    that makes the claim: an entry with ``userType`` for a DEFINITIVE claim, a metadata
    line for a file of them; and no head record holds a key the decision says is absent."""
    from transcript_doctor.readers.claude_code.reader import READER, _entry_like, _metadata_line

    decided = 0
    for data in _claude_variants():
        found = READER.decide(sniff("s.jsonl", data))
        if found is None:
            continue
        decided += 1
        head = sniff("s.jsonl", data).head()
        assert found.detection == READER.detect(sniff("s.jsonl", data))
        claiming = _entry_like if found.detection.score == readers.DEFINITIVE else _metadata_line
        assert any(found.keys <= record.keys() and claiming(record) for record in head), data[:300]
        assert all(found.absent.isdisjoint(record) for record in head)
        if found.detection.score == readers.DEFINITIVE:
            assert "userType" in found.keys
    assert decided > 100
