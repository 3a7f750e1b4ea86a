"""``lint --baseline FILE``: suppression without comments, for files that cannot hold any.

A JSON transcript has no place for ``# noqa``.  A team that adopts the linter on a pile of
stored sessions records today's findings once (``--write-baseline``) and from then on sees
only new ones.  Each finding is keyed on what does not move:

- the path, relative to the baseline file's folder (the same from any working folder);
- the rule code;
- a hash of the JSON value the finding names (the record, or the part of it that its
  pointer names), canonicalised (sorted keys, compact), never its line or index.

Appending to a JSONL file, repairing other records, or rewriting a JSON document with
other indentation moves lines and indexes but leaves those values as they were.  Two
findings of one rule in one record name different parts (different pointers), so they
get different fingerprints; findings whose named values are identical are
interchangeable, and the baseline counts them: a third copy of a twice-recorded finding
is reported.  A record that does not parse (TD001) is hashed as its raw bytes; a finding
about a whole JSON document (TD002) is keyed on its path and rule alone.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from transcript_doctor.engine import FileReport, Located
from transcript_doctor.safetext import dumps, encodable
from transcript_doctor.source import BOM, Container, NotJson, load_any, sniff

VERSION = 1
_MISSING = object()


class BaselineError(Exception):
    """A baseline file that cannot be used: one line naming the file."""


def fingerprint_all(path: str, data: bytes, findings: list[Located]) -> None:
    """Set each finding's fingerprint from the bytes that were linted."""
    if not findings:
        return
    try:
        source = sniff(path, data)
    except NotJson:
        container, document = Container.JSONL, _MISSING
    else:
        container = source.container
        parsed = source.value if container is Container.JSON else None
        document = _MISSING if parsed is None else parsed  # None: the document does not parse
    lines: list[bytes] | None = None
    for located in findings:
        origin = located.origin
        value: Any = _MISSING
        if document is not _MISSING and origin.pointer is None:
            # The whole file is meant (TD002): it may grow, and it is one per file anyway.
            value = "whole document"
        elif document is not _MISSING:
            value = _at(document, origin.pointer)
        raw = b""
        if value is _MISSING:
            if lines is None:
                lines = data.split(b"\n")
            raw = lines[origin.line - 1].rstrip(b"\r") if 0 < origin.line <= len(lines) else b""
            if origin.line == 1:
                raw = raw.removeprefix(BOM)
            if container is Container.JSONL:
                try:
                    value = _at(load_any(raw), origin.pointer)
                except (ValueError, RecursionError):
                    value = _MISSING
        subject = _canonical(value) if value is not _MISSING else b"raw\0" + raw
        located.fingerprint = _sha256(subject)


def _at(value: Any, pointer: str | None) -> Any:
    """The value a JSON Pointer (RFC 6901) names, or ``_MISSING``."""
    if not pointer:
        return value
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return _MISSING
    return value


def _canonical(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # integers beyond 64 bits, lone surrogates: what stdlib json took
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


Key = tuple[str, str, str]  # path, rule, fingerprint


@dataclass(slots=True)
class Applied:
    """What the baseline did to a run: findings it hid, entries that matched nothing."""

    suppressed: int = 0
    stale: int = 0


@dataclass(slots=True)
class Baseline:
    path: Path
    entries: Counter[Key] = field(default_factory=Counter)

    @property
    def root(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def key(self, path: str, located: Located) -> Key:
        assert located.fingerprint is not None, "fingerprints are computed when a baseline is used"
        # A name that is not UTF-8 is stored as its escapes (JSON has no other form).
        return (encodable(_relative(path, self.root)), located.finding.rule.code, located.fingerprint)

    def apply(self, reports: Iterable[FileReport]) -> Applied:
        """Drop the findings the baseline holds (each entry hides one finding)."""
        left = Counter(self.entries)
        result = Applied()
        checked: set[str] = set()
        for report in reports:
            checked.add(_relative(report.path, self.root))
            kept = []
            for located in report.findings:
                key = self.key(report.path, located)
                if left[key] > 0:
                    left[key] -= 1
                    result.suppressed += 1
                else:
                    kept.append(located)
            report.findings = kept
        result.stale = sum(count for key, count in left.items() if key[0] in checked and count > 0)
        return result


def load(path: Path) -> Baseline:
    try:
        document = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise BaselineError(f"no baseline {path}: create it with --write-baseline") from None
    except OSError as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc.strerror}") from None
    except orjson.JSONDecodeError as exc:
        raise BaselineError(f"{path}: not a transcript-doctor baseline (invalid JSON: {exc})") from None
    if not isinstance(document, dict) or document.get("version") != VERSION:
        raise BaselineError(f'{path}: not a transcript-doctor baseline (expected "version": {VERSION})')
    findings = document.get("findings")
    if not isinstance(findings, list):
        raise BaselineError(f'{path}: not a transcript-doctor baseline ("findings" must be a list)')
    entries: Counter[Key] = Counter()
    for index, entry in enumerate(findings):
        keys = ("path", "rule", "fingerprint")
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in keys):
            raise BaselineError(f"{path}: findings[{index}] needs string path, rule and fingerprint")
        entries[(entry["path"], entry["rule"], entry["fingerprint"])] += 1
    return Baseline(path, entries)


def write(path: Path, reports: Iterable[FileReport]) -> int:
    """Record every finding of the run; returns how many.  ``line`` and ``message`` are
    for the people who review the file: matching ignores them."""
    from transcript_doctor import writer

    baseline = Baseline(path)
    rows = []
    for report in reports:
        for located in report.findings:
            rel, rule, fingerprint = baseline.key(report.path, located)
            rows.append(
                {
                    "path": encodable(rel),
                    "rule": rule,
                    "fingerprint": fingerprint,
                    "line": located.origin.line,
                    "message": located.finding.message,
                }
            )
    rows.sort(key=lambda row: (row["path"], row["line"], row["rule"], row["fingerprint"]))
    document = {"version": VERSION, "findings": rows}
    try:
        writer.write_new(str(path), dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError as exc:
        raise BaselineError(f"cannot write the baseline {path}: {exc.strerror}") from None
    return len(rows)


def _relative(path: str, root: str) -> str:
    """The path as the baseline stores it: relative to its folder, POSIX separators."""
    if path == "-":
        return path
    rel = os.path.relpath(os.path.abspath(path), root)
    return Path(rel).as_posix()


def _sha256(subject: bytes) -> str:
    import hashlib  # loaded with --baseline only: OpenSSL's start-up costs every run ~7 ms

    return hashlib.sha256(subject).hexdigest()[:16]
