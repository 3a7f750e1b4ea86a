"""What Mistral Vibe's next save does when ``messages.jsonl`` and ``meta.json``
``total_messages`` disagree (evidence for why the reader refuses repairs that add or
remove a line).

Run with the Python of a venv where ``mistral-vibe`` is installed (2.18.4 here):

    VENV/bin/python tests/fakemodel/recipes/mistral_vibe_count.py SESSION_DIR WORK_DIR

For four copies of ``SESSION_DIR`` (unchanged; one line removed; one line added; a
``system`` line added; each with ``meta.json`` untouched) it does what an interactive resume does with Vibe's own
code: ``SessionLoader.load_session``, ``SessionLogger.resume_existing_session``, one new
prompt and reply, then ``SessionLogger.save_interaction``; and prints which lines the
save appended.  The stats, config, tools and agent profile it passes are stand-ins (only
their dumps reach meta.json).  Output in docs/formats/mistral-vibe.md §7.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any


def main() -> None:
    from vibe.core.config import SessionLoggingConfig
    from vibe.core.session.session_loader import SessionLoader
    from vibe.core.session.session_logger import SessionLogger
    from vibe.core.types import LLMMessage, Role

    base, work = Path(sys.argv[1]), Path(sys.argv[2])
    lines = (base / "messages.jsonl").read_bytes().splitlines(keepends=True)
    variants = {
        "as-written": lines,
        "one-line-removed": lines[:-2] + lines[-1:],
        "one-line-added": [*lines[:-1], lines[-2], lines[-1]],
        # A system line (Vibe never writes one; the loader drops it): not counted.
        "system-line-added": [b'{"role": "system", "content": "x", "injected": false}\n', *lines],
    }
    dump: Any = SimpleNamespace(model_dump=lambda **_: {})
    for name, body in variants.items():
        folder = work / name / base.name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        shutil.copy(base / "meta.json", folder / "meta.json")
        (folder / "messages.jsonl").write_bytes(b"".join(body))
        loaded, meta = SessionLoader.load_session(folder)
        logger = SessionLogger(SessionLoggingConfig(save_dir=str(folder.parent)), meta["session_id"])
        logger.resume_existing_session(meta["session_id"], folder)
        messages = [LLMMessage(role=Role.system, content="system"), *loaded]
        messages.append(LLMMessage(role=Role.user, content="NEW PROMPT"))
        messages.append(LLMMessage(role=Role.assistant, content="NEW REPLY"))
        tools = SimpleNamespace(available_tools={})
        profile = SimpleNamespace(name="default", overrides={})
        asyncio.run(logger.save_interaction(messages, dump, dump, tools, profile))  # type: ignore[arg-type]
        after = (folder / "messages.jsonl").read_bytes().splitlines()
        appended = [line.decode()[:60] for line in after[len(body) :]]
        print(f"{name:18} lines {len(body)} total_messages {meta['total_messages']} -> appended {appended}")


if __name__ == "__main__":
    main()
