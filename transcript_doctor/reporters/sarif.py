"""``sarif``: SARIF 2.1.0 for code-scanning tools, with rule metadata and fixes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

import orjson

from transcript_doctor import __version__, docs
from transcript_doctor.model import Rule, Severity
from transcript_doctor.reporters import Run, ordered
from transcript_doctor.safetext import dumps

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _rule(rule: Rule) -> dict[str, Any]:
    text = docs.text(rule)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary[:1024]},
        "fullDescription": {"text": f"{rule.summary} Fix: {rule.fix or 'none'}."[:1024]},
        "help": {"text": text, "markdown": text},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": ["transcript", rule.name]},
    }


def report(run: Run, out: TextIO) -> None:
    root = source_root()
    findings = ordered(run)
    rules = sorted(
        {located.finding.rule.code: located.finding.rule for _, located in findings}.values(),
        key=lambda r: r.code,
    )
    index = {rule.code: i for i, rule in enumerate(rules)}
    results = []
    for file, located in findings:
        finding = located.finding
        line = max(located.origin.line, 1)
        region = {"startLine": line, "endLine": line}
        result: dict[str, Any] = {
            "ruleId": finding.rule.code,
            "ruleIndex": index[finding.rule.code],
            "level": LEVEL[finding.rule.severity],
            "message": {"text": finding.message},
            "locations": [
                {"physicalLocation": {"artifactLocation": location(file.path, root), "region": region}}
            ],
            "partialFingerprints": {"transcriptDoctor/v1": _fingerprint(file.path, located)},
        }
        if located.edits and located.fixable:  # unsafe repairs only with --unsafe-fixes
            result["fixes"] = [
                {
                    "description": {"text": finding.rule.fix or ""},
                    "artifactChanges": [
                        {
                            "artifactLocation": location(file.path, root),
                            "replacements": [
                                {
                                    "deletedRegion": {
                                        "byteOffset": edit.start,
                                        "byteLength": edit.end - edit.start,
                                    },
                                    "insertedContent": {"text": edit.new.decode("utf-8", "replace")},
                                }
                                for edit in located.edits
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "transcript-doctor",
                        "version": __version__,
                        "informationUri": "https://pypi.org/project/transcript-doctor/",
                        "rules": [_rule(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": _file_uri(root) + "/"}},
                "results": results,
            }
        ],
    }
    out.write(dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")


SRCROOT = "%SRCROOT%"


def source_root() -> str:
    """What relative URIs are relative to: the repository holding the current folder
    (code scanning resolves them against the checkout), else the current folder."""
    here = os.path.abspath(os.getcwd())
    for folder in (Path(here), *Path(here).parents):
        if (folder / ".git").exists():
            return str(folder)
    return here


def location(path: str, root: str) -> dict[str, str]:
    """A valid URI reference for ``path`` (spaces, ``#``, ``%`` and non-ASCII
    percent-encoded): relative to ``root`` with its ``uriBaseId``, or a ``file://`` URI
    for a file outside it.  ``-`` (standard input without ``--stdin-filename``) stays
    ``-``: no file to point at."""
    if path == "-":
        return {"uri": "-"}
    full = os.path.abspath(path)
    rel = os.path.relpath(full, root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return {"uri": _file_uri(full)}
    return {"uri": _quote(Path(rel).as_posix()), "uriBaseId": SRCROOT}


def _file_uri(path: str) -> str:
    posix = Path(path).as_posix()
    return "file://" + ("" if posix.startswith("/") else "/") + _quote(posix)


def _quote(path: str) -> str:
    # Bytes, so that a file name that is not UTF-8 (kept as surrogate escapes) round-trips.
    return quote(os.fsencode(path), safe="/")


def _fingerprint(path: str, located: Any) -> str:
    """Stable across runs of the same file: rule, file, record and place in the record."""
    origin = located.origin
    basis = f"{located.finding.rule.code}\0{path}\0{origin.record}\0{origin.pointer or ''}"
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:32]
