"""The command line: options in, engine and reporters out.  Nothing else lives here."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from transcript_doctor import __version__, engine, readers
from transcript_doctor.model import Severity

app = typer.Typer(
    name="transcript-doctor",
    help="Lint and repair stored AI-agent session transcripts.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

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


def _version(value: bool) -> None:
    if value:
        typer.echo(f"transcript-doctor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Lint and repair stored AI-agent session transcripts."""


def _error(message: str) -> None:
    from transcript_doctor.safetext import printable

    sys.stderr.write(f"transcript-doctor: {printable(message)}\n")


Paths = Annotated[list[str] | None, typer.Argument(help="Files or folders ('-' reads standard input).")]
ReaderOpt = Annotated[str | None, typer.Option("--reader", help="Force a reader instead of detection.")]
SelectOpt = Annotated[
    list[str] | None, typer.Option("--select", help="Rules to run: code, prefix, name or ALL.")
]
ExtendOpt = Annotated[
    list[str] | None, typer.Option("--extend-select", help="Rules to add to the selection.")
]
IgnoreOpt = Annotated[list[str] | None, typer.Option("--ignore", help="Rules to leave out.")]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="Config file (default: nearest pyproject.toml or transcript-doctor.toml)."),
]
ExitZeroOpt = Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with findings or changes.")]
FailOnOpt = Annotated[FailOn, typer.Option("--fail-on", help="Lowest severity that fails the run.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No summary and no notes about skipped files.")]
NoProgressOpt = Annotated[bool, typer.Option("--no-progress", help="Never show a progress bar.")]
JobsOpt = Annotated[
    int | None, typer.Option("--jobs", "-j", min=1, help="Parallel workers (default: all cores).")
]
ForceExcludeOpt = Annotated[
    bool,
    typer.Option("--force-exclude", help="Apply exclusions even to paths named explicitly (pre-commit)."),
]
HiddenOpt = Annotated[
    bool,
    typer.Option("--hidden", help="Walk hidden folders too (.claude, .codex, .gemini…); .git stays skipped."),
]
StdinFilenameOpt = Annotated[
    str | None,
    typer.Option(
        "--stdin-filename", help="The name of the file read from '-' (for reports and configuration)."
    ),
]
RedactOpt = Annotated[bool, typer.Option("--redact", help="No conversation excerpts in messages.")]
# The options ruff users expect (issue 17); their work lives in output.py, baseline.py, showing.py.
ColorOpt = Annotated[
    Color,
    typer.Option("--color", help="Colour the output: auto (a terminal, unless NO_COLOR), always, never."),
]
VerboseOpt = Annotated[
    bool, typer.Option("--verbose", "-v", help="Say what each file was found to be, and the time.")
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option("--baseline", help="Report only findings that are not in this baseline file (JSON)."),
]
WriteBaselineOpt = Annotated[
    bool, typer.Option("--write-baseline", help="Record the current findings in the --baseline file, exit 0.")
]
OutputFileOpt = Annotated[
    Path | None,
    typer.Option("--output-file", help="Write the report to this file instead of standard output."),
]
ShowFilesOpt = Annotated[
    bool, typer.Option("--show-files", help="List the files that would be checked, and exit.")
]
ShowSettingsOpt = Annotated[
    bool, typer.Option("--show-settings", help="Show the settings a run would use, and exit.")
]
FixOpt = Annotated[bool, typer.Option("--fix", help="Run `fix` with these options instead (an alias).")]
# The [fleet] extra (fleet.py): URLs as paths, work on a Dask cluster.
SchedulerOpt = Annotated[
    str | None,
    typer.Option("--scheduler", help="Run on this Dask scheduler (tcp://host:8786); needs the fleet extra."),
]
RulesFormatOpt = Annotated[
    RulesFormat, typer.Option("--output-format", "-o", help="Output format: text or json.")
]
UnsafeFixesOpt = Annotated[
    bool,
    typer.Option(
        "--unsafe-fixes",
        help="Also apply (fix) or count as fixable (lint) repairs that may destroy real model or tool output.",
    ),
]


def _settings(
    reader: str | None,
    select: list[str] | None,
    extend: list[str] | None,
    ignore: list[str] | None,
    config_file: Path | None,
    redact: bool,
) -> engine.Options:
    """Command line over configuration file, checked; usage errors exit 2."""
    from transcript_doctor import catalog, config
    from transcript_doctor.checks import Selection, SelectionError

    if reader is not None and readers.by_name(reader) is None:
        raise typer.BadParameter(
            f"unknown reader {reader!r}; choose from {', '.join(readers.names())}", param_hint="--reader"
        )
    try:
        settings = config.load(config_file)
        config.check(settings, readers.names, Selection.build)
        chosen, extended, ignored = config.merged(settings, _split(select), _split(extend), _split(ignore))
        selection = Selection.build(chosen, extended, ignored)
        loaded = catalog.load(settings.extend_catalog)
    except SelectionError as exc:
        raise typer.BadParameter(str(exc), param_hint="--select/--extend-select/--ignore") from None
    except (config.ConfigError, catalog.CatalogError) as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_ERROR) from None
    return engine.Options(selection, loaded, reader, redact, settings)


def _refuse_with_fix(**given: bool) -> None:
    """``lint --fix`` runs ``fix``: a lint-only option would be silently dropped."""
    for name, present in given.items():
        if present:
            option = "--" + name.replace("_", "-")
            raise typer.BadParameter(f"{option} does not apply to `fix`", param_hint="--fix")


def _remote(paths: list[str] | None) -> bool:
    """A URL among the paths: the fleet runs it (fleet.py is not imported otherwise)."""
    return any("://" in path for path in paths or [])


def _split(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


@app.command()
def lint(
    paths: Paths = None,
    reader: ReaderOpt = None,
    select: SelectOpt = None,
    extend_select: ExtendOpt = None,
    ignore: IgnoreOpt = None,
    config_file: ConfigOpt = None,
    output_format: Annotated[
        OutputFormat, typer.Option("--output-format", "-o", help="Output format.")
    ] = OutputFormat.full,
    statistics: Annotated[
        bool, typer.Option("--statistics", help="Counts per rule instead of findings.")
    ] = False,
    exit_zero: ExitZeroOpt = False,
    fail_on: FailOnOpt = FailOn.warning,
    quiet: QuietOpt = False,
    no_progress: NoProgressOpt = False,
    jobs: JobsOpt = None,
    force_exclude: ForceExcludeOpt = False,
    redact: RedactOpt = False,
    color: ColorOpt = Color.auto,
    verbose: VerboseOpt = False,
    output_file: OutputFileOpt = None,
    baseline_file: BaselineOpt = None,
    write_baseline: WriteBaselineOpt = False,
    show_files: ShowFilesOpt = False,
    show_settings: ShowSettingsOpt = False,
    fix_instead: FixOpt = False,
    unsafe_fixes: UnsafeFixesOpt = False,
    show_fixes: Annotated[
        bool, typer.Option("--show-fixes", help="Under each finding, say what fix would do and its class.")
    ] = False,
    scheduler: SchedulerOpt = None,
    hidden: HiddenOpt = False,
    stdin_filename: StdinFilenameOpt = None,
) -> None:
    """Check transcripts and report findings (exit 1 if any)."""
    from dataclasses import replace

    from transcript_doctor import baseline, linting, output

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
        fix(paths, reader=reader, select=select, extend_select=extend_select, ignore=ignore,
            config_file=config_file, exit_zero=exit_zero, fail_on=fail_on, quiet=quiet,
            force_exclude=force_exclude, redact=redact, jobs=jobs, no_progress=no_progress,
            color=color, verbose=verbose, unsafe_fixes=unsafe_fixes, scheduler=scheduler,
            hidden=hidden, stdin_filename=stdin_filename)  # fmt: skip
        return
    if quiet and verbose:
        raise typer.BadParameter("--quiet and --verbose exclude each other", param_hint="--verbose")
    if write_baseline and baseline_file is None:
        raise typer.BadParameter(
            "--write-baseline needs --baseline FILE to write", param_hint="--write-baseline"
        )
    options = _settings(reader, select, extend_select, ignore, config_file, redact)
    if show_settings or show_files:
        from transcript_doctor import showing

        if show_settings:
            showing.settings(paths or ["."], options, force_exclude, sys.stdout)
        else:
            raise typer.Exit(
                EXIT_ERROR if showing.files(paths or ["."], options, force_exclude, sys.stdout) else 0
            )
        raise typer.Exit(EXIT_CLEAN)
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
    except (baseline.BaselineError, output.OutputError) as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_ERROR) from None
    if run.failed:
        raise typer.Exit(EXIT_ERROR)
    threshold = Severity(fail_on.value).rank
    failing = any(f.finding.rule.severity.rank >= threshold for _, f in run.findings)
    raise typer.Exit(EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN)


@app.command()
def fix(
    paths: Paths = None,
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            help="Folder (or URL) for repaired copies (mirrors the input paths).",
            show_default="transcript-doctor-fixed",
        ),
    ] = None,
    in_place: Annotated[bool, typer.Option("--in-place", help="Replace the originals atomically.")] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print the diff of what would change; write nothing.")
    ] = False,
    report: Annotated[Path | None, typer.Option("--report", help="Write the JSON fix report here.")] = None,
    reader: ReaderOpt = None,
    select: SelectOpt = None,
    extend_select: ExtendOpt = None,
    ignore: IgnoreOpt = None,
    config_file: ConfigOpt = None,
    exit_zero: ExitZeroOpt = False,
    fail_on: FailOnOpt = FailOn.warning,
    quiet: QuietOpt = False,
    force_exclude: ForceExcludeOpt = False,
    redact: RedactOpt = False,
    jobs: JobsOpt = None,
    no_progress: NoProgressOpt = False,
    color: ColorOpt = Color.auto,
    verbose: VerboseOpt = False,
    unsafe_fixes: UnsafeFixesOpt = False,
    scheduler: SchedulerOpt = None,
    hidden: HiddenOpt = False,
    stdin_filename: StdinFilenameOpt = None,
) -> None:
    """Repair transcripts minimally: copies under --out, or --in-place, or --diff."""
    from dataclasses import replace

    from transcript_doctor import fixing

    if in_place and diff:
        raise typer.BadParameter("--in-place and --diff exclude each other", param_hint="--diff")
    if out is not None and (in_place or diff):
        other = "--in-place" if in_place else "--diff"
        raise typer.BadParameter(f"--out and {other} exclude each other", param_hint="--out")
    if quiet and verbose:
        raise typer.BadParameter("--quiet and --verbose exclude each other", param_hint="--verbose")
    options = _settings(reader, select, extend_select, ignore, config_file, redact)
    options = replace(options, unsafe_fixes=unsafe_fixes)
    mode = "diff" if diff else "in-place" if in_place else "out"
    out_named = out is not None
    out = out or "transcript-doctor-fixed"
    plan = fixing.Plan(
        mode, Path(out), report, Severity(fail_on.value), quiet, force_exclude,
        jobs=jobs, progress=not no_progress, color=None if color is Color.auto else color is Color.always,
        verbose=verbose, hidden=hidden, stdin_filename=stdin_filename, out_named=out_named,
    )  # fmt: skip
    if scheduler is not None or _remote(paths) or "://" in out:
        from transcript_doctor import fleet

        code = fleet.fix(paths or ["."], out, options, plan, scheduler)
    else:
        code = fixing.run(paths or ["."], options, plan)
    raise typer.Exit(EXIT_CLEAN if exit_zero and code == EXIT_FINDINGS else code)


@app.command("rules")
def rules_table(output_format: RulesFormatOpt = RulesFormat.text) -> None:
    """List every rule."""
    from transcript_doctor import checks, docs

    if output_format is RulesFormat.json:
        docs.write_json([docs.entry(rule) for rule in checks.rules()], sys.stdout)
        return
    for rule in checks.rules():
        # The fix's class: applied by default (safe), only with --unsafe-fixes, or per finding.
        fix = "/".join(a.value for a in rule.applicability) or "-"
        typer.echo(f"{rule.code}  {rule.severity.value:<7}  {fix:<11}  {rule.name:<36}  {rule.summary}")


@app.command("rule")
def rule_doc(
    code: Annotated[str | None, typer.Argument(metavar="CODE", help="Rule code or name, e.g. TD301.")] = None,
    every: Annotated[bool, typer.Option("--all", help="Explain every rule.")] = False,
    output_format: RulesFormatOpt = RulesFormat.text,
) -> None:
    """Explain one rule (or --all): what it detects, why it matters, what fix does."""
    from transcript_doctor import checks, docs

    if every == (code is not None):
        raise typer.BadParameter("give either a rule code or --all", param_hint="CODE")
    if code is not None:
        found = checks.find(code)
        if found is None:
            raise typer.BadParameter(f"unknown rule {code!r}", param_hint="CODE")
        chosen = [found]
    else:
        chosen = list(checks.rules())
    if output_format is RulesFormat.json:
        entries = [docs.entry(rule, explanation=True) for rule in chosen]
        docs.write_json(entries if every else entries[0], sys.stdout)
    elif every:
        docs.show_all(chosen, sys.stdout)
    else:
        docs.show(chosen[0], sys.stdout)


@app.command()
def formats(paths: Paths = None, reader: ReaderOpt = None, config_file: ConfigOpt = None) -> None:
    """List the readers; with paths, say which reader claims each file and why."""
    if not paths:
        for known in readers.all_readers():
            typer.echo(f"{known.name:<20} {known.summary}")
        return
    from transcript_doctor import formats as explain

    options = _settings(reader, None, None, None, config_file, False)
    raise typer.Exit(explain.run(paths, options))


def run(args: list[str]) -> int:
    """Run the app and map every outcome to the exit codes of cli.md (never 1 for a bug)."""
    try:
        app(args=args, prog_name="transcript-doctor")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return EXIT_CLEAN
        return code if isinstance(code, int) else EXIT_ERROR
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Exception as exc:
        _error(f"internal error: {exc!r}")
        return EXIT_ERROR
    return EXIT_CLEAN
