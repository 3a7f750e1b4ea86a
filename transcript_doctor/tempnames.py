"""The names ``fix`` gives its own files beside a transcript, and how the walk knows them.

A repair is written to ``.NAME.XXXXXXXX.tmp`` beside ``NAME`` and renamed over it; for the
moment of the rename the original keeps a second name, ``.NAME.XXXXXXXX.old``, so that
it can be put back whole.  A ``fix`` killed outright (SIGKILL, power loss) can leave
either behind: they are never transcripts of their own, so folders are walked without
them.  ``NAME`` is shortened when the whole name would pass the file system's limit
(255 bytes on most), so that a file named near the limit can still be repaired.
"""

from __future__ import annotations

import os
import re

KINDS = ("tmp", "old")
# mkstemp's alphabet: the names written before this module existed match too.
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
_PATTERN = re.compile(r"\..+\.[a-z0-9_]{8}\.(?:tmp|old)", re.DOTALL)
_RANDOM = 8


def make(name: str, kind: str, limit: int = 255) -> str:
    """A fresh name for a ``kind`` file beside ``name``, within ``limit`` bytes."""
    assert kind in KINDS
    raw = os.fsencode(name)
    room = limit - len(b"..." + kind.encode()) - _RANDOM
    import secrets  # (and with it OpenSSL) for writers only: the walk reads is_temp

    token = "".join(secrets.choice(_ALPHABET) for _ in range(_RANDOM))
    return "." + os.fsdecode(raw[:room]) + "." + token + "." + kind


def name_limit(folder_fd: int) -> int:
    """The longest file name the folder's file system takes, in bytes."""
    try:
        return os.fpathconf(folder_fd, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def is_temp(name: str) -> bool:
    """Whether a file name is one ``fix`` writes beside a transcript and removes again."""
    return name.startswith(".") and _PATTERN.fullmatch(name) is not None  # most names: one test
