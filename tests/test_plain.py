"""plain.py: slotted classes that behave as the dataclasses they replace (issue 19: a
dataclass compiles its methods at import, at every start of the tool).

What code relies on: value equality and hash of the frozen ones (refs and origins are
set members and dict keys), identity of the others (messages and parts are keys of
per-run maps), a readable repr, ``replace``, and pickling (worker processes send findings
back with their rules, origins and safety)."""

from __future__ import annotations

import copy
import pickle

import pytest

from transcript_doctor import plain
from transcript_doctor.actions import RemoveMessage
from transcript_doctor.model import (
    Applicability,
    BrokenLink,
    Conversation,
    Dialect,
    Message,
    Origin,
    Part,
    PartKind,
    Repeat,
    Role,
    Rule,
    Safety,
    Screening,
    Severity,
)
from transcript_doctor.readers.claude_code.refs import FileRef, LineRef
from transcript_doctor.readers.qwen_code.refs import ChainRef

RULE = Rule(
    "TD999", "some-rule", Severity.ERROR, "summary", "fix it", (Applicability.SAFE,), screen=Screening.ASKED
)
VALUES = [
    Origin(3, 2, "/message/content/0"),
    RULE,
    Safety(Applicability.UNSAFE, "may be real output"),
    Dialect(coalesce_roles=True),
    BrokenLink(Origin(1, 0), "uuid-1"),
    Repeat(frozenset({"call-1"}), "recorded twice"),
    LineRef(4, "u", None),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_frozen_ones_are_values(value: object) -> None:
    twin = copy.copy(value)
    assert twin is not value
    assert twin == value and hash(twin) == hash(value)
    assert len({value, twin}) == 1
    assert value != object() and value != (None,)
    assert pickle.loads(pickle.dumps(value)) == value


def test_equality_needs_the_same_class_and_every_field() -> None:
    assert Origin(1, 2) == Origin(1, 2, None)
    assert Origin(1, 2) != Origin(1, 2, "")
    assert Origin(1, 2) != LineRef(1, "2", None)
    assert plain.replace(RULE, rank=1) != RULE


def test_mutable_ones_compare_by_value_and_are_unhashable() -> None:
    ref = FileRef()
    assert ref == FileRef() and ref is not FileRef()
    ref.children["a"] = [1]
    assert ref != FileRef()
    with pytest.raises(TypeError):
        hash(ref)


def test_identity_ones_compare_by_identity() -> None:
    origin = Origin(1, 0)
    part = Part(PartKind.TEXT, origin, "hi")
    message = Message(Role.USER, [part], origin)
    assert part != Part(PartKind.TEXT, origin, "hi")
    assert {message: 1}[message] == 1
    assert RemoveMessage(message) != RemoveMessage(message)
    conversation = pickle.loads(pickle.dumps(Conversation([message], label="x")))
    assert conversation.label == "x" and conversation.messages[0].parts[0].text == "hi"


def test_defaults_are_fresh_per_instance() -> None:
    first, second = Conversation([]), Conversation([])
    first.memo["k"] = 1
    first.broken_links.append(BrokenLink(Origin(1, 0), "x"))
    assert (second.memo, second.broken_links, second.repeats) == ({}, [], [])


def test_repr_names_fields_in_the_order_of_the_constructor() -> None:
    assert repr(Origin(3, 2, "/a")) == "Origin(line=3, record=2, pointer='/a')"
    assert (
        repr(Safety(Applicability.SAFE, "x"))
        == "Safety(applicability=<Applicability.SAFE: 'safe'>, reason='x')"
    )
    # memo (what rules computed) is left out, as the dataclass's field(repr=False) did.
    assert "memo" not in repr(Conversation([]))


def test_a_field_left_out_of_comparisons() -> None:
    """qwen_code ChainRef's ``records`` was ``field(compare=False, repr=False)``."""
    one = ChainRef(("a", "b"), None, ((0, "a", None),))
    other = ChainRef(("a", "b"), None, ())
    assert one == other and hash(one) == hash(other)
    assert repr(one) == "ChainRef(uuids=('a', 'b'), compression=None)"


def test_replace_copies_with_changes() -> None:
    moved = plain.replace(Origin(3, 2, "/a"), pointer="/b")
    assert moved == Origin(3, 2, "/b")
    changed = plain.replace(RULE, fix=None)
    assert (changed.fix, changed.code, changed.screen) == (None, "TD999", Screening.ASKED)
    with pytest.raises(TypeError):
        plain.replace(Origin(1, 0), no_such_field=1)
