"""The Gemini CLI stream's two replays for the screen agree with the full read.

A stream of fewer records than detection parses (``source.head``, ``reader._SHORT``) is
replayed from those parsed records, a longer one from typed records
(``readers/gemini_cli/fast.py``).  Each file lints as the full read lints it whichever
replay the screen takes: ``test_fast_path.py`` compares the replay each file takes by
default, here each file and each of its damaged variants take the other one too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import FIXTURES, _catalog
from test_fast_path import GEMINI, _gemini_variants, _options

from transcript_doctor import engine
from transcript_doctor.model import Conversation
from transcript_doctor.readers.gemini_cli import fast
from transcript_doctor.readers.gemini_cli import reader as gemini
from transcript_doctor.reporters import record
from transcript_doctor.source import HEAD_RECORDS, Container, NotJson, sniff

_ALWAYS = 1 << 30  # a threshold no head reaches: every stream replayed from parsed records
# What the CLI writes after each message (nothing to replay): a stream made long with it.
_TOUCH = b'{"$set":{"lastUpdated":"2026-01-01T00:00:00.000Z"}}'


def _long(data: bytes) -> bytes:
    """The stream with as many records more as detection parses, after its own (every
    fixture and corpus stream is short)."""
    return data.rstrip(b"\n") + b"\n" + b"\n".join([_TOUCH] * HEAD_RECORDS) + b"\n"


STREAMS = [(p, data) for p in GEMINI for data in (p.read_bytes(), _long(p.read_bytes()))]


def _short(name: str, data: bytes) -> bool:
    """Whether the screen replays this stream from the records detection parsed."""
    try:
        source = sniff(name, data)
    except NotJson:
        return False
    return source.container is Container.JSONL and len(source.head()) < HEAD_RECORDS


def test_both_replays_are_taken() -> None:
    """The fixtures hold short streams and long ones (else the tests below compare one
    replay with itself)."""
    taken = {_short(p.name, data) for p, data in STREAMS}
    assert taken == {True, False}


@pytest.mark.parametrize(("path", "stream"), STREAMS, ids=lambda x: x.name if isinstance(x, Path) else len(x))
def test_the_other_replay_finds_what_the_full_read_finds(
    path: Path, stream: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every variant of a stream lints as the full read lints it when the screen takes
    the replay it does not take by default: typed records for a short stream, parsed
    records (every line parsed) for a long one."""
    for data in [stream, *_gemini_variants(stream)]:
        full = engine.lint_bytes(path.name, data, _options(False))
        with monkeypatch.context() as patch:
            patch.setattr(gemini, "_SHORT", 0 if _short(path.name, data) else _ALWAYS)
            other = engine.lint_bytes(path.name, data, _options(True))
        assert [record(other, f) for f in other.findings] == [record(full, f) for f in full.findings]
        assert (other.reader, other.skipped, other.error) == (full.reader, full.skipped, full.error)


def test_a_short_stream_is_not_decoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A short stream is replayed from the records detection parsed (the typed decoder
    is made to fail), a long one from typed records (the parsed replay is made to fail),
    and both lint as the full read does."""

    def refuse(*_: object, **__: object) -> object:
        raise AssertionError("the other replay ran")

    counted = {True: 0, False: 0}
    for path, data in STREAMS:
        full = engine.lint_bytes(path.name, data, _options(False))
        if full.reader != "gemini-cli":
            continue
        short = _short(path.name, data)
        counted[short] += 1
        with monkeypatch.context() as patch:
            if short:
                patch.setattr(fast, "records", refuse)
            else:
                patch.setattr(gemini.GeminiCliReader, "_replayed", refuse)
            screened = engine.lint_bytes(path.name, data, _options(True))
        assert [record(screened, f) for f in screened.findings] == [record(full, f) for f in full.findings]
    assert counted[True] > 10 and counted[False] > 10


def _screened(name: str, data: bytes) -> tuple[list[Conversation], list[Conversation]]:
    """The conversations the screened read builds, and the full read's."""
    from transcript_doctor.analysis.screen import Screen

    built = []
    for screen in (Screen(_catalog()), None):
        source = sniff(name, data)
        source.loader = gemini.READER.loader
        built.append(gemini.READER.read_screened(source, screen))
    return built[0], built[1]


def test_a_doubted_conversation_is_built_from_the_screens_cut() -> None:
    """A session whose damage comes after a clean exchange is built from the prompt
    before the damage (the screen's cut: nothing before it can be found), and lints as
    the full read does; the messages built are the full read's from there on."""
    path = FIXTURES / "gemini-cli" / "codemie__session-2026-01-16T11-01-file-ops-37b7abef.json"
    value = json.loads(path.read_bytes())
    last = value["messages"][-1]
    assert last["type"] == "gemini"
    damaged = json.dumps({**value, "messages": [*value["messages"], {**last, "content": " "}]}).encode()
    stream = (
        FIXTURES / "gemini-cli" / "gen-unanswered-tool-response__session-2026-11-29T21-42-1ea4ff33.jsonl"
    ).read_bytes()
    # A reply to the stream's tool response, a prompt, and an empty model turn (TD103).
    reply = b'{"id":"m1","timestamp":"2026-11-29T21:43:00.000Z","type":"gemini","content":"It says hi."}'
    prompt = b'{"id":"p2","timestamp":"2026-11-29T21:50:00.000Z","type":"user","content":[{"text":"more?"}]}'
    empty = b'{"id":"m2","timestamp":"2026-11-29T21:50:01.000Z","type":"gemini","content":""}'
    damaged_stream = b"\n".join([stream.rstrip(b"\n"), reply, prompt, empty, b""])
    for name, data in ((path.name, damaged), ("session.jsonl", damaged_stream)):
        screened, full = _screened(name, data)
        assert len(screened) == len(full) == 1
        cut, whole = screened[0].messages, full[0].messages
        assert 0 < len(cut) < len(whole)
        assert [(m.role, m.origin, m.ref) for m in cut] == [
            (m.role, m.origin, m.ref) for m in whole[-len(cut) :]
        ]
        assert cut[0].is_prompt
        quick, slow = (engine.lint_bytes(name, data, _options(screen)) for screen in (True, False))
        assert quick.findings and [record(quick, f) for f in quick.findings] == [
            record(slow, f) for f in slow.findings
        ]
