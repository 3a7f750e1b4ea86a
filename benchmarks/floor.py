"""The parse floor of a set of files, as a command: start Python, import orjson, read each
file and ``orjson.loads`` each record (each line of a ``.jsonl``/``.ndjson`` file, or the
whole document), building nothing else.  No Python tool that reads every record can take
less; ``run.py`` times this command beside ``transcript-doctor lint`` on the same files, so
both ratios' sides pay the same process start.

    python benchmarks/floor.py FILE... | @LIST_FILE
"""

from __future__ import annotations

import sys

import orjson


def parse(records: list[bytes]) -> None:
    """``orjson.loads`` of each record and nothing else: a generator step or a context
    manager per record would cost a tenth to a fifth of the floor, and flatter every ratio."""
    loads, error = orjson.loads, orjson.JSONDecodeError
    for record in records:
        if record.strip():
            try:
                loads(record)
            except error:  # damaged files hold torn lines
                continue


def floor(paths: list[str]) -> None:
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        parse(data.split(b"\n") if path.endswith((".jsonl", ".ndjson")) else [data])


def main() -> None:
    args = sys.argv[1:]
    if len(args) == 1 and args[0].startswith("@"):
        with open(args[0][1:], encoding="utf-8") as listing:
            args = listing.read().splitlines()
    floor(args)


if __name__ == "__main__":
    main()
