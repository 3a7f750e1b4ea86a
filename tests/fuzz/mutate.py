"""Seeded damage for real transcripts: what crashes, disks and bugs do to files."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

Mutation = Callable[[bytes, random.Random, bytes], bytes]


def flip(data: bytes, rng: random.Random, _other: bytes) -> bytes:
    if not data:
        return data
    pos = rng.randrange(len(data))
    return data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1 :]


def truncate(data: bytes, rng: random.Random, _other: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def drop_line(data: bytes, rng: random.Random, _other: bytes) -> bytes:
    lines = _lines(data)
    if lines:
        del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def duplicate_line(data: bytes, rng: random.Random, _other: bytes) -> bytes:
    lines = _lines(data)
    if lines:
        pos = rng.randrange(len(lines))
        lines.insert(pos, lines[pos])
    return b"".join(lines)


def swap_lines(data: bytes, rng: random.Random, _other: bytes) -> bytes:
    lines = _lines(data)
    if len(lines) > 1:
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
    return b"".join(lines)


def splice(data: bytes, rng: random.Random, other: bytes) -> bytes:
    """A piece of another transcript written into this one (interleaved writers)."""
    if not other:
        return data
    start = rng.randrange(len(other))
    piece = other[start : start + rng.randrange(1, 2000)]
    pos = rng.randrange(len(data) + 1)
    return data[:pos] + piece + data[pos:]


def nul_run(data: bytes, rng: random.Random, _other: bytes) -> bytes:
    """The ext4 crash pattern: a block of the file reads back as zeros."""
    pos = rng.randrange(len(data) + 1)
    size = rng.randrange(1, 4096)
    return data[:pos] + b"\0" * size + data[pos + size :]


def torn_tail(data: bytes, rng: random.Random, _other: bytes) -> bytes:
    """A process killed mid-write: the last record is cut short."""
    lines = _lines(data)
    if not lines:
        return data
    last = lines[-1]
    lines[-1] = last[: rng.randrange(len(last) + 1)]
    return b"".join(lines)


def crlf(data: bytes, _rng: random.Random, _other: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def value_swap(data: bytes, rng: random.Random, _other: bytes) -> bytes:
    """A field of the right layout with the wrong type (a bug in a writer)."""
    replacements = [b'"x"', b"null", b"[]", b"{}", b"0", b"18446744073709551617", b'"\\ud800"', b"true"]
    marks = [i for i in range(len(data)) if data[i : i + 2] == b'":']
    if not marks:
        return data
    pos = rng.choice(marks) + 2
    end = pos
    while end < len(data) and data[end] in b" ":
        end += 1
    depth = 0
    in_string = False
    while end < len(data):
        byte = data[end]
        if in_string:
            if byte == 0x5C:
                end += 1
            elif byte == 0x22:
                in_string = False
                if depth == 0:
                    end += 1
                    break
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
        elif byte in b"]}":
            if depth == 0:
                break
            depth -= 1
            if depth == 0:
                end += 1
                break
        elif byte in b",\n" and depth == 0:
            break
        end += 1
    return data[:pos] + rng.choice(replacements) + data[end:]


def raw_newline(data: bytes, rng: random.Random, _other: bytes, with_crlf: bool = True) -> bytes:
    """A writer that put raw line breaks into a string (github/copilot-cli#2649): one to
    three ``\\n`` escapes (a backslash run of odd length before the ``n``) written raw,
    ``\\r\\n`` now and then (unless not ``with_crlf``).  Not in MUTATIONS (that would reshuffle every seeded case):
    tests/fuzz/test_fuzz.py runs it on its own."""
    found = [m.end() - 2 for m in re.finditer(rb"\\+n", data) if (m.end() - m.start() - 1) % 2]
    if not found:
        return data
    chosen = sorted(rng.sample(found, min(len(found), rng.randint(1, 3))), reverse=True)
    for pos in chosen:
        data = data[:pos] + rng.choice((b"\n", b"\n", b"\r\n" if with_crlf else b"\n")) + data[pos + 2 :]
    return data


MUTATIONS: tuple[Mutation, ...] = (
    flip, truncate, drop_line, duplicate_line, swap_lines, splice, nul_run, torn_tail, crlf, value_swap,
)  # fmt: skip


def damage(data: bytes, seed: int, other: bytes, rounds: int = 2) -> tuple[bytes, list[str]]:
    rng = random.Random(seed)
    applied = []
    for _ in range(rng.randint(1, rounds)):
        mutation = rng.choice(MUTATIONS)
        data = mutation(data, rng, other)
        applied.append(mutation.__name__)
    return data, applied
