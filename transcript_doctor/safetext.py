"""Text from transcripts made safe to write: to a terminal, to a log, to a JSON consumer.

Ids, tool names, excerpts and file names are the transcript's (or the file system's), not
ours.  Two dangers: a lone surrogate (a JSON ``\\ud800`` escape, or a file name that is not
UTF-8) has no UTF-8 form and made every output format crash; control characters reach a
terminal as commands (OSC 52 writes the clipboard, OSC 8 makes links, CSI moves the
cursor) and a line break starts a new line that may read ``::error`` to GitHub Actions.

Both are written the way Python's ``backslashreplace`` writes what it cannot encode:
``\\ud800``, ``\\x1b``, ``\\n``.  A person sees what is there; nothing is executed.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import orjson

# Lone surrogates (no UTF-8 form).
_SURROGATES = "[\ud800-\udfff]"
# Everything a terminal or a log may act on: C0 controls with their line breaks, DEL, C1
# controls (U+009B is CSI on terminals that take 8-bit controls, U+0085 is NEL), the
# Unicode line and paragraph separators, bidirectional overrides and isolates (they
# reorder what is shown), and lone surrogates.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
# The same but line feeds and carriage returns, for a format that escapes those its own way.
_UNSAFE_INLINE = "[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """Compiled on first use: a lint that prints nothing (a clean file, ``-q``) never pays
    for these classes (start-up)."""
    return re.compile(pattern)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` for a human-readable line: no control character, no line break, and no
    ``::`` that could begin a line when the line is wrapped (the Actions runner reads a
    line as a workflow command after trimming leading spaces)."""
    unsafe = _compiled(_UNSAFE)
    if unsafe.search(text):
        text = unsafe.sub(_escape, text)
    return _COMMAND.sub(lambda _: "\\x3a:", text) if "::" in text else text


_COMMAND = re.compile(r"(?<!\S)::")


def printable_inline(text: str) -> str:
    """As :func:`printable`, keeping ``\\n`` and ``\\r`` for a caller that escapes them."""
    unsafe = _compiled(_UNSAFE_INLINE)
    return unsafe.sub(_escape, text) if unsafe.search(text) else text


def encodable(text: str) -> str:
    """``text`` with each lone surrogate written as its ``\\uXXXX`` escape (valid UTF-8)."""
    surrogates = _compiled(_SURROGATES)
    return surrogates.sub(_escape, text) if surrogates.search(text) else text


def dumps(value: Any, option: int = 0) -> bytes:
    """``orjson.dumps``, with lone surrogates in strings and keys written as ``\\uXXXX``
    text (orjson refuses them): the machine formats never fail on a transcript's ids."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return orjson.dumps(_encodable(value), option=option)


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable(k) if isinstance(k, str) else k: _encodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encodable(item) for item in value]
    return value
