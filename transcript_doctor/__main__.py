"""Entry point of ``transcript-doctor`` and ``python -m transcript_doctor``.

``--version`` is answered before anything heavy is imported: pre-commit and scripts call
it often, and the full CLI (typer, rich) costs several times Python's own start-up.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from transcript_doctor import __version__

        sys.stdout.write(f"transcript-doctor {__version__}\n")
        return
    from transcript_doctor.cli import run

    sys.exit(run(args))


if __name__ == "__main__":
    main()
