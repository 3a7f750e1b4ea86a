"""``fix`` on a session store kept as a folder of JSON files (treesource.py).

The repair is made where the vendor reads it: OpenCode < 1.2 reads only its own
``storage/`` folder.  ``--in-place`` replaces each changed file atomically (writer.py: a
fsynced temp file renamed over it, refused if the file changed since it was read), the
report holding each file's bytes before and after (its undo record on disk first);
``--diff`` prints a unified diff per file and writes nothing.  ``--out`` would leave a
copy no OpenCode reads: refused for a folder named on the command line, as for a
database (dbfix.py).

The repairs of a whole unit (folder, or one session file) are made on the bytes in
memory, then the unit is read again with the new bytes in place of the old and linted:
nothing is written unless every repaired finding is gone and no new error appeared.  Each
repair changes one part file, so a run killed between two files leaves every file either
as it was or repaired, and the folder readable (a second run repairs the rest).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from transcript_doctor import dbfix, fixreport, output, reportfile, treelint, writer
from transcript_doctor.editing import EditError
from transcript_doctor.fixer import Applied, Outcome, _steps
from transcript_doctor.safetext import printable, printable_inline
from transcript_doctor.treesource import Files, TreeSource, Unit, unit

if TYPE_CHECKING:
    from transcript_doctor.engine import Located, Options
    from transcript_doctor.fixing import Plan
    from transcript_doctor.transcript import Transcript

IN_PLACE_ONLY = (
    "an OpenCode storage folder is repaired in place only: `fix --in-place` (the report keeps "
    "every changed file's bytes), or `fix --diff` to see the changes"
)


@dataclass(slots=True)
class TreeOutcome(Outcome):
    """A folder's outcome: no bytes of its own (``before``/``after`` stay empty); one
    outcome per changed file instead."""

    files: list[Outcome] = field(default_factory=list)
    written: bool = False

    @property
    def changed(self) -> bool:
        return self.written


def claims(path: str) -> bool:
    """Whether ``fix`` handles ``path`` here (a storage folder, or a file in one)."""
    return unit(path) is not None


def fix_target(
    path: str, explicit: bool, options: Options, plan: Plan, sink: Any, messages: TextIO
) -> TreeOutcome | None:
    """``fixing``'s entry: one unit repaired, its notes and errors said; None after an
    error (exit 2)."""
    try:
        outcome = _fix(path, explicit, options, plan, sink, messages)
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        _error(f"internal error while fixing {path}: {exc!r}")
        return None
    if outcome is None:
        return None
    if outcome.skipped is not None and explicit and not plan.quiet:
        _error(f"{path}: skipped, {outcome.skipped}")
    elif not outcome.changed and plan.verbose:
        messages.write(f"{printable(path)}: nothing to fix\n")
    return outcome


def _fix(
    path: str, explicit: bool, options: Options, plan: Plan, sink: Any, messages: TextIO
) -> TreeOutcome | None:
    found = unit(path)
    assert found is not None, "fixing asks claims() first"
    if found.kind == "member":
        return TreeOutcome(path, None, b"", b"", skipped=treelint.member_note(found).replace("lint", "fix"))
    report, transcript = treelint.inspect(found, options, path)
    outcome = TreeOutcome(path, report.reader, b"", b"", skipped=report.skipped)
    if transcript is None:
        return outcome
    if not any(f.fixable and f.finding.action is not None for f in report.findings):
        outcome.remaining = [(f, dbfix._why(f)) for f in report.findings]
        return outcome
    if plan.mode == "out":
        if explicit:
            _error(f"{path}: {IN_PLACE_ONLY}; nothing written")
            return None
        outcome.remaining = [(f, IN_PLACE_ONLY if f.fixable else dbfix._why(f)) for f in report.findings]
        return outcome
    after = _repair(found, path, options, report.findings, transcript, outcome)
    if after is None:
        return outcome
    if not _write(outcome, plan, sink):
        outcome.applied = []
        return None
    done = outcome.applied
    if plan.mode == "in-place" and outcome.written:
        after = treelint.inspect(found, options, path)[0].findings
    refused = dict(note.split(": ", 1) for note in outcome.rolled_back if not note.startswith("all:"))
    outcome.remaining = [
        (f, refused[f.finding.rule.code] if f.fixable and f.finding.rule.code in refused
         else dbfix._why(f))
        for f in after
    ]  # fmt: skip
    if outcome.files and not plan.quiet:
        rules = ", ".join(sorted({a.rule for a in done}))
        verb = "would fix" if plan.mode == "diff" else "fixed"
        messages.write(
            f"{printable(path)}: {verb} {len(done)} finding(s) ({rules}) in {len(outcome.files)} file(s)\n"
        )
    return outcome


def preview(path: str, options: Options) -> TreeOutcome:
    """What ``fix --diff`` would change, each changed file's bytes before and after;
    nothing printed or written."""
    found = unit(path)
    assert found is not None and found.kind != "member", path
    report, transcript = treelint.inspect(found, options, path)
    outcome = TreeOutcome(path, report.reader, b"", b"", skipped=report.skipped)
    if transcript is not None and any(f.fixable for f in report.findings):
        _repair(found, path, options, report.findings, transcript, outcome)
    return outcome


def _repair(
    found: Unit,
    path: str,
    options: Options,
    findings: list[Located],
    transcript: Transcript,
    outcome: TreeOutcome,
) -> list[Located] | None:
    """The fixable findings repaired in memory and verified: ``outcome.files`` and
    ``applied`` filled, and the findings of the repaired unit; None when the repairs were
    rolled back (``outcome.remaining`` says why)."""
    assert isinstance(transcript.source, TreeSource)
    files = Files(transcript.source)
    applied: dict[str, list[Applied]] = {}  # by file
    for located in [f for f in findings if f.fixable and f.finding.action is not None]:
        finding = located.finding
        assert finding.action is not None
        before = {p: len(t.log) for p, t in files.texts.items()}
        try:
            verb = transcript.reader.repair.apply_files(transcript, finding.action, files)
        except EditError as exc:
            outcome.rolled_back.append(f"{finding.rule.code}: {exc}")
            continue
        for file, text in files.texts.items():
            edits = tuple(text.log[before.get(file, 0) :])
            if edits:
                applied.setdefault(file, []).append(
                    Applied(
                        finding.rule.code,
                        0,
                        finding.message,
                        verb,
                        edits,
                        finding.safety.applicability,
                        finding.safety.reason,
                    )
                )
    changed = files.changed()
    after = treelint.inspect(found, options, path, changed)[0].findings if changed else findings
    done = [a for group in applied.values() for a in group]
    why = dbfix._verify(findings, after, done) if changed else None
    if why is not None:
        outcome.rolled_back.append(f"all: {why}")
        outcome.remaining = [(f, f"rolled back: {why}" if f.fixable else dbfix._why(f)) for f in findings]
        return None
    for file in sorted(changed):
        text = files.texts[file]
        outcome.files.append(
            Outcome(
                file,
                outcome.reader,
                text.data,
                changed[file],
                applied[file],
                _steps(text.data, text.splices()),
            )
        )
    outcome.applied = done
    return after


def _write(outcome: TreeOutcome, plan: Plan, sink: Any) -> bool:
    """Each changed file: its diff printed (``--diff``) or written atomically, its undo
    record first; False after an error said on stderr (the files before it are written)."""
    for changed in outcome.files:
        try:
            _write_one(changed, plan, sink)
        except _Unwritten as exc:
            _error(str(exc))
            return False
        outcome.written = True  # under --diff: would change (exit 1)
    return True


class _Unwritten(Exception):
    pass


def _write_one(changed: Outcome, plan: Plan, sink: Any) -> None:
    diff = fixreport.unified_diff(changed)
    number: int | None = None

    def record() -> None:
        nonlocal number
        number = sink.undo_record(
            fixreport.file_entry(changed), changed.path, durable=plan.mode == "in-place"
        )

    try:
        if plan.mode == "diff":
            record()
            color = output.wanted("auto", sys.stdout) if plan.color is None else plan.color
            sys.stdout.write(output.diff(printable_inline(diff) if sys.stdout.isatty() else diff, color))
            sink.settle(number, reportfile.REPLACED, diff)
            return
        original, now = writer.Original.read(changed.path)
        if now != changed.before:
            raise writer.WriteRefused(f"{changed.path} changed while it was repaired; not replaced")
        writer.replace(
            original, changed.after, record, lambda: sink.settle(number, reportfile.REPLACED, diff)
        )
    except writer.WriteRefused as exc:
        sink.settle(number, reportfile.NOT_REPLACED)
        raise _Unwritten(str(exc)) from None
    except OSError as exc:
        sink.settle(number, reportfile.NOT_REPLACED)
        raise _Unwritten(f"cannot write {changed.path}: {exc.strerror}") from None


def _error(message: str) -> None:
    sys.stderr.write(f"transcript-doctor: {printable(message)}\n")
