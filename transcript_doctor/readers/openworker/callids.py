"""The pairing keys of openworker's call ids, shared by the reader and its typed proof."""

from __future__ import annotations


class CallIds:
    """Pairing keys of calls and results.

    Gemini synthesizes ``call_<n>`` per response (gemini_provider.stream), so ids repeat
    across turns by design; every consumer (Gemini's id->name map, PR #350's repair)
    answers the latest call with that id.  A repeated id is renamed for its line, and a
    result is keyed to the latest call that declared its id.
    """

    def __init__(self) -> None:
        self.scope: dict[str, str] = {}
        self.used: set[str] = set()

    def turn(self, number: int, raws: list[str | None]) -> list[str | None]:
        """The keys of one turn's calls (one id twice in a turn stays one key: TD305)."""
        declared: dict[str, str] = {}
        keys: list[str | None] = []
        for raw in raws:
            key = None if raw is None else declared.get(raw)
            if raw is not None and key is None:
                key = raw if raw not in self.used else f"{raw} (line {number})"
                declared[raw] = key
                self.used.add(raw)
            keys.append(key)
        self.scope.update(declared)
        return keys

    def answered(self, raw: str) -> str:
        return self.scope.get(raw, raw)
