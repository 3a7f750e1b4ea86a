"""Cline's text protocol for tool results, shared by the anthropic-messages reader and its fixes.

Cline answers a native ``tool_use`` in plain user text when it has no ``tool_use`` id to
answer with (cline/cline ``ToolResultUtils.createToolResultBlock`` before commit
791d238996: one text block ``{description} Result:\\n{result}``; ``ToolExecutor``,
``prompts/responses.ts``).
"""

from __future__ import annotations

import re

# `[name] Result:`, `[name for '<arg>'] Result:` (the argument may hold `]` and newlines),
# `[subagent: x] Result:`, and the notes written instead of running a call.
TEXT_RESULT = re.compile(
    r"\[[\w.:-]+(?:\]| for .*?\]|: [^\]\n]*\]) Result:"
    r"|(?:Skipping tool|Tool was interrupted and not executed) due to user rejecting a previous tool\. \["
    r"|Tool \[[^\]\n]*\] was not executed because a tool has already been used",
    re.DOTALL,
)

# A failed call's result text (prompts/responses.ts `formatResponse.toolError`).
TOOL_ERROR = "The tool execution failed with the following error:\n<error>\n{}\n</error>"
