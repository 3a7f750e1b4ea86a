"""Write the skeleton of a new rule (as ruff's ``scripts/add_rule.py`` does).

    python scripts/new_rule.py TD406 orphan-thinking-block [--severity error|warning|info]

writes ``transcript_doctor/checks/<module>.py`` (``RULE`` and a ``check`` that finds
nothing yet), its line in ``transcript_doctor/checks/__init__.py`` ``_MODULES`` and
``rules/docs/CODE.md`` from a template, then runs ``scripts/sync_docs.py``, which writes
the doc's header and the README's rules table from the new ``Rule``.  A detection-only
rule touches nothing else; CONTRIBUTING.md says what to fill in, and what a fixable rule
adds (an action, a phase, the repairs of the layouts that can make it).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
CHECKS = ROOT / "transcript_doctor" / "checks"
SEVERITIES = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}

CHECK = '''\
"""{code} {name}: TODO what it detects, in one line."""

from __future__ import annotations

from collections.abc import Iterator

from transcript_doctor.checks.context import Context
from transcript_doctor.model import Finding, Rule, Screening, Severity

RULE = Rule(
    "{code}",
    "{name}",
    Severity.{severity},
    "TODO one sentence: what the rule finds (the `rules` table and the README).",
    # How the clean-file screen (analysis/screen.py) answers for this rule.  NONE: it does
    # not yet, so while the rule is selected every conversation is built (correct, slower).
    # Once it does: ASKED (the screen asks the rule's question of the parsed values; add
    # it there), EXCLUDED (readers screen no conversation with the feature the rule reads)
    # or FILE (about the file, never a conversation); tests/test_screen.py lists those.
    screen=Screening.NONE,
)
# Once wired: the bits of analysis/holds.py without all of which it finds nothing (the
# engine then skips it on a file that lacks one; tests/test_holds.py checks it), e.g.
# NEEDS = holds.ASSISTANT


def check(ctx: Context) -> Iterator[Finding]:
    """TODO yield ``Finding(RULE, element.origin, message)`` for each offending element of
    ``ctx.conversations`` (model.py says what readers put there)."""
    yield from ()
'''

DOC = """\
## What it detects
TODO what the rule flags, exactly, and what it deliberately does not flag (the look-alikes
that are healthy).

## Why it breaks a session
TODO what the vendor or the provider does with such a history on resume or retry.

## Provider errors
- TODO the exact error text each provider returns (or: none, the model misbehaves).

## Applies to
TODO the readers whose layouts can hold it.

## Example
TODO a bad and a good transcript, as fenced blocks marked `bad NAME` and `good NAME`
(CONTRIBUTING.md): tests/test_rule_examples.py lints them.

## Fix
Not fixable: TODO why no repair can be made without guessing.

## See also
- TODO related rules, the vendors' issues.
"""


def register(text: str, module: str) -> str:
    """``checks/__init__.py`` with ``module``'s line last in ``_MODULES`` (rules sort by code)."""
    start = text.index("_MODULES = (\n")
    end = text.index("\n)\n", start)
    if f'    "{module}",' in text[start:end].split("\n"):
        raise SystemExit(f"{module} is already in checks/__init__.py _MODULES")
    return text[:end] + f'\n    "{module}",' + text[end:]


def main(argv: list[str]) -> int:
    severity = "warning"
    if "--severity" in argv:
        at = argv.index("--severity")
        severity = argv[at + 1] if at + 1 < len(argv) else ""
        argv = argv[:at] + argv[at + 2 :]
    if len(argv) != 2 or severity not in SEVERITIES:
        print(__doc__, file=sys.stderr)
        return 2
    code, name = argv
    if not re.fullmatch(r"TD\d{3}", code):
        raise SystemExit(f"{code!r}: a rule code is TD and three digits (TD1: turns, TD2: placeholders, ...)")
    if not re.fullmatch(r"[a-z]+(-[a-z]+)*", name):
        raise SystemExit(f"{name!r}: a rule name is lower-case words joined by '-'")
    from transcript_doctor import checks

    taken = [r for r in checks.rules() if code in (r.code, r.name) or name in (r.code, r.name)]
    if taken:
        raise SystemExit(f"{taken[0].code} {taken[0].name} exists: nothing written")
    module = name.replace("-", "_")
    path, doc = CHECKS / f"{module}.py", ROOT / "rules" / "docs" / f"{code}.md"
    for existing in (path, doc):
        if existing.exists():
            raise SystemExit(f"{existing.relative_to(ROOT)} exists: nothing written")
    registry = CHECKS / "__init__.py"
    registered = register(registry.read_text(encoding="utf-8"), module)
    path.write_text(CHECK.format(code=code, name=name, severity=SEVERITIES[severity]), encoding="utf-8")
    doc.write_text(DOC, encoding="utf-8")
    registry.write_text(registered, encoding="utf-8")
    for written in (path, doc):
        print(f"wrote {written.relative_to(ROOT)}")
    print(f"registered {module} in {registry.relative_to(ROOT)}")
    # The doc's header and the README's table, from the new Rule (a fresh process: this one
    # holds the registry as it was).
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_docs.py")], check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
