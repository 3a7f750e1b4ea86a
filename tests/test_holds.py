"""The engine skips a check only where it finds nothing (``analysis/holds.py``).

Every check runs over the fully built transcript of every fixture and every file of the
shared corpus (and of their torn variants, which a reader builds differently), and one
that ``checks.applicable`` leaves out for that file's bits must find nothing there; the
engine's findings with the skip must be those of every selected check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES, SHARED, _catalog, corpus_id, json_files

from transcript_doctor import checks, engine
from transcript_doctor.analysis import holds
from transcript_doctor.checks import Selection
from transcript_doctor.checks.context import Context
from transcript_doctor.model import Conversation, Dialect, Message, Origin, Part, PartKind, Role, Screening
from transcript_doctor.reporters import record

FILES = [*json_files(FIXTURES), *json_files(SHARED)]
_id = corpus_id


def _variants(data: bytes) -> list[bytes]:
    """The file, and the file cut inside its last line (a torn tail: TD001 beside the rest)."""
    body = data.rstrip()
    return [data, body[: max(1, len(body) - 7)]] if body else [data]


def _all(screen: bool) -> engine.Options:
    return engine.Options(Selection.build(("ALL",)), _catalog(), screen=screen)


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_a_skipped_check_finds_nothing(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for data in _variants(path.read_bytes()):
        for screen in (False, True):
            options = _all(screen)
            report, transcript = engine.inspect(path.name, data, options)
            if transcript is not None and transcript.conversations:
                ctx = Context(transcript, options.catalog)
                held = holds.held(transcript.conversations)
                run = {rule.code for rule, _ in checks.applicable(options.selection, held)}
                for rule, check in checks.selected(options.selection, True):
                    if rule.code not in run:
                        assert list(check(ctx)) == [], (rule.code, held)
            # The engine's findings with the skip are those of every selected check.
            with monkeypatch.context() as patched:
                patched.setattr(checks, "applicable", lambda selection, _: checks.selected(selection, True))
                full = engine.lint_bytes(path.name, data, options)
            assert [record(report, f) for f in report.findings] == [record(full, f) for f in full.findings]


def test_every_check_of_a_conversation_declares_what_it_needs() -> None:
    """A check of conversations without ``NEEDS`` runs on every damaged file (correct,
    slower): each one states it, but TD001 (the source's parse errors, run always) and a
    new rule not yet wired into the screen (``Screening.NONE``, as scripts/new_rule.py
    makes it)."""
    always = {
        entry.rule.code
        for entry in checks.registry()
        if entry.check is not None and not entry.needs and entry.rule.screen is not Screening.NONE
    }
    assert always == {"TD001"}


def _part(kind: PartKind, **fields: object) -> Part:
    return Part(kind, Origin(1, 0), **fields)  # type: ignore[arg-type]


def test_the_bits_are_those_of_what_the_conversations_hold() -> None:
    signed_call = _part(PartKind.TOOL_CALL, call_id="a", needs_signature=True, signature="s")
    unsigned_thinking = _part(PartKind.THINKING, needs_signature=True, signature="")
    messages = [
        Message(Role.USER, [_part(PartKind.TEXT, text="hi")], Origin(1, 0), dup_key=("u", 1)),
        Message(Role.ASSISTANT, [unsigned_thinking, signed_call], Origin(2, 1)),
        Message(Role.USER, [_part(PartKind.TOOL_RESULT, call_id="a")], Origin(3, 2)),
    ]
    plain = Conversation(messages)
    assert holds.held([plain]) == (
        holds.PREFILL
        | holds.DUPLICABLE
        | holds.ASSISTANT
        | holds.UNSIGNED_THINKING
        | holds.CALL
        | holds.RESULT
    )
    unsigned_call = _part(PartKind.TOOL_CALL, call_id="b", needs_signature=True)
    gemini = Conversation(
        [Message(Role.ASSISTANT, [unsigned_call], Origin(1, 0))],
        Dialect(fuses_tool_response=True, final_text_is_prefill=False, replays_arguments_text=True),
    )
    assert (
        holds.held([gemini])
        == holds.FUSES | holds.ARGUMENTS | holds.ASSISTANT | holds.CALL | holds.UNSIGNED_CALL
    )
    assert holds.held([]) == 0
    assert holds.held([Conversation([], Dialect(final_text_is_prefill=False))]) == 0
