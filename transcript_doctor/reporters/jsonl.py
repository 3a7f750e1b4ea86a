"""``jsonl``: the ``json`` objects, one per line."""

from __future__ import annotations

from typing import TextIO

from transcript_doctor.reporters import Run, ordered, record
from transcript_doctor.safetext import dumps


def report(run: Run, out: TextIO) -> None:
    for file, located in ordered(run):
        out.write(dumps(record(file, located)).decode() + "\n")
