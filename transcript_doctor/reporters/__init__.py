"""Output formats.  Each reporter turns finished file reports into text on a stream.

Reporters never see readers or conversations, only located findings: the machine
formats stay stable whatever the layouts do.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from importlib import import_module
from typing import Final, TextIO

from transcript_doctor.engine import FileReport, Located
from transcript_doctor.model import Applicability, Rule, Severity
from transcript_doctor.plain import Value
from transcript_doctor.safetext import dumps, printable


class Run(Value):
    """Everything a reporter prints: the checked files and how the run was asked for."""

    __slots__ = (
        "baselined",
        "color",
        "errors",
        "quiet",
        "reports",
        "show_fixes",
        "stale",
        "statistics",
        "unsafe_fixes",
        "vendor_folders",
    )
    reports: Final[list[FileReport]]
    quiet: Final[bool]
    statistics: Final[bool]
    color: Final[bool | None]  # --color: None decides from the stream (output.wanted)
    baselined: Final[int]  # findings the --baseline hid
    stale: Final[int]  # baseline entries of the checked files that matched no finding
    unsafe_fixes: Final[bool]  # unsafe repairs count as fixable
    show_fixes: Final[bool]  # say under each finding what fix would do
    errors: Final[int]  # paths that could not be read or checked (each said on stderr)
    vendor_folders: Final[tuple[str, ...]]  # hidden vendor session folders the walk skipped

    def __init__(
        self,
        reports: list[FileReport],
        quiet: bool = False,
        statistics: bool = False,
        color: bool | None = None,
        baselined: int = 0,
        stale: int = 0,
        unsafe_fixes: bool = False,
        show_fixes: bool = False,
        errors: int = 0,
        vendor_folders: tuple[str, ...] = (),
    ) -> None:
        self.reports = reports
        self.quiet = quiet
        self.statistics = statistics
        self.color = color
        self.baselined = baselined
        self.stale = stale
        self.unsafe_fixes = unsafe_fixes
        self.show_fixes = show_fixes
        self.errors = errors
        self.vendor_folders = vendor_folders

    @property
    def findings(self) -> list[tuple[FileReport, Located]]:
        return [(r, f) for r in self.reports for f in r.findings]

    @property
    def skipped(self) -> int:
        return sum(1 for r in self.reports if r.skipped is not None)


Reporter = Callable[[Run, TextIO], None]


def get(name: str) -> Reporter:
    module = import_module(f"{__name__}.{name}")
    report: Reporter = module.report
    return report


def counts(run: Run) -> Counter[Severity]:
    return Counter(located.finding.rule.severity for _, located in run.findings)


def summary_lines(run: Run) -> list[str]:
    """The closing lines of the human formats (ruff's wording where it fits)."""
    lines: list[str] = []
    tally = counts(run)
    total = sum(tally.values())
    if total:
        parts = [
            f"{tally[s]} {s.value}" + ("s" if tally[s] != 1 and s is not Severity.INFO else "")
            for s in Severity
            if tally[s]
        ]
        noun = "finding" if total == 1 else "findings"
        lines.append(f"Found {total} {noun} ({', '.join(parts)}).")
        lines.extend(_fixable_lines(run))
    else:
        checked = sum(1 for r in run.reports if r.skipped is None and r.error is None)
        if not checked:
            lines.append("No transcripts checked.")
        elif run.errors:
            lines.append(f"No findings in the {_files(checked)} checked.")
        else:
            lines.append(f"All checks passed ({_files(checked)} checked).")
    if run.errors:
        lines.append(f"{_files(run.errors, 'path')} could not be read or checked (see above).")
    if run.baselined:
        noun = "finding" if run.baselined == 1 else "findings"
        lines.append(f"{run.baselined} {noun} in the baseline not shown.")
    if run.stale:
        noun = "entry matches" if run.stale == 1 else "entries match"
        lines.append(f"{run.stale} baseline {noun} no finding any more; `--write-baseline` updates it.")
    lines.extend(skipped_lines(run.skipped))
    lines.extend(vendor_notes(run.vendor_folders))
    return lines


def _fixable_lines(run: Run) -> list[str]:
    """ruff's wording: ``[*]`` counts the repairs ``fix`` applies with these settings;
    unsafe ones it would not apply are hidden fixes."""
    fixable = sum(1 for _, f in run.findings if f.fixable)
    hidden = sum(1 for _, f in run.findings if f.applicability is Applicability.UNSAFE and not f.fixable)
    note = ""
    if hidden:
        what = "1 hidden fix can" if hidden == 1 else f"{hidden} hidden fixes can"
        note = f"{what} be enabled with the `--unsafe-fixes` option"
    if fixable:
        command = "transcript-doctor fix --unsafe-fixes" if run.unsafe_fixes else "transcript-doctor fix"
        return [f"[*] {fixable} fixable with `{command}`" + (f" ({note})." if note else ".")]
    return [f"No fixes available ({note})."] if note else []


def fix_note(located: Located) -> str | None:
    """``--show-fixes``: what ``fix`` would do for one finding, and its class."""
    rule = located.finding.rule
    if located.blocked is not None:
        return f"no fix: {located.blocked}"
    if located.applicability is None or rule.fix is None:
        return None
    safety = located.finding.safety
    if located.fixable:
        klass = f"{safety.applicability.value} fix"
    else:
        klass = "unsafe fix, applied only with --unsafe-fixes"
    where = ""
    if located.fix_lines is not None:
        first, last = located.fix_lines
        where = f"; changes line {first}" if first == last else f"; changes lines {first}-{last}"
    return f"{klass}: {rule.fix}{where} ({safety.reason})"


def _files(count: int, noun: str = "file") -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def skipped_lines(count: int) -> list[str]:
    if count == 1:
        return ["Skipped 1 file that is not a transcript."]
    return [f"Skipped {count} files that are not transcripts."] if count else []


def vendor_notes(folders: tuple[str, ...]) -> list[str]:
    """Hidden folders are skipped, and every vendor keeps its sessions in one: name them."""
    from transcript_doctor.walk import VENDOR_FOLDERS

    return [
        f"Skipped the hidden folder {folder} ({VENDOR_FOLDERS[os.path.basename(folder)]} sessions): "
        "name it, or pass --hidden."
        for folder in folders
    ]


def record(report: FileReport, located: Located) -> dict[str, object]:
    """The machine form of one finding, field for field as cli.md specifies."""
    finding = located.finding
    return {
        "path": report.path,
        "reader": report.reader,
        "rule": finding.rule.code,
        "name": finding.rule.name,
        "severity": finding.rule.severity.value,
        "message": finding.message,
        "line": located.origin.line,
        "record": located.origin.record,
        "pointer": located.origin.pointer,
        "fixable": located.fixable,
        "fix_applicability": located.applicability.value if located.applicability else None,
    }


def ordered(run: Run) -> list[tuple[FileReport, Located]]:
    """Findings sorted by path, then position (reports are already sorted inside)."""
    return sorted(run.findings, key=lambda pair: (pair[0].path, pair[1].origin.line))


def statistics(run: Run, out: TextIO, output: str) -> None:
    """``--statistics``: findings counted per rule, most frequent first (ruff's layout)."""
    import orjson

    count: Counter[str] = Counter()
    fixable: dict[str, bool] = {}
    rules: dict[str, Rule] = {}
    for _, located in run.findings:
        rule = located.finding.rule
        rules[rule.code] = rule
        count[rule.code] += 1
        fixable[rule.code] = fixable.get(rule.code, True) and located.fixable
    order = sorted(count, key=lambda code: (-count[code], code))
    if output in ("json", "jsonl", "sarif"):
        data = [{"code": c, "name": rules[c].name, "count": count[c], "fixable": fixable[c]} for c in order]
        out.write(dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    for code in order:
        mark = "[*] " if fixable[code] else ""
        out.write(f"{count[code]}\t{code}\t{mark}{printable(rules[code].name)}\n")
