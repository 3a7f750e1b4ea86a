"""The command line: options in, engine and reporters out.  Nothing else lives here."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from transcript_doctor import __version__, commands, readers
from transcript_doctor.commands import (
    EXIT_CLEAN,
    EXIT_ERROR,
    Color,
    FailOn,
    OutputFormat,
    RulesFormat,
    _error,
)
from transcript_doctor.commands import _settings as _settings

app = typer.Typer(
    name="transcript-doctor",
    help="Lint and repair stored AI-agent session transcripts.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


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


def _call(body: Callable[..., None], given: dict[str, Any]) -> None:
    """Run a command's body (commands.py) with typer's ways out: its usage errors as
    ``BadParameter``, its exit status as ``Exit``."""
    try:
        body(**given)
    except commands.BadOption as exc:
        raise typer.BadParameter(exc.message, param_hint=exc.hint) from None
    except commands.Exit as exc:
        raise typer.Exit(exc.code) from None


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
    _call(commands.lint, locals())


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
    no_backup: Annotated[
        bool, typer.Option("--no-backup", help="Do not back up an SQLite database before repairing it.")
    ] = False,
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
    _call(commands.fix, locals())


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
    _call(_explain, {"paths": paths, "reader": reader, "config_file": config_file})


def _explain(paths: list[str], reader: str | None, config_file: Path | None) -> None:
    from transcript_doctor import formats as explain

    options = _settings(reader, None, None, None, config_file, False)
    raise commands.Exit(explain.run(paths, options))


def run(args: list[str]) -> int:
    """Run the app and map every outcome to the exit codes of cli.md (never 1 for a bug)."""
    return _outcome(app, args)


def typer_outcome(error: EOFError | OSError) -> int:
    """The exit status (and words) typer's main gives an ``EOFError`` or a broken pipe that a
    command raised: the start-up path (``__main__``, without typer) hands those here."""
    raising = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @raising.command()
    def _raise() -> None:
        raise error

    return _outcome(raising, [])


def _outcome(application: typer.Typer, args: list[str]) -> int:
    try:
        application(args=args, prog_name="transcript-doctor")
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
