"""Rewrite the documentation that is derived from the rule registry.

A rule's facts live in its ``Rule`` (``transcript_doctor/checks/<rule>.py``); the README's
rules table and the first lines of each ``rules/docs/CODE.md`` (title, severity, fix) are
written from them, as ruff writes its rule docs from the rule definitions.  Run it after
adding or changing a rule; ``tests/test_docs.py`` fails when a file differs from what it
would write, and ``--check`` says which.

    python scripts/sync_docs.py          # rewrite the derived parts
    python scripts/sync_docs.py --check  # exit 1 and name the files that drifted
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the checkout's package, also in a copy of the repository
    sys.path.insert(0, str(ROOT))

from transcript_doctor import checks, docs  # noqa: E402
from transcript_doctor.model import Rule  # noqa: E402

BEGIN = "<!-- rules table: written by scripts/sync_docs.py from each Rule; edit the Rule, then run it -->"
END = "<!-- end of rules table -->"


def table(rules: Iterable[Rule]) -> str:
    """The README's rules table: one row per rule, in code order."""
    rows = ["| code | name | severity | fix | fix safety |", "|---|---|---|---|---|"]
    for rule in rules:
        safety = rule.applicability_when or "/".join(a.value for a in rule.applicability) or "—"
        cells = [rule.code, rule.name, rule.severity.value, rule.fix or "—", safety]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def readme(text: str, rules: Iterable[Rule]) -> str:
    """``text`` with the part between the markers replaced by the table."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md: the rules table markers are missing ({BEGIN!r} ... {END!r})")
    return text[: start + len(BEGIN)] + "\n" + table(rules) + text[end:]


def rule_doc(text: str, rule: Rule) -> str:
    """``text`` with its header (title and ``Severity: … · Fix: …`` line) derived from ``rule``;
    everything after the ``Severity:`` line is the doc's own."""
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines[:6]):
        if line.startswith("Severity:"):
            return docs.header(rule) + "".join(lines[index + 1 :])
    return docs.header(rule) + "\n" + text


def derived(root: Path = ROOT) -> dict[Path, str]:
    """Every file with a derived part, and its whole text as this script writes it."""
    rules = checks.rules()
    out = {root / "README.md": readme((root / "README.md").read_text(encoding="utf-8"), rules)}
    for rule in rules:
        path = root / "rules" / "docs" / f"{rule.code}.md"
        if path.is_file():  # a missing doc is a failure of tests/test_docs.py, not written here
            out[path] = rule_doc(path.read_text(encoding="utf-8"), rule)
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    drifted = {path: text for path, text in derived().items() if path.read_text(encoding="utf-8") != text}
    for path, text in drifted.items():
        if check:
            print(f"{path.relative_to(ROOT)}: differs from the rule registry", file=sys.stderr)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}")
    return 1 if check and drifted else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
