"""What ``lint`` and ``fix`` do with their options once parsed, without typer.

cli.py declares the command line (typer: help, parsing, errors) and calls these; the
start-up path (argv.py, ``__main__``) calls them directly for the argv shapes it can parse
exactly as typer does, so that linting one file does not pay for importing typer.  A usage
error here is :class:`BadOption`, which cli.py shows as typer's ``BadParameter`` (the start-up
path hands the whole command line to typer instead, which reports it the same way); an
early exit is :class:`Exit`.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import TYPE_CHECKING

from transcript_doctor.model import Severity

if TYPE_CHECKING:
    from pathlib import Path

    from transcript_doctor.engine import Options

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class OutputFormat(str, Enum):
    full = "full"
    concise = "concise"
    json = "json"
    jsonl = "jsonl"
    sarif = "sarif"
    github = "github"


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


class RulesFormat(str, Enum):
    text = "text"
    json = "json"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


class Exit(Exception):
    """End the command with this exit status (typer's ``Exit``)."""

    def __init__(self, code: int = EXIT_CLEAN) -> None:
        super().__init__(code)
        self.code = code


class BadOption(Exception):
    """A usage error, raised before the command has done anything (typer's ``BadParameter``)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def _error(message: str) -> None:
    from transcript_doctor.safetext import printable

    sys.stderr.write(f"transcript-doctor: {printable(message)}\n")


def _settings(
    reader: str | None,
    select: list[str] | None,
    extend: list[str] | None,
    ignore: list[str] | None,
    config_file: Path | None,
    redact: bool,
) -> Options:
    """Command line over configuration file, checked; usage errors exit 2."""
    from transcript_doctor import catalog, config, engine, readers
    from transcript_doctor.checks import Selection, SelectionError

    if reader is not None and readers.by_name(reader) is None:
        raise BadOption(f"unknown reader {reader!r}; choose from {', '.join(readers.names())}", "--reader")
    try:
        settings = config.load(config_file)
        config.check(settings, readers.names, Selection.build)
        chosen, extended, ignored = config.merged(settings, _split(select), _split(extend), _split(ignore))
        selection = Selection.build(chosen, extended, ignored)
        loaded = catalog.load(settings.extend_catalog)
    except SelectionError as exc:
        raise BadOption(str(exc), "--select/--extend-select/--ignore") from None
    except (config.ConfigError, catalog.CatalogError) as exc:
        _error(str(exc))
        raise Exit(EXIT_ERROR) from None
    return engine.Options(selection, loaded, reader, redact, settings)


def _refuse_with_fix(**given: bool) -> None:
    """``lint --fix`` runs ``fix``: a lint-only option would be silently dropped."""
    for name, present in given.items():
        if present:
            option = "--" + name.replace("_", "-")
            raise BadOption(f"{option} does not apply to `fix`", "--fix")


def _baseline_error() -> type[Exception]:
    """baseline.py's error, loaded only when an error is raised (it is read with --baseline)."""
    from transcript_doctor.baseline import BaselineError

    return BaselineError


def _remote(paths: list[str] | None) -> bool:
    """A URL among the paths: the fleet runs it (fleet.py is not imported otherwise)."""
    return any("://" in path for path in paths or [])


def _split(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def lint(
    paths: list[str] | None,
    reader: str | None,
    select: list[str] | None,
    extend_select: list[str] | None,
    ignore: list[str] | None,
    config_file: Path | None,
    output_format: OutputFormat,
    statistics: bool,
    exit_zero: bool,
    fail_on: FailOn,
    quiet: bool,
    no_progress: bool,
    jobs: int | None,
    force_exclude: bool,
    redact: bool,
    color: Color,
    verbose: bool,
    output_file: Path | None,
    baseline_file: Path | None,
    write_baseline: bool,
    show_files: bool,
    show_settings: bool,
    fix_instead: bool,
    unsafe_fixes: bool,
    show_fixes: bool,
    scheduler: str | None,
    hidden: bool,
    stdin_filename: str | None,
) -> None:
    from transcript_doctor import linting, output
    from transcript_doctor.plain import replace

    if fix_instead:
        _refuse_with_fix(
            output_format=output_format is not OutputFormat.full,
            statistics=statistics,
            output_file=output_file is not None,
            baseline=baseline_file is not None or write_baseline,
            show_files=show_files,
            show_settings=show_settings,
            show_fixes=show_fixes,
        )
        fix(paths, out=None, in_place=False, diff=False, report=None, no_backup=False, reader=reader,
            select=select, extend_select=extend_select, ignore=ignore,
            config_file=config_file, exit_zero=exit_zero, fail_on=fail_on, quiet=quiet,
            force_exclude=force_exclude, redact=redact, jobs=jobs, no_progress=no_progress,
            color=color, verbose=verbose, unsafe_fixes=unsafe_fixes, scheduler=scheduler,
            hidden=hidden, stdin_filename=stdin_filename)  # fmt: skip
        return
    if quiet and verbose:
        raise BadOption("--quiet and --verbose exclude each other", "--verbose")
    if write_baseline and baseline_file is None:
        raise BadOption("--write-baseline needs --baseline FILE to write", "--write-baseline")
    options = _settings(reader, select, extend_select, ignore, config_file, redact)
    if show_settings or show_files:
        from transcript_doctor import showing

        if show_settings:
            showing.settings(paths or ["."], options, force_exclude, sys.stdout)
        else:
            raise Exit(EXIT_ERROR if showing.files(paths or ["."], options, force_exclude, sys.stdout) else 0)
        raise Exit(EXIT_CLEAN)
    options = replace(options, unsafe_fixes=unsafe_fixes)
    plan = linting.Plan(
        output_format.value, statistics, quiet, not no_progress, jobs, force_exclude,
        show_fixes=show_fixes, baseline=baseline_file, write_baseline=write_baseline, output_file=output_file,
        color=None if color is Color.auto else color is Color.always, verbose=verbose,
        hidden=hidden, stdin_filename=stdin_filename,
    )  # fmt: skip
    try:
        if scheduler is not None or _remote(paths):
            from transcript_doctor import fleet

            run = fleet.lint(paths or ["."], options, plan, scheduler)
        else:
            run = linting.run(paths or ["."], options, plan)
    except (_baseline_error(), output.OutputError) as exc:
        _error(str(exc))
        raise Exit(EXIT_ERROR) from None
    if run.failed:
        raise Exit(EXIT_ERROR)
    threshold = Severity(fail_on.value).rank
    failing = any(f.finding.rule.severity.rank >= threshold for _, f in run.findings)
    raise Exit(EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN)


def fix(
    paths: list[str] | None,
    out: str | None,
    in_place: bool,
    diff: bool,
    report: Path | None,
    no_backup: bool,
    reader: str | None,
    select: list[str] | None,
    extend_select: list[str] | None,
    ignore: list[str] | None,
    config_file: Path | None,
    exit_zero: bool,
    fail_on: FailOn,
    quiet: bool,
    force_exclude: bool,
    redact: bool,
    jobs: int | None,
    no_progress: bool,
    color: Color,
    verbose: bool,
    unsafe_fixes: bool,
    scheduler: str | None,
    hidden: bool,
    stdin_filename: str | None,
) -> None:
    from pathlib import Path

    from transcript_doctor import fixing
    from transcript_doctor.plain import replace

    if in_place and diff:
        raise BadOption("--in-place and --diff exclude each other", "--diff")
    if out is not None and (in_place or diff):
        other = "--in-place" if in_place else "--diff"
        raise BadOption(f"--out and {other} exclude each other", "--out")
    if quiet and verbose:
        raise BadOption("--quiet and --verbose exclude each other", "--verbose")
    options = _settings(reader, select, extend_select, ignore, config_file, redact)
    options = replace(options, unsafe_fixes=unsafe_fixes)
    mode = "diff" if diff else "in-place" if in_place else "out"
    out_named = out is not None
    out = out or "transcript-doctor-fixed"
    plan = fixing.Plan(
        mode, Path(out), report, Severity(fail_on.value), quiet, force_exclude,
        jobs=jobs, progress=not no_progress, color=None if color is Color.auto else color is Color.always,
        verbose=verbose, hidden=hidden, stdin_filename=stdin_filename, out_named=out_named,
        backup=not no_backup,
    )  # fmt: skip
    if scheduler is not None or _remote(paths) or "://" in out:
        from transcript_doctor import fleet

        code = fleet.fix(paths or ["."], out, options, plan, scheduler)
    else:
        code = fixing.run(paths or ["."], options, plan)
    raise Exit(EXIT_CLEAN if exit_zero and code == EXIT_FINDINGS else code)
