"""``fix``: findings -> edits -> new bytes, verified by linting the result again.

Only fixable findings are repaired: safe repairs, and unsafe ones (that may destroy real
model or tool output) only with ``--unsafe-fixes``.  Repairs are applied one rule at a
time, in an order where earlier repairs cannot undo later ones (records are repaired and
removed before results are paired, content is trimmed last).  After each rule the file
is read again, by the same reader, and linted: a rule's repairs are kept only if they
cleared their findings, added no error that ``fix`` cannot repair in turn, and left the
file detected as the same layout (else a second run would read it as another vendor's
and change it again).  When a rule's repairs fail together, they are split and tried in
halves, so that only the repairs that fail are rolled back, each with its reason; those
are tried again only after other repairs have changed the file.  What a repair exposes
(a new final turn ending in whitespace) is repaired in a further round, so that a second
run has nothing left to do; findings without a repair that appear (TD104 after a Gemini
placeholder goes) are reported with the repairs that exposed them.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from transcript_doctor import checks, engine, plain, readers
from transcript_doctor.analysis.shared import element_bytes
from transcript_doctor.editing import EditError, Logged, Splice, splice
from transcript_doctor.engine import Located, Options
from transcript_doctor.model import Applicability, Severity
from transcript_doctor.readers.base import editor
from transcript_doctor.source import NotJson, Source, sniff
from transcript_doctor.transcript import Transcript

MAX_PASSES = 4
MAX_RESTARTS = 2  # repairs again without the ones whose errors stayed
# Verifications a file may spend on splitting failed groups (each lints the file again).
SPLIT_BUDGET = 48


@dataclass(frozen=True, slots=True)
class Applied:
    """One repaired finding as the report shows it."""

    rule: str
    line: int
    message: str
    action: str
    edits: tuple[Logged, ...]
    applicability: Applicability
    safety: str  # what the repair keeps or destroys
    companion: bool = False  # the repair also changes the layout's companion file


# Reads a companion file (readers/base.py Repair.companion) by its path; OSError if it cannot.
CompanionReader = Callable[[str], bytes]


def read_companion(path: str) -> bytes:
    """The plain :data:`CompanionReader` (``fix --out``, ``--diff``, the ``-j`` workers)."""
    with open(path, "rb") as handle:
        return handle.read()


@dataclass(frozen=True, slots=True)
class Step:
    """One splice in the order it was made: at ``offset`` of the bytes at that moment,
    ``old`` became ``new``.  Undoing the steps in reverse order restores the original."""

    offset: int
    old: bytes
    new: bytes


@dataclass(frozen=True, slots=True)
class Companion:
    """The file a layout keeps in step with its transcript, as read and as the repairs
    leave it (``after == before`` when it needed no change)."""

    path: str
    before: bytes
    after: bytes
    edits: tuple[Logged, ...] = ()
    steps: tuple[Step, ...] = ()

    @property
    def changed(self) -> bool:
        return self.after != self.before


@dataclass(slots=True)
class Outcome:
    path: str
    reader: str | None
    before: bytes
    after: bytes
    applied: list[Applied] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    remaining: list[tuple[Located, str]] = field(default_factory=list)  # finding, why unfixed
    introduced: list[Located] = field(default_factory=list)  # findings the repairs exposed
    rolled_back: list[str] = field(default_factory=list)  # "RULE: why", one per failed repair
    skipped: str | None = None
    error: str | None = None
    companion: Companion | None = None  # read for a repair that needed it

    @property
    def changed(self) -> bool:
        return self.after != self.before


def fix_bytes(path: str, data: bytes, options: Options, companions: CompanionReader | None = None) -> Outcome:
    """``companions`` reads the file a layout keeps beside ``path`` (``fix`` of a named
    file); without it a repair that must change that file too is not made."""
    if data.startswith(b"SQLite format 3\x00"):  # standard input or a URL (dbsource.MAGIC)
        from transcript_doctor import dbsource

        return Outcome(path, None, data, data, error=dbsource.from_bytes(path))
    report, transcript = engine.inspect(path, data, options)
    outcome = Outcome(path, report.reader, data, data, skipped=report.skipped, error=report.error)
    if transcript is None:
        outcome.remaining = [(f, "no reader understands this file") for f in report.findings]
        return outcome
    # Re-read with the same reader: an edit must not change how the file is understood.
    pinned = plain.replace(options, reader=transcript.reader.name, pinned=True)
    run = _Run(path, pinned, _detected(transcript.source), companions)
    original = _gate(run, transcript, report.findings)
    # Repairs whose errors stayed at the end are banned and the file repaired again from
    # the start without them: the independent repairs stay (issue: one relink that
    # exposed an unrepairable TD301 used to take every repair of the file with it).
    banned: dict[_Key, tuple[str, str]] = {}
    for _ in range(MAX_RESTARTS + 1):
        state = _passes(run, data, transcript, original, banned)
        new_errors = _new_errors(original, state.findings)
        culprits = [s for s in state.kept if new_errors & s.added] if new_errors else []
        if not culprits:
            break
        for step in culprits:
            why = f"its repair exposed errors that could not be repaired ({', '.join(sorted(new_errors & step.added))})"
            banned.update((key, (step.rule, why)) for key in step.keys)
    current, findings, final = state.data, state.findings, state.transcript
    outcome.applied, outcome.steps = state.applied, state.steps
    reasons = {k: why for k, (_, why) in {**state.failed, **banned}.items()}
    rules = {k: rule for k, (rule, _) in {**state.failed, **banned}.items()}
    unfixed = [k for f in findings if (k := _key(final, f)) in reasons]
    outcome.rolled_back = list(dict.fromkeys(f"{rules[k]}: {reasons[k]}" for k in unfixed))
    if new_errors:
        # Never leave a file with an error it did not have: give it back untouched.
        outcome.rolled_back.append(
            f"all: the repairs together left new errors ({', '.join(sorted(new_errors))})"
        )
        outcome.applied, outcome.steps, current, findings, final = [], [], data, original, transcript
        reasons = {}
    if run.companion is not None:
        made = _companion(run, final, any(a.companion for a in outcome.applied))
        if isinstance(made, str):  # the two files would disagree: give both back untouched
            outcome.rolled_back.append(f"all: {made}")
            outcome.applied, outcome.steps, current, findings, final = [], [], data, original, transcript
            reasons = {}
        else:
            outcome.companion = made
    outcome.after = current
    outcome.introduced = _introduced(original, findings, Counter(a.rule for a in outcome.applied))
    outcome.remaining = [
        (
            f,
            "appeared after other repairs: review it"
            if f in outcome.introduced
            else _why_unfixed(f, reasons.get(_key(final, f)), outcome.rolled_back),
        )
        for f in findings
    ]
    return outcome


@dataclass(slots=True)
class _Kept:
    """One rule's repairs kept in a pass: which findings, and the error codes they added."""

    rule: str
    keys: list[_Key]
    added: set[str]


@dataclass(slots=True)
class _State:
    data: bytes
    transcript: Transcript
    findings: list[Located]
    applied: list[Applied] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    kept: list[_Kept] = field(default_factory=list)
    failed: dict[_Key, tuple[str, str]] = field(default_factory=dict)  # key -> (rule, why)


def _passes(
    run: _Run,
    data: bytes,
    transcript: Transcript,
    findings: list[Located],
    banned: dict[_Key, tuple[str, str]],
) -> _State:
    """Every applicable repair, rule by rule in fix order, until nothing more changes."""
    state = _State(data, transcript, findings)
    # Repairs that were rolled back (by identity), with how many groups were kept by then:
    # such a repair is tried again only after other repairs changed the file (removing
    # an empty turn can make a stacked partial repairable), else a second run would differ.
    failed_at: dict[_Key, int] = {}
    for _ in range(MAX_PASSES):
        progress = False
        for rule in checks.fix_order():
            transcript, current = state.transcript, state.data
            group = [
                f
                for f in state.findings
                if f.fixable
                and f.finding.rule.code == rule
                and _allowed(transcript, f, failed_at, banned, len(state.kept))
            ]
            if not group:
                continue
            attempt, rejected = _attempt_split(run, current, transcript, group, state.findings)
            for located, why in rejected:
                key = _key(transcript, located)
                failed_at[key] = len(state.kept)
                state.failed[key] = (rule, why)
            if attempt is None:
                continue
            keys = [_key(transcript, f) for f in attempt.group]
            state.kept.append(_Kept(rule, keys, _new_errors(state.findings, attempt.findings)))
            state.applied.extend(attempt.applied)
            state.steps.extend(_steps(current, attempt.splices))
            state.data, state.findings, state.transcript = attempt.data, attempt.findings, attempt.transcript
            progress = True
        if not progress:
            break
    return state


def _allowed(
    transcript: Transcript,
    located: Located,
    failed_at: dict[_Key, int],
    banned: dict[_Key, tuple[str, str]],
    kept: int,
) -> bool:
    if not failed_at and not banned:
        return True
    key = _key(transcript, located)
    return key not in banned and failed_at.get(key) != kept


@dataclass(slots=True)
class _Run:
    """What every verification of one file compares with."""

    path: str
    pinned: Options
    detected: tuple[str, bool] | None  # how detection read the input
    companions: CompanionReader | None = None
    budget: int = SPLIT_BUDGET
    # The layout's companion file, read on the first repair that needs it: its path and
    # bytes, or why such repairs cannot be made (``checked`` once it was looked at).
    companion: tuple[str, bytes] | None = None
    problem: str | None = None
    checked: bool = False


@dataclass(frozen=True, slots=True)
class Attempt:
    """Repairs that passed verification: the new bytes, as read and linted again."""

    group: list[Located]  # the findings repaired
    data: bytes
    applied: list[Applied]
    splices: list[Splice]
    findings: list[Located]
    transcript: Transcript


_Key = tuple[str, str, str]


def _key(transcript: Transcript, located: Located) -> _Key:
    """A finding's identity across edits: lines move, the element's bytes do not."""
    finding = located.finding
    raw = element_bytes(transcript.source, located.origin) or b""
    return (
        finding.rule.code,
        re.sub(r"\d+", "#", finding.message),
        hashlib.sha1(raw, usedforsecurity=False).hexdigest(),
    )


def _detected(source: Source) -> tuple[str, bool] | None:
    claim = readers.detect(source)
    return None if claim is None else (claim[1].reader, claim[1].transcript)


def _attempt_split(
    run: _Run, data: bytes, transcript: Transcript, group: list[Located], findings: list[Located]
) -> tuple[Attempt | None, list[tuple[Located, str]]]:
    """The largest part of one rule's repairs that passes verification, and the repairs
    that failed with why.  A failing group is tried in halves (within the file's budget),
    so one repair that fails does not take its independent neighbours with it."""
    attempt = _attempt(run, data, transcript, group, findings)
    if not isinstance(attempt, str):
        return attempt, []
    if len(group) == 1 or run.budget <= 0:
        return None, [(located, attempt) for located in group]
    run.budget -= 1
    half = len(group) // 2
    first, failed = _attempt_split(run, data, transcript, group[:half], findings)
    second, failed_second = _attempt_split(run, data, transcript, group[half:], findings)
    failed += failed_second
    if first is None or second is None:
        return first or second, failed
    if not failed:  # both halves pass alone: together they are the group that just failed
        return first, failed
    rejected = {id(located) for located, _ in failed}
    passing = [located for located in group if id(located) not in rejected]
    together = _attempt(run, data, transcript, passing, findings)
    if not isinstance(together, str):
        return together, failed
    # Each half passes alone but not with the other: keep the first; the second is tried
    # again on the file the first leaves.
    return first, failed


def _attempt(
    run: _Run, data: bytes, transcript: Transcript, group: list[Located], findings: list[Located]
) -> Attempt | str:
    """One rule's repairs applied and the result linted again, or why they must go."""
    applied = _apply_group(run.path, data, transcript, group)
    if isinstance(applied, str):
        return applied
    new, repairs, splices = applied
    report, new_transcript = engine.inspect(run.path, new, run.pinned)
    if new_transcript is None:
        return "the result could not be read again"
    found = _gate(run, new_transcript, report.findings)
    why = _verify(findings, found, group[0].finding.rule.code, len(group))
    if why is None:
        why = _flipped(run.detected, _detected(new_transcript.source))
    if why is not None:
        return why
    return Attempt(group, new, repairs, splices, found, new_transcript)


def _gate(run: _Run, transcript: Transcript, findings: list[Located]) -> list[Located]:
    """The findings, those whose repair needs the layout's companion file withheld (with
    why, as lint withholds a refused repair) when that file cannot be read or edited."""
    repair = transcript.reader.repair
    if repair.companion is None:
        return findings
    gated: list[Located] = []
    for located in findings:
        action = located.finding.action
        needs = None if action is None or located.applicability is None else repair.needs_companion(action)
        if needs is not None and (problem := _companion_problem(run, transcript)) is not None:
            located = plain.replace(located, fixable=False, applicability=None, blocked=f"{needs}; {problem}")
        gated.append(located)
    return gated


def _companion_problem(run: _Run, transcript: Transcript) -> str | None:
    if run.checked:
        return run.problem
    run.checked = True
    repair = transcript.reader.repair
    name = repair.companion
    assert name is not None
    if run.companions is None:
        run.problem = (
            f"fix sees this file alone here (standard input or bytes in memory), not the {name} beside it"
        )
        return run.problem
    where = os.path.join(os.path.dirname(run.path), name)
    if os.path.basename(run.path) == name:
        run.problem = f"the file is named {name} itself, not a transcript beside its {name}"
        return run.problem
    try:
        data = run.companions(where)
    except FileNotFoundError:
        run.problem = f"there is no {name} beside it ({where})"
        return run.problem
    except OSError as exc:
        run.problem = f"{where} cannot be read: {exc.strerror}"
        return run.problem
    try:
        repair.rewrite_companion(data, transcript.source)
    except EditError as exc:
        run.problem = f"{where}: {exc}"
        return run.problem
    run.companion = (where, data)
    return None


def _companion(run: _Run, final: Transcript, needed: bool) -> Companion | str:
    """The companion file for the repaired transcript, verified: edited again it needs no
    change, and it is still read as the same layout's companion.  Unchanged when no kept
    repair needed it (nothing else of it is fix's business)."""
    assert run.companion is not None
    where, before = run.companion
    if not needed:
        return Companion(where, before, before)
    repair = final.reader.repair
    try:
        edit = repair.rewrite_companion(before, final.source)
        splices = edit.splices()
        after = splice(before, splices)
        again = repair.rewrite_companion(after, final.source)
    except EditError as exc:
        return f"{where}: {exc}"
    if again.changed or _companion_layout(where, after) != _companion_layout(where, before):
        return f"{where} would not agree with the repaired file"
    return Companion(where, before, after, tuple(edit.log), tuple(_steps(before, splices)))


def _companion_layout(path: str, data: bytes) -> tuple[str, bool] | None:
    try:
        return _detected(sniff(path, data))
    except NotJson:
        return None


def _flipped(before: tuple[str, bool] | None, after: tuple[str, bool] | None) -> str | None:
    """Why a repaired file would be read differently by the next run, or None."""
    if after == before:
        return None
    was = before[0] if before else "no reader"
    if after is None:
        return f"the repaired file would no longer be recognised as {was} (TD002 unknown-layout)"
    if not after[1]:
        return f"the repaired file would be skipped as a {after[0]} companion file, not read as {was}"
    return f"the repaired file would be detected as {after[0]}, not {was}, and read differently"


def _apply_group(
    path: str, data: bytes, transcript: Transcript, group: list[Located]
) -> tuple[bytes, list[Applied], list[Splice]] | str:
    edit = editor(transcript.source)
    applied: list[Applied] = []
    for located in group:
        before = len(edit.log)
        action = located.finding.action
        assert action is not None  # only fixable findings are grouped
        try:
            verb = transcript.reader.repair.apply(transcript, action, edit)
        except EditError as exc:
            return f"line {located.origin.line}: {exc}"
        finding = located.finding
        applied.append(
            Applied(
                finding.rule.code,
                located.origin.line,
                finding.message,
                verb,
                tuple(edit.log[before:]),
                finding.safety.applicability,
                finding.safety.reason,
                transcript.reader.repair.needs_companion(action) is not None,
            )
        )
    try:
        splices = edit.splices()
        return splice(data, splices), applied, splices
    except EditError as exc:
        return str(exc)


def _counts(findings: list[Located], severity: Severity | None = None) -> Counter[str]:
    return Counter(
        f.finding.rule.code for f in findings if severity is None or f.finding.rule.severity is severity
    )


def _verify(before: list[Located], after: list[Located], rule: str, fixed: int) -> str | None:
    """Why a rule's repairs must be rolled back, or None when they did their job."""
    old, new = _counts(before), _counts(after)
    if new[rule] > old[rule] - fixed:
        return f"{new[rule] - (old[rule] - fixed)} finding(s) not cleared"
    stubborn = Counter(
        f.finding.rule.code for f in after if f.finding.rule.severity is Severity.ERROR and not f.fixable
    )
    baseline = Counter(
        f.finding.rule.code for f in before if f.finding.rule.severity is Severity.ERROR and not f.fixable
    )
    worse = sorted(code for code in stubborn if stubborn[code] > baseline[code])
    if worse:
        # Not fixable here may mean an unsafe repair left out by the options: say both.
        return f"the repair would add errors that fix cannot repair with these options ({', '.join(worse)})"
    return None


def _new_errors(before: list[Located], after: list[Located]) -> set[str]:
    old, new = _counts(before, Severity.ERROR), _counts(after, Severity.ERROR)
    return {code for code in new if new[code] > old[code]}


def _introduced(before: list[Located], after: list[Located], fixed: Counter[str]) -> list[Located]:
    """Findings the repairs exposed: more of a rule than were left unrepaired.

    Positions shift with every edit, so findings are told apart by count; the last ones
    of a rule are taken to be the new ones.
    """
    expected = _counts(before)
    expected.subtract(fixed)
    total = _counts(after)
    extra: list[Located] = []
    for code, count in total.items():
        surplus = count - max(expected[code], 0)
        if surplus > 0:
            extra.extend([f for f in after if f.finding.rule.code == code][-surplus:])
    return sorted(extra, key=lambda f: (f.origin.line, f.finding.rule.code))


def _why_unfixed(located: Located, rolled_back: str | None, notes: list[str]) -> str:
    rule = located.finding.rule
    if located.blocked is not None:
        return located.blocked
    if located.applicability is Applicability.UNSAFE and not located.fixable:
        return f"unsafe fix not applied ({located.finding.safety.reason}); apply it with --unsafe-fixes"
    if rule.fix is None:
        return "no automatic fix for this rule"
    if rolled_back is not None:
        return "rolled back: " + rolled_back
    for note in notes:
        if note.startswith("all:"):
            return "rolled back: " + note.split(": ", 1)[1]
    if located.finding.action is None or not located.fixable:
        return "this case cannot be repaired without guessing"
    return "not repaired"


def _steps(data: bytes, splices: list[Splice]) -> list[Step]:
    """Splices as sequential steps: applied from the end of the file backwards (an
    insertion after a removal at the same offset), each offset is still valid when its
    step runs."""
    ordered = sorted(splices, key=lambda s: (s.start, s.end), reverse=True)
    return [Step(s.start, data[s.start : s.end], s.new) for s in ordered]


def undo(after: bytes, steps: list[Step]) -> bytes:
    """The original bytes, from the repaired ones and the report's steps."""
    data = after
    for step in reversed(steps):
        data = data[: step.offset] + step.old + data[step.offset + len(step.new) :]
    return data
