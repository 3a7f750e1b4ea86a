"""Entry point of ``transcript-doctor`` and ``python -m transcript_doctor``.

``--version`` is answered before anything heavy is imported, and the common command lines
of ``lint`` and ``fix`` run without typer (argv.py): pre-commit and scripts call them
often, and the full CLI (typer, click) costs more than linting a small file.  Everything
else, and every usage error, goes to cli.py, which parses it with typer.
"""

from __future__ import annotations

import errno
import gc
import sys
from importlib import import_module

RUNS = {"lint": "linting", "fix": "fixing"}  # the module that runs each command


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from transcript_doctor import __version__

        sys.stdout.write(f"transcript-doctor {__version__}\n")
        return
    code = _without_typer(args)
    if code is None:
        from transcript_doctor.cli import run

        code = run(args)
    sys.exit(code)


def _without_typer(args: list[str]) -> int | None:
    """The exit status of a command line argv.py parses, run as cli.run runs it under
    typer; None when typer must parse it (or report a usage error in its own words)."""
    # Start-up makes modules, classes and functions that live as long as the process: a
    # collection finds nothing to free among them.  None runs while they are imported, and
    # frozen, neither the collections of the run nor the one at exit walk them again.
    gc.disable()
    try:
        from transcript_doctor import argv

        parsed = argv.parse(args)
        if parsed is None:
            return None
        from transcript_doctor import commands

        name, given = parsed
        import_module(f"transcript_doctor.{RUNS[name]}")
        gc.freeze()
    finally:
        gc.enable()
    try:
        getattr(commands, name)(**given)
    except commands.BadOption:
        return None  # before any work: typer parses the line again and reports it
    except commands.Exit as exc:
        return exc.code
    except SystemExit as exc:
        code = exc.code
        return commands.EXIT_CLEAN if code is None else code if isinstance(code, int) else commands.EXIT_ERROR
    except KeyboardInterrupt:
        return 130  # typer's main: Exit(130), nothing printed
    except (EOFError, OSError) as exc:
        if isinstance(exc, EOFError) or exc.errno == errno.EPIPE:
            from transcript_doctor.cli import typer_outcome

            return typer_outcome(exc)
        commands._error(f"internal error: {exc!r}")
        return commands.EXIT_ERROR
    except Exception as exc:
        commands._error(f"internal error: {exc!r}")
        return commands.EXIT_ERROR
    return commands.EXIT_CLEAN


if __name__ == "__main__":
    main()
