"""Hand-made damage for the Kimi CLI reader: python kimi_cli_damage.py FIXTURES_KIMI_CLI.

Writes ``damaged/<kind>.jsonl`` from the context.jsonl files Kimi CLI 1.51.0 wrote (the
``tools``, ``parallel`` and ``clean`` sessions), one damage shape each, byte-level edits
only (every other byte is Kimi's).  fixtures/kimi-cli/damaged/README.md says what each
one is and what lint must report.
"""

import sys
from pathlib import Path


def lines(folder: Path, session: str) -> list[bytes]:
    return (folder / session / "session" / "context.jsonl").read_bytes().split(b"\n")[:-1]


def write(folder: Path, kind: str, body: list[bytes], end: bytes = b"\n") -> None:
    (folder / "damaged").mkdir(exist_ok=True)
    (folder / "damaged" / f"{kind}.jsonl").write_bytes(end.join(body) + (end if body else b""))


def main(folder: Path) -> None:
    tools, parallel, clean = lines(folder, "tools"), lines(folder, "parallel"), lines(folder, "clean")
    n = {i + 1: line for i, line in enumerate(tools)}  # 1-based, as the README counts
    # the assistant line calling Shell:0 (line 6) lost: its result (line 8) is an orphan
    write(folder, "orphan-result", [v for k, v in n.items() if k != 6])
    # the Shell:0 result (line 8) written twice
    write(folder, "duplicate-result", [*tools[:8], n[8], *tools[8:]])
    # the ReadFile:1 result (line 13) moved after the answer of its turn (line 16)
    write(folder, "displaced-result", [*tools[:12], *tools[13:16], n[13], *tools[16:]])
    # phase 1 ends after the ReadFile:1 call and its _usage (a kill between the two appends)
    write(folder, "pending-call", tools[:12])
    # the third parallel call and its result take the first call's id
    p = [*parallel]
    p[5] = p[5].replace(b'"id":"Shell:2"', b'"id":"Shell:0"')
    p[9] = p[9].replace(b'"tool_call_id":"Shell:2"', b'"tool_call_id":"Shell:0"')
    write(folder, "duplicate-call-id", p)
    # the answer of the clean session (line 6) with no content
    c = [*clean]
    start = c[5].index(b'"content":') + len(b'"content":')
    c[5] = c[5][:start] + b"[]}"
    write(folder, "empty-turn", c)
    # the last line cut in half, no newline after it
    write(folder, "torn-tail", [*tools[:-1], tools[-1][: len(tools[-1]) // 2]], b"\n")
    (folder / "damaged" / "torn-tail.jsonl").write_bytes(
        b"\n".join([*tools[:-1], tools[-1][: len(tools[-1]) // 2]])
    )
    # the first half of the Shell:2 result (line 24) glued to the checkpoint after it
    write(folder, "glued", [*tools[:23], tools[23][: len(tools[23]) // 2] + tools[24], *tools[25:]])
    # a raw TAB (not the \t escape) in the ReadFile:1 result: json.loads(strict=False) reads it
    write(folder, "raw-control", [*tools[:12], tools[12].replace(b"\\t", b"\t"), *tools[13:]])
    # a raw CR (not the \n escape) in the Shell:0 result: universal newlines tear the line
    write(folder, "raw-cr", [*tools[:7], tools[7].replace(b"shell\\n", b"shell\r"), *tools[8:]])
    # the Shell:2 call's arguments an object, not a JSON string: kosong rejects the message
    bad = tools[21].replace(
        b'"arguments":"{\\"command\\": \\"wc -l notes.txt\\"}"', b'"arguments":{"command":"wc"}'
    )
    assert bad != tools[21]
    write(folder, "unloadable-message", [*tools[:21], bad, *tools[22:]])
    # a raw U+2028 in the answer: not a line end for Python's text mode
    c = [*clean]
    c[5] = c[5].replace(b'."}', '\u2028."}'.encode())
    write(folder, "raw-u2028", c)
    # the whole tools session with CRLF line ends (what text mode writes on Windows)
    write(folder, "crlf", tools, b"\r\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
