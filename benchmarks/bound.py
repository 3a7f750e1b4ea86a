"""How close to the parse floor a linter written in Python can get, on the benchmark's files.

    python benchmarks/bound.py [--megabytes 200] [--runs 5] [--work benchmarks/out]

Issue #7 asks one lint job to take at most 2.0x the parse floor and less than ``jq empty``.
For the two kinds of clean file where lint is furthest from the floor (fine-tuning JSONL,
one short conversation per line; Claude Code, one content block per line) this times, in
process and on the same bytes, read beforehand: the floor (``orjson.loads`` per record);
the least Python that could tell such a file clean from damaged (read the roles, block
types, call ids and parent links, search each assistant text for catalog mentions, walk
the uuid chain from the last line, pair calls with results: no model, no origins, no
rule selection, no rewinds, sidechains or compaction); ``lint_bytes``; and ``jq empty``
(which reads the files itself).  What the least Python costs over the floor, no rewrite
of the readers in Python can save.  Medians of ``--runs``, each measure doing its work
five times, the measures taking turns.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import orjson

from transcript_doctor import catalog, engine
from transcript_doctor.checks import Selection

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate  # noqa: E402
from run import command, median_times, parse  # noqa: E402

Search = Callable[[str], object]
REPEAT = 5


def floor(datas: list[bytes]) -> None:
    for data in datas:
        parse(data.split(b"\n"))


def least_plain(datas: list[bytes], search: Search) -> None:
    """Fine-tuning lines: pair each line's calls and results, search the replies."""
    loads, error = orjson.loads, orjson.JSONDecodeError
    for data in datas:
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                record = loads(line)
            except error:
                continue
            waiting: set[object] = set()
            for message in record.get("messages", ()):
                content = message.get("content")
                if message.get("role") == "assistant":
                    if isinstance(content, str):
                        search(content)
                    for call in message.get("tool_calls") or ():
                        waiting.add(call.get("id"))
                elif message.get("role") == "tool":
                    waiting.discard(message.get("tool_call_id"))
                if isinstance(content, list):
                    for block in content:
                        kind = block.get("type")
                        if kind == "text":
                            search(block.get("text"))
                        elif kind == "tool_use":
                            waiting.add(block.get("id"))
                        elif kind == "tool_result":
                            waiting.discard(block.get("tool_use_id"))


def least_claude_code(datas: list[bytes], search: Search) -> None:
    """Claude Code lines: one tuple per entry, the chain from the last one, calls paired."""
    loads, error = orjson.loads, orjson.JSONDecodeError
    for data in datas:
        entries: dict[str, tuple[object, tuple[tuple[object, object, object], ...]]] = {}
        leaf = None
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                record = loads(line)
            except error:
                continue
            uuid = record.get("uuid")
            if not isinstance(uuid, str):
                continue
            message = record.get("message")
            blocks: tuple[tuple[object, object, object], ...] = ()
            if isinstance(message, dict):
                content = message.get("content")
                if isinstance(content, list):
                    blocks = tuple(
                        (b.get("type"), b.get("id") or b.get("tool_use_id"), b.get("text")) for b in content
                    )
                else:
                    blocks = (("text", None, content),)
            entries[uuid] = (record.get("parentUuid"), blocks)
            leaf = uuid
        chain = []
        seen: set[object] = set()
        while isinstance(leaf, str) and leaf in entries and leaf not in seen:
            seen.add(leaf)
            parent, blocks = entries[leaf]
            chain.append(blocks)
            leaf = parent if isinstance(parent, str) else None
        waiting: set[object] = set()
        for blocks in reversed(chain):
            for kind, call_id, text in blocks:
                if kind == "text" and isinstance(text, str):
                    search(text)
                elif kind == "tool_use":
                    waiting.add(call_id)
                elif kind == "tool_result":
                    waiting.discard(call_id)


def _repeated(action: Callable[[], object]) -> Callable[[], object]:
    """The action done REPEAT times: on a shared machine a measure of a few tens of
    milliseconds drifts by half."""

    def run() -> object:
        for _ in range(REPEAT):
            action()
        return None

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=HERE / "out")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    gc.disable()  # as lint_bytes does: the collector would walk what the passes keep
    corpus = args.work / f"corpus-{args.megabytes}mb-seed{args.seed}"
    if not corpus.is_dir():
        print(f"generating {args.megabytes} MB corpus in {corpus} ...", flush=True)
        generate(corpus, args.megabytes, args.seed)
    loaded = catalog.load()
    search = loaded.mention_search() or (lambda text: None)
    options = engine.Options(Selection.build(["ALL"]), loaded)
    jq = shutil.which("jq")
    print(
        f"{'clean files':24s} {'MB':>6s}  {'floor':>7s}  {'least Python':>16s}  {'lint':>16s}  {'jq empty':>16s}"
    )
    for name, pattern, least in (
        ("fine-tuning JSONL", "*fine-tuning*", least_plain),
        ("Claude Code", "*claude-code*", least_claude_code),
    ):
        files = sorted((corpus / "clean").glob(pattern))
        datas = [path.read_bytes() for path in files]

        def lint(files: list[Path] = files, datas: list[bytes] = datas) -> None:
            for path, data in zip(files, datas, strict=True):
                engine.lint_bytes(str(path), data, options)

        actions: list[Callable[[], object]] = [partial(floor, datas), partial(least, datas, search), lint]
        if jq:
            actions.append(command([jq, "empty", *map(str, files)]))
        parsed, *times = (t / REPEAT for t in median_times([_repeated(a) for a in actions], args.runs))
        cells = "".join(f"  {t:6.3f} s ({t / parsed:4.2f}x)" for t in times)
        print(f"{name:24s} {sum(map(len, datas)) / 2**20:6.1f}  {parsed:5.3f} s{cells}")


if __name__ == "__main__":
    main()
