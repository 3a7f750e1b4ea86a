"""Time a lint of a session whose last line is a very long torn or glued record.

    python benchmarks/torn.py [--megabytes 20] [--runs 3]

Issue #16 D13: the search for a whole record glued after a torn stub parsed the rest of
the line from every ``{"`` in it, so a 1 MB torn line took 5.7 s and a 2 MB one 21 s.
Three 20 MB final lines, made of many small objects (every one a ``{"`` candidate), after
a real Claude Code session:

- ``torn``: cut in the middle of a string (the usual crash);
- ``torn-inner``: cut right after an inner object's ``}``;
- ``glued``: a torn stub followed by a whole 20 MB record on the same line.

Each is linted in-process (``engine.lint_bytes``, the median of ``--runs``) and compared
with the parse floor: ``orjson.loads`` of a 20 MB record of the same shape.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from transcript_doctor import catalog, engine
from transcript_doctor.checks import Selection

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "fixtures" / "claude-code" / "codemie-incremental-simple-turn-1.jsonl"


def big_record(size: int) -> bytes:
    """A user record whose content is many small tool results, about ``size`` bytes."""
    block = (
        b'{"type":"tool_result","tool_use_id":"toolu_01AbCdEfGhIjKlMnOpQrStUv",'
        b'"content":[{"type":"text","text":"line of output {\\"k\\": 1} and more text"}]},'
    )
    head = b'{"parentUuid":"p","type":"user","uuid":"u","message":{"role":"user","content":['
    body = block * max(1, (size - len(head)) // len(block))
    return head + body.rstrip(b",") + b"]}}"


def cases(size: int) -> dict[str, bytes]:
    session = SESSION.read_bytes()
    record = big_record(size)
    inner = record.rfind(b"}]}", 0, len(record) - 3) + 3  # just after a whole tool result
    return {
        "torn": session + record[: len(record) // 2 + 7],
        "torn-inner": session + record[:inner],
        "glued": session + b'{"type":"pr-link","prNu' + record + b"\n",
    }


def median(action: Callable[[], object], runs: int) -> float:
    spent = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=float, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    size = int(args.megabytes * 1_000_000)
    options = engine.Options(Selection.build(["ALL"]), catalog.load())
    record = big_record(size)
    floor = median(lambda: orjson.loads(record), args.runs)
    print(f"parse floor (orjson.loads of a {len(record) / 1e6:.1f} MB record): {floor * 1000:.0f} ms")
    for name, data in cases(size).items():
        report = engine.lint_bytes("s.jsonl", data, options)
        codes = [(f.finding.rule.code, f.finding.action is not None) for f in report.findings]
        spent = median(lambda data=data: engine.lint_bytes("s.jsonl", data, options), args.runs)
        print(
            f"{name:<11} {len(data) / 1e6:6.1f} MB  lint {spent * 1000:7.0f} ms  ({spent / floor:5.1f}x floor)  {codes}"
        )


if __name__ == "__main__":
    main()
