"""``jsonl``: the ``json`` objects, one per line."""

from __future__ import annotations

from typing import TextIO

import orjson

from transcript_doctor.reporters import Run, ordered, record


def report(run: Run, out: TextIO) -> None:
    for file, located in ordered(run):
        out.write(orjson.dumps(record(file, located)).decode() + "\n")
