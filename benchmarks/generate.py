"""Build a deterministic benchmark corpus from the shipped fixtures.

Every fixture is a real record shape (corpus copies or spec examples).  A generated
session repeats a fixture's conversation with fresh ids per repetition, chained so that
parent links and call ids stay valid, so a clean fixture gives a clean large session and
a damaged one gives a large session with its damage repeated.  Sizes vary (seeded), up to
20 MB a file.

    python benchmarks/generate.py OUT_DIR --megabytes 200 [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# Ids that must be unique per repetition: values of every vendor's id and link fields.
ID = re.compile(
    rb'("(?:id|uuid|parentUuid|leafUuid|logicalParentUuid|tool_use_id|tool_call_id|call_id|toolCallId|callId|callID|'
    rb'sourceToolAssistantUUID|messageId|message_id|reasoning_message_id|parentId|firstKeptEntryId|\$rewindTo)"'
    rb'\s*:\s*")([^"{}]+)"'
)  # no braces in an id: a torn value glued to the next record is left as it is
PARENT_NULL = re.compile(rb'"(parentUuid|parentId)":\s*null')
UUID_FIELD = re.compile(rb'"uuid":\s*"([^"]+)"')
ENTRY_ID = re.compile(rb'^\{"type":"[^"]*","id":"([^"]+)"')  # Pi entries start type, id, parentId


def _renamed(chunk: bytes, k: int) -> bytes:
    return ID.sub(lambda m: m.group(1) + m.group(2) + b'-r%d"' % k, chunk) if k else chunk


def jsonl_session(template: bytes, target: int, tail: bytes = b"") -> bytes:
    """Repeat a JSONL session's records with fresh ids until ``target`` bytes, then add
    ``tail`` (a damaged session) once.

    Header-like lines (first line of Codex/Gemini/Pi files) are kept once; each repetition's
    root record is linked to the previous repetition's last record.
    """
    head, body = _split_head(template)
    out = list(head)
    size = sum(map(len, out))
    state: list[bytes | None] = [None]
    k = 0
    while size < target - len(tail):
        for line in body:
            new = _linked(_renamed(line, k), state)
            out.append(new)
            size += len(new)
        k += 1
    if tail:
        out.extend(_linked(_renamed(line, k), state) for line in _split_head(tail)[1])
    return b"".join(out)


def _split_head(template: bytes) -> tuple[list[bytes], list[bytes]]:
    lines = template.splitlines(keepends=True)
    if not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    first = lines[0]
    header = (
        b'"session_meta"' in first
        or b'"projectHash"' in first
        or b'"type":"session.start"' in first
        or first.startswith(b'{"type":"session",')
    )
    head = lines[:1] if header else []
    return head, lines[len(head) :]


def _linked(line: bytes, state: list[bytes | None]) -> bytes:
    """Point a repetition's root record at the previous record, and remember this one."""
    null = PARENT_NULL.search(line) if state[0] is not None else None
    if null is not None and state[0] is not None:
        line = PARENT_NULL.sub(b'"' + null.group(1) + b'":"' + state[0] + b'"', line, count=1)
    found = UUID_FIELD.search(line) or ENTRY_ID.search(line)
    if found:
        state[0] = found.group(1)
    return line


def json_document(template: bytes, target: int, tail: bytes = b"") -> bytes | None:
    """Repeat a single-document conversation's message list (same indentation style),
    then add the messages of ``tail`` (a damaged document) once."""
    value = _loads(template)
    items = _items(value)
    if not items:
        return None
    extra = _items(_loads(tail)) if tail else []
    indent = 2 if b"\n  " in template[:200] else None
    grown: list[object] = []
    k = 0
    one = max(len(template) // len(items), 1)
    while (len(grown) + len(extra or [])) * one < target:
        grown.extend(json.loads(_renamed(json.dumps(item).encode(), k)) for item in items)
        k += 1
    grown.extend(json.loads(_renamed(json.dumps(item).encode(), k)) for item in extra or [])
    key = next(
        (k for k in ("messages", "history") if isinstance(value, dict) and isinstance(value.get(k), list)),
        None,
    )
    if key:
        value[key] = grown
    else:
        value = grown
    text = json.dumps(
        value, indent=indent, ensure_ascii=False, separators=(",", ": ") if indent else (",", ":")
    )
    return text.encode()


def _loads(data: bytes) -> object:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _items(value: object) -> list[object] | None:
    if isinstance(value, dict):
        for key in ("messages", "history"):
            if isinstance(value.get(key), list):
                return value[key]  # type: ignore[no-any-return]
    return value if isinstance(value, list) else None


def _clean(template: Path) -> bool | None:
    """Whether a fixture lints without findings (its repetitions then stay clean); None
    when it is no transcript at all (a companion file, a recording's request log)."""
    from transcript_doctor import catalog, engine
    from transcript_doctor.checks import Selection

    options = engine.Options(Selection.build(["ALL"]), catalog.load())
    report = engine.lint_bytes(str(template), template.read_bytes(), options)
    if report.reader is None:
        return None if report.skipped else False
    return not report.findings


def _layout(template: Path) -> str:
    """The layout folder of a fixture: ``fixtures/<layout>/…`` (recordings nest sessions
    deeper: ``kimi-cli/tools/session/context.jsonl``), ``fixtures/wild/<layout>/…``."""
    parts = template.relative_to(FIXTURES).parts
    return parts[1] if parts[0] == "wild" else parts[0]


def templates() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl") and "logs" not in p.name)


def generate(out: Path, megabytes: int, seed: int) -> list[Path]:
    """Sessions of every layout, sizes log-normal (median ~0.7 MB, at most 20 MB).

    A clean session repeats a clean fixture; a damaged one is a clean session of the same
    layout with one damaged fixture appended, so its damage occurs once, as in real files.
    """
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    budget = megabytes << 20
    written = 0
    made: list[Path] = []
    clean: dict[tuple[str, str], Path] = {}
    damaged: list[Path] = []
    for template in templates():
        key = (_layout(template), template.suffix)
        status = _clean(template)
        if status:
            clean.setdefault(key, template)
        elif status is not None:
            damaged.append(template)
    # Five clean sessions per layout, then one per damaged fixture so that every damage
    # occurs: at 200 MB about half the files are damaged, a harder mix than most stored
    # sessions (the runner also prints the clean and the damaged part on their own).
    plans = [(t, None) for t in clean.values()] * 5 + [
        (clean[(_layout(t), t.suffix)], t) for t in damaged if (_layout(t), t.suffix) in clean
    ]
    while written < budget:
        for base, damage in plans:
            if written >= budget:
                break
            target = min(int(rng.lognormvariate(13.5, 1.0)), 20 << 20, budget - written)
            tail = damage.read_bytes() if damage else b""
            build = jsonl_session if base.suffix == ".jsonl" else json_document
            data = build(base.read_bytes(), target, tail)
            if data is None:
                continue
            kind = "damaged" if damage else "clean"
            name = (damage or base).stem[:40]
            path = out / kind / f"{len(made):04d}-{_layout(base)}-{name}{base.suffix}"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)
            made.append(path)
            written += len(data)
    return made


# Real users' Claude Code sessions (fixtures/wild, fixtures/claude-code: byte copies of the
# shared corpus, see their READMEs), each repeated to a size typical of a long session.
LARGE_CLAUDE = (
    ("wild/claude-code/fabien-66db2ce0-393a-4771-9.jsonl", 10),
    ("wild/claude-code/fabien-agent-aac1f23249197c.jsonl", 13),
    ("wild/claude-code/sessionshare-0ccf1a04-main.jsonl", 16),
    ("claude-code/codemie-session-9eda1058.jsonl", 20),
)


def large_claude(out: Path) -> list[Path]:
    """Four clean Claude Code sessions of 10-20 MB, each a real session repeated with fresh
    uuids (``jsonl_session``): the files people keep the most bytes in."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for name, megabytes in LARGE_CLAUDE:
        path = out / f"{Path(name).stem}-{megabytes}mb.jsonl"
        path.write_bytes(jsonl_session((FIXTURES / name).read_bytes(), megabytes << 20))
        made.append(path)
    return made


def small_tree(out: Path, count: int, seed: int) -> list[Path]:
    """``count`` small files of every layout, as people's session folders hold them.

    Half are Claude Code sessions in a ``~/.claude/projects`` tree (``claude/<project>/<uuid>.jsonl``),
    the rest every other layout's fixtures under ``<layout>/<n>/``; every file is a fixture
    (a corpus copy or a spec example) of at most 64 KB, copied as it is.  One file in
    twenty is a damaged fixture, the rest clean ones: most stored sessions are healthy.
    """
    rng = random.Random(seed)
    clean: dict[str, list[Path]] = {}
    damaged: dict[str, list[Path]] = {}
    for template in templates():
        if template.stat().st_size > 64 << 10:
            continue
        verdict = _clean(template)
        if verdict is not None:
            (clean if verdict else damaged).setdefault(_layout(template), []).append(template)
    layouts = sorted(clean)
    made: list[Path] = []
    for n in range(count):
        folder = "claude-code" if n % 2 == 0 else layouts[(n // 2) % len(layouts)]
        pool = damaged if n % 20 == 19 and folder in damaged else clean
        template = rng.choice(pool[folder])
        if folder == "claude-code":
            path = out / "claude" / f"project-{n % 37:02d}" / f"{n:05d}-{template.stem}{template.suffix}"
        else:
            path = out / folder / f"{n // 100:02d}" / f"{n:05d}-{template.name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(template.read_bytes())
        made.append(path)
    return made


def largest(path: Path, megabytes: int) -> Path:
    """One large real-shaped session (a Claude Code file) for the peak-memory figure."""
    template = FIXTURES / "claude-code" / "codemie-session-9eda1058.jsonl"
    path.write_bytes(jsonl_session(template.read_bytes(), megabytes << 20))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    generate(args.out, args.megabytes, args.seed)


if __name__ == "__main__":
    main()
