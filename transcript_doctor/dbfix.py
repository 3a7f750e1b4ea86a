"""``fix`` on an SQLite session store: row changes in transactions, never byte splices.

A database is repaired where it lives (``--in-place``; ``--diff`` shows the row changes
and writes nothing): OpenCode reads only its own database, and ``opencode import`` keeps
rows whose ids exist, so a repaired copy would help no one.

``--in-place``, per database:

1. lint it read-only; nothing fixable: nothing is opened for writing;
2. unless ``--no-backup``, copy it whole with SQLite's online backup API (consistent, the
   WAL included) to ``NAME.<UTC time>.td-backup`` beside it;
3. per session with fixable findings, one transaction: ``BEGIN IMMEDIATE`` (a database
   another program is writing is refused at once, after a short busy timeout: exit 2,
   nothing changed), the session read again inside the transaction and linted, its
   repairs made as row updates, the session read and linted again: the transaction is
   committed only if every repaired finding is gone and no new error appeared, else
   rolled back.  The report's entry (every changed row, whole, before and after) is on
   disk before the commit;
4. ``PRAGMA integrity_check``.

A ``fix`` killed at any point leaves every session either as it was or repaired: SQLite's
journal rolls an unfinished transaction back when the database is next opened.
"""

from __future__ import annotations

import difflib
import json
import os
import sqlite3
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from transcript_doctor import dblint, dbsource, engine, plain, reportfile
from transcript_doctor.dbsource import DatabaseSource, RowChange, Rows
from transcript_doctor.editing import EditError
from transcript_doctor.fixer import Applied, Outcome
from transcript_doctor.model import Severity
from transcript_doctor.safetext import printable
from transcript_doctor.transcript import Transcript

if TYPE_CHECKING:
    from transcript_doctor.engine import Located, Options
    from transcript_doctor.fixing import Plan

BUSY_MS = 500  # how long fix waits for another writer before refusing


class Refused(Exception):
    """The database cannot be repaired now (locked, unreadable, no backup): said in one
    line; nothing of it was changed by this run (sessions committed before are said)."""


@dataclass(slots=True)
class SessionRepair:
    """One session's transaction: what it changed, or why it was rolled back."""

    session: str
    applied: list[Applied] = field(default_factory=list)
    changes: list[RowChange] = field(default_factory=list)
    rolled_back: str | None = None


@dataclass(slots=True)
class DatabaseOutcome(Outcome):
    """A database's outcome: no bytes (``before``/``after`` stay empty), rows instead."""

    sessions: list[SessionRepair] = field(default_factory=list)
    backup: str | None = None

    @property
    def changed(self) -> bool:
        return any(s.changes and s.rolled_back is None for s in self.sessions)


def claims(path: str) -> bool:
    """Whether ``fix`` handles ``path`` here (a database or one of its parts)."""
    return path != "-" and (dbsource.is_database(path) or dbsource.part_of(path) is not None)


def fix_target(
    path: str, explicit: bool, options: Options, plan: Plan, sink: Any, messages: TextIO
) -> DatabaseOutcome | None:
    """``fixing``'s entry: one database repaired, its notes and errors said; None after
    an error (exit 2)."""
    try:
        outcome = fix_one(path, options, plan, sink, messages, explicit)
    except Exception as exc:  # a bug must not stop the other files, nor exit 1
        _error(f"internal error while fixing {path}: {exc!r}")
        return None
    if outcome is None:
        return None
    if outcome.error is not None:
        _error(outcome.error)
        return None
    if outcome.skipped is not None and explicit and not plan.quiet:
        _error(f"{path}: skipped, {outcome.skipped}")
    elif not outcome.changed and plan.verbose:
        messages.write(f"{printable(path)}: nothing to fix\n")
    return outcome


IN_PLACE_ONLY = "an SQLite database is repaired in place only: `fix --in-place` (a backup is made first)"


def fix_one(
    path: str, options: Options, plan: Plan, sink: Any, messages: TextIO, explicit: bool = True
) -> DatabaseOutcome | None:
    """Repair one database as ``plan`` says; None after an error said on stderr.

    Under ``--out`` a database named on the command line is an error; one a walk found
    keeps its findings, unfixed, with the reason."""
    main = dbsource.part_of(path)
    if main is not None:
        return DatabaseOutcome(
            path,
            None,
            b"",
            b"",
            skipped=f"part of the SQLite database {os.path.basename(main)} beside it (fix that file)",
        )
    report, transcript = dblint.inspect(path, options)
    outcome = DatabaseOutcome(path, report.reader, b"", b"", skipped=report.skipped, error=report.error)
    if report.error is not None or transcript is None:
        outcome.remaining = [(f, "no reader understands this file") for f in report.findings]
        return outcome
    sessions = _sessions(report.findings)
    if not sessions:
        outcome.remaining = [(f, _why(f)) for f in report.findings]
        return outcome
    if plan.mode == "out":
        if explicit:
            _error(f"{path}: {IN_PLACE_ONLY}, or `fix --diff` to see the row changes; nothing written")
            return None
        outcome.remaining = [(f, IN_PLACE_ONLY if f.fixable else _why(f)) for f in report.findings]
        return outcome
    try:
        if plan.mode == "diff":
            _diff_run(path, options, sessions, outcome)
        else:
            _in_place(path, options, plan, sessions, outcome, sink)
    except Refused as exc:
        _error(str(exc))
        return None
    _finish(path, options, plan.mode, outcome, report.findings)
    if plan.mode == "diff":
        sys.stdout.write("".join(row_diff(path, c) for s in outcome.sessions for c in s.changes))
    if outcome.changed and not plan.quiet:
        rules = ", ".join(sorted({a.rule for a in outcome.applied}))
        verb = "would fix" if plan.mode == "diff" else "fixed"
        done = sum(1 for s in outcome.sessions if s.changes and s.rolled_back is None)
        messages.write(
            f"{printable(path)}: {verb} {len(outcome.applied)} finding(s) ({rules}) in {done} session(s)"
            + (f"; backup: {printable(outcome.backup)}" if outcome.backup else "")
            + "\n"
        )
    return outcome


def preview(path: str, options: Options) -> DatabaseOutcome:
    """What ``fix --diff`` would change, computed on a copy in memory; nothing printed."""
    report, transcript = dblint.inspect(path, options)
    outcome = DatabaseOutcome(path, report.reader, b"", b"", skipped=report.skipped, error=report.error)
    sessions = _sessions(report.findings)
    if report.error is None and transcript is not None and sessions:
        _diff_run(path, options, sessions, outcome)
    _finish(path, options, "diff", outcome, report.findings)
    return outcome


def _sessions(findings: list[Located]) -> list[str]:
    """The sessions with fixable findings, in read order."""
    found: dict[str, None] = {}
    for located in findings:
        if located.fixable and _session(located):
            found[_session(located)] = None
    return list(found)


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _diff_run(path: str, options: Options, sessions: list[str], outcome: DatabaseOutcome) -> None:
    """The repairs made on a copy in memory: the database itself is only read."""
    memory = sqlite3.connect(":memory:", isolation_level=None)
    try:
        try:
            source = dbsource.connect(path)
            try:
                source.backup(memory)
            finally:
                source.close()
        except sqlite3.Error as exc:
            raise Refused(f"cannot read {path}: {exc}") from None
        for sid in sessions:
            outcome.sessions.append(_repair_session(path, options, memory, sid, commit=None))
    finally:
        memory.close()


def _in_place(
    path: str, options: Options, plan: Plan, sessions: list[str], outcome: DatabaseOutcome, sink: Any
) -> None:
    try:
        connection = dbsource.connect(path, "rw", BUSY_MS)
    except sqlite3.Error as exc:
        raise Refused(f"cannot open {path} for writing: {exc}; nothing changed") from None
    try:
        damage = _problems(connection, "quick_check")
        if damage:  # never write into a damaged database: SQLite may spread the damage
            raise Refused(f"{path} is damaged (quick_check: {damage}); not repaired, nothing changed")
        if plan.backup:
            outcome.backup = _backup(path, connection)
        for sid in sessions:
            done = sum(1 for s in outcome.sessions if s.changes and s.rolled_back is None)

            def commit(repair: SessionRepair) -> None:
                number = sink.add(entry(path, outcome, repair), changed=True, durable=True)
                connection.execute("COMMIT")
                sink.settle(number, reportfile.REPLACED, "".join(row_diff(path, c) for c in repair.changes))

            try:
                outcome.sessions.append(_repair_session(path, options, connection, sid, commit))
            except _Locked as exc:
                before = f"{done} session(s) were repaired before it" if done else "nothing was changed"
                raise Refused(
                    f"{path} is locked by another program ({exc}; is OpenCode running? close it "
                    f"and run fix again); {before}"
                ) from None
        problems = _problems(connection, "integrity_check")
        if problems:
            where = f"; the backup is {outcome.backup}" if outcome.backup else ""
            raise Refused(f"{path}: integrity_check after the repair: {problems}{where}")
    except sqlite3.Error as exc:
        raise Refused(f"cannot repair {path}: {exc}") from None
    finally:
        connection.close()


def _problems(connection: sqlite3.Connection, pragma: str) -> str:
    """What ``PRAGMA integrity_check``/``quick_check`` reports ("" when "ok")."""
    rows = connection.execute(f"PRAGMA {pragma}").fetchall()
    if [tuple(row) for row in rows] == [("ok",)]:
        return ""
    return "; ".join(str(row[0]) for row in rows[:3])


def _backup(path: str, connection: sqlite3.Connection) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = f"{path}.{stamp}{dbsource.BACKUP_SUFFIX}"
    number = 1
    while os.path.exists(target):
        target = f"{path}.{stamp}-{number}{dbsource.BACKUP_SUFFIX}"
        number += 1
    try:
        copy = sqlite3.connect(target)
        try:
            connection.backup(copy)
        finally:
            copy.close()
    except (sqlite3.Error, OSError) as exc:
        raise Refused(
            f"cannot back up {path} to {target}: {exc}; nothing changed (--no-backup skips it)"
        ) from None
    return target


class _Locked(Exception):
    pass


def _repair_session(
    path: str, options: Options, connection: sqlite3.Connection, sid: str, commit: Any
) -> SessionRepair:
    """One session's repairs in one transaction; ``commit`` None: always rolled back."""
    repair = SessionRepair(sid)
    try:
        connection.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise _Locked(str(exc)) from None
    try:
        transcript, before = _lint_session(path, options, connection, sid)
        rows = Rows(connection)
        for located in before:
            finding = located.finding
            if not located.fixable or finding.action is None:
                continue
            start = len(rows.log)
            try:
                verb = transcript.reader.repair.apply_rows(transcript, finding.action, rows)
            except EditError as exc:
                repair.rolled_back = f"{finding.rule.code}: {exc}"
                break
            applied = Applied(
                finding.rule.code,
                0,
                finding.message,
                verb,
                (),
                finding.safety.applicability,
                finding.safety.reason,
            )
            repair.applied.append(applied)
            repair.changes.extend(rows.log[start:])
        if repair.rolled_back is None:
            after = _lint_session(path, options, connection, sid)[1]
            repair.rolled_back = _verify(before, after, repair.applied)
        if repair.rolled_back is not None or commit is None or not repair.changes:
            connection.execute("ROLLBACK")
        else:
            commit(repair)
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return repair


def _lint_session(
    path: str, options: Options, connection: sqlite3.Connection, sid: str
) -> tuple[Transcript, list[Located]]:
    """One session read through ``connection`` (inside its transaction) and linted."""
    source = DatabaseSource(path, connection)
    reader = next(
        r
        for r in dblint.database_readers()
        if options.reader in (None, r.name) and r.detect_database(connection)
    )
    transcript = Transcript(reader, source, reader.read_sessions(source, [sid]))
    return transcript, engine.run(transcript, plain.replace(options.for_path(path), with_edits=False))


def _verify(before: list[Located], after: list[Located], applied: list[Applied]) -> str | None:
    """Why a session's repairs must be rolled back, or None when they did their job."""
    old = Counter(f.finding.rule.code for f in before)
    new = Counter(f.finding.rule.code for f in after)
    fixed = Counter(a.rule for a in applied)
    for rule, count in fixed.items():
        if new[rule] > old[rule] - count:
            return f"{rule}: {new[rule] - (old[rule] - count)} finding(s) not cleared"
    errors = {f.finding.rule.code for f in after if f.finding.rule.severity is Severity.ERROR}
    worse = sorted(code for code in errors if new[code] > old[code] - fixed[code])
    if worse:
        return f"the repair would add errors ({', '.join(worse)})"
    return None


def _finish(path: str, options: Options, mode: str, outcome: DatabaseOutcome, found: list[Located]) -> None:
    """The outcome's applied and remaining findings: in place, from the database as it
    now is; for a diff, the findings whose session's repairs would not be committed."""
    done: set[str] = set()
    for repair in outcome.sessions:
        if repair.rolled_back is None:
            outcome.applied.extend(repair.applied)
            done.add(repair.session)
        else:
            outcome.rolled_back.append(f"session {repair.session}: {repair.rolled_back}")
    if mode == "in-place" and outcome.changed:
        found = dblint.inspect(path, options)[0].findings
    elif mode == "diff":
        found = [f for f in found if not (f.fixable and _session(f) in done)]
    reasons = {r.session: r.rolled_back for r in outcome.sessions if r.rolled_back is not None}
    outcome.remaining = [
        (f, f"rolled back: {reasons[_session(f)]}" if f.fixable and _session(f) in reasons else _why(f))
        for f in found
    ]


def _session(located: Located) -> str:
    pointer = located.origin.pointer or ""
    return _unescape(pointer.split("/")[2]) if pointer.startswith("/session/") else ""


def _why(located: Located) -> str:
    if located.applicability is not None and not located.fixable:
        return f"unsafe fix not applied ({located.finding.safety.reason}); apply it with --unsafe-fixes"
    if located.finding.rule.fix is None:
        return "no automatic fix for this rule"
    return "this case cannot be repaired without guessing"


def entry(path: str, outcome: DatabaseOutcome, repair: SessionRepair) -> dict[str, Any]:
    """A session's report entry: every changed row whole, before and after (None: deleted)."""
    return {
        "path": path,
        "reader": outcome.reader,
        "database": True,
        "session": repair.session,
        "changed": True,
        "backup": outcome.backup,
        "fixes": [
            {
                "rule": a.rule,
                "action": a.action,
                "applicability": a.applicability.value,
                "safety": a.safety,
                "message": a.message,
            }
            for a in repair.applied
        ],
        # Undo: for each row in reverse order, put `before` back (UPDATE its columns, or
        # INSERT it when `after` is null); README "Undoing a database repair".
        "rows": [
            {"table": c.table, "id": c.id, "pointer": c.pointer, "before": c.before, "after": c.after}
            for c in repair.changes
        ],
    }


def row_diff(path: str, change: RowChange) -> str:
    """A row's change as a unified diff of its columns (``data`` JSON shown indented)."""
    where = f"{path}:{change.pointer or change.table + '/' + change.id}"
    lines = difflib.unified_diff(
        _render(change.before), _render(change.after), f"a/{where}", f"b/{where}", n=2
    )
    return "".join(lines)


def _render(row: dict[str, Any] | None) -> list[str]:
    if row is None:
        return []
    out = []
    for column, value in row.items():
        if column == "data" and isinstance(value, str):
            try:
                pretty = json.dumps(json.loads(value), indent=2, ensure_ascii=False)
            except ValueError:
                pretty = value
            out.append("data:\n")
            out.extend("  " + line + "\n" for line in pretty.split("\n"))
        else:
            out.append(f"{column}: {json.dumps(value, ensure_ascii=False)}\n")
    return out


def _error(message: str) -> None:
    sys.stderr.write(f"transcript-doctor: {printable(message)}\n")
