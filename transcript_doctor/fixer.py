"""``fix``: findings -> edits -> new bytes, verified by linting the result again.

Repairs are applied one rule at a time, in an order where earlier repairs cannot undo
later ones (records are repaired and removed before results are paired, content is
trimmed last).  After each rule the file is read and linted again: a rule's repairs are
kept only if they cleared their findings and added no error that ``fix`` cannot repair
in turn; otherwise they are rolled back, reported, and tried again only after other
repairs have changed the file.  What a repair exposes (a new
final turn ending in whitespace) is repaired in a further round, so that a second run
has nothing left to do; findings without a repair that appear (TD104 after a Gemini
placeholder goes) are reported with the repairs that exposed them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from transcript_doctor import engine
from transcript_doctor.editing import EditError, Logged, Splice, splice
from transcript_doctor.engine import Located, Options
from transcript_doctor.model import Severity
from transcript_doctor.readers.base import Transcript, editor

# Whole records first, then pairing, then content inside surviving records.
ORDER = (
    "TD001", "TD404", "TD403", "TD101", "TD201", "TD202", "TD103",
    "TD303", "TD302", "TD304", "TD301", "TD102", "TD401",
)  # fmt: skip
MAX_PASSES = 4


@dataclass(frozen=True, slots=True)
class Applied:
    """One repaired finding as the report shows it."""

    rule: str
    line: int
    message: str
    action: str
    edits: tuple[Logged, ...]


@dataclass(frozen=True, slots=True)
class Step:
    """One splice in the order it was made: at ``offset`` of the bytes at that moment,
    ``old`` became ``new``.  Undoing the steps in reverse order restores the original."""

    offset: int
    old: bytes
    new: bytes


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
    rolled_back: list[str] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.after != self.before


def fix_bytes(path: str, data: bytes, options: Options) -> Outcome:
    report, transcript = engine.inspect(path, data, options)
    outcome = Outcome(path, report.reader, data, data, skipped=report.skipped, error=report.error)
    if transcript is None:
        outcome.remaining = [(f, "no reader understands this file") for f in report.findings]
        return outcome
    # Re-read with the same reader: an edit must not change how the file is understood.
    pinned = replace(options, reader=transcript.reader.name)
    original = report.findings
    current, findings = data, original
    # Rules whose repairs were rolled back, with how many groups were kept by then: such a
    # rule is tried again only after another rule's repairs changed the file (removing an
    # empty turn can make a stacked partial repairable), else a second run would differ.
    failed: dict[str, int] = {}
    kept = 0
    for _ in range(MAX_PASSES):
        progress = False
        for rule in ORDER:
            group = [f for f in findings if f.fixable and f.finding.rule.code == rule]
            if not group or failed.get(rule) == kept:
                continue
            attempt = _attempt(path, current, transcript, group, findings, pinned)
            # One note per rule: the outcome of its last attempt.
            outcome.rolled_back = [n for n in outcome.rolled_back if not n.startswith(f"{rule}:")]
            if isinstance(attempt, str):
                outcome.rolled_back.append(f"{rule}: {attempt}")
                failed[rule] = kept
                continue
            failed.pop(rule, None)
            new, applied, splices, new_findings, transcript = attempt
            outcome.applied.extend(applied)
            outcome.steps.extend(_steps(current, splices))
            current, findings = new, new_findings
            kept += 1
            progress = True
        if not progress or all(failed.get(f.finding.rule.code) == kept for f in findings if f.fixable):
            break
    if _new_errors(original, findings):
        # Never leave a file with an error it did not have: give it back untouched.
        outcome.rolled_back.append(
            f"all: the repairs together left new errors ({_new_errors(original, findings)})"
        )
        outcome.applied, outcome.steps, current, findings = [], [], data, original
    outcome.after = current
    outcome.introduced = _introduced(original, findings, Counter(a.rule for a in outcome.applied))
    outcome.remaining = [
        (
            f,
            "appeared after other repairs: review it"
            if f in outcome.introduced
            else _why_unfixed(f, outcome.rolled_back),
        )
        for f in findings
    ]
    return outcome


def _attempt(
    path: str,
    data: bytes,
    transcript: Transcript,
    group: list[Located],
    findings: list[Located],
    pinned: Options,
) -> tuple[bytes, list[Applied], list[Splice], list[Located], Transcript] | str:
    """One rule's repairs applied and the result linted again, or why they must go."""
    applied = _apply_group(path, data, transcript, group)
    if isinstance(applied, str):
        return applied
    new, repairs, splices = applied
    report, new_transcript = engine.inspect(path, new, pinned)
    why = _verify(findings, report.findings, group[0].finding.rule.code, len(group))
    if why is not None or new_transcript is None:
        return why or "the result could not be read again"
    return new, repairs, splices, report.findings, new_transcript


def _apply_group(
    path: str, data: bytes, transcript: Transcript, group: list[Located]
) -> tuple[bytes, list[Applied], list[Splice]] | str:
    edit = editor(transcript.source)
    applied: list[Applied] = []
    for located in group:
        before = len(edit.log)
        try:
            verb = transcript.reader.apply(transcript, located.finding.action, edit)
        except EditError as exc:
            return f"line {located.origin.line}: {exc}"
        finding = located.finding
        applied.append(
            Applied(finding.rule.code, located.origin.line, finding.message, verb, tuple(edit.log[before:]))
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
        return f"the repair would add errors it cannot fix ({', '.join(worse)})"
    return None


def _new_errors(before: list[Located], after: list[Located]) -> str:
    old, new = _counts(before, Severity.ERROR), _counts(after, Severity.ERROR)
    return ", ".join(sorted(code for code in new if new[code] > old[code]))


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


def _why_unfixed(located: Located, rolled_back: list[str]) -> str:
    rule = located.finding.rule
    if rule.fix is None:
        return "no automatic fix for this rule"
    for note in rolled_back:
        if note.startswith(rule.code + ":"):
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
