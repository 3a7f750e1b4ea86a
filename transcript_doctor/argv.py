"""The command lines of ``lint`` and ``fix`` that can be parsed without typer.

Importing typer (and click) costs more than the rest of a lint of one small file, which is
what pre-commit runs for every commit.  :func:`parse` reads the common shapes of the two
commands' argv: known options spelt in full (``--name VALUE``, ``--name=VALUE``, the short
``-q``, ``-v``, ``-j N``, ``-o FORMAT``, ``-jN``, ``-oFORMAT``) and paths.  It returns the
keyword arguments typer would pass to the command's body, or None for everything else
(``--help``, another command, a value typer would reject or convert in its own way,
option-like values, ``--``, combined short flags, a path option, shell completion), which
cli.py then parses with typer as before.  tests/test_argv.py checks both against each other, option by option.
"""

from __future__ import annotations

import os
from enum import Enum
from typing import Any

from transcript_doctor.commands import Color, FailOn, OutputFormat

FLAG, TEXT, MANY, JOBS = "flag", "text", "many", "jobs"  # how an option takes its value
Kind = str | type[Enum]  # or the Enum of its choices

# Options both commands have: option -> (parameter, kind).
_BOTH: dict[str, tuple[str, Kind]] = {
    "--reader": ("reader", TEXT),
    "--select": ("select", MANY),
    "--extend-select": ("extend_select", MANY),
    "--ignore": ("ignore", MANY),
    "--exit-zero": ("exit_zero", FLAG),
    "--fail-on": ("fail_on", FailOn),
    "--quiet": ("quiet", FLAG),
    "-q": ("quiet", FLAG),
    "--no-progress": ("no_progress", FLAG),
    "--jobs": ("jobs", JOBS),
    "-j": ("jobs", JOBS),
    "--force-exclude": ("force_exclude", FLAG),
    "--redact": ("redact", FLAG),
    "--color": ("color", Color),
    "--verbose": ("verbose", FLAG),
    "-v": ("verbose", FLAG),
    "--unsafe-fixes": ("unsafe_fixes", FLAG),
    "--scheduler": ("scheduler", TEXT),
    "--hidden": ("hidden", FLAG),
    "--stdin-filename": ("stdin_filename", TEXT),
}
# Left to typer: --config, --baseline, --output-file, --report (click checks an existing
# path is readable) and --help.
OPTIONS: dict[str, dict[str, tuple[str, Kind]]] = {
    "lint": {
        **_BOTH,
        "--output-format": ("output_format", OutputFormat),
        "-o": ("output_format", OutputFormat),
        "--statistics": ("statistics", FLAG),
        "--write-baseline": ("write_baseline", FLAG),
        "--show-files": ("show_files", FLAG),
        "--show-settings": ("show_settings", FLAG),
        "--fix": ("fix_instead", FLAG),
        "--show-fixes": ("show_fixes", FLAG),
    },
    "fix": {
        **_BOTH,
        "--out": ("out", TEXT),
        "--in-place": ("in_place", FLAG),
        "--diff": ("diff", FLAG),
        "--no-backup": ("no_backup", FLAG),
    },
}
# What a parameter is when its option is not given: a flag is off, a value is None, a
# choice is its default; the path options, which typer parses, are None.
_CHOSEN = {"output_format": OutputFormat.full, "fail_on": FailOn.warning, "color": Color.auto}
_PATH_OPTIONS = {"lint": ("config_file", "output_file", "baseline_file"), "fix": ("config_file", "report")}

# typer answers shell completion when this is set (click's ``_{PROG}_COMPLETE``).
COMPLETION = "_TRANSCRIPT_DOCTOR_COMPLETE"


def parse(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The command and the arguments its body gets, or None: ask typer."""
    if not args or args[0] not in OPTIONS or os.environ.get(COMPLETION):
        return None
    command = args[0]
    options = OPTIONS[command]
    given: dict[str, Any] = dict.fromkeys(_PATH_OPTIONS[command])
    for parameter, kind in options.values():
        given[parameter] = False if kind == FLAG else _CHOSEN.get(parameter)
    given["paths"] = []
    rest = iter(args[1:])
    for token in rest:
        if token == "-" or not token.startswith("-"):
            given["paths"].append(token)
            continue
        if token.startswith("--"):
            name, equals, value = token.partition("=")
        elif len(token) > 2:  # a short option's value attached (-j1, -ojson), as click reads it
            name, equals, value = token[:2], "=", token[2:]  # (-qv: flags combined, typer's)
        else:
            name, equals, value = token, "", ""
        known = options.get(name)
        if known is None:
            return None
        parameter, kind = known
        if kind == FLAG:
            if equals:
                return None
            given[parameter] = True
            continue
        if not equals:
            following = next(rest, None)
            if following is None:
                return None
            value = following
        if value.startswith("-"):
            return None
        if kind == TEXT:
            given[parameter] = value
        elif kind == MANY:
            given[parameter] = [*(given[parameter] or []), value]
        elif kind == JOBS:
            if not (value.isascii() and value.isdigit() and len(value) < 10) or int(value) < 1:
                return None
            given[parameter] = int(value)
        else:
            assert isinstance(kind, type)
            try:
                given[parameter] = kind(value)
            except ValueError:
                return None
    given["paths"] = given["paths"] or None
    return command, given
