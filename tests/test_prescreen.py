"""A large JSON file that is not a transcript is skipped from its first bytes (issue 17).

It was parsed whole only to be skipped (a 109 MB export: 888 MB of memory).  These tests
make parsing a large value fail, so that a skip proves nothing was parsed whole; the
negative controls prove every large file that may be a transcript is still read.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from support import FIXTURES, ROOT, lint_bytes

from transcript_doctor import prescreen, readers, source
from transcript_doctor.source import Container, NotJson, sniff

SIZE = prescreen.LARGE + (1 << 20)


@pytest.fixture
def no_large_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    real = orjson.loads

    def loads(data: bytes | str) -> object:
        assert len(data) < prescreen.LARGE, "a large document was parsed whole"
        return real(data)

    monkeypatch.setattr(source.orjson, "loads", loads)


def _array(item: dict[str, object]) -> bytes:
    rows = []
    size = 0
    index = 0
    while size < SIZE:
        row = json.dumps({**item, "id": index})
        rows.append(row)
        size += len(row) + 4
        index += 1
    return ("[\n  " + ",\n  ".join(rows) + "\n]\n").encode()


def _object(extra: dict[str, object] | None = None) -> bytes:
    packages = {
        f"pkg-{i}": {"version": f"1.{i % 50}.0", "integrity": "sha512-" + "x" * 60} for i in range(SIZE // 80)
    }
    return json.dumps({"lockfileVersion": 3, "packages": packages, **(extra or {})}).encode()


RECORDS = _array({"name": "widget", "price": 1.5, "tags": ["a", "b"]})


def test_a_large_array_of_records_is_skipped_from_its_first_records(no_large_parse: None) -> None:
    report = lint_bytes("export.json", RECORDS)
    assert (report.skipped, report.findings, report.error) == (
        "not a transcript: no reader recognises it (decided from its first 50 records)",
        [],
        None,
    )


def test_a_large_object_without_conversation_keys_is_skipped_unparsed(no_large_parse: None) -> None:
    data = _object()
    assert len(data) > prescreen.LARGE
    report = lint_bytes("package-lock.json", data)
    assert report.skipped == (
        "not a transcript: no reader recognises it (it has none of the keys a conversation object has)"
    )


def test_the_cli_skips_it_with_a_note(tmp_path: Path) -> None:
    from support import cli

    (tmp_path / "export.json").write_bytes(RECORDS)
    result = cli("lint", "export.json", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (
        0,
        "No transcripts checked.\nSkipped 1 file that is not a transcript.\n",
    )
    assert result.stderr == (
        "transcript-doctor: export.json: skipped, not a transcript: no reader recognises it "
        "(decided from its first 50 records)\n"
    )
    formats = cli("formats", "export.json", cwd=tmp_path)
    assert (
        formats.stdout
        == "export.json: not a transcript (no reader recognises it (decided from its first 50 records))\n"
    )


# -- negative controls: what may be a transcript is parsed as before -----------------------


def _padded_chat() -> bytes:
    """A real Chat Completions fixture with its messages repeated past the threshold."""
    messages = json.loads((FIXTURES / "openai-chat" / "damaged-turns.json").read_bytes())["messages"]
    clean = [m for m in messages if m.get("role") in ("system", "user")][:2]
    return json.dumps({"messages": clean * (SIZE // len(json.dumps(clean)) * 2)}).encode()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        # Messages after a large block of other keys: only a byte search finds the key.
        ("late-messages.json", _object({"messages": [{"role": "user", "content": "hi"}]})),
        # An array of messages (role): every reader's array layout.
        ("chat.json", _array({"role": "user", "content": "hello"})),
        # Items a companion reader claims (type), and a hint's speaker/content pair.
        ("typed.json", _array({"type": "say", "say": "text", "ts": 1})),
        ("speakers.json", _array({"speaker": "me", "text": "hello"})),
        # A first record that is not message-like, followed by messages: the hint may hold.
        (
            "mixed.json",
            b'[{"meta": 1},\n' + _array({"from": "me", "value": "hi"})[1:],
        ),
        # JSONL under a .json name goes to the JSONL readers.
        (
            "lines.json",
            b"".join(json.dumps({"id": i, "n": "x" * 80}).encode() + b"\n" for i in range(SIZE // 90)),
        ),
        # A conversation key in the first 64 KB: an unparseable document would be TD001.
        ("head.json", b'{"content": 1, ' + _object()[1:]),
    ],
)
def test_what_may_be_a_transcript_is_not_decided_here(name: str, data: bytes) -> None:
    assert len(data) > prescreen.LARGE
    assert prescreen.not_a_transcript(name, data) is None


def test_a_large_transcript_is_still_read() -> None:
    data = _padded_chat()
    assert len(data) > prescreen.LARGE
    report = lint_bytes("big-chat.json", data)
    assert (report.reader, report.skipped) == ("openai-chat", None)


def test_small_files_are_never_decided_here() -> None:
    assert prescreen.not_a_transcript("small.json", RECORDS[: prescreen.LARGE - 1]) is None
    assert prescreen.not_a_transcript("export.jsonl", RECORDS) is None


def test_a_forced_reader_still_reads_the_file() -> None:
    """--reader asks for that reader's own detection: it says why, not the prescreen."""
    report = lint_bytes("export.json", RECORDS, reader="openai-chat")
    assert (report.reader, report.skipped) == ("openai-chat", None)


def test_item_keys_hold_for_every_json_document_a_reader_claims() -> None:
    """The premise: every item of every claimed array has one of ITEM_KEYS, and every
    claimed object holds one of DOCUMENT_KEYS (the fixtures are real vendors' files)."""
    checked = 0
    for path in sorted((ROOT / "fixtures").rglob("*.json")):
        data = path.read_bytes()
        try:
            parsed = sniff(str(path), data)
        except NotJson:
            continue
        if parsed.container is not Container.JSON or parsed.value is None:
            continue
        if readers.detect(parsed) is None:
            continue
        checked += 1
        if isinstance(parsed.value, list):
            assert all(isinstance(i, dict) and not prescreen.ITEM_KEYS.isdisjoint(i) for i in parsed.value), (
                path
            )
        else:
            assert any(b'"' + key.encode() + b'"' in data for key in prescreen.DOCUMENT_KEYS), path
    assert checked >= 20
