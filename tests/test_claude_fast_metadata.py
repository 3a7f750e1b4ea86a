"""A file of Claude Code metadata lines alone (summaries, snapshots: a third of a
``~/.claude/projects`` tree) is decoded once, as ``fast._Metadata``, for its detection and
its proof: every file that decodes so decodes as the proof's records too and is proven
as ``prove_records`` proves it, and lints as the full read lints it, on every fixture and
corpus file and on damaged variants of the metadata files."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES, SHARED, corpus_id, json_files
from test_fast_path import _options, _variants
from test_registry import _metadata_variants

from transcript_doctor import engine, readers
from transcript_doctor.analysis.screen import Screen
from transcript_doctor.catalog import load
from transcript_doctor.readers import typed_lines
from transcript_doctor.readers.claude_code import fast
from transcript_doctor.reporters import record
from transcript_doctor.source import NotJson, sniff

JSONL = [p for p in [*json_files(FIXTURES), *json_files(SHARED)] if p.suffix in (".jsonl", ".ndjson")]
METADATA_FILES = [p for p in JSONL if typed_lines.decoded(p.read_bytes(), fast._METADATA) is not None]


def _changed(lines: list[bytes], i: int) -> list[bytes]:
    """Line ``i`` given what a ``_Record`` refuses or the proof does not cover, or what
    makes it another layout's: each must leave the file to the other paths."""
    line = lines[i]
    return [
        b"\n".join([*lines[:i], changed, *lines[i + 1 :]])
        for changed in (
            b'{"isSidechain":"yes",' + line[1:],
            b'{"timestamp":1,' + line[1:],
            b'{"subtype":[],' + line[1:],
            b'{"parentUuid":2,' + line[1:],
            b'{"snipMetadata":{"removedUuids":[]},' + line[1:],
            b'{"snipMetadata":null,' + line[1:],
            b'{"message":{"role":"model","content":"x"},' + line[1:],
            b'{"message":{"parts":[]},' + line[1:],
            b'{"message":{"content":"x"},' + line[1:],
            b'{"systemPayload":{},' + line[1:],
            b'{"leafUuid":{"a":[1,2]},' + line[1:],
            line.replace(b'"type":"', b'"type":"tool_result","t":"', 1),
            line.replace(b'"type":"', b'"type":null,"t":"', 1),
        )
    ]


def _damaged(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    found = [data, *_variants(data)]
    for i, line in enumerate(lines[:20]):
        if line.startswith(b"{"):
            found += _changed(lines, i)
    return found


def test_there_are_metadata_files() -> None:
    assert len(METADATA_FILES) >= 4


@pytest.mark.parametrize("path", JSONL, ids=corpus_id)
def test_a_file_decoded_as_metadata_is_proven_as_its_records_prove(path: Path) -> None:
    data = path.read_bytes()
    variants = _damaged(data) if path in METADATA_FILES else [data]
    screen = Screen(load())
    for variant in variants:
        if typed_lines.decoded(variant, fast._METADATA) is None:
            continue
        records = typed_lines.decoded(variant, fast._DECODER)
        assert records is not None
        assert fast.prove_records(records, screen, True, variant) is True
        assert fast.prove_records(records, screen, False, variant) is True
        source = sniff(path.name, variant)
        assert typed_lines.decode_once(source, fast._METADATA) is not None
        assert fast.prove_source(source, screen) is True


@pytest.mark.parametrize("path", METADATA_FILES, ids=corpus_id)
def test_damaged_metadata_files_lint_as_the_full_read(path: Path) -> None:
    """Detection (from the head, asking every reader) and the lint are the full path's."""
    for variant in [*_damaged(path.read_bytes()), *_metadata_variants()]:
        try:
            source = sniff(path.name, variant)
        except NotJson:
            continue
        every = readers.detect(sniff(path.name, variant), every=True)
        found = readers.detect(source)
        assert (found and (found[0].name, found[1])) == (every and (every[0].name, every[1]))
        fast_report, full = (
            engine.lint_bytes(path.name, variant, _options(screen)) for screen in (True, False)
        )
        assert (
            fast_report.reader,
            fast_report.skipped,
            [record(fast_report, f) for f in fast_report.findings],
        ) == (
            full.reader,
            full.skipped,
            [record(full, f) for f in full.findings],
        )


def test_a_metadata_file_is_decoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its detection decodes it, its proof takes those records: no head parsed, no
    second decoding, no full read."""
    from transcript_doctor.readers.claude_code.reader import ClaudeCodeReader
    from transcript_doctor.source import Source

    path = next(p for p in METADATA_FILES if "fabien" in p.name)
    data = path.read_bytes()
    decoders: list[object] = []
    decoded = typed_lines.decoded

    def counted(data: bytes, decoder: object) -> object:
        decoders.append(decoder)
        return decoded(data, decoder)  # type: ignore[arg-type]

    def refuse(*_: object, **__: object) -> object:
        raise AssertionError("parsed in full")

    monkeypatch.setattr(typed_lines, "decoded", counted)
    monkeypatch.setattr(Source, "head", refuse)
    monkeypatch.setattr(ClaudeCodeReader, "read", refuse)
    report = engine.lint_bytes(path.name, data, _options(True))
    assert (report.reader, report.findings) == ("claude-code", [])
    assert decoders == [fast._METADATA]
