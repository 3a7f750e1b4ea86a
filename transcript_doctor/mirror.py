"""Where ``fix --out`` puts each repaired copy, and the inputs whose copies would collide.

A copy keeps its input's relative path under OUT, with ``/``, ``..`` and ``.`` left out,
so ``../x.jsonl`` and ``x.jsonl`` (or ``/a/b`` and ``a/b``) would both land on
``OUT/x.jsonl``; an input can also sit where its own or another input's copy would go
(``--out .``), or be named like the report.  Such inputs are refused before anything is
written, rather than one copy silently replacing another.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path


def parts(path: str) -> tuple[str, ...]:
    """The relative path of ``path``'s copy under OUT."""
    return tuple(p for p in Path(os.path.normpath(path)).parts if p not in ("/", "..", "."))


def clashes(paths: list[str], out: Path, reserved: list[str]) -> dict[str, str]:
    """Why each colliding input is refused, by input path; ``reserved`` are the report's
    paths (which no copy may take)."""
    root = os.path.realpath(out)
    inputs = {os.path.realpath(p): p for p in paths}
    taken = {os.path.realpath(r) for r in reserved}
    by_copy: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for path in paths:
        by_copy[parts(path)].append(path)
    refused: dict[str, str] = {}
    for copy, sharing in by_copy.items():
        where = os.path.join(str(out), *copy)
        real = os.path.join(root, *copy)
        for path in sharing:
            others = [p for p in sharing if p != path]
            if not copy:
                refused[path] = f"{path}: has no name to copy under {out}; not written"
            elif others:
                refused[path] = (
                    f"{path}: its repaired copy would be {where}, as would that of {', '.join(others)}; "
                    "not written (fix these in separate runs)"
                )
            elif real in inputs:
                victim = inputs[real]
                whose = "itself (use --in-place)" if os.path.realpath(path) == real else f"the input {victim}"
                refused[path] = f"{path}: its repaired copy {where} would overwrite {whose}; not written"
            elif real in taken:
                refused[path] = (
                    f"{path}: its repaired copy {where} would overwrite the fix report; not written"
                )
    return refused
