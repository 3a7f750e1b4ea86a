"""``json``: one array of finding objects (the machine contract of cli.md)."""

from __future__ import annotations

from typing import TextIO

import orjson

from transcript_doctor.reporters import Run, ordered, record
from transcript_doctor.safetext import dumps


def report(run: Run, out: TextIO) -> None:
    data = [record(file, located) for file, located in ordered(run)]
    out.write(dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
