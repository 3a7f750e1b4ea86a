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
    sys.stderr.write(f"transcript-doctor: {message}\n")


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
RedactOpt = Annotated[bool, typer.Option("--redact", help="No conversation excerpts in messages.")]


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
        for _pattern, name in settings.readers:
            if readers.by_name(name) is None:
                raise config.ConfigError(f"{settings.path}: readers: unknown reader {name!r}")
        chosen, extended, ignored = config.merged(settings, _split(select), _split(extend), _split(ignore))
        selection = Selection.build(chosen, extended, ignored)
        for _pattern, selectors in settings.per_file_ignores:
            Selection.build(selectors)
        loaded = catalog.load(settings.extend_catalog)
    except SelectionError as exc:
        raise typer.BadParameter(str(exc), param_hint="--select/--extend-select/--ignore") from None
    except (config.ConfigError, catalog.CatalogError) as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_ERROR) from None
    return engine.Options(selection, loaded, reader, redact, settings)


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
) -> None:
    """Check transcripts and report findings (exit 1 if any)."""
    from transcript_doctor import linting

    options = _settings(reader, select, extend_select, ignore, config_file, redact)
    plan = linting.Plan(output_format.value, statistics, quiet, not no_progress, jobs, force_exclude)
    run = linting.run(paths or ["."], options, plan)
    if run.failed:
        raise typer.Exit(EXIT_ERROR)
    threshold = Severity(fail_on.value).rank
    failing = any(f.finding.rule.severity.rank >= threshold for _, f in run.findings)
    raise typer.Exit(EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN)


@app.command()
def fix(
    paths: Paths = None,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for repaired copies (mirrors the input paths).")
    ] = Path("transcript-doctor-fixed"),
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
) -> None:
    """Repair transcripts minimally: copies under --out, or --in-place, or --diff."""
    from transcript_doctor import fixing

    if in_place and diff:
        raise typer.BadParameter("--in-place and --diff exclude each other", param_hint="--diff")
    options = _settings(reader, select, extend_select, ignore, config_file, redact)
    mode = "diff" if diff else "in-place" if in_place else "out"
    plan = fixing.Plan(mode, out, report, Severity(fail_on.value), quiet, force_exclude)
    code = fixing.run(paths or ["."], options, plan)
    raise typer.Exit(EXIT_CLEAN if exit_zero and code == EXIT_FINDINGS else code)


@app.command("rules")
def rules_table() -> None:
    """List every rule."""
    from transcript_doctor import checks

    for rule in checks.rules():
        fix = "fix" if rule.fix else "   "
        typer.echo(f"{rule.code}  {rule.severity.value:<7}  {fix}  {rule.name:<36}  {rule.summary}")


@app.command("rule")
def rule_doc(code: Annotated[str, typer.Argument(help="Rule code or name, e.g. TD301.")]) -> None:
    """Explain one rule: what it detects, why it matters, what fix does."""
    from transcript_doctor import checks, docs

    found = checks.find(code)
    if found is None:
        raise typer.BadParameter(f"unknown rule {code!r}", param_hint="CODE")
    docs.show(found, sys.stdout)


@app.command()
def formats(paths: Paths = None) -> None:
    """List the readers; with paths, say which reader claims each file and why."""
    from transcript_doctor import walk
    from transcript_doctor.source import NotJson, sniff

    if not paths:
        for reader in readers.all_readers():
            typer.echo(f"{reader.name:<20} {reader.summary}")
        return
    failed = False
    for target in walk.expand(paths):
        if isinstance(target, OSError):
            _error(f"cannot read {target.filename}: {target.strerror}")
            failed = True
            continue
        try:
            data = sys.stdin.buffer.read() if target.path == "-" else Path(target.path).read_bytes()
        except OSError as exc:
            _error(f"cannot read {target.path}: {exc.strerror}")
            failed = True
            continue
        try:
            claim = readers.detect(sniff(target.path, data))
        except NotJson as exc:
            typer.echo(f"{target.path}: not a transcript ({exc})")
            continue
        if claim is None:
            typer.echo(f"{target.path}: no reader recognises it")
        else:
            _reader, detection = claim
            what = detection.reader if detection.transcript else f"{detection.reader}, skipped"
            typer.echo(f"{target.path}: {what} ({detection.reason})")
    if failed:
        raise typer.Exit(EXIT_ERROR)


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
