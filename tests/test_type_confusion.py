"""A field of an unexpected type never stops a check, and the fast paths still agree.

Writers have bugs and vendors change field types between releases.  Every reader reads
fields defensively, and every clean-proof fast path (typed msgspec decoding, the screen)
must fall back to the full read where a type surprises it.  The fuzz (tests/fuzz) hits
such fields at random; this sweep hits each field of a few fixtures per layout in turn:

- every key path (to six levels, the first three items of a list) set to a list, an
  object, a number, a string and null, in the first record that has it;
- every top-level key the layout uses anywhere grafted, as a list or an object, onto the
  first record of each kind that lacks it (Qwen Code's ``subtype`` on a user record
  used to stop the check: a list cannot be looked up in a set).

Each variant is linted with the fast paths on and off: neither may raise, and both must
give the same reader and findings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import FIXTURES, _catalog

from transcript_doctor import engine
from transcript_doctor.checks import Selection
from transcript_doctor.reporters import record

VALUES: tuple[Any, ...] = ([], {}, 0, "x", None)
GRAFTED: tuple[Any, ...] = ([], {})
PER_LAYOUT = 3  # the largest fixtures under 60 KB of each layout
LAYOUTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name != "wild")


def _fixtures(layout: Path, suffixes: tuple[str, ...]) -> list[Path]:
    files = [f for f in layout.rglob("*") if f.suffix in suffixes and f.stat().st_size < 60_000]
    return sorted(files, key=lambda f: (-f.stat().st_size, f.name))[:PER_LAYOUT]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if len(prefix) > 5:
        return
    items = (
        value.items() if isinstance(value, dict) else enumerate(value[:3]) if isinstance(value, list) else ()
    )
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    copy = orjson.loads(orjson.dumps(value))
    holder = copy
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = new
    return copy


def _shape(path: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple("#" if isinstance(step, int) else step for step in path)


def _records(data: bytes) -> Iterator[tuple[int, Any]]:
    for index, line in enumerate(data.split(b"\n")):
        try:
            yield index, orjson.loads(line)
        except orjson.JSONDecodeError:
            continue


def _retyped(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    seen: set[tuple[Any, ...]] = set()
    if path.suffix == ".jsonl":
        lines = data.split(b"\n")
        for index, value in _records(data):
            for where in _paths(value):
                if _shape(where) not in seen:
                    seen.add(_shape(where))
                    for new in VALUES:
                        changed = orjson.dumps(_set(value, where, new))
                        yield b"\n".join([*lines[:index], changed, *lines[index + 1 :]])
        return
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    for where in _paths(document):
        if _shape(where) not in seen:
            seen.add(_shape(where))
            for new in VALUES:
                yield orjson.dumps(_set(document, where, new), option=orjson.OPT_INDENT_2)


def _grafted(path: Path, vocabulary: list[str]) -> Iterator[bytes]:
    data = path.read_bytes()
    lines = data.split(b"\n")
    kinds: set[tuple[object, object]] = set()
    for index, value in _records(data):
        if not isinstance(value, dict):
            continue
        kind = (value.get("type"), value.get("role"))
        if not all(isinstance(k, (str, type(None))) for k in kind) or kind in kinds:
            continue
        kinds.add(kind)
        for key in vocabulary:
            if key not in value:
                for new in GRAFTED:
                    changed = orjson.dumps({**value, key: new})
                    yield b"\n".join([*lines[:index], changed, *lines[index + 1 :]])


def _vocabulary(layout: Path) -> list[str]:
    keys: set[str] = set()
    for path in layout.rglob("*.jsonl"):
        for _, value in _records(path.read_bytes()):
            if isinstance(value, dict):
                keys.update(value)
    return sorted(keys)


def _options(screen: bool) -> engine.Options:
    return engine.Options(Selection.build(("ALL",)), _catalog(), screen=screen)


def _agree(name: str, variants: Iterator[bytes]) -> int:
    fast_options, full_options = _options(True), _options(False)
    checked = 0
    for data in variants:
        fast = engine.lint_bytes(name, data, fast_options)
        full = engine.lint_bytes(name, data, full_options)
        shown = data[:300]
        assert (fast.reader, fast.skipped) == (full.reader, full.skipped), shown
        assert [record(fast, f) for f in fast.findings] == [record(full, f) for f in full.findings], shown
        checked += 1
    return checked


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda p: p.name)
def test_a_field_of_another_type_is_read_alike_both_ways(layout: Path) -> None:
    files = _fixtures(layout, (".json", ".jsonl"))
    assert sum(_agree(path.name, _retyped(path)) for path in files) > 50


# OpenCode keeps sessions in SQLite or JSON: its JSONL fixtures are the fake model's logs.
JSONL_LAYOUTS = [p for p in LAYOUTS if not p.name.startswith("opencode") and any(p.rglob("*.jsonl"))]


@pytest.mark.parametrize("layout", JSONL_LAYOUTS, ids=lambda p: p.name)
def test_a_key_of_another_record_kind_is_read_alike_both_ways(layout: Path) -> None:
    vocabulary = _vocabulary(layout)
    files = _fixtures(layout, (".jsonl",))
    assert sum(_agree(path.name, _grafted(path, vocabulary)) for path in files) > 0
