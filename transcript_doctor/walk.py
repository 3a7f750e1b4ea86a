"""Expand command-line paths into the files to check.

Folders are walked the way ruff walks them: hidden folders (unless ``--hidden``) and
``.git`` are skipped, ``.gitignore`` files (those of the folder's repository above it
too) are honoured, and configured ``exclude`` globs apply; the temp files ``fix`` writes beside a transcript are
never offered (``tempnames``).  Paths named explicitly are always checked unless
``--force-exclude`` asks for the exclusions to apply to them too, as pre-commit needs:
it passes every staged file by name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transcript_doctor import tempnames

# Hidden folders where the vendors of the supported layouts keep sessions (the format
# specs name them): a walk that skips one says so, or a home folder would "pass".
VENDOR_FOLDERS = {
    ".claude": "Claude Code",
    ".codex": "Codex CLI",
    ".gemini": "Gemini CLI",
    ".qwen": "Qwen Code",
    ".cline": "Cline",
}


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    explicit: bool  # named on the command line (notes about skipping are shown for these)


@dataclass(frozen=True, slots=True)
class _Ignore:
    base: str  # absolute folder holding the .gitignore
    spec: Any  # pathspec.GitIgnoreSpec (imported only when a .gitignore exists)

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        rel = os.path.relpath(os.path.abspath(path), self.base).replace(os.sep, "/")
        if rel.startswith(".."):
            return None
        result = self.spec.check_file(rel + "/" if is_dir else rel)
        return None if result.include is None else bool(result.include)


def expand(
    paths: list[str],
    excluded: Callable[[str], bool] | None = None,
    force_exclude: bool = False,
    hidden: bool = False,
    vendor_folders: list[str] | None = None,
) -> Iterator[Target | OSError]:
    """Files under ``paths`` in a stable order; unreadable folders come back as errors.

    ``hidden`` walks hidden folders too; otherwise each skipped one of VENDOR_FOLDERS is
    appended to ``vendor_folders``.
    """
    skip = excluded or (lambda _path: False)
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            if not (force_exclude and path != "-" and (skip(path) or _ignored_by_git(path))):
                yield Target(path, explicit=True)
            continue
        if force_exclude and skip(path):
            continue
        yield from _walk(path, skip, hidden, vendor_folders)


def _walk(
    top: str, skip: Callable[[str], bool], hidden: bool, vendor_folders: list[str] | None
) -> Iterator[Target | OSError]:
    errors: list[OSError] = []
    ignores: dict[str, list[_Ignore]] = {top: _rules_above(os.path.abspath(top), include_self=False)}
    for root, dirs, files in os.walk(top, onerror=errors.append):
        rules = ignores.pop(root, [])
        own = _load(os.path.abspath(root))
        if own is not None:
            rules = [*rules, own]
        kept = []
        for name in sorted(dirs):
            path = _join(root, name)
            if name == ".git" or skip(path) or _decide(rules, path, True):
                continue
            if name.startswith(".") and not hidden:
                if name in VENDOR_FOLDERS and vendor_folders is not None:
                    vendor_folders.append(path)
                continue
            kept.append(name)
            ignores[os.path.join(root, name)] = rules
        dirs[:] = kept
        for name in sorted(files):
            if tempnames.is_temp(name):
                continue  # a file `fix` writes beside a transcript, left by a killed run
            path = _join(root, name)
            if not skip(path) and not _decide(rules, path, False):
                yield Target(path, explicit=False)
    yield from errors


def _decide(rules: list[_Ignore], path: str, is_dir: bool) -> bool:
    """Git's rule: the deepest .gitignore that says anything about the path wins."""
    ignored = False
    for rule in rules:
        verdict = rule.verdict(path, is_dir)
        if verdict is not None:
            ignored = verdict
    return ignored


def _load(folder: str) -> _Ignore | None:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    import pathspec

    return _Ignore(folder, pathspec.GitIgnoreSpec.from_lines(lines))


def _rules_above(folder: str, include_self: bool) -> list[_Ignore]:
    """The .gitignore rules of ``folder``'s repository that apply inside it, outermost
    first; none outside a git repository."""
    start = Path(folder)
    chain = [start] if include_self else []
    for candidate in start.parents if not include_self else (start, *start.parents):
        if candidate not in chain:
            chain.append(candidate)
        if (candidate / ".git").exists():
            break
    else:
        return []
    found = [_load(str(candidate)) for candidate in reversed(chain)]
    return [rule for rule in found if rule is not None]


def _ignored_by_git(path: str) -> bool:
    folder = os.path.dirname(os.path.abspath(path))
    return _decide(_rules_above(folder, include_self=True), path, False)


def _join(root: str, name: str) -> str:
    joined = os.path.join(root, name)
    return joined[2:] if joined.startswith("./") else joined
