"""The rule registry: one module per rule, each with its ``RULE`` and ``check``.

A new rule is a new module listed here plus its doc in ``rules/docs/``; the engine never
changes for it.

What a clean file's lint must not load (actions, pairing) a check imports in its body as
``import transcript_doctor.actions as actions``: ``from transcript_doctor.actions import
X`` costs twice as much at every call (the import looks for the module's ``__path__``, an
AttributeError raised and dropped), and every check runs once per damaged file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cache
from importlib import import_module
from typing import Final

from transcript_doctor.checks.context import Context
from transcript_doctor.model import Finding, Rule, Screening
from transcript_doctor.plain import Value

_MODULES = (
    "unparseable_record",
    "unknown_layout",
    "abandoned_partial_turn",
    "trailing_whitespace_final_assistant",
    "empty_turn",
    "unreplied_tool_response",
    "placeholder_reply",
    "interruption_placeholder",
    "parroted_placeholder",
    "unanswered_tool_call",
    "orphan_tool_result",
    "duplicate_tool_result",
    "displaced_tool_result",
    "duplicate_tool_call_id",
    "pending_tool_call",
    "missing_thought_signature",
    "invalid_thinking_signature",
    "duplicated_user_turn",
    "broken_parent_chain",
    "malformed_tool_arguments",
)

Check = Callable[[Context], Iterator[Finding]]


class Registered:
    """A rule and its check.  (A plain class: a dataclass compiles its methods when its
    module is imported, at every start-up.)  ``needs``: the bits of ``analysis/holds.py``
    without all of which the check finds nothing (the module's ``NEEDS``; 0: always run)."""

    __slots__ = ("check", "needs", "rule")
    rule: Rule
    check: Check | None
    needs: int

    def __init__(self, rule: Rule, check: Check | None, needs: int = 0) -> None:
        self.rule, self.check, self.needs = rule, check, needs

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Registered) and (self.rule, self.check) == (other.rule, other.check)

    def __hash__(self) -> int:
        return hash((self.rule, self.check))

    def __repr__(self) -> str:
        return f"Registered(rule={self.rule!r}, check={self.check!r})"


@cache
def registry() -> tuple[Registered, ...]:
    entries = []
    for name in _MODULES:
        module = import_module(f"{__name__}.{name}")
        entries.append(Registered(module.RULE, module.check, getattr(module, "NEEDS", 0)))
    return tuple(sorted(entries, key=lambda e: e.rule.code))


@cache
def selected(selection: Selection, conversations: bool) -> tuple[tuple[Rule, Check], ...]:
    """The selected rules with a check, in code order: chosen once per run, not per file.

    A file with no conversation to check (every one proven clean) can only have findings
    about the file itself (``Screening.FILE``): the other checks read conversations."""
    return tuple(
        (entry.rule, entry.check)
        for entry in registry()
        if entry.check is not None
        and entry.rule in selection
        and (conversations or entry.rule.screen is Screening.FILE)
    )


@cache
def applicable(selection: Selection, held: int) -> tuple[tuple[Rule, Check], ...]:
    """``selected(selection, True)`` without the checks that find nothing in a file whose
    conversations hold only ``held`` (``analysis.holds.held``): chosen once per run and
    set of bits, not per file."""
    return tuple(
        (entry.rule, entry.check)
        for entry in registry()
        if entry.check is not None and entry.rule in selection and entry.needs & held == entry.needs
    )


@cache
def screenable(selection: Selection) -> bool:
    """Whether the clean-file screen answers for every selected rule (``Screening.NONE``:
    it does not, and conversations are built without it)."""
    return all(entry.rule.screen is not Screening.NONE for entry in registry() if entry.rule in selection)


def rules() -> tuple[Rule, ...]:
    return tuple(entry.rule for entry in registry())


@cache
def fix_order() -> tuple[str, ...]:
    """The fixable rules in the order ``fix`` applies them: by phase, then rank.

    Whole records are repaired and removed before results are paired, and content is
    trimmed last, so an earlier repair cannot undo a later one."""
    fixable = [rule for rule in rules() if rule.phase is not None]
    return tuple(rule.code for rule in sorted(fixable, key=lambda rule: (rule.phase, rule.rank)))


def find(key: str) -> Rule | None:
    """A rule by code or name (case-insensitive code)."""
    for rule in rules():
        if key.upper() == rule.code or key.lower() == rule.name:
            return rule
    return None


class SelectionError(ValueError):
    """An unknown selector; the message says it and the nearest valid one."""

    def __init__(self, key: str) -> None:
        self.key = key
        near = nearest(key)
        hint = f" (did you mean {near!r}?)" if near else " (`transcript-doctor rules` lists them)"
        super().__init__(f"unknown rule selector {key!r}{hint}")


def nearest(key: str) -> str | None:
    """The valid selector closest to a mistyped one: a code, a name or a code prefix."""
    import difflib

    every = rules()
    if key[:2].upper() == "TD":
        candidates = sorted({r.code for r in every} | {r.code[:3] for r in every})
        found = difflib.get_close_matches(key.upper(), candidates, n=1, cutoff=0.6)
        if not found and key[2:].isdigit() and len(key) == 5:  # TD999: the code nearest in number
            return min((r.code for r in every), key=lambda code: abs(int(code[2:]) - int(key[2:])))
    else:
        found = difflib.get_close_matches(key.lower(), [r.name for r in every], n=1, cutoff=0.6)
    return found[0] if found else None


class Selection(Value):
    """Which rules run, from ``--select``/``--extend-select``/``--ignore`` (ruff semantics)."""

    __slots__ = ("enabled",)
    enabled: Final[frozenset[str]]

    def __init__(self, enabled: frozenset[str]) -> None:
        self.enabled = enabled

    @classmethod
    def build(
        cls,
        select: Iterable[str] = ("ALL",),
        extend_select: Iterable[str] = (),
        ignore: Iterable[str] = (),
    ) -> Selection:
        chosen = _expand(select) | _expand(extend_select)
        return cls(frozenset(chosen - _expand(ignore)))

    def __contains__(self, rule: Rule) -> bool:
        return rule.code in self.enabled

    def without(self, selectors: Iterable[str]) -> Selection:
        return Selection(self.enabled - frozenset(_expand(selectors))) if selectors else self


def _expand(keys: Iterable[str]) -> set[str]:
    codes: set[str] = set()
    every = rules()
    for raw in keys:
        key = raw.strip()
        if not key:
            continue
        if key.upper() == "ALL":
            codes.update(r.code for r in every)
            continue
        matched = {r.code for r in every if r.code.startswith(key.upper()) or r.name == key.lower()}
        if not matched:
            raise SelectionError(key)
        codes |= matched
    return codes
