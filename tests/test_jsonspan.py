"""``jsonspan.Locator`` finds one pointer's span without indexing the whole document: every
span it gives must be the full index's, byte for byte, on any text (orjson's own layouts,
other writers', odd whitespace, escapes, keys twice) and for any pointer, errors included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor import jsonspan

ROOT = Path(__file__).resolve().parent.parent
# The shared corpus beside the checkout (as tests/test_fast_path.py finds it), or the
# developers' copy when the checkout is a worktree elsewhere.
CORPUS = next(
    (path for path in (ROOT.parent / "shared" / "corpus", Path("/work/shared/corpus")) if path.is_dir()),
    ROOT.parent / "shared" / "corpus",
)


def _shape(span: jsonspan.Span, depth: int = 3) -> tuple[Any, ...]:
    """What a caller can see of a span, its children included (a few levels).  ``shadows``
    is read after ``members``, as callers do: a deep object learns it when indexed."""
    items, members = span.items, span.members
    children: Any = None
    if depth and items is not None:
        children = [_shape(item, depth - 1) for item in items]
    elif depth and members is not None:
        children = {key: _shape(member, depth - 1) for key, member in members.items()}
    return span.start, span.end, span.kind, span.key_start, span.shadows, children


def _full(data: bytes, pointer: str, start: int, value: Any) -> tuple[Any, ...]:
    try:
        return ("span", _shape(jsonspan.resolve(jsonspan.index(data, start, value=value), pointer)))
    except Exception as exc:  # the error itself is what must match
        return ("error", type(exc))


def _located(locator: jsonspan.Locator, pointer: str) -> tuple[Any, ...]:
    try:
        return ("span", _shape(locator.span(pointer)))
    except Exception as exc:
        return ("error", type(exc))


def _pointers(value: Any, prefix: tuple[str | int, ...] = ()) -> list[str]:
    found = [jsonspan.join(*prefix)]
    if isinstance(value, list):
        for position, item in enumerate(value):
            found += _pointers(item, (*prefix, position))
    elif isinstance(value, dict):
        for key, member in value.items():
            found += _pointers(member, (*prefix, key))
    return found


def _assert_same(data: bytes, pointers: list[str], start: int = 0, value: Any = None) -> int:
    """Each pointer located alone (a fresh Locator) and one Locator asked all of them in
    turn agree with the full index; returns how many lookups took the fast path."""
    fast = 0
    shared = jsonspan.Locator(data, start, value)
    for pointer in pointers:
        expected = _full(data, pointer, start, value)
        alone = jsonspan.Locator(data, start, value)
        fast += alone._fast(jsonspan.split(pointer)) is not None
        assert _located(alone, pointer) == expected, pointer
        assert _located(shared, pointer) == expected, pointer
    return fast


# -- random documents -----------------------------------------------------------------

_TEXT = st.text(st.sampled_from([*'ab"\\/,:[]{} \n\t\x01é€😀\u2028', "\ud800"]), max_size=6)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    _TEXT,
)
# A document as a tree: objects are member lists, so that a key may appear twice.
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(st.tuples(st.sampled_from(["a", "b", "k~/", "é"]), inner), max_size=4).map(
            lambda members: ("object", members)
        ),
    ),
    max_leaves=12,
)
_DOCUMENTS = st.one_of(
    st.lists(_TREES, max_size=8),
    st.lists(
        st.tuples(
            st.sampled_from(["messages", "model", "messages", "x"]),
            st.one_of(st.lists(_TREES, max_size=8), _TREES),
        ),
        max_size=4,
    ).map(lambda members: ("object", members)),
)


def _write(tree: Any, style: str, draw: Any, level: int = 0) -> str:
    """The tree as one of the layouts writers use, or with whitespace drawn at random."""
    if isinstance(tree, tuple | list):
        is_object = isinstance(tree, tuple)
        items = tree[1] if is_object else tree
        opening, closing = ("{", "}") if is_object else ("[", "]")
        if not items:
            return opening + closing
        parts = []
        for item in items:
            if is_object:
                key, member = item
                colon = ": " if style in ("indent2", "indent4", "python") else ":"
                if style == "odd":
                    colon = draw(st.sampled_from([":", " : ", ":\n\t"]))
                parts.append(
                    json.dumps(key, ensure_ascii=style == "python")
                    + colon
                    + _write(member, style, draw, level + 1)
                )
            else:
                parts.append(_write(item, style, draw, level + 1))
        if style in ("indent2", "indent4", "python"):
            step = "    " if style == "indent4" else "  "
            inner, outer = "\n" + step * (level + 1), "\n" + step * level
            return opening + inner + ("," + inner).join(parts) + outer + closing
        if style == "odd":
            spaces = st.sampled_from(["", " ", "\n", "\r\n  ", "\t"])
            return (
                opening
                + draw(spaces)
                + "".join(
                    part + draw(spaces) + ("," + draw(spaces) if n < len(parts) - 1 else "")
                    for n, part in enumerate(parts)
                )
                + closing
            )
        return opening + ",".join(parts) + closing
    if style == "python":
        return json.dumps(tree)
    return orjson.dumps(tree).decode("utf-8", "surrogatepass")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tree=_DOCUMENTS,
    style=st.sampled_from(["indent2", "indent2", "compact", "indent4", "python", "odd"]),
    data=st.data(),
)
def test_locating_gives_the_full_index_spans_on_random_documents(
    tree: Any, style: str, data: st.DataObject
) -> None:
    try:
        text = _write(tree, style, data.draw).encode("utf-8", "surrogatepass")
    except (TypeError, orjson.JSONEncodeError):  # an integer orjson does not write
        text = _write(tree, "python", data.draw).encode("utf-8", "surrogatepass")
    text = (
        data.draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
        + text
        + data.draw(st.sampled_from([b"", b"\n", b" \n"]))
    )
    start = 3 if text.startswith(b"\xef\xbb\xbf") else 0
    try:
        value = orjson.loads(text[start:])
    except orjson.JSONDecodeError:  # a lone surrogate or an integer beyond 64 bits: the stdlib reads it
        value = json.loads(text[start:].decode("utf-8", "surrogatepass"))
    pointers = _pointers(value)
    pointers += data.draw(
        st.lists(
            st.sampled_from(["/9", "/-1", "/01", "/messages/99", "/x/0", "/0/", "/messages/-1", "/a"]),
            max_size=3,
        )
    )
    _assert_same(text, data.draw(st.permutations(pointers)), start, value)


def test_the_fast_path_is_taken_on_orjson_layouts() -> None:
    """The random test would pass with no fast path at all: this one shows it is used."""
    value = {"model": "m", "messages": [{"role": "user", "content": [{"text": "a\nb"}]}] * 5, "z": 1}
    pretty = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    assert (
        _assert_same(pretty, [f"/messages/{n}" for n in range(5)] + ["/messages/4/content/0/text"], 0, value)
        == 6
    )
    listed = value["messages"]
    for text in (orjson.dumps(listed, option=orjson.OPT_INDENT_2), orjson.dumps(listed)):
        assert _assert_same(text, [f"/{n}" for n in range(5)], 0, listed) == 5


@pytest.mark.parametrize(
    ("text", "pointer"),
    [
        (b'[\n  {"a": 1},\n  {"a": 2}\n]', "/1"),
        (
            b'{\n  "messages": [\n    1,\n    2\n  ],\n  "messages": [\n    1,\n    2,\n    3\n  ]\n}',
            "/messages/1",
        ),
        (
            b'{\n  "messages": [\n    1,\n    2,\n    3\n  ],\n  "messages": [\n    1,\n    2\n  ]\n}',
            "/messages/1",
        ),
        (b'[\n  "\\u00e9",\n  "x"\n]', "/1"),
        (b"[\n  12,\n  1\n]", "/1"),
        (b"[1,2 ,3]", "/2"),
    ],
)
def test_keys_twice_escapes_and_other_spellings_locate_as_the_full_index(text: bytes, pointer: str) -> None:
    _assert_same(text, [pointer, "/0", "/messages/0", "/messages/2"], 0, orjson.loads(text))


@pytest.mark.parametrize("text", [b"[1, 2]]", b"[[1, 2]", b'{"a": [1]}}', b"[1] [2]", b""])
def test_text_that_is_not_one_json_value_fails_as_the_full_index_does(text: bytes) -> None:
    """No parsed value, no proof: the full index decides (it refuses unbalanced text)."""
    for value in (None, jsonspan._UNKNOWN):
        _assert_same(text, ["/0", "/1", "/a/0", ""], 0, value)


def _documents() -> list[Path]:
    found = sorted((ROOT / "fixtures").rglob("*.json"))
    if CORPUS.is_dir():
        found += sorted(CORPUS.rglob("*.json"))
    return found


@pytest.mark.parametrize("path", _documents(), ids=lambda path: str(path.relative_to(path.parents[1])))
def test_every_fixture_and_corpus_document_locates_as_the_full_index(path: Path) -> None:
    data = path.read_bytes()
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        value = orjson.loads(data[start:])
    except orjson.JSONDecodeError:
        value = None
    pointers = _pointers(value)
    if len(pointers) > 3000:  # each is checked against a full index: the message lists' elements suffice
        pointers = [pointer for pointer in pointers if pointer.count("/") <= 2]
    _assert_same(data, pointers, start, value)


# -- JSONL lines (jsonspan.line_span) ---------------------------------------------------


def _line_full(data: bytes, start: int, end: int, pointer: str) -> tuple[Any, ...]:
    try:
        return ("span", _shape(jsonspan.resolve(jsonspan.index(data, start, end), pointer)))
    except Exception as exc:
        return ("error", type(exc))


def _line_located(data: bytes, start: int, end: int, pointer: str) -> tuple[Any, ...]:
    try:
        return ("span", _shape(jsonspan.line_span(data, start, end, pointer)))
    except Exception as exc:
        return ("error", type(exc))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=_TREES, style=st.sampled_from(["compact", "compact", "python", "odd"]), data=st.data())
def test_a_line_locates_as_the_full_index_of_the_line(tree: Any, style: str, data: st.DataObject) -> None:
    try:
        line = _write(tree, style, data.draw).replace("\n", " ").encode("utf-8", "surrogatepass")
    except (TypeError, orjson.JSONEncodeError):
        line = _write(tree, "python", data.draw).replace("\n", " ").encode("utf-8", "surrogatepass")
    before, after = b'{"a": 1}\n', b"\n[2]\n"
    text, start = before + line + after, len(before)
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        value = json.loads(line.decode("utf-8", "surrogatepass"))
    extra = ["/9", "/-1", "/01", "/a/0", "/0/", "/a", "/b/1", "/k~0~1/0"]
    for pointer in _pointers(value) + data.draw(st.lists(st.sampled_from(extra), max_size=4)):
        assert _line_located(text, start, start + len(line), pointer) == _line_full(
            text, start, start + len(line), pointer
        ), pointer


def test_a_canonical_line_is_located_without_indexing(monkeypatch: pytest.MonkeyPatch) -> None:
    line = orjson.dumps({"type": "user", "message": {"content": [{"text": "é\n"}, {"id": [1, {"k": None}]}]}})
    text = b"x\n" + line
    pointers = _pointers(orjson.loads(line))
    expected = {p: _line_full(text, 2, len(text), p)[1][:4] for p in pointers}  # start, end, kind, key_start
    monkeypatch.setattr(jsonspan, "index", None)  # any index would fail
    found = {p: jsonspan.line_span(text, 2, len(text), p) for p in pointers}
    assert {p: (s.start, s.end, s.kind, s.key_start) for p, s in found.items()} == expected


def _lines_files() -> list[Path]:
    found = sorted((ROOT / "fixtures").rglob("*.jsonl"))
    if CORPUS.is_dir():
        found += sorted(CORPUS.rglob("*.jsonl"))
    return found


@pytest.mark.parametrize("path", _lines_files(), ids=lambda path: str(path.relative_to(path.parents[1])))
def test_every_fixture_and_corpus_line_locates_as_the_full_index(path: Path) -> None:
    data = path.read_bytes()
    start, checked = 0, 0
    for raw in data.split(b"\n"):
        end = start + len(raw.rstrip(b"\r"))
        try:
            value = orjson.loads(data[start:end])
        except orjson.JSONDecodeError:
            value = None
        pointers = _pointers(value)[:150] if value is not None else ["", "/0", "/message"]
        for pointer in pointers:
            assert _line_located(data, start, end, pointer) == _line_full(data, start, end, pointer), pointer
        checked += len(pointers)
        start += len(raw) + 1
        if checked > 1000:  # the first lines of a large session suffice
            break
