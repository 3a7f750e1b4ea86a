"""Which damaged ``messages.jsonl`` Mistral Vibe's own loader refuses (evidence for TD001).

Run with the Python of a venv where ``mistral-vibe`` is installed (2.18.4 here):

    VENV/bin/python tests/fakemodel/recipes/mistral_vibe_loader.py SESSION_DIR WORK_DIR

It copies ``SESSION_DIR`` (a ``session_*`` folder Vibe wrote) into ``WORK_DIR`` once per
damage, calls ``vibe.core.session.session_loader.SessionLoader.load_session`` on each and
prints whether it loads.  The output for ``fixtures/mistral-vibe/tools/sessions/
session_20261202_003735_343a3d07`` is in docs/formats/mistral-vibe.md §5.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def cases(src: bytes) -> dict[str, bytes]:
    lines = src.splitlines(keepends=True)
    return {
        "clean": src,
        "blank-middle": b"".join([*lines[:3], b"\n", *lines[3:]]),
        "two-newlines-at-end": src + b"\n",
        "crlf": src.replace(b"\n", b"\r\n"),
        "bom": b"\xef\xbb\xbf" + src,
        "torn-final": src + lines[0][:30],
        "nul-run-end": src + b"\0" * 20,
        "invalid-utf8": src + b'{"role": "user", "content": "caf\xe9", "injected": false}\n',
        "surrogate": src + b'{"role": "user", "content": "\\ud800", "injected": false}\n',
        "nan": src + b'{"role": "user", "content": "x", "injected": false, "n": NaN}\n',
        "role-developer": src + b'{"role": "developer", "content": "x"}\n',
        "content-int": src + b'{"role": "user", "content": 7}\n',
        "not-object": src + b"[1, 2]\n",
        "lone-cr-outside-string": src + b'{"role": "user",\r"content": "x"}\n',
    }


def main() -> None:
    from vibe.core.session.session_loader import SessionLoader  # the vendor's own code

    base, work = Path(sys.argv[1]), Path(sys.argv[2])
    for name, data in cases((base / "messages.jsonl").read_bytes()).items():
        folder = work / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(base / "meta.json", folder / "meta.json")
        (folder / "messages.jsonl").write_bytes(data)
        try:
            messages, _ = SessionLoader.load_session(folder)
        except Exception as exc:  # what the CLI catches and prints as "Failed to load session"
            print(f"{name:24} fails  {type(exc).__name__}: {str(exc).splitlines()[0][:70]}")
        else:
            print(f"{name:24} loads  {len(messages)} messages")


if __name__ == "__main__":
    main()
