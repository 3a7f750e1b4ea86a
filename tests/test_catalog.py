"""The placeholder catalog: valid data, every spec string present, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from transcript_doctor import catalog

RULES = Path(catalog.rules_dir())  # type: ignore[arg-type]


def test_catalog_is_shipped_and_valid() -> None:
    schema = json.loads((RULES / "catalog.schema.json").read_text())
    data = json.loads((RULES / "placeholders.json").read_text())
    jsonschema.Draft7Validator(schema).validate(data)
    assert len(catalog.load().markers) == len(data["markers"])
    # What the runtime skips for the built-in file (the schema, each pattern compiling and
    # matching its example), validate=True checks here;
    # the compiled markers are the same either way.
    assert catalog.parse(json.dumps(data).encode(), "x") == catalog.load().markers


@pytest.mark.parametrize(
    ("text", "kind", "vendor"),
    [
        ("(request timeout)", "placeholder", "qwen-code"),
        ("(empty content)", "placeholder", "qwen-code"),
        ("[The previous response was interrupted before it completed.]", "interruption", "gemini-cli"),
        (
            "[Tool execution limit reached after 7 steps. The model continued requesting tool calls beyond the limit.]",
            "placeholder",
            "neurolink",
        ),
        (
            "I gathered information across 1 tool call but reached the 5-step limit for a single turn before I could "
            "finish. Please narrow the request or break it into smaller asks and I'll continue.",
            "placeholder",
            "neurolink",
        ),
        (
            "I reached the 5-step limit for a single turn before I could finish. Please narrow the request or break "
            "it into smaller asks and I'll continue.",
            "placeholder",
            "neurolink",
        ),
        ("No response requested.", "placeholder", "claude-code"),
        ("(no content)", "placeholder", "claude-code"),
        ("[Response interrupted by API Error]", "partial-suffix", "cline"),
        ("[System: Empty message content sanitised to satisfy protocol]", "placeholder", "litellm"),
    ],
)
def test_spec_strings_match_whole_turns(text: str, kind: str, vendor: str) -> None:
    marker = catalog.load().whole_match(text, harness_written=False)
    assert marker is not None
    assert (marker.kind, marker.vendor) == (kind, vendor)


def test_harness_only_markers_need_the_vendor_flag() -> None:
    loaded = catalog.load()
    assert loaded.whole_match("API Error: 400 {}", harness_written=False) is None
    marker = loaded.whole_match("You've hit your session limit · resets 9:50pm", harness_written=True)
    assert marker is not None and marker.id == "claude-code-synthetic-reply"


def test_mentions_are_not_whole_matches() -> None:
    loaded = catalog.load()
    assert loaded.whole_match("The endpoint returned (request timeout) once.", False) is None
    assert loaded.distinctive_in("The endpoint returned (request timeout) once.") is None


def test_distinctive_markers_are_found_inside_longer_text() -> None:
    hit = catalog.load().distinctive_in("Done. [The previous response was interrupted before it completed.]")
    assert hit is not None and hit[0].id == "gemini-cli-interrupted-response"


def test_cline_suffix_is_a_partial_marker_not_a_distinctive_one() -> None:
    loaded = catalog.load()
    text = "Let me check the\n\n[Response interrupted by API Error]"
    assert loaded.distinctive_in(text) is None
    marker = loaded.partial_suffix(text)
    assert marker is not None and marker.id == "cline-interrupted-api-error"


def test_extra_catalog_is_validated_with_a_clear_error(tmp_path) -> None:
    bad = tmp_path / "mine.json"
    bad.write_text(
        json.dumps({"markers": [{"id": "x", "kind": "placeholder", "vendor": "me", "source": "me"}]})
    )
    with pytest.raises(catalog.CatalogError, match=r"mine\.json: invalid entry at markers/0"):
        catalog.load((bad,))


def test_extra_catalog_pattern_must_match_its_example(tmp_path) -> None:
    bad = tmp_path / "mine.json"
    entry = {
        "id": "x",
        "kind": "placeholder",
        "pattern": "a+",
        "example": "b",
        "distinctive": False,
        "vendor": "me",
        "source": "me",
    }
    bad.write_text(json.dumps({"markers": [entry]}))
    with pytest.raises(catalog.CatalogError, match="does not match its example"):
        catalog.load((bad,))


def test_extra_catalog_adds_markers(tmp_path) -> None:
    good = tmp_path / "mine.json"
    entry = {
        "id": "mine",
        "kind": "placeholder",
        "text": "[no reply]",
        "distinctive": True,
        "vendor": "me",
        "source": "our harness",
    }
    good.write_text(json.dumps({"markers": [entry]}))
    marker = catalog.load((good,)).whole_match("[no reply]", False)
    assert marker is not None and marker.vendor == "me"


def _flags_one_by_one(found: catalog.Catalog, text: str, stripped: str, calls: bool) -> bool:
    """What ``flags_model_text`` answers, asked of each marker in turn."""
    if found.distinctive_in(text) is not None:
        return True
    return not calls and (
        found.whole_match(stripped, False) is not None or found.partial_suffix(text) is not None
    )


def _texts(markers: tuple[catalog.Marker, ...]) -> list[str]:
    """Each marker alone, padded, inside a sentence, at the end of one, and near misses."""
    examples = ["", " ", "ok", "Sure.", "The upstream once answered (request timeout), but not now."]
    for marker in markers:
        base = marker.text
        if base is None:  # a pattern: its catalog example is what it matches
            base = {
                "neurolink-step-cap-bracketed": "[Tool execution limit reached after 5 steps. The model"
                " continued requesting tool calls beyond the limit.]",
                "claude-code-usage-limit-epoch": "Claude AI usage limit reached|1700000000",
            }.get(marker.id, "x")
        examples += [
            base,
            f"  {base}\n",
            f"I said {base} before.",
            f"Partial answer {base}",
            f"Partial {base}  \n",
        ]
        examples += [base[:-1], base[1:], base.upper()]
    return examples


def _asked_of_each(found: catalog.Catalog, text: str) -> tuple[object, object, object]:
    """``whole_match(text.strip(), False)``, ``distinctive_in`` and ``partial_suffix``
    asked of each marker in turn, with no search before."""
    stripped, tail = text.strip(), text.rstrip()
    model = [m for m in found.markers if not m.harness_only]
    whole = [m for m in model if m.text == stripped] + [
        next(
            (m for m in found.markers if m.regex is not None and not m.harness_only and m.matches(stripped)),
            None,
        )
    ]
    whole_found = min((m for m in whole if m is not None), key=found.markers.index, default=None)
    inside = next(
        (
            (m, words)
            for m in found.markers
            if m.distinctive and m.kind != catalog.PARTIAL_SUFFIX
            for words in [m.find(text)]
            if words is not None
        ),
        None,
    )
    suffix = next(
        (m for m in found.markers if m.kind == catalog.PARTIAL_SUFFIX and m.text and tail.endswith(m.text)),
        None,
    )
    return whole_found, inside, suffix


def _grouped_or_shipped(tmp_path: Path, extra: bool) -> catalog.Catalog:
    """The shipped catalog, with (``extra``) a user pattern with a group: the markers
    then cannot share one expression."""
    paths: tuple[Path, ...] = ()
    if extra:
        mine = tmp_path / "mine.json"
        entry = {
            "id": "grouped",
            "kind": "placeholder",
            "pattern": "(no|nil) reply",
            "example": "no reply",
            "distinctive": True,
            "vendor": "me",
            "source": "me",
        }
        mine.write_text(json.dumps({"markers": [entry]}))
        paths = (mine,)
    return catalog.load(paths)


@pytest.mark.parametrize("extra", [False, True])
def test_the_searches_before_the_markers_rule_out_no_marker(tmp_path, extra: bool) -> None:
    """Each method's first search (one for all markers) finds what asking each marker
    finds: with the shipped catalog, and with a user pattern that cannot join them."""
    found = _grouped_or_shipped(tmp_path, extra)
    for text in [*_texts(found.markers), "no reply", "say nil reply now", "an ordinary reply"]:
        asked = (
            found.whole_match(text.strip(), False),
            found.distinctive_in(text),
            found.partial_suffix(text),
        )
        assert asked == _asked_of_each(found, text), text


@pytest.mark.parametrize("extra", [False, True])
def test_flags_model_text_answers_as_the_markers_one_by_one(tmp_path, extra: bool) -> None:
    found = _grouped_or_shipped(tmp_path, extra)
    assert (found._model_checks is None) is extra
    texts = [*_texts(found.markers), "no reply", "say nil reply now"]
    for text in texts:
        for calls in (False, True):
            expected = _flags_one_by_one(found, text, text.strip(), calls)
            assert found.flags_model_text(text, text.strip(), calls) is expected, (text, calls)
