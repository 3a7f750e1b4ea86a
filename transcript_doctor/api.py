"""Lint and fix files and bytes from Python: the CLI's engine, without a process.

Every function builds the same ``engine.Options`` the command line builds and calls the
same engine, so findings and repaired bytes are the CLI's own.  The one difference is
configuration: the CLI looks for the nearest ``pyproject.toml``; a library must not
depend on the caller's working folder, so a config file is read only when ``config``
names it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from transcript_doctor import catalog, dblint, engine, plain, readers, treelint, walk
from transcript_doctor.checks import Selection
from transcript_doctor.fixer import CompanionReader, Outcome
from transcript_doctor.results import CheckError, Edit, Finding, FixResult, Repair, Step, Unfixed

StrPath = str | os.PathLike[str]


def lint_path(
    path: StrPath,
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    reader: str | None = None,
    config: StrPath | None = None,
) -> list[Finding]:
    """Findings of a file, or of every file under a folder, sorted by path then line.

    Files that are not transcripts give no finding (as in the CLI); a file that cannot be
    read or checked raises :class:`CheckError` (the CLI's exit 2).
    """
    options = settings(select, ignore, reader, config)
    excluded = options.excluded
    found: list[Finding] = []
    for target in walk.expand([os.fspath(path)], excluded):
        if isinstance(target, OSError):
            raise CheckError(f"cannot read {target.filename}: {target.strerror}")
        # A storage folder of JSON files, or an SQLite store (read through SQLite).
        report = treelint.check(target.path, options) or dblint.check(target.path, options)
        if report is not None:
            found.extend(findings(report))
            continue
        try:
            data = Path(target.path).read_bytes()
        except OSError as exc:
            raise CheckError(f"cannot read {target.path}: {exc.strerror}") from None
        found.extend(_lint(target.path, data, options))
    found.sort(key=lambda f: (f.path or "", f.line or 0))  # stable: file order inside
    return found


def lint_bytes(
    data: bytes,
    *,
    name: str,
    reader: str | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
) -> list[Finding]:
    """Findings of one transcript held in memory; ``name`` is its path in findings (and
    tells JSON from JSONL by its extension when the content does not)."""
    return _lint(name, data, settings(select, ignore, reader, None))


def fix_bytes(
    data: bytes,
    *,
    name: str,
    unsafe: bool = False,
    reader: str | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
) -> FixResult:
    """Repair one transcript held in memory, exactly as ``fix`` would write it."""
    options = with_unsafe(settings(select, ignore, reader, None), unsafe)
    return fixed(fix_outcome(name, data, options))


def with_unsafe(options: engine.Options, unsafe: bool) -> engine.Options:
    """``--unsafe-fixes``: every API entry point that repairs goes through here."""
    return plain.replace(options, unsafe_fixes=unsafe)


def _lint(name: str, data: bytes, options: engine.Options) -> list[Finding]:
    try:
        report = engine.lint_bytes(name, data, options)
    except RecursionError:
        raise CheckError(f"{name}: nested too deeply to check") from None
    return findings(report)


def fix_outcome(
    name: str, data: bytes, options: engine.Options, companions: CompanionReader | None = None
) -> Outcome:
    from transcript_doctor import fixer

    try:
        outcome = fixer.fix_bytes(name, data, options, companions)
    except RecursionError:
        raise CheckError(f"{name}: nested too deeply to check") from None
    if outcome.error is not None:
        raise CheckError(outcome.error)
    return outcome


def findings(report: engine.FileReport, lines: bool = True) -> list[Finding]:
    if report.error is not None:
        raise CheckError(report.error)
    return [finding(report.path, report.reader, located, lines) for located in report.findings]


def finding(path: str | None, reader: str | None, located: engine.Located, lines: bool = True) -> Finding:
    rule = located.finding.rule
    return Finding(
        path=path,
        reader=reader,
        rule=rule.code,
        name=rule.name,
        severity=rule.severity.value,
        message=located.finding.message,
        line=located.origin.line if lines else None,
        record=located.origin.record,
        pointer=located.origin.pointer,
        fixable=located.fixable,
        fix_applicability=located.applicability.value if located.applicability else None,
    )


def fixed(outcome: Outcome, path: str | None = None, lines: bool = True) -> FixResult:
    """The public form of a fixer outcome (``path``: the name findings carry)."""
    from transcript_doctor import fixreport, safetext

    shown = outcome.path if path is None else path
    return FixResult(
        name=outcome.path,
        reader=outcome.reader,
        original=outcome.before,
        data=outcome.after,
        applied=tuple(
            Repair(
                a.rule,
                a.line if lines else None,
                a.message,
                a.action,
                tuple(Edit(e.action, e.pointer, e.old, e.new) for e in a.edits),
                a.applicability.value,
                a.safety,
            )
            for a in outcome.applied
        ),
        unfixed=tuple(Unfixed(finding(shown, outcome.reader, f, lines), why) for f, why in outcome.remaining),
        introduced=tuple(finding(shown, outcome.reader, f, lines) for f in outcome.introduced),
        steps=tuple(Step(s.offset, s.old, s.new) for s in outcome.steps),
        rolled_back=tuple(outcome.rolled_back),
        skipped=outcome.skipped,
        report=safetext.dumps(fixreport.file_entry(outcome)).decode(),
    )


def settings(
    select: Iterable[str] | None, ignore: Iterable[str], reader: str | None, config: StrPath | None
) -> engine.Options:
    """The CLI's ``_settings`` without the command line: bad names, and a configuration
    file the CLI would refuse, raise ValueError."""
    from transcript_doctor import config as configuration

    if isinstance(select, str) or isinstance(ignore, str):
        raise TypeError("select and ignore take a list of selectors, not a string")
    if reader is not None and readers.by_name(reader) is None:
        raise ValueError(f"unknown reader {reader!r}; choose from {', '.join(readers.names())}")
    if config is None:
        return plain.replace(
            _default_options(), selection=Selection.build(select or ("ALL",), (), ignore), reader=reader
        )
    try:
        settings = configuration.load(Path(config))
        configuration.check(settings, readers.names, Selection.build)
    except configuration.ConfigError as exc:  # names the file, the key and the bad value
        raise ValueError(str(exc)) from None
    chosen, extended, ignored = configuration.merged(settings, list(select or ()), [], list(ignore))
    return engine.Options(
        Selection.build(chosen, extended, ignored),
        catalog.load(settings.extend_catalog),
        reader,
        False,
        settings,
    )


@cache
def _default_options() -> engine.Options:
    return engine.Options(Selection.build(), catalog.load())
