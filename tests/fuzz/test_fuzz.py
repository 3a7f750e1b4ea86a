"""Damage real transcripts at random and hold lint and fix to their promises.

lint: never an internal error, whatever the bytes (also while it previews each fix on the
file as it is, for SARIF and --show-fixes), and the same findings with and without the
plain-conversation screen.  fix: undoing the steps of its report
gives back the damaged input exactly, the result has no repairable finding left (unless
a repair was rolled back, and then it says why), and a second fix changes nothing.

Two generators: a seeded mutation fuzzer (byte flips, truncations, line drops and
duplications, splices of other transcripts, NUL runs, torn tails, CRLF, wrong value
types), and hypothesis choosing the same mutations, which also shrinks a failure to a
small case.  The fast profile runs in CI; the long one runs by hand:

    TD_FUZZ_CASES=100000 TD_FUZZ_PROFILE=long pytest tests/fuzz -q
"""

from __future__ import annotations

import os
import random
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutate import MUTATIONS, damage, duplicate_line, raw_newline
from support import FIXTURES, _catalog, assert_accounted, detected_bytes

from transcript_doctor import engine, fixer
from transcript_doctor.checks import Selection
from transcript_doctor.plain import replace
from transcript_doctor.reporters import record

CASES = int(os.environ.get("TD_FUZZ_CASES", "1000"))
FILES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl"))

settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "long", max_examples=100_000, deadline=None, suppress_health_check=list(HealthCheck)
)
PROFILE = os.environ.get("TD_FUZZ_PROFILE", "ci")


@cache
def _options(unsafe: bool = False) -> engine.Options:
    return engine.Options(Selection.build(["ALL"]), _catalog(), unsafe_fixes=unsafe)


def check(name: str, data: bytes, unsafe: bool = True) -> None:
    options = _options(unsafe)
    report = engine.lint_bytes(name, data, replace(options, with_edits=True))
    assert report.error is None, report.error
    unscreened = engine.lint_bytes(name, data, replace(options, screen=False))
    assert [record(report, f) for f in report.findings] == [
        record(unscreened, f) for f in unscreened.findings
    ], "the screen changed a finding"
    outcome = fixer.fix_bytes(name, data, options)
    assert outcome.error is None, outcome.error
    if not outcome.changed:
        return
    assert fixer.undo(outcome.after, outcome.steps) == data, "the report does not give back the input"
    assert_accounted(outcome)
    pinned = engine.Options(options.selection, options.catalog, outcome.reader, unsafe_fixes=unsafe)
    after = engine.lint_bytes(name, outcome.after, pinned)
    assert after.error is None, after.error
    # What fix itself could still repair: a repair that needs a companion file fix cannot
    # see (bytes in memory: Mistral Vibe's meta.json) is left with its reason, as lint's
    # refusals are; lint alone cannot tell (readers/base.py Repair.companion).
    withheld = {f.finding.rule.code for f, _ in outcome.remaining if f.blocked is not None}
    left = {f.finding.rule.code for f in after.findings if f.fixable} - withheld
    rolled = {note.split(":", 1)[0] for note in outcome.rolled_back}
    assert left <= rolled or "all" in rolled, f"fixable findings left without a reason: {left - rolled}"
    again = fixer.fix_bytes(name, outcome.after, pinned)
    assert again.after == outcome.after, "a second fix changed the file"
    assert detected_bytes(name, outcome.after) == detected_bytes(name, data), "detection flipped (D7)"
    assert fixer.fix_bytes(name, outcome.after, options).after == outcome.after, "a second run changed it"


def _case(case: int) -> tuple[str, bytes, list[str]]:
    path = FILES[case % len(FILES)]
    other = FILES[(case * 7 + 3) % len(FILES)].read_bytes()
    data, applied = damage(path.read_bytes(), seed=case, other=other)
    return str(path.relative_to(FIXTURES)), data, applied


@pytest.mark.parametrize("case", range(CASES))
def test_seeded_damage(case: int) -> None:
    name, data, applied = _case(case)
    try:
        check(name, data, unsafe=case % 2 == 1)
    except Exception as exc:
        raise AssertionError(f"{name} seed {case} {applied}: {exc!r}") from exc


@settings(settings.get_profile(PROFILE))
@given(
    st.sampled_from(FILES),
    st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 2**32)), min_size=1, max_size=3),
    st.sampled_from(FILES),
)
def test_hypothesis_damage(path, mutations, other) -> None:  # type: ignore[no-untyped-def]
    data = path.read_bytes()
    for mutation, seed in mutations:
        data = mutation(data, random.Random(seed), other.read_bytes())
    check(path.name, data)


RAW_NEWLINE_FILES = [p for p in FILES if p.suffix == ".jsonl" and b"\\n" in p.read_bytes()]
COPILOT_LOGS = [p for p in RAW_NEWLINE_FILES if p.name.startswith("events") and "copilot-cli" in p.parts]


@pytest.mark.parametrize("case", range(min(CASES, 300)))
def test_raw_newlines_inside_strings(case: int) -> None:
    """Every layout keeps lint's and fix's promises on strings torn by raw line breaks."""
    path = RAW_NEWLINE_FILES[case % len(RAW_NEWLINE_FILES)]
    data = raw_newline(path.read_bytes(), random.Random(case), b"")
    try:
        check(path.name, data, unsafe=case % 2 == 1)
    except Exception as exc:
        raise AssertionError(f"{path} seed {case}: {exc!r}") from exc


@pytest.mark.parametrize("case", range(min(CASES, 100)))
def test_copilot_events_torn_by_raw_newlines_rejoin_to_the_original(case: int) -> None:
    """A Copilot CLI log the CLI wrote, its escapes written raw: the default fix of TD001
    gives back exactly the log the CLI wrote (when it was clean of TD001 to begin with)."""
    path = COPILOT_LOGS[case % len(COPILOT_LOGS)]
    original = path.read_bytes()
    data = raw_newline(original, random.Random(case), b"", with_crlf=False)
    options = engine.Options(Selection.build(["TD001"]), _catalog())
    if data == original or engine.lint_bytes(path.name, original, options).findings:
        return
    outcome = fixer.fix_bytes(path.name, data, options)
    assert outcome.after == original, (path, case)


def test_every_fixture_as_is() -> None:
    for path in FILES:
        check(path.name, path.read_bytes(), unsafe=False)
        check(path.name, path.read_bytes())


def test_a_key_duplicated_inside_a_tool_call_is_never_copied() -> None:
    """Found by the long run: a duplicated ``"status"`` line in a Gemini CLI tool call; the
    inserted result used to rebuild the object around a member no span held, writing a
    third copy of it that no report named.  Such an object is not edited."""
    path = FIXTURES / "gemini-cli" / "codemie-file-ops-damaged.json"
    data = duplicate_line(path.read_bytes(), random.Random(2352), b"")
    check(path.name, data)
    outcome = fixer.fix_bytes(path.name, data, _options())
    assert any("holds a key twice" in note for note in outcome.rolled_back)
