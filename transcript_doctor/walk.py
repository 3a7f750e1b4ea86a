"""Expand command-line paths into the files to check."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    explicit: bool  # named on the command line (notes about skipping are shown for these)


def expand(paths: list[str]) -> Iterator[Target | OSError]:
    """Files under ``paths`` in a stable order; unreadable folders come back as errors.

    Hidden folders and ``.git`` are skipped, and symlinked folders are not followed, so a
    link loop cannot make the walk run forever.
    """
    for path in paths:
        if not os.path.isdir(path):
            yield Target(path, explicit=True)
            continue
        errors: list[OSError] = []
        for root, dirs, files in os.walk(path, onerror=errors.append):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                yield Target(_join(root, name), explicit=False)
        yield from errors


def _join(root: str, name: str) -> str:
    joined = os.path.join(root, name)
    return joined[2:] if joined.startswith("./") else joined
