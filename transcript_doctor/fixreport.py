"""The fix report: every applied repair with the bytes it removed, reversible exactly."""

from __future__ import annotations

import base64
import difflib
import hashlib
from typing import Any

from transcript_doctor.fixer import Outcome
from transcript_doctor.safetext import encodable, printable


def _bytes(key: str, data: bytes) -> dict[str, str]:
    """Text where the bytes are UTF-8, base64 otherwise (torn lines may be neither)."""
    try:
        return {key: data.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{key}_base64": base64.b64encode(data).decode("ascii")}


def file_entry(outcome: Outcome) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "path": outcome.path,
        "reader": outcome.reader,
        "changed": outcome.changed,
        "sha256_before": hashlib.sha256(outcome.before).hexdigest(),
        "sha256_after": hashlib.sha256(outcome.after).hexdigest(),
        "fixes": [
            {
                "rule": applied.rule,
                "line": applied.line,
                "action": applied.action,
                "applicability": applied.applicability.value,
                "safety": applied.safety,
                "message": applied.message,
                "records": [
                    {"where": edit.pointer, **_bytes("original", edit.old), **_bytes("new", edit.new)}
                    for edit in applied.edits
                ],
            }
            for applied in outcome.applied
        ],
        # Apply in order to get the repaired file; undo in reverse order to get it back.
        "steps": [
            {"offset": step.offset, **_bytes("old", step.old), **_bytes("new", step.new)}
            for step in outcome.steps
        ],
        "unfixed": [
            {
                "rule": f.finding.rule.code,
                "line": f.origin.line,
                "message": f.finding.message,
                "why": why,
                "fix_applicability": f.applicability.value if f.applicability else None,
            }
            for f, why in outcome.remaining
        ],
        "introduced": [
            {"rule": f.finding.rule.code, "line": f.origin.line, "message": f.finding.message}
            for f in outcome.introduced
        ],
        "rolled_back": outcome.rolled_back,
    }
    companion = outcome.companion
    if companion is not None and companion.changed:
        # The file the layout keeps in step with this one, written with it (its own steps).
        entry["companion"] = {
            "path": companion.path,
            "sha256_before": hashlib.sha256(companion.before).hexdigest(),
            "sha256_after": hashlib.sha256(companion.after).hexdigest(),
            "records": [
                {"where": edit.pointer, **_bytes("original", edit.old), **_bytes("new", edit.new)}
                for edit in companion.edits
            ],
            "steps": [
                {"offset": step.offset, **_bytes("old", step.old), **_bytes("new", step.new)}
                for step in companion.steps
            ],
        }
    return entry


def unified_diff(outcome: Outcome) -> str:
    """The file's diff, then its companion's (a second file section) when that changed."""
    text = _file_diff(outcome.path, outcome.before, outcome.after)
    companion = outcome.companion
    if companion is not None and companion.changed:
        text += _file_diff(companion.path, companion.before, companion.after)
    return text


def _file_diff(path: str, old: bytes, new: bytes) -> str:
    before = _lines(old.decode("utf-8", "backslashreplace"))
    after = _lines(new.decode("utf-8", "backslashreplace"))
    lines = difflib.unified_diff(before, after, _diff_name("a/", path), _diff_name("b/", path))
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _lines(text: str) -> list[str]:
    """Lines as the file has them: split at LF only (str.splitlines also splits at the
    U+2028, U+0085 and form feeds a JSON string may hold raw, breaking a record in two)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


_GIT_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r"}
_GIT_ESCAPES.update({0x22: '\\"', 0x5C: "\\\\"})


def _diff_name(prefix: str, path: str) -> str:
    """A diff header's file name, quoted as git quotes one (``"a/x\\033y"``, which GNU
    patch reads) when it holds a control character, a line break, a quote or bytes that
    are not UTF-8: a file name is no way to put an escape sequence on a terminal."""
    name = prefix + path
    if printable(name) == name and '"' not in name:
        return name
    try:
        raw = name.encode("utf-8", "surrogateescape")  # a file name's undecodable bytes as they are
    except UnicodeEncodeError:
        raw = encodable(name).encode("utf-8")
    quoted = "".join(
        _GIT_ESCAPES.get(byte) or (chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}") for byte in raw
    )
    return f'"{quoted}"'
