"""Snapshots of what people read and tools parse, over every shipped fixture."""

from __future__ import annotations

from snapshots import Text
from support import SHIPPED, cli


def test_json_output(snapshot) -> None:
    result = cli("lint", "-o", "json", *SHIPPED)
    assert result.returncode == 1
    assert result.stderr == ""
    assert result.stdout == snapshot(extension_class=Text)


def test_concise_output(snapshot) -> None:
    result = cli("lint", "-o", "concise", *SHIPPED)
    assert result.returncode == 1
    assert result.stdout == snapshot(extension_class=Text)


def test_full_output(snapshot) -> None:
    result = cli("lint", "fixtures/openai-chat")
    assert result.returncode == 1
    assert result.stdout == snapshot(extension_class=Text)
