"""The shape ARCHITECTURE.md promises: layers, rooms, and rules that own their facts."""

from __future__ import annotations

import subprocess
import sys

import grimp
from support import FIXTURES, ROOT

from transcript_doctor import checks, readers

LINT = "lint_imports(config_filename='pyproject.toml', no_cache=True)"


def test_imports_follow_the_layers_and_form_no_cycle() -> None:
    """The import-linter contracts in pyproject.toml: no upward import, no cycle."""
    run = subprocess.run(
        [sys.executable, "-c", f"import sys; from importlinter.cli import lint_imports; sys.exit({LINT})"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 kept, 0 broken" in run.stdout


def test_vendor_rooms_do_not_import_each_other() -> None:
    graph = grimp.build_graph("transcript_doctor", exclude_type_checking_imports=True)
    rooms = sorted(m for m in graph.find_children("transcript_doctor.readers") if graph.find_children(m))
    assert len(rooms) == len(readers.names())
    for room in rooms:
        others = [other for other in rooms if other != room]
        for other in others:
            assert not graph.chain_exists(room, other, as_packages=True), (room, other)


def test_linting_a_clean_file_loads_no_repair_code() -> None:
    code = (
        "import sys, transcript_doctor as td\n"
        f"assert td.lint_path({str(FIXTURES / 'claude-code' / 'clean-rewound-branch.jsonl')!r}) == []\n"
        "print(sorted(m for m in sys.modules if m.startswith('transcript_doctor.readers') "
        "and m.rsplit('.', 1)[-1] in ('repair', 'plan')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stdout, run.stderr) == (0, "[]\n", "")


def test_fix_order_comes_from_the_rules() -> None:
    """Whole records, then whole turns, then pairing, then content: each fixable rule says
    its phase, and nothing else orders the repairs."""
    for rule in checks.rules():
        assert (rule.fix is None) == (rule.phase is None), rule.code
    assert checks.fix_order() == (
        "TD001", "TD404", "TD403",
        "TD101", "TD201", "TD202", "TD103",
        "TD303", "TD302", "TD304", "TD301",
        "TD102", "TD401", "TD405",
    )  # fmt: skip


def test_every_reader_repair_is_found_by_name() -> None:
    """A layout's repair module sits beside its reader and defines what it repairs."""
    for reader in readers.all_readers():
        repair = reader.repair
        assert type(repair).__module__ == type(reader).__module__.rpartition(".")[0] + ".repair", reader.name
