"""``lint --show-files`` and ``--show-settings``: what a run would look at, and with what.

As in ruff, both answer without linting anything, so that a surprising result (a file
not checked, a rule not run) can be traced to the walk or to the configuration.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from transcript_doctor import walk
from transcript_doctor.engine import Options
from transcript_doctor.safetext import printable


def files(paths: list[str], options: Options, force_exclude: bool, out: TextIO) -> bool:
    """Print every file the run would offer to the readers; True if a path was unreadable."""
    excluded = options.excluded
    failed = False
    for target in walk.expand(paths, excluded, force_exclude):
        if isinstance(target, OSError):
            sys.stderr.write(
                f"transcript-doctor: cannot read {printable(str(target.filename))}: {target.strerror}\n"
            )
            failed = True
        else:
            out.write(printable(target.path) + "\n")
    return failed


def settings(paths: list[str], options: Options, force_exclude: bool, out: TextIO) -> None:
    """The resolved settings, and those of the first file the walk finds (ruff shows one file's)."""
    config = options.config
    origin = str(config.path) if config is not None and config.path is not None else "none (defaults)"
    lines = [f"Settings path: {origin}"]
    excluded = options.excluded
    first = next((t for t in walk.expand(paths, excluded, force_exclude) if isinstance(t, walk.Target)), None)
    if first is not None:
        lines.append(f"Resolved settings for: {printable(first.path)}")
        resolved = options.for_path(first.path)
    else:
        resolved = options
    lines.append(f"reader = {_quote(resolved.reader) if resolved.reader else 'detect'}")
    lines.append(f"rules = {_list(sorted(resolved.selection.enabled))}")
    lines.append(f"redact = {str(options.redact).lower()}")
    if config is not None:
        lines.append(f"root = {_quote(str(config.root))}")
        lines.append(f"exclude = {_list(config.exclude)}")
        lines.append(f"extend-catalog = {_list(str(p) for p in config.extend_catalog)}")
        lines.append(
            f"per-file-ignores = {{{', '.join(f'{_quote(p)} = {_list(s)}' for p, s in config.per_file_ignores)}}}"
        )
        lines.append(f"readers = {{{', '.join(f'{_quote(p)} = {_quote(r)}' for p, r in config.readers)}}}")
    markers = len(options.catalog.markers)
    lines.append(f"catalog = {markers} placeholder and interruption markers")
    out.write("".join(line + "\n" for line in lines))


def _quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def _list(items: Iterable[object]) -> str:
    return "[" + ", ".join(_quote(str(item)) for item in items) + "]"
