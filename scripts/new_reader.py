"""Write the skeleton of a new format reader (as ruff's ``scripts/add_rule.py`` does for rules).

    python scripts/new_reader.py copilot-cli

writes, for reader ``NAME`` (module ``NAME`` with ``-`` as ``_``):

- ``transcript_doctor/readers/<module>/__init__.py``, ``reader.py`` (a ``Reader`` that claims
  no file yet) and ``repair.py`` (a ``Repair`` that makes no repair yet);
- its entry in ``transcript_doctor/readers/__init__.py`` ``_MODULES``, before the generic
  API layouts (the order breaks ties between equal claims), shown every file (``ANY``);
- ``fixtures/<NAME>/README.md`` (the provenance of every fixture goes there);
- ``tests/expectations/<NAME>.json`` (``{}``: fill it with ``TD_UPDATE_EXPECTATIONS=1``);
- ``tests/readers/test_<module>.py`` (detection look-alikes and edge cases go there).

Nothing else changes: the new reader claims nothing until its ``detect`` is written, so every
other output stays as it was.  CONTRIBUTING.md says what to fill in and in which order.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READERS = ROOT / "transcript_doctor" / "readers"
# The generic API layouts, last in _MODULES: a vendor's reader goes before them.
GENERIC = ("anthropic_messages", "openai_chat")

INIT = """\
from transcript_doctor.readers.{module}.reader import READER

__all__ = ["READER"]
"""

READER = '''\
"""Reader ``{name}``: TODO one line: the vendor, the program and version, the files.

Spec: TODO where the layout was confirmed (the vendor's repository @ commit, file and
function that writes the records; or shared/spec/formats/{name}.md).  A detail that could
not be confirmed is marked where the code relies on it; a record shape this reader does
not know is skipped or reported as unknown, never read as damage.

``ref`` slots, for ``fix``: TODO what each Message's and Part's ``ref`` holds, so that
``repair.py`` finds the record again (refs.py holds their dataclasses if they need any).
"""

from __future__ import annotations

from transcript_doctor.model import Conversation, Dialect
from transcript_doctor.readers.base import Detection, Reader
from transcript_doctor.source import Source


class {cls}Reader(Reader):
    name = "{name}"
    summary = "TODO one line for `transcript-doctor formats`"
    # What the vendor does with the stored history before sending it (model.Dialect).
    dialect = Dialect()

    def detect(self, source: Source) -> Detection | None:
        """A claim only on the vendor's own envelope (score DEFINITIVE) or a generic shape
        plus a feature only this vendor writes (SPECIFIC): see readers/base.py."""
        return None  # claims no file yet

    def read(self, source: Source) -> list[Conversation]:
        """The conversations the vendor replays, each element with its Origin and ref."""
        raise NotImplementedError(f"the {{self.name}} reader cannot read files yet")


READER = {cls}Reader()
'''

REPAIR = '''\
"""{name} repairs: one method per action this layout can make (readers/base.py ``Repair``).

Each method edits only the records its action names, in the file's own style, and
returns the report's verb; it raises ``editing.EditError`` rather than guess.  An action
without a method here is refused, and lint does not mark its findings fixable; torn
JSONL lines (TD001) are repaired by the base class.
"""

from __future__ import annotations

from transcript_doctor.readers.base import Repair


class {cls}Repair(Repair):
    pass


REPAIR = {cls}Repair()
'''

FIXTURES_README = """\
# {name} fixtures

TODO: where these files come from. Corpus copies are byte-identical copies of
`shared/corpus/{name}/` files (give the source repository, commit, blob hash and program
version); own examples are written from the format spec (say which spec and which vendor
code they follow). One line per file below, with what it shows.

## Files

"""

TEST = '''\
"""Reader {name}: what tests/expectations/{name}.json cannot say (detection look-alikes,
edge cases, refs, messages).  The findings and fixed bytes of every fixture in
fixtures/{name}/ are pinned there, read by tests/test_expectations.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES, detected

from transcript_doctor import readers
from transcript_doctor.readers.{module} import READER

OTHERS = sorted(
    p
    for p in FIXTURES.glob("*/*")
    if p.suffix in (".json", ".jsonl") and p.parent.name not in ("{name}", "wild")
)


def test_is_registered() -> None:
    assert readers.by_name("{name}") is READER


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_claims_no_other_layout(path: Path) -> None:
    """Negative controls: another layout's fixture is never read as {name}."""
    assert detected(path) != "{name}"
'''


def names(name: str) -> tuple[str, str]:
    """The module and class-name stem of reader ``name`` (``copilot-cli``: ``copilot_cli``,
    ``CopilotCli``)."""
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        raise SystemExit(f"{name!r}: a reader name is lower-case words joined by '-' (e.g. copilot-cli)")
    return name.replace("-", "_"), "".join(word.capitalize() for word in name.split("-"))


def register(text: str, module: str) -> str:
    """``readers/__init__.py`` with ``module``'s entry in ``_MODULES``, before the generic
    layouts: ``ANY`` file of either container is shown to it until its entry says which
    files its ``detect`` could claim."""
    start = text.index("_MODULES = (\n")
    end = text.index("\n)\n", start)
    block = text[start:end]
    if re.search(rf'Registered\(\s*"{module}"', block):
        raise SystemExit(f"{module} is already in readers/__init__.py _MODULES")
    generic = re.search(rf'\n    Registered\(\s*"(?:{"|".join(GENERIC)})"', block)
    at = start + (generic.start() if generic else len(block))
    return text[:at] + f'\n    Registered("{module}", ANY, ANY),' + text[at:]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    name = argv[0]
    module, cls = names(name)
    package = READERS / module
    files = {
        package / "__init__.py": INIT,
        package / "reader.py": READER,
        package / "repair.py": REPAIR,
        ROOT / "fixtures" / name / "README.md": FIXTURES_README,
        ROOT / "tests" / "expectations" / f"{name}.json": "{{}}\n",
        ROOT / "tests" / "readers" / f"test_{module}.py": TEST,
    }
    # A fixture folder gathered before its reader (evidence) keeps its README and expectations.
    keep = (ROOT / "fixtures" / name / "README.md", ROOT / "tests" / "expectations" / f"{name}.json")
    kept = {path for path in keep if path.exists()}
    existing = [path for path in files if path.exists() and path not in kept]
    if existing or package.exists():
        raise SystemExit(f"{(existing or [package])[0].relative_to(ROOT)} exists: nothing written")
    registry = READERS / "__init__.py"
    registered = register(registry.read_text(encoding="utf-8"), module)
    for path, template in files.items():
        if path in kept:
            print(f"kept {path.relative_to(ROOT)}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(name=name, module=module, cls=cls), encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    registry.write_text(registered, encoding="utf-8")
    print(f"registered {module} in {registry.relative_to(ROOT)}")
    if any(p.name != "README.md" for p in (ROOT / "fixtures" / name).iterdir()):
        print(
            f"fixtures/{name}/ holds files: TD_UPDATE_EXPECTATIONS=1 pytest tests/test_expectations.py "
            f"-k {name} pins what the readers do with them now (read every finding and diff)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
