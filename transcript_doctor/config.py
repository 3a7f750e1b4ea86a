"""Settings from ``[tool.transcript-doctor]`` in pyproject.toml or ``transcript-doctor.toml``.

Found the way ruff finds its configuration: the nearest file walking up from the current
folder, ``transcript-doctor.toml`` before ``pyproject.toml`` in the same folder, and
``--config`` instead of the search.  Globs are relative to the folder of the file.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, Final

from transcript_doctor.plain import Value

OWN_FILE = "transcript-doctor.toml"
KEYS = ("select", "ignore", "extend-select", "per-file-ignores", "extend-catalog", "readers", "exclude")


class ConfigError(Exception):
    """A configuration that cannot be used: one line naming the file and the key."""


class Config(Value):
    __slots__ = (
        "exclude",
        "extend_catalog",
        "extend_select",
        "ignore",
        "path",
        "per_file_ignores",
        "readers",
        "root",
        "select",
    )
    root: Final[Path]  # globs and extend-catalog paths are relative to this folder
    path: Final[Path | None]
    select: Final[tuple[str, ...] | None]
    ignore: Final[tuple[str, ...]]
    extend_select: Final[tuple[str, ...]]
    per_file_ignores: Final[tuple[tuple[str, tuple[str, ...]], ...]]
    extend_catalog: Final[tuple[Path, ...]]
    readers: Final[tuple[tuple[str, str], ...]]
    exclude: Final[tuple[str, ...]]

    def __init__(
        self,
        root: Path,
        path: Path | None = None,
        select: tuple[str, ...] | None = None,
        ignore: tuple[str, ...] = (),
        extend_select: tuple[str, ...] = (),
        per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = (),
        extend_catalog: tuple[Path, ...] = (),
        readers: tuple[tuple[str, str], ...] = (),
        exclude: tuple[str, ...] = (),
    ) -> None:
        self.root = root
        self.path = path
        self.select = select
        self.ignore = ignore
        self.extend_select = extend_select
        self.per_file_ignores = per_file_ignores
        self.extend_catalog = extend_catalog
        self.readers = readers
        self.exclude = exclude

    def relative(self, path: str) -> str:
        """``path`` as globs see it: relative to the config folder, POSIX separators."""
        # abspath, not resolve: a symlink loop must not stop the run, and globs match
        # the path as the user sees it.
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        if rel.startswith(".."):
            return PurePosixPath(Path(path).as_posix()).as_posix()
        return Path(rel).as_posix()

    def ignored(self, path: str) -> tuple[str, ...]:
        """Rule selectors that ``per-file-ignores`` turns off for this file."""
        if not self.per_file_ignores:
            return ()  # no path work per file when nothing is configured
        rel = self.relative(path)
        found: list[str] = []
        for pattern, selectors in self.per_file_ignores:
            if matches(pattern, rel):
                found.extend(selectors)
        return tuple(found)

    def reader_rule(self, path: str) -> tuple[str, str] | None:
        """The first ``readers`` entry (glob, reader) that matches ``path``."""
        if not self.readers:
            return None
        rel = self.relative(path)
        for pattern, reader in self.readers:
            if matches(pattern, rel):
                return pattern, reader
        return None

    def excluded(self, path: str) -> bool:
        if not self.exclude:
            return False
        rel = self.relative(path)
        return any(matches(pattern, rel) for pattern in self.exclude)


def matches(pattern: str, rel: str) -> bool:
    """Glob match as ruff users expect: a pattern without ``/`` matches a file or folder
    name at any depth; with ``/`` it matches the path from the config folder."""
    pattern = pattern.removeprefix("./")
    if "/" not in pattern.rstrip("/"):
        return any(fnmatchcase(part, pattern.rstrip("/")) for part in PurePosixPath(rel).parts)
    return fnmatchcase(rel, pattern) or fnmatchcase(rel, pattern.rstrip("/") + "/*")


def discover(start: Path) -> Path | None:
    """The nearest configuration file at or above ``start``."""
    for folder in (start, *start.parents):
        own = folder / OWN_FILE
        if own.is_file():
            return own
        pyproject = folder / "pyproject.toml"
        if (
            pyproject.is_file()
            and _may_configure(pyproject)
            and _table(_read(pyproject), pyproject) is not None
        ):
            return pyproject
    return None


def _may_configure(pyproject: Path) -> bool:
    """Whether ``pyproject`` can hold our table: most configure only other tools, and the
    TOML parser costs a pre-commit hook a sixth of its start-up."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True  # _read reports it
    return may_hold_table(text)


def may_hold_table(text: str) -> bool:
    """False only when a TOML document certainly holds no ``tool`` → ``transcript-doctor``
    key, read without parsing it.  The key's name is spelled out (only a ``\\u`` escape
    could spell it otherwise); as a table header or a dotted key it shares its line with
    ``tool``, and as a bare key it belongs to ``tool`` only under a ``[tool]`` header or
    inside a ``tool = {...}`` value.  (Inline tables and headers never span lines.)"""
    if "\\u" in text or "\\U" in text:
        return True
    named = [line for line in text.splitlines() if "transcript-doctor" in line]
    if not named:
        return False
    if any("tool" in line for line in named):
        return True
    return (
        re.search(r"""^[ \t]*(?:\[[ \t]*["']?tool["']?[ \t]*\]|["']?tool["']?[ \t]*=)""", text, re.M)
        is not None
    )


def load(explicit: Path | None = None, start: Path | None = None) -> Config:
    path = explicit if explicit is not None else discover((start or Path.cwd()).resolve())
    if path is None:
        return Config(root=(start or Path.cwd()))
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file")
    table = _table(_read(path), path)
    return _parse(table or {}, path)


def _read(path: Path) -> dict[str, Any]:
    # The TOML parser is loaded only for a file to read (start-up of a run with none).
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    try:
        document: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
        return document
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


def _table(document: dict[str, Any], path: Path) -> dict[str, Any] | None:
    if path.name != "pyproject.toml":
        return document
    tool = document.get("tool")
    table = tool.get("transcript-doctor") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.transcript-doctor] must be a table")
    return table


def _parse(table: dict[str, Any], path: Path) -> Config:
    section = "[tool.transcript-doctor]" if path.name == "pyproject.toml" else path.name
    for key in table:
        if key not in KEYS:
            raise ConfigError(f"{path}: unknown key {key!r} in {section} (known: {', '.join(KEYS)})")
    root = path.parent
    per_file = _mapping(table, "per-file-ignores", path)
    readers = _mapping(table, "readers", path)
    for pattern, reader in readers.items():
        if not isinstance(reader, str):
            raise ConfigError(f"{path}: readers.{pattern!r} must be a reader name")
    return Config(
        root=root,
        path=path,
        select=_strings(table, "select", path) if "select" in table else None,
        ignore=_strings(table, "ignore", path),
        extend_select=_strings(table, "extend-select", path),
        per_file_ignores=tuple(
            (pattern, _string_list(selectors, f"per-file-ignores.{pattern!r}", path))
            for pattern, selectors in per_file.items()
        ),
        extend_catalog=tuple(root / p for p in _strings(table, "extend-catalog", path)),
        readers=tuple(readers.items()),
        exclude=_strings(table, "exclude", path),
    )


def _strings(table: dict[str, Any], key: str, path: Path) -> tuple[str, ...]:
    return _string_list(table.get(key, []), key, path)


def _string_list(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: {key} must be a list of strings")
    return tuple(value)


def _mapping(table: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {key} must be a table")
    return value


def check(
    config: Config, reader_names: Callable[[], Iterable[str]], selection: Callable[[list[str]], object]
) -> None:
    """Every reader name and rule selector of the file is valid; else a ConfigError that
    names the file, the key and the bad value, with the nearest valid one.  The reader
    names are asked for only when the file names readers (they load every reader)."""
    if config.path is None:
        return
    prefix = "tool.transcript-doctor." if config.path.name == "pyproject.toml" else ""
    names = list(reader_names()) if config.readers else []
    for pattern, name in config.readers:
        if name not in names:
            import difflib

            near = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
            hint = f"did you mean {near[0]!r}?" if near else f"choose from {', '.join(names)}"
            raise ConfigError(
                f"{config.path}: {prefix}readers.{_key(pattern)}: unknown reader {name!r} ({hint})"
            )
    keyed = [
        ("select", config.select or ()),
        ("extend-select", config.extend_select),
        ("ignore", config.ignore),
    ]
    keyed += [
        (f"per-file-ignores.{_key(pattern)}", selectors) for pattern, selectors in config.per_file_ignores
    ]
    for key, selectors in keyed:
        for selector in selectors:
            try:
                selection([selector])
            except ValueError as exc:
                raise ConfigError(f"{config.path}: {prefix}{key}: {exc}") from None


def _key(pattern: str) -> str:
    """A TOML key as it would be written: bare when it can be, else quoted."""
    bare = pattern.isascii() and pattern.replace("-", "").replace("_", "").isalnum()
    return pattern if bare else '"' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"'


def merged(
    config: Config, select: Iterable[str], extend: Iterable[str], ignore: Iterable[str]
) -> tuple[list[str], list[str], list[str]]:
    """Command-line selectors over the file's: ``--select`` replaces, the others add."""
    chosen = list(select) or list(config.select or ["ALL"])
    return chosen, [*config.extend_select, *extend], [*config.ignore, *ignore]
