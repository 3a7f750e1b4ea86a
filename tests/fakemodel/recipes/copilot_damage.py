"""Hand-made damage for the Copilot CLI recipe: python copilot_damage.py KIND EVENTS_JSONL.

Each kind reproduces one damage shape users reported (see docs/formats/copilot-cli.md) on a
file the real CLI wrote, so the recipe can record how the CLI's own loader reacts on resume.
"""

import json
import sys


def orphan(lines: list[str]) -> list[str]:
    """Drop the view call's tool.execution_complete; re-parent its child to keep the chain."""
    out: list[str] = []
    dropped = None
    for line in lines:
        if not line:
            out.append(line)
            continue
        event = json.loads(line)
        data = event.get("data") or {}
        if event.get("type") == "tool.execution_complete" and data.get("toolCallId") == "call_view_1":
            dropped = event
            continue
        if dropped is not None and event.get("parentId") == dropped["id"]:
            event["parentId"] = dropped["parentId"]
            line = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        out.append(line)
    return out


def displaced(lines: list[str]) -> list[str]:
    """Move the first tool.execution_complete (call_bash_0) down to right after the next
    assistant.message (the view call's), as a completion written late would sit; the chain
    re-linked (each line names the line above) so that only the order is damaged."""
    body = [json.loads(line) for line in lines if line]
    first = next(i for i, e in enumerate(body) if e["type"] == "tool.execution_complete")
    moved = body.pop(first)
    after = next(i for i in range(first, len(body)) if body[i]["type"] == "assistant.message")
    body.insert(after + 1, moved)
    for k in range(1, len(body)):
        body[k]["parentId"] = body[k - 1]["id"]
    return [*(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in body), ""]


def torn(lines: list[str]) -> list[str]:
    """Cut the last event (session.shutdown) in half, with no newline after it."""
    body = [line for line in lines if line]
    last = body[-1]
    return [*body[:-1], last[: len(last) // 2]]


def glued(lines: list[str]) -> list[str]:
    """Replace the line before the last with its first half glued to the last line."""
    body = [line for line in lines if line]
    return [*body[:-2], body[-2][: len(body[-2]) // 2] + body[-1], ""]


def rawnl(lines: list[str]) -> list[str]:
    """Write the first tool result's escaped newline as a raw newline (one event, two lines)."""
    out: list[str] = []
    done = False
    for line in lines:
        if not done and '"type":"tool.execution_complete"' in line and "\\n" in line:
            line = line.replace("\\n", "\n", 1)
            done = True
        out.append(line)
    return out


def rawsep(lines: list[str], separator: str = "\u2028") -> list[str]:
    """Write the first tool result's escaped newline as a raw U+2028 LINE SEPARATOR (what
    versions before the escaping wrote, #2012): valid JSON, one line split by U+2028 only."""
    out: list[str] = []
    done = False
    for line in lines:
        if not done and '"type":"tool.execution_complete"' in line and "\\n" in line:
            line = line.replace("\\n", separator, 1)
            done = True
        out.append(line)
    return out


def rawpara(lines: list[str]) -> list[str]:
    """The same with a raw U+2029 PARAGRAPH SEPARATOR."""
    return rawsep(lines, "\u2029")


def main() -> None:
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        raw = f.read()
    if kind == "nul":
        with open(path, "wb") as f:
            f.write(raw + b"\x00" * 64)
        return
    lines = raw.decode("utf-8").split("\n")
    damage = {
        "orphan": orphan,
        "displaced": displaced,
        "torn": torn,
        "glued": glued,
        "rawnl": rawnl,
        "rawsep": rawsep,
        "rawpara": rawpara,
    }[kind]
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(damage(lines)))


if __name__ == "__main__":
    main()
