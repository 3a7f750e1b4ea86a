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
    rb'("(?:id|uuid|parentUuid|leafUuid|logicalParentUuid|tool_use_id|tool_call_id|call_id|toolCallId|callId|'
    rb'sourceToolAssistantUUID|messageId|\$rewindTo)"\s*:\s*")([^"]+)"'
)
PARENT_NULL = re.compile(rb'"parentUuid":\s*null')
UUID_FIELD = re.compile(rb'"uuid":\s*"([^"]+)"')


def _renamed(chunk: bytes, k: int) -> bytes:
    return ID.sub(lambda m: m.group(1) + m.group(2) + b'-r%d"' % k, chunk) if k else chunk


def jsonl_session(template: bytes, target: int) -> bytes:
    """Repeat a JSONL session's records with fresh ids until ``target`` bytes.

    Header-like lines (first line of Codex/Gemini files) are kept once; each repetition's
    root record is linked to the previous repetition's last record.
    """
    lines = template.splitlines(keepends=True)
    if not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    head = lines[:1] if b'"session_meta"' in lines[0] or b'"projectHash"' in lines[0] else []
    body = lines[len(head) :]
    out = list(head)
    size = sum(map(len, out))
    last_uuid: bytes | None = None
    k = 0
    while size < target:
        for line in body:
            new = _renamed(line, k)
            if last_uuid is not None and PARENT_NULL.search(new):
                new = PARENT_NULL.sub(b'"parentUuid":"' + last_uuid + b'"', new, count=1)
            found = UUID_FIELD.search(new)
            if found:
                last_uuid = found.group(1)
            out.append(new)
            size += len(new)
        k += 1
    return b"".join(out)


def json_document(template: bytes, target: int) -> bytes | None:
    """Repeat a single-document conversation's message list (same indentation style)."""
    try:
        value = json.loads(template)
    except ValueError:
        return None
    key = next(
        (k for k in ("messages", "history") if isinstance(value, dict) and isinstance(value.get(k), list)),
        None,
    )
    items = value[key] if key else value if isinstance(value, list) else None
    if not items:
        return None
    indent = 2 if template.lstrip()[:1] in (b"{", b"[") and b"\n  " in template[:200] else None
    grown: list[object] = []
    k = 0
    one = len(template)
    while len(grown) * one // max(len(items), 1) < target:
        grown.extend(json.loads(_renamed(json.dumps(item).encode(), k)) for item in items)
        k += 1
    if key:
        value[key] = grown
    else:
        value = grown
    text = json.dumps(
        value, indent=indent, ensure_ascii=False, separators=(",", ": ") if indent else (",", ":")
    )
    return text.encode()


def _clean(template: Path) -> bool:
    """Whether a fixture lints without findings (its repetitions then stay clean)."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "transcript_doctor", "lint", "-q", "-o", "json", str(template)],
        capture_output=True,
        check=False,
    )
    return result.returncode == 0 and json.loads(result.stdout) == []


def templates() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl") and "logs" not in p.name)


def generate(out: Path, megabytes: int, seed: int) -> list[Path]:
    """Files of every layout, clean and damaged, sizes log-normal (median ~0.7 MB)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    budget = megabytes << 20
    written = 0
    made_files: list[Path] = []
    sources = templates()
    while written < budget:
        for template in sources:
            if written >= budget:
                break
            data = template.read_bytes()
            target = min(int(rng.lognormvariate(13.5, 1.0)), 20 << 20, budget - written + len(data))
            made = jsonl_session(data, target) if template.suffix == ".jsonl" else json_document(data, target)
            if made is None:
                continue
            kind = "clean" if _clean(template) else "damaged"
            path = (
                out
                / kind
                / f"{len(made_files):04d}-{template.parent.name}-{template.stem[:40]}{template.suffix}"
            )
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(made)
            made_files.append(path)
            written += len(made)
    return made_files


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
