"""Detection of role-line layouts without a head search: ``decide`` of Mistral Vibe,
openworker and Kimi CLI gives what asking every reader gives.  (Kimi CLI's decides from
the head itself: its read parses every line with orjson, so the head's records are its
read's, and a decision from typed records cost more than it saved; its decision spares
the other readers' detection.)

Their lines all hold a ``role``, which several readers of the registry may claim, so a
decision names the readers it found unable to outscore it (``Decided.beaten``) besides the
keys the head is known to lack.  Here, for every fixture of these layouts and damaged
variants of its first lines (a line left out, a number beyond a double, each key the
registry looks for grafted on, the deciding values changed or of another type, duplicate
and escaped keys, blank, torn and non-object lines), at the vendor's path and moved off it:

- ``readers.detect`` equals ``readers.detect(every=True)``;
- a decision is the reader's own claim on the head, and each reader it names as beaten
  claims nothing that outscores it (a reader listed before the decider scores lower, one
  listed after it no higher).
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
from support import FIXTURES, ROOT

from transcript_doctor import readers
from transcript_doctor.source import NotJson, Source, sniff

SHARED = ROOT.parent / "shared" / "corpus"
DECIDERS = ("openworker", "mistral_vibe", "kimi_cli")
_ENTRIES = [e for e in readers._MODULES if e.jsonl != readers.NEVER]
_POSITION = {e.module: i for i, e in enumerate(_ENTRIES)}
_MARKERS = {e.module: e.markers for e in _ENTRIES if e.module in DECIDERS}


def _jsonl(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.jsonl")) if root.is_dir() else []


def _marked(data: bytes, module: str) -> bool:
    return any(marker in data[: readers.MARKED] for marker in _MARKERS[module])


def _files(module: str) -> list[Path]:
    """Every fixture, corpus and test file that shows the decider a marker, each content once."""
    seen: set[bytes] = set()
    found = []
    for path in [*_jsonl(FIXTURES), *_jsonl(SHARED), *_jsonl(ROOT / "tests" / "data")]:
        data = path.read_bytes()
        if _marked(data, module) and data not in seen:
            seen.add(data)
            found.append(path)
    return found


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if ROOT in path.parents else path.as_posix()


# Every key a registry entry is shown JSONL files by or ruled out by, and what the role
# layouts' detection reads.
REGISTRY_KEYS = sorted(
    {k for e in _ENTRIES for k in (e.jsonl or ())} | {k for e in _ENTRIES for k in e.unless}
)
GRAFTED = [
    *REGISTRY_KEYS,
    "injected",
    "type",
    "kind",
    "_anthropic",
    "_gemini",
    "_openai",
    "_display",
    "message_id",
    "content",
    "token_count",
]
ROLE = re.compile(rb'"role": ?"[^"]*"')
VALUES = (
    b'"notice"',
    b'"_checkpoint"',
    b'"_usage"',
    b'"_system_prompt"',
    b'"model"',
    b'"function"',
    b'"user"',
    b'"tool"',
    b"5",
    b"null",
)
CHANGES = (
    (b'"injected": false', (b'"injected": 1', b'"injected": "false"', b'"injected": null', b'"x": false')),
    (b'"injected":false', (b'"injected":0', b'"x":false')),
    (b'"ts": ', (b'"ts": "1", "x": ', b'"ts": true, "x": ', b'"ts": 1, "x": ', b'"t": ')),
    (b'"id": ', (b'"id": true, "x": ', b'"id": "0", "x": ', b'"id": 1.0, "x": ', b'"d": ')),
    (b'"token_count": ', (b'"token_count": true, "x": ', b'"token_count": "1", "x": ')),
    (b'"content": "', (b'"content": 5, "x": "', b'"content": null, "x": "', b'"c": "')),
    (b'"_anthropic": {', (b'"_anthropic": 1, "x": {', b'"a": {')),
    (b'"kind": "', (b'"kind": 1, "x": "',)),
)


def _changed(line: bytes) -> list[bytes]:
    """One line changed in each way that may change what the head shows."""
    body = line[1:]
    found = [
        b"",
        b"   ",
        b"[1]",
        b"null",
        line[: len(line) // 2],
        b'{"n":1e400,' + body,
        b'{"n": 1e400, "s": "\xc3\xa9", ' + body,  # orjson refuses it, the head's fallback reads it
        b'{"\\u0069d": 1, ' + body,
        b'{"\\u0074s": 1.5, ' + body,
        b'{"r\\u006fle": "notice", ' + body,
        b'{"type": "metadata", "protocol_version": "1", ' + body,
        b'{"role": "_checkpoint", "id": 1}\n' + line,
        line + b"\n" + line,
    ]
    found += [b'{"%s": 1, ' % key.encode() + body for key in GRAFTED]
    found += [b'{"%s": null, ' % key.encode() + body for key in ("uuid", "id", "ts", "payload", "injected")]
    stripped = line.rstrip(b"\r")
    if stripped.endswith(b"}"):
        found += [stripped[:-1] + b', "role": %s}' % value for value in (b'"notice"', b'"_usage"', b"5")]
        found += [stripped[:-1] + b', "injected": 1}', stripped[:-1] + b', "ts": 2.5}']
    match = ROLE.search(line)
    if match:
        found += [line[: match.start()] + b'"role": ' + value + line[match.end() :] for value in VALUES]
        found.append(b'{"role": "tool", ' + body)  # a duplicate key: the last one counts
    for old, news in CHANGES:
        at = line.find(old)
        if at >= 0:
            found += [line[:at] + new + line[at + len(old) :] for new in news]
    return found


def _foreign() -> list[bytes]:
    """The first line of each other JSONL layout's first fixtures, and the same with a
    ``role``: another reader's own record among the lines."""
    found = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for path in sorted(folder.rglob("*.jsonl"))[:2]:
            line = next((x for x in path.read_bytes().split(b"\n") if x.strip()), b"")
            if line.startswith(b"{") and len(line) < 4000:
                found += [line, b'{"role": "user", ' + line[1:]]
    return found


FOREIGN = _foreign()


def _variants(data: bytes, lines: int = 4) -> list[bytes]:
    split = data.split(b"\n")
    found = [data, b"\n" + data, b"\xef\xbb\xbf" + data, data.replace(b"\n", b"\r\n")]
    for line in FOREIGN:
        found += [
            line + b"\n" + data,
            b"\n".join([line, *split[1:]]),
            b"\n".join([*split[:2], line, *split[2:]]),
        ]
    for i, line in enumerate(split[:lines]):
        if line.strip():
            found += [b"\n".join([*split[:i], changed, *split[i + 1 :]]) for changed in _changed(line)]
    return found


def _paths(path: Path, module: str) -> list[str]:
    """Where the file is, and off it: nowhere, and (where a path makes a claim: openworker's
    and Mistral Vibe's) at openworker's and at Mistral Vibe's paths."""
    found = [_id(path), "moved.jsonl"]
    if module != "kimi_cli":
        found += [
            "home/.openworker/conversations/c1.jsonl",
            "logs/session_20260101_000000_abcdef12/messages.jsonl",
        ]
    return found


def _named(found: tuple[readers.Reader, readers.Detection] | None) -> tuple[str, readers.Detection] | None:
    return found and (found[0].name, found[1])


def check(data: bytes, path: str) -> readers.Detection | None:
    """The proof for one file: the dispatched answer is every reader's, and every role
    decision is the reader's own claim, with each reader it names beaten checked."""
    try:
        sniff(path, data)
    except NotJson:
        return None  # no reader is asked
    every = _named(readers.detect(sniff(path, data), every=True))
    assert _named(readers.detect(sniff(path, data))) == every, path
    decided_by = None
    for module in DECIDERS:
        reader = readers._loaded(module)
        decided = reader.decide(sniff(path, data))
        if decided is None:
            continue
        assert readers.claim(reader, sniff(path, data)) == decided.detection, (module, path)
        score = decided.detection.score
        for other in decided.beaten:
            found = readers.claim(readers._loaded(other), sniff(path, data))
            if found is not None:
                if _POSITION[other] < _POSITION[module]:
                    assert found.score < score, (module, other, path)
                else:
                    assert found.score <= score, (module, other, path)
        decided_by = decided.detection
    for entry in _ENTRIES:
        if entry.most < readers.DEFINITIVE:  # the bounds the decisions lean on
            found = readers.claim(readers._loaded(entry.module), sniff(path, data))
            assert found is None or found.score <= entry.most, (entry.module, path)
    return decided_by


def _proved(module: str, lines: int = 4) -> int:
    decided = 0
    for path in _files(module):
        data = path.read_bytes()
        if len(data) > 60_000:
            check(data, _id(path))
            continue
        for variant in _variants(data, lines):
            for name in _paths(path, module):
                decided += check(variant, name) is not None
    return decided


def test_mistral_vibe_decisions_are_what_the_head_gives() -> None:
    assert len(_files("mistral_vibe")) > 20
    assert _proved("mistral_vibe") > 1000


def _without_head(module: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """How many of the layout's fixture files (at their path and moved) are detected with
    no head parsed, and how many were tried; each as asking every reader answers."""
    files = [p for p in _files(module) if FIXTURES in p.parents]
    expected = {
        (p, name): _named(readers.detect(sniff(name, p.read_bytes()), every=True))
        for p in files
        for name in (_id(p), "moved.jsonl")
    }

    def refuse(self: Source, count: int = 20) -> list[object]:
        raise AssertionError("the head was parsed")

    decided = 0
    with monkeypatch.context() as patch:
        patch.setattr(Source, "head", refuse)
        for (path, name), answer in expected.items():
            try:
                found = _named(readers.detect(sniff(name, path.read_bytes())))
            except AssertionError:
                continue
            assert found == answer
            decided += 1
    return decided, len(expected)


def test_mistral_vibe_sessions_are_detected_without_a_head(monkeypatch: pytest.MonkeyPatch) -> None:
    decided, tried = _without_head("mistral_vibe", monkeypatch)
    assert tried > 40 and decided > tried * 0.8


def test_what_a_vibe_decision_knows_of_other_readers_is_theirs() -> None:
    """``fast.ABSENT`` holds every key the registry shows another JSONL reader files by
    (or rules one out by) that is not a key ``_Line`` takes; openworker's path is its own."""
    from transcript_doctor.readers.mistral_vibe import fast
    from transcript_doctor.readers.mistral_vibe import reader as vibe
    from transcript_doctor.readers.openworker import reader as openworker

    for entry in _ENTRIES:
        if entry.module != "mistral_vibe":
            assert (set(entry.jsonl or ()) | entry.unless) - vibe.PLAIN_KEYS <= fast.ABSENT, entry.module
    assert fast.ABSENT.isdisjoint(vibe.PLAIN_KEYS)
    assert {field.encode_name for field in msgspec.structs.fields(fast._Line)} == vibe.PLAIN_KEYS
    assert vibe.OPENWORKER_PATH.pattern == openworker.PATH.pattern
    assert fast._ROLES == vibe.ROLES


def test_openworker_decisions_are_what_the_head_gives() -> None:
    assert len(_files("openworker")) >= 10
    assert _proved("openworker") > 1000


def test_openworker_conversations_are_detected_without_a_head(monkeypatch: pytest.MonkeyPatch) -> None:
    decided, tried = _without_head("openworker", monkeypatch)
    assert tried >= 20 and decided > tried * 0.8


def test_what_an_openworker_decision_knows_of_other_readers_is_theirs() -> None:
    """Every other JSONL reader that could outscore an openworker decision and that it does
    not name as beaten is shown files only by keys of ``fast.ABSENT``."""
    from transcript_doctor.readers.openworker import fast
    from transcript_doctor.readers.openworker import reader as openworker

    position = _POSITION["openworker"]
    for entry in _ENTRIES:
        if entry.module == "openworker" or entry.module in openworker._BEATEN:
            continue
        if entry.most < readers.SPECIFIC or (
            entry.most == readers.SPECIFIC and _POSITION[entry.module] > position
        ):
            continue
        assert entry.jsonl is not None and entry.jsonl <= fast.ABSENT, entry.module
    assert fast._ROLES == openworker.ROLES


def test_kimi_cli_decisions_are_what_the_head_gives() -> None:
    assert len(_files("kimi_cli")) >= 30
    assert _proved("kimi_cli") > 1000


def test_kimi_cli_sessions_are_decided_without_asking_another_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """A context.jsonl (every fixture and corpus one starts with its system prompt, the
    registry's lead) is claimed by Kimi CLI's decision: no reader's ``detect`` is asked,
    and the answer is every reader's."""
    files = _files("kimi_cli")
    expected = {p: _named(readers.detect(sniff(p.name, p.read_bytes()), every=True)) for p in files}
    asked: list[str] = []
    real = readers.claim

    def claim(reader: readers.Reader, source: Source) -> readers.Detection | None:
        asked.append(reader.name)
        return real(reader, source)

    monkeypatch.setattr(readers, "claim", claim)
    decided = 0
    for path, answer in expected.items():
        assert answer is not None and answer[0] == "kimi-cli"
        asked.clear()
        assert _named(readers.detect(sniff(path.name, path.read_bytes()))) == answer
        decided += not asked
    assert decided == len(files) >= 30


def test_what_a_kimi_decision_knows_of_other_readers_is_theirs() -> None:
    """``REGISTRY_KEYS`` holds every key the registry shows a JSONL reader listed before
    Kimi CLI files by, or rules one out by, but the ``role`` openworker and Mistral Vibe
    are shown files by (the two a decision names as beaten)."""
    from transcript_doctor.readers.kimi_cli import reader as kimi

    keys: set[str] = set()
    for entry in _ENTRIES[: _POSITION["kimi_cli"]]:
        if entry.module not in kimi._BEATEN:
            keys |= set(entry.jsonl or ()) | entry.unless
    assert keys == kimi.REGISTRY_KEYS
    assert {
        e.module for e in _ENTRIES[: _POSITION["kimi_cli"]] if e.jsonl and "role" in e.jsonl
    } == kimi._BEATEN
