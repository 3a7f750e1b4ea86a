"""git's own ``.gitignore`` matching: which path one ignore file says is ignored.

pathspec's ``GitIgnoreSpec`` matches a path when a pattern matches the path *or one of
its folders*, which is not git's rule and differs on re-includes: with ``docs/**`` and
``!docs/x/`` git still ignores ``docs/x/a.jsonl`` (the negation names the folder only,
and the file matches ``docs/**``); ``docs/**/`` ignores the folders inside ``docs`` but
not ``docs``'s own files.  Git matches each pattern against the path itself
(``dir.c`` ``match_basename``/``match_pathname``, ``wildmatch.c`` with ``WM_PATHNAME``)
and never looks inside an ignored folder: the walk prunes those, and a path named on the
command line is checked folder by folder (``walk.py``).  The tests compare this with
``git ls-files --others --exclude-standard`` in temporary repositories.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NEVER = re.compile(r"(?!)")
_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


@dataclass(frozen=True, slots=True)
class Pattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    basename: bool  # no slash in the pattern: it matches a name at any depth


class IgnoreFile:
    """The patterns of one ``.gitignore`` (or ``info/exclude``), for paths below its folder."""

    def __init__(self, lines: list[str]) -> None:
        self.patterns = [p for p in map(parse, lines) if p is not None]

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """Ignored (True), re-included (False) or not named (None): the last pattern that
        matches ``rel`` (a ``/``-separated path below the file's folder) decides."""
        name = rel.rpartition("/")[2]
        for pattern in reversed(self.patterns):
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.fullmatch(name if pattern.basename else rel):
                return not pattern.negated
        return None


def parse(line: str) -> Pattern | None:
    """One line as git reads it (``dir.c`` ``add_patterns_from_buffer``,
    ``parse_path_pattern``); None for blank lines and comments."""
    line = _trim_trailing_spaces(line.removesuffix("\r"))
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    basename = "/" not in line
    line = line.removeprefix("/")
    if not line:
        return None
    return Pattern(_compile(line, 0 if basename else _literal_length(line)), negated, dir_only, basename)


def _trim_trailing_spaces(line: str) -> str:
    """Trailing spaces go unless escaped with a backslash (``trim_trailing_spaces``)."""
    last_space = -1
    i = 0
    while i < len(line):
        char = line[i]
        if char == " ":
            if last_space < 0:
                last_space = i
        else:
            if char == "\\":
                i += 1
                if i == len(line):
                    return line
            last_space = -1
        i += 1
    return line if last_space < 0 else line[:last_space]


def _literal_length(pattern: str) -> int:
    """Where the first wildcard is: git matches the literal part before it separately, so
    a ``**`` right after it counts as leading (``simple_length``)."""
    found = re.search(r"[*?\[\\]", pattern)
    return len(pattern) if found is None else found.start()


def _compile(pattern: str, prefix: int) -> re.Pattern[str]:
    """``wildmatch`` with ``WM_PATHNAME`` as a regular expression over the whole path."""
    out: list[str] = []
    i, size = 0, len(pattern)
    while i < size:
        char = pattern[i]
        if char == "\\":
            if i + 1 == size:
                return _NEVER  # a pattern ending in a backslash matches nothing
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif char == "*":
            stars = i
            while i < size and pattern[i] == "*":
                i += 1
            leading = stars == 0 or pattern[stars - 1] == "/" or stars == prefix
            if i - stars >= 2 and leading and (i == size or pattern[i] == "/"):
                if i == size:
                    out.append(".*")  # "x/**": everything inside
                else:
                    out.append("(?:.*/)?")  # "**/": any number of folders, none included
                    i += 1
            else:
                out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            found = _bracket(pattern, i)
            if found is None:
                return _NEVER  # an unclosed or malformed class aborts the match
            expression, i = found
            out.append(expression)
        else:
            out.append(re.escape(char))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _bracket(pattern: str, start: int) -> tuple[str, int] | None:
    """A ``[...]`` class at ``start``: its expression and where it ends, as wildmatch reads
    it (``!`` or ``^`` negate, a ``]`` first is literal, ranges, ``[:alpha:]``)."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] in "!^"
    if negated:
        i += 1
    items: list[str] = []
    previous: str | None = None
    first = True
    while True:
        if i >= len(pattern):
            return None
        char = pattern[i]
        if char == "]" and not first:
            break
        first = False
        if char == "\\":
            i += 1
            if i >= len(pattern):
                return None
            char = pattern[i]
            items.append(re.escape(char))
            previous = char
        elif char == "-" and previous is not None and i + 1 < len(pattern) and pattern[i + 1] != "]":
            i += 1
            end = pattern[i]
            if end == "\\":
                i += 1
                if i >= len(pattern):
                    return None
                end = pattern[i]
            # The range's first character was already taken as itself: "[z-a]" matches "z".
            if previous <= end:
                items.append(f"{re.escape(previous)}-{re.escape(end)}")
            previous = None
        elif char == "[" and pattern.startswith(":", i + 1):
            close = pattern.find("]", i + 2)
            if close < 0:
                return None
            name = pattern[i + 2 : close]
            if not name.endswith(":"):
                items.append(re.escape("["))  # no ":]": a plain "["
                previous = "["
            else:
                members = _CLASSES.get(name[:-1])
                if members is None:
                    return None
                items.append(members)
                previous = None
                i = close
        else:
            items.append(re.escape(char))
            previous = char
        i += 1
    body = "".join(items)
    # WM_PATHNAME: no class matches "/", negated or not; an empty class matches nothing.
    if negated:
        return f"[^/{body}]", i + 1
    return (f"(?!/)[{body}]" if body else "(?!)"), i + 1
