"""``linting._read``: every byte of a file, whatever its size or kind, in the fewest calls."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import fed_pipe

from transcript_doctor import linting

SMALL = linting._SMALL


@pytest.mark.parametrize("size", [0, 1, SMALL - 1, SMALL, SMALL + 1, 3 * SMALL + 7])
def test_a_file_is_read_whole(tmp_path: Path, size: int) -> None:
    data = bytes(i % 251 for i in range(size))
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    assert linting._read(str(path)) == data


def test_a_small_file_costs_no_fstat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    opened: list[int] = []
    real_open, real_fstat = os.open, os.fstat

    def open_(name: str, flags: int) -> int:
        opened.append(real_open(name, flags))
        return opened[-1]

    def fstat(fd: int) -> os.stat_result:
        assert fd not in opened, "fstat of a small file"  # (pytest's capture asks of its own)
        return real_fstat(fd)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "fstat", fstat)
    assert linting._read(str(path)) == b'{"a": 1}\n'
    assert len(opened) == 1


def test_a_large_file_is_read_in_one_read_of_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"x" * (2 * SMALL + 3)
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    sizes: list[int] = []
    real = os.read

    def read(fd: int, n: int) -> bytes:
        sizes.append(n)
        return real(fd, n)

    monkeypatch.setattr(os, "read", read)
    assert linting._read(str(path)) == data
    assert sizes == [SMALL, len(data) + 1]  # the first chunk, then all of it from the start


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_pipe_is_read_to_its_end(tmp_path: Path) -> None:
    """A pipe cannot seek and returns what it holds at each read: short reads and a first
    read of a whole chunk are both followed to the writer's end."""
    data = bytes(i % 251 for i in range(3 * SMALL + 5))
    with fed_pipe(tmp_path / "pipe.jsonl", data) as pipe:
        assert linting._read(str(pipe)) == data
