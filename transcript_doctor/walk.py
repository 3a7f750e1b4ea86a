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
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transcript_doctor.gitignore import IgnoreFile

from transcript_doctor import tempnames, treesource

# Hidden folders where the vendors of the supported layouts keep sessions (the format
# specs name them): a walk that skips one says so, or a home folder would "pass".
VENDOR_FOLDERS = {
    ".claude": "Claude Code",
    ".codex": "Codex CLI",
    ".gemini": "Gemini CLI",
    ".qwen": "Qwen Code",
    ".cline": "Cline",
}


# Plain value classes, not dataclasses: a dataclass compiles its methods when its module
# is imported, and every lint imports this one (start-up).
class Target:
    __slots__ = ("explicit", "path")
    path: str
    explicit: bool  # named on the command line (notes about skipping are shown for these)

    def __init__(self, path: str, explicit: bool) -> None:
        self.path, self.explicit = path, explicit

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and (self.path, self.explicit) == (other.path, other.explicit)

    def __hash__(self) -> int:
        return hash((self.path, self.explicit))

    def __repr__(self) -> str:
        return f"Target(path={self.path!r}, explicit={self.explicit!r})"


class _Ignore:
    __slots__ = ("base", "rules")
    base: str  # absolute folder holding the .gitignore
    rules: IgnoreFile  # imported only when a .gitignore exists

    def __init__(self, base: str, rules: IgnoreFile) -> None:
        self.base, self.rules = base, rules

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        rel = os.path.relpath(os.path.abspath(path), self.base).replace(os.sep, "/")
        if rel == "." or rel.startswith("../") or rel == "..":
            return None
        return self.rules.verdict(rel, is_dir)


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
        if path == "-" or not os.path.isdir(path) or treesource.is_root(path):
            if not (force_exclude and path != "-" and (skip(path) or _ignored_by_git(path))):
                yield Target(path, explicit=True)
            continue
        if force_exclude and skip(path):
            continue
        root = treesource.root_above(path)
        if root is not None:  # a folder inside a storage folder: the unit it belongs to
            yield Target(root, explicit=True)
            continue
        yield from _walk(path, skip, hidden, vendor_folders, excluded)


def _walk(
    top: str,
    skip: Callable[[str], bool],
    hidden: bool,
    vendor_folders: list[str] | None,
    excluded: Callable[[str], bool] | None = None,
) -> Iterator[Target | OSError]:
    errors: list[OSError] = []
    ignores: dict[str, list[_Ignore]] = {top: _rules_above(os.path.abspath(top), include_self=False)}
    for root, dirs, files in os.walk(top, onerror=errors.append):
        rules = ignores.pop(root, [])
        if root != top:
            if treesource.is_root(root, dirs):  # a storage folder: one unit
                dirs[:] = []
                yield Target(root[2:] if root.startswith("./") else root, explicit=False)
                continue
            # A repository of its own inside: the outer one's rules stop at its folder.
            # Told from the folder's own listing (no look per folder from its parent).
            if (".git" in dirs or ".git" in files) and os.path.exists(os.path.join(root, ".git")):
                rules = _rules_above(os.path.abspath(root), include_self=False)
        # Only a folder that lists a .gitignore has one to read (no failing open per folder).
        own = _load(os.path.abspath(root)) if ".gitignore" in files else None
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
        # os.path.join per file costs as much as the rest of the walk: the folder's part once.
        prefix = _join(root, "")
        for name in sorted(files):
            if name[0] == "." and tempnames.is_temp(name):
                continue  # a file `fix` writes beside a transcript, left by a killed run
            path = prefix + name
            if (excluded is None or not skip(path)) and (not rules or not _decide(rules, path, False)):
                yield Target(path, False)
    yield from errors


def _decide(rules: list[_Ignore], path: str, is_dir: bool) -> bool:
    """Git's rule: the deepest .gitignore that says anything about the path wins."""
    ignored = False
    for rule in rules:
        verdict = rule.verdict(path, is_dir)
        if verdict is not None:
            ignored = verdict
    return ignored


def _load(folder: str, name: str = ".gitignore") -> _Ignore | None:
    try:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().split("\n")  # git splits on LF only
    except OSError:
        return None
    from transcript_doctor.gitignore import IgnoreFile

    return _Ignore(folder, IgnoreFile(lines))


def _rules_above(folder: str, include_self: bool) -> list[_Ignore]:
    """The .gitignore rules of ``folder``'s repository that apply inside it, outermost
    first; none outside a git repository."""
    start = Path(folder)
    chain = []  # ``folder``'s own .gitignore is the walk's to load unless include_self
    for candidate in (start, *start.parents):
        if include_self or candidate != start:
            chain.append(candidate)
        if (candidate / ".git").exists():
            break
    else:
        return []
    # The repository's info/exclude counts least, then each .gitignore from the top down.
    found = [_exclude_file(candidate), *(_load(str(folder)) for folder in reversed(chain))]
    return [rule for rule in found if rule is not None]


def _exclude_file(top: Path) -> _Ignore | None:
    """``$GIT_DIR/info/exclude`` of the repository at ``top`` (a worktree's is its common
    directory's).  The user's global excludes file is not read."""
    git = top / ".git"
    if git.is_file():  # a worktree or submodule: "gitdir: <path>"
        try:
            text = git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if not text.startswith("gitdir:"):
            return None
        git = top / text.removeprefix("gitdir:").strip()
        common = git / "commondir"
        if common.is_file():
            git = git / common.read_text(encoding="utf-8", errors="replace").strip()
    found = _load(str(git / "info"), "exclude")
    return None if found is None else _Ignore(str(top), found.rules)


def _ignored_by_git(path: str) -> bool:
    """A path named on the command line: ignored when it or a folder above it is (git
    never looks inside an ignored folder, whatever a later pattern re-includes)."""
    target = os.path.abspath(path)
    rules = _rules_above(os.path.dirname(target), include_self=True)
    if not rules:
        return False
    top = min((rule.base for rule in rules), key=len)
    folders = []
    folder = os.path.dirname(target)
    while len(folder) > len(top):
        folders.append(folder)
        folder = os.path.dirname(folder)
    return any(_decide(rules, f, True) for f in reversed(folders)) or _decide(rules, target, False)


def _join(root: str, name: str) -> str:
    joined = os.path.join(root, name)
    return joined[2:] if joined.startswith("./") else joined
