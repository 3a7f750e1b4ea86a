"""The reader registry loads only the readers that may claim a file, and never hides a file
from the reader that claims it.

``readers._MODULES`` says, per reader, what a file must show (by container: keys of its
head records, or of its document) before the reader's module is imported.  Here every
fixture and every file of the shared corpus is shown to every reader directly: a reader
that claims a file must be one the registry would have asked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import FIXTURES, ROOT

from transcript_doctor import readers
from transcript_doctor.readers.base import DEFINITIVE, FALLBACK, SHAPE, SPECIFIC
from transcript_doctor.source import Container, NotJson, Source, sniff

SHARED = ROOT.parent / "shared" / "corpus"
SUFFIXES = (".json", ".jsonl", ".ndjson")


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES) if root.is_dir() else []


FILES = [*_files(FIXTURES), *_files(SHARED), *_files(ROOT / "tests" / "data")]


def _id(path: Path) -> str:
    return path.relative_to(ROOT.parent).as_posix()


def _source(path: Path) -> Source | None:
    try:
        source = sniff(path.name, path.read_bytes())
    except NotJson:
        return None
    if source.container is Container.JSON and source.value is None:
        return None  # does not parse: no reader is asked
    return source


def test_the_registry_names_every_reader_once() -> None:
    modules = [entry.module for entry in readers._MODULES]
    assert len(set(modules)) == len(modules)
    for entry, reader in zip(readers._MODULES, readers.all_readers(), strict=True):
        assert type(reader).__module__ == f"transcript_doctor.readers.{entry.module}.reader"


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_a_reader_that_claims_a_file_is_one_the_registry_asks(path: Path) -> None:
    source = _source(path)
    if source is None:
        return
    keys = readers.head_keys(source)
    for entry, reader in zip(readers._MODULES, readers.all_readers(), strict=True):
        if readers.claim(reader, source) is not None:
            assert entry.may_claim(source, keys), (reader.name, sorted(keys or ()))


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_detection_is_the_same_as_asking_every_reader(path: Path) -> None:
    source = _source(path)
    if source is None:
        return
    dispatched, every = readers.detect(source), readers.detect(source, every=True)
    assert (dispatched and (dispatched[0].name, dispatched[1])) == (every and (every[0].name, every[1]))


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_no_claim_scores_above_definitive(path: Path) -> None:
    """Detection stops at the first DEFINITIVE claim in registry order: sound only while no
    reader's claim on any file can score higher (ties go to the reader listed first)."""
    source = _source(path)
    if source is None:
        return
    for reader in readers.all_readers():
        found = readers.claim(reader, source)
        assert found is None or found.score in (DEFINITIVE, SPECIFIC, SHAPE, FALLBACK), (reader.name, found)


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix != ".json"], ids=_id)
def test_no_jsonl_claim_scores_above_its_registry_bound(path: Path) -> None:
    """``Registered.most``: the highest score a reader's ``detect`` gives a JSONL file
    (openworker's and Anthropic's claims are SPECIFIC at most, OpenAI's SHAPE: their
    ``detect`` makes no other claim); a decision it cannot outscore need not rule it out."""
    source = _source(path)
    if source is None or source.container is not Container.JSONL:
        return
    for entry, reader in zip(readers._MODULES, readers.all_readers(), strict=True):
        found = readers.claim(reader, source)
        assert found is None or found.score <= entry.most, (reader.name, found)


def test_a_decision_rules_out_only_the_readers_that_could_outscore_it() -> None:
    """``_settled``: a reader listed before the decider must score lower than the decision,
    one listed after it no higher; each is ruled out by its bound, by keys, or by the
    decider's own finding (``Decided.beaten``)."""
    claim = readers.Detection("x", "", SPECIFIC)
    before = (("a", frozenset({"k"}), frozenset(), SPECIFIC, True),)
    after = (("a", frozenset({"k"}), frozenset(), SPECIFIC, False),)
    higher = (("a", frozenset({"k"}), frozenset(), DEFINITIVE, False),)
    nothing: frozenset[str] = frozenset()
    assert not readers._settled(readers.Decided(claim, (), nothing), before)  # a tie goes to it
    assert readers._settled(readers.Decided(claim, (), nothing), after)  # a tie goes to the decider
    assert not readers._settled(readers.Decided(claim, (), nothing), higher)
    assert readers._settled(readers.Decided(claim, (), frozenset({"k"})), higher)  # its keys absent
    assert readers._settled(readers.Decided(claim, (), nothing, frozenset({"a"})), higher)  # beaten
    assert readers._settled(readers.Decided(readers.Detection("x", "", DEFINITIVE), (), nothing), higher)
    unless = (("a", frozenset({"k"}), frozenset({"u"}), DEFINITIVE, True),)
    assert readers._settled(readers.Decided(claim, {"u"}, nothing), unless)


def test_detection_stops_at_the_first_definitive_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Kimi CLI session: Kimi CLI claims it DEFINITIVE, so the generic API readers listed
    after it are not asked (the full search gives the same answer).  Its ``decide`` is set
    aside here (no reader decides), so the head's search runs."""
    monkeypatch.setattr(readers, "_DECIDERS", ())
    source = sniff(
        "context.jsonl", (FIXTURES / "kimi-cli" / "clean" / "session" / "context.jsonl").read_bytes()
    )
    asked: list[str] = []
    real = readers.claim

    def claim(reader: readers.Reader, source: Source) -> readers.Detection | None:
        asked.append(reader.name)
        return real(reader, source)

    monkeypatch.setattr(readers, "claim", claim)
    found = readers.detect(source)
    assert found is not None and (found[0].name, found[1].score) == ("kimi-cli", DEFINITIVE)
    assert asked[-1] == "kimi-cli" and "openai-chat" not in asked
    asked.clear()
    assert readers.detect(source, every=True) == found
    assert "openai-chat" in asked


def test_a_lead_never_keeps_a_decision_from_a_file_of_its_layout() -> None:
    """A reader's ``lead`` (what its vendor writes first) only spares other files the
    marker search: every fixture and corpus file its ``decide`` settles starts with it."""
    checked = 0
    for module, lead, _, others in readers._DECIDERS:
        if not lead:
            continue
        reader = readers._loaded(module)
        for path in FILES:
            if path.suffix != ".jsonl":
                continue
            source = _source(path)
            decided = reader.decide(source) if source is not None else None
            if decided is not None and readers._settled(decided, others):
                assert path.read_bytes().startswith(lead), (module, _id(path))
                checked += 1
    assert checked > 100


def test_a_file_with_no_record_to_tell_by_is_shown_to_every_reader_of_its_container() -> None:
    source = sniff("logs.json", b"[]")
    assert readers.head_keys(source) is None
    asked = [entry.module for entry in readers._MODULES if entry.may_claim(source, None)]
    assert asked == [e.module for e in readers._MODULES if e.json != readers.NEVER]
    assert "gemini_cli" in asked  # an empty logs.json is Gemini CLI's prompt log
    found = readers.detect(source)
    assert found is not None and found[0].name == "gemini-cli"


def test_detecting_a_claude_code_session_loads_only_its_reader() -> None:
    """In a fresh interpreter: no other vendor's module is imported to detect it."""
    code = (
        "import sys\n"
        "from transcript_doctor import readers\n"
        "from transcript_doctor.source import sniff\n"
        f"data = open({str(FIXTURES / 'claude-code' / 'clean-rewound-branch.jsonl')!r}, 'rb').read()\n"
        "found = readers.detect(sniff('s.jsonl', data))\n"
        "print(found[0].name)\n"
        "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('transcript_doctor.readers.')}))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stderr) == (0, "")
    # (typed_lines: the msgspec decoding its ``decide`` and its proof share)
    assert run.stdout.splitlines() == ["claude-code", "['base', 'claude_code', 'typed_lines']"]


CLAUDE = sorted(
    p
    for p in FILES
    if p.suffix == ".jsonl" and "claude" in p.parent.name and b'"userType"' in p.read_bytes()[:65536]
)


def _detected(data: bytes, every: bool = False) -> tuple[str, object] | None:
    found = readers.detect(sniff("s.jsonl", data), every=every)
    return found and (found[0].name, found[1])


def _decisive(data: bytes) -> list[bytes]:
    """Each of the first lines changed in the ways that change what the head shows: left
    out, unreadable to orjson only (a number beyond a double), without ``userType``, with
    a key or value of another layout (Gemini CLI's keys, Qwen Code's envelope)."""
    lines = data.split(b"\n")
    found: list[bytes] = []
    for i, line in enumerate(lines[:25]):
        if not line.startswith(b"{"):
            continue
        for changed in (
            b"",
            b'{"n":1e400,' + line[1:],
            line.replace(b'"userType":"external",', b""),
            b'{"projectHash":"x",' + line[1:],
            b'{"$set":{},' + line[1:],
            b'{"systemPayload":{},' + line[1:],
            b'{"toolUseResult":{},' + line[1:],
            line.replace(b'"type":"user"', b'"type":"tool_result"', 1),
            line.replace(b'"message":{', b'"message":{"parts":[],', 1),
            line.replace(b'"role":"assistant"', b'"role":"model"', 1),
            line.replace(b'"uuid":"', b'"uuid":null,"x":"', 1),
        ):
            found.append(b"\n".join([*lines[:i], changed, *lines[i + 1 :]]))
    return found


@pytest.mark.parametrize("path", CLAUDE, ids=_id)
def test_a_claude_code_decision_is_what_the_head_gives(path: Path) -> None:
    """``ClaudeCodeReader.decide`` settles detection from the proof's typed records (no
    head parsed): the same answer as asking every reader, for every session and every
    change of its first lines."""
    data = path.read_bytes()
    for variant in [data, *_decisive(data)] if len(data) < 40_000 else [data]:
        assert _detected(variant) == _detected(variant, every=True)


def test_claude_code_sessions_are_detected_without_a_head(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session is decided from its typed records: no head is parsed (``Source.head`` is
    made to fail here); a line orjson refuses (msgspec skips a number beyond a double)
    does not speak for the head, the next entry line does."""
    assert len(CLAUDE) > 10
    expected = {path: _detected(path.read_bytes(), every=True) for path in CLAUDE}
    lines = (FIXTURES / "claude-code" / "clean-rewound-branch.jsonl").read_bytes().split(b"\n")
    first = next(i for i, line in enumerate(lines) if b'"userType"' in line)
    beyond = b"\n".join([*lines[:first], b'{"n":1e400,' + lines[first][1:], *lines[first + 1 :]])
    assert _detected(beyond, every=True) == ("claude-code", expected[CLAUDE[0]][1])  # type: ignore[index]

    def refuse(self: Source, count: int = 20) -> list[object]:
        raise AssertionError("the head was parsed")

    monkeypatch.setattr(Source, "head", refuse)
    from transcript_doctor.readers.claude_code import fast

    short = [p for p in CLAUDE if len([x for x in p.read_bytes().split(b"\n") if x]) <= fast._DECIDED_LINES]
    decided = []
    for path in short:
        try:
            found = _detected(path.read_bytes())
        except AssertionError:
            continue  # a session the typed records do not cover (a torn line…)
        assert found == expected[path]
        decided.append(path)
    assert len(short) > 10 and len(decided) > len(short) * 0.8
    long = next(p for p in CLAUDE if p not in short)
    with pytest.raises(AssertionError, match="the head was parsed"):
        _detected(long.read_bytes())  # a long session: its head costs less than every line
    assert _detected(beyond) == ("claude-code", expected[CLAUDE[0]][1])  # type: ignore[index]


def test_claude_code_is_asked_about_files_with_its_entries_or_metadata_lines() -> None:
    """Its detection claims a head holding an entry (a ``uuid``) or a metadata line (the
    key of METADATA_KEYS): the registry shows it no other file."""
    from transcript_doctor.readers.claude_code.reader import METADATA_KEYS

    entry = next(e for e in readers._MODULES if e.module == "claude_code")
    assert entry.jsonl == {"uuid", *METADATA_KEYS.values()}


SNAPSHOT = (
    b'{"type":"file-history-snapshot","messageId":"4a99c0a9-1edd-44b0-b772-30d14ae6b92c","snapshot":'
    b'{"messageId":"4a99c0a9-1edd-44b0-b772-30d14ae6b92c","trackedFileBackups":{},'
    b'"timestamp":"2026-03-04T13:47:40.041Z"},"isSnapshotUpdate":false}'
)
SUMMARY = (
    b'{"type":"summary","summary":"Conversation Cleared","leafUuid":"d3b5f9ba-bf7f-462b-89e5-00d18a80c036"}'
)
METADATA = b"\n".join([SNAPSHOT, SUMMARY, SNAPSHOT.replace(b"4a99", b"5b00")]) + b"\n"


def _metadata_variants() -> list[bytes]:
    """A file of Claude Code metadata lines alone, each line changed in the ways that change
    what its head shows the registry: left out, unreadable to orjson only, with a key another
    reader is shown files by (or a uuid, even null), made an entry, without a type, with
    the key that makes it a metadata line escaped or taken away."""
    lines = METADATA.split(b"\n")[:-1]
    found = [METADATA]
    for i, line in enumerate(lines):
        for changed in (
            b"",
            b'{"n":1e400,' + line[1:],
            *(
                b'{"%s":1,' % key + line[1:]
                for key in (b"uuid", b"id", b"ts", b"payload", b"parentId", b"role")
            ),
            *(
                b'{"%s":1,' % key + line[1:]
                for key in (b"messages", b"protocol_version", b"projectHash", b"$set")
            ),
            b'{"uuid":null,' + line[1:],
            b'{"\\u0075uid":"u",' + line[1:],
            b'{"userType":"external",' + line[1:],
            line.replace(b'"type":"summary"', b'"type":"user"').replace(
                b'"type":"file-history', b'"type":"user","x'
            ),
            line.replace(b'"type":', b'"kind":', 1),
            line.replace(b'"leafUuid"', b'"leaf"').replace(b'"snapshot":', b'"shot":'),
            line.replace(b'"type":"file-history-snapshot"', b'"type":"queue-operation"'),
        ):
            found.append(b"\n".join([*lines[:i], changed, *lines[i + 1 :]]) + b"\n")
    return found


def test_a_claude_code_metadata_file_decision_is_what_the_head_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of Claude Code metadata lines alone (a ``~/.claude/projects`` tree holds many)
    is decided from the typed records too (its claim is not DEFINITIVE: every other reader
    must be ruled out by the keys no line holds), and the answer is asking every reader's."""
    variants = _metadata_variants()
    expected = [_detected(v, every=True) for v in variants]
    assert expected[0] is not None and expected[0][0] == "claude-code"
    assert [_detected(v) for v in variants] == expected

    def refuse(self: Source, count: int = 20) -> list[object]:
        raise AssertionError("the head was parsed")

    monkeypatch.setattr(Source, "head", refuse)
    assert _detected(METADATA) == expected[0]


def test_metadata_lines_beside_another_layouts_records_are_detected_as_the_head_says() -> None:
    """Metadata lines before or after the first records of every other JSONL layout's
    fixtures: whoever the head's claims make the reader (another layout's DEFINITIVE claim
    beats a file of metadata lines), the decision agrees."""
    others = sorted(
        p
        for p in FILES
        if p.suffix == ".jsonl"
        and FIXTURES in p.parents
        and "claude" not in p.relative_to(FIXTURES).parts[-2]
    )
    assert len(others) > 20
    for path in others:
        head = b"\n".join(path.read_bytes().split(b"\n")[:3]) + b"\n"
        for data in (METADATA + head, head + METADATA):
            assert _detected(data) == _detected(data, every=True), path.name


def test_a_metadata_file_is_decided_only_when_no_line_shows_another_reader_a_key() -> None:
    """The claim on a file of metadata lines is not DEFINITIVE: the decision holds only while
    no line holds a key by which the registry would show the file to another JSONL reader
    (``fast.UNSEEN``, which must cover them all), not even null or escaped."""
    from transcript_doctor.readers.claude_code import fast
    from transcript_doctor.readers.claude_code.reader import READER

    for entry in readers._MODULES:
        if entry.module != "claude_code" and entry.jsonl != readers.NEVER:
            assert entry.jsonl is not None and entry.jsonl <= fast.UNSEEN, entry.module
    assert READER.decide(sniff("s.jsonl", METADATA)) is not None
    lines = METADATA.split(b"\n")
    for key in sorted(fast.UNSEEN):
        for value in (b"1", b"null"):
            changed = b'{"%s":%s,' % (key.encode(), value) + lines[1][1:]
            data = b"\n".join([lines[0], changed, *lines[2:]])
            assert READER.decide(sniff("s.jsonl", data)) is None, key
    escaped = b'{"\\u0069d":1,' + lines[1][1:]  # "id"
    assert READER.decide(sniff("s.jsonl", b"\n".join([lines[0], escaped, *lines[2:]]))) is None
