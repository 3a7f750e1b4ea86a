"""The vendor-neutral conversation model that every reader produces and every rule reads.

Readers know layouts and rules know conversations; this module is the only thing they
share.  Every element remembers where it came from (:class:`Origin`) so that a finding
points at exact bytes and a fix can ask the owning reader to edit exactly that record.
The ``ref`` slots are opaque to everyone but the reader that filled them.
"""

from __future__ import annotations

from enum import Enum, IntEnum
from typing import TYPE_CHECKING, Final

from transcript_doctor.plain import Plain, Value

if TYPE_CHECKING:
    from transcript_doctor.actions import Action


class Role(str, Enum):
    """Who a message speaks for, as the provider would receive it."""

    USER = "user"  # prompts and tool results (the input side)
    ASSISTANT = "assistant"  # one model turn
    SYSTEM = "system"  # context sent to the model that is not a turn (system/developer)
    NOTICE = "notice"  # stored for display only, never replayed (openworker notices)


class PartKind(str, Enum):
    TEXT = "text"
    THINKING = "thinking"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    MEDIA = "media"
    OTHER = "other"


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class Applicability(str, Enum):
    """Whether ``fix`` applies a repair by default (ruff's fix applicability).

    Decided by what a repair destroys: a repair that deletes or replaces what may be
    real model or tool output is unsafe and needs ``--unsafe-fixes``; one that only adds,
    or removes what is provably not real output (a catalog placeholder, a byte copy,
    bytes no loader can read), is safe.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"


class Safety(Value):
    """One repair's class, and what it keeps or destroys in words a user can check."""

    __slots__ = ("applicability", "reason")
    applicability: Final[Applicability]
    reason: Final[str]

    def __init__(self, applicability: Applicability, reason: str) -> None:
        self.applicability = applicability
        self.reason = reason


def safe(reason: str) -> Safety:
    return Safety(Applicability.SAFE, reason)


def unsafe(reason: str) -> Safety:
    return Safety(Applicability.UNSAFE, reason)


# A finding whose check did not say what its repair destroys is treated as unsafe.
UNDECIDED = unsafe("the repair may change real model or tool output")


class Phase(IntEnum):
    """When ``fix`` applies a rule's repairs: no later phase can undo an earlier one."""

    RECORDS = 1  # whole records: torn lines, parent links, copies
    TURNS = 2  # whole turns
    PAIRING = 3  # results paired with their calls, once the turns are settled
    CONTENT = 4  # content inside the records that survived


class Screening(str, Enum):
    """How the clean-file screen (``analysis/screen.py``) answers for a rule, which it must
    for every rule: a file it proves clean is never checked."""

    FILE = "file"  # about the file, never a conversation's text: decided before screening
    ASKED = "asked"  # the screen asks the rule's own question of the parsed values
    EXCLUDED = "excluded"  # readers screen no conversation with the feature the rule reads
    # The screen does not answer for it yet (a new rule): while the rule is selected, every
    # conversation is built and checked, so a rule is never missed for want of a screen.
    NONE = "none"


class Rule(Value):
    """Every fact about a rule; its check lives beside it in ``checks/``, and the docs,
    the ``rules`` output, the fix order and the screen are derived from these."""

    __slots__ = (
        "applicability",
        "applicability_when",
        "code",
        "fix",
        "name",
        "phase",
        "rank",
        "screen",
        "severity",
        "summary",
    )
    code: Final[str]
    name: Final[str]
    severity: Final[Severity]
    summary: Final[str]
    fix: Final[str | None]  # what ``fix`` does; None when the rule is never fixable
    # The classes the repair can take, and when (docs and the ``rules`` table); a rule
    # with both decides per finding.
    applicability: Final[tuple[Applicability, ...]]
    screen: Final[Screening]
    # A fixable rule's place in ``fix``: its phase, then ``rank`` within the phase.
    phase: Final[Phase | None]
    rank: Final[int]
    # A rule whose repair is safe for some findings and unsafe for others says which is
    # which, in a few words (the README's rules table): "safe (...); unsafe (...)".
    applicability_when: Final[str | None]

    def __init__(
        self,
        code: str,
        name: str,
        severity: Severity,
        summary: str,
        fix: str | None = None,
        applicability: tuple[Applicability, ...] = (),
        *,
        screen: Screening,
        phase: Phase | None = None,
        rank: int = 0,
        applicability_when: str | None = None,
    ) -> None:
        self.code = code
        self.name = name
        self.severity = severity
        self.summary = summary
        self.fix = fix
        self.applicability = applicability
        self.screen = screen
        self.phase = phase
        self.rank = rank
        self.applicability_when = applicability_when


class Origin(Value):
    """Where an element lives: 1-based line of its record, 0-based record, JSON Pointer.

    ``pointer`` is ``None`` when the whole record is meant; otherwise it points from the
    document root (single JSON document) or into the line's object (JSONL record).
    Readers of single-document files leave ``line`` at 0: the engine resolves it from
    the pointer for the few elements a finding names, instead of indexing every value.
    """

    __slots__ = ("line", "pointer", "record")
    line: Final[int]
    record: Final[int]
    pointer: Final[str | None]

    def __init__(self, line: int, record: int, pointer: str | None = None) -> None:
        self.line = line
        self.record = record
        self.pointer = pointer


class Part(Plain):
    """One piece of a message.

    ``text`` is the visible text of a TEXT part (or the thought of a THINKING part).
    ``call_id`` pairs calls and results; readers of id-less formats pair by adjacency
    themselves, give both sides a shared synthetic id and set ``paired_by``.
    ``needs_signature`` is set where the vendor's API demands a signature on this part
    (Claude thinking blocks, the first Gemini functionCall of a replayed Content).
    ``of_result``: a part the harness stores beside a tool result as part of that tool's
    output (Gemini CLI's ``read_many_files`` text, ``read_file`` images): not a prompt.
    ``arguments``: a call's stored arguments text, where its reader gives it.
    """

    __slots__ = (
        "arguments",
        "call_id",
        "is_error",
        "kind",
        "name",
        "needs_signature",
        "of_result",
        "origin",
        "paired_by",
        "ref",
        "signature",
        "text",
    )
    kind: PartKind
    origin: Origin
    text: str
    call_id: str | None
    name: str | None
    signature: str | None
    needs_signature: bool
    paired_by: str
    is_error: bool
    of_result: bool
    ref: object
    # A call's arguments as stored, JSON text the vendor replays verbatim (OpenAI
    # ``function.arguments``), where a reader gives them (TD405 reads them); else None.
    arguments: str | None

    def __init__(
        self,
        kind: PartKind,
        origin: Origin,
        text: str = "",
        call_id: str | None = None,
        name: str | None = None,
        signature: str | None = None,
        needs_signature: bool = False,
        paired_by: str = "id",
        is_error: bool = False,
        of_result: bool = False,
        ref: object = None,
        arguments: str | None = None,
    ) -> None:
        self.kind = kind
        self.origin = origin
        self.text = text
        self.call_id = call_id
        self.name = name
        self.signature = signature
        self.needs_signature = needs_signature
        self.paired_by = paired_by
        self.is_error = is_error
        self.of_result = of_result
        self.ref = ref
        self.arguments = arguments


class Message(Plain):
    """One message as the provider receives it (one assistant message is one turn).

    ``harness_written``: the vendor itself marks the message as written by the harness
    rather than the model (Claude Code ``<synthetic>`` API-error lines), or, on the user
    side, the harness wrote it rather than the user (Gemini CLI's continuation nudge).
    ``notice``: the kind of a display-only NOTICE message (``error``, ``interrupted``…).
    ``dup_key``: identity used to recognise a harness-duplicated user turn (TD403);
    ``None`` where the format cannot tell a duplicate from a prompt typed twice.
    """

    __slots__ = ("dup_key", "harness_written", "notice", "origin", "parts", "ref", "role")
    role: Role
    parts: list[Part]
    origin: Origin
    harness_written: bool
    notice: str | None
    dup_key: object
    ref: object

    def __init__(
        self,
        role: Role,
        parts: list[Part],
        origin: Origin,
        harness_written: bool = False,
        notice: str | None = None,
        dup_key: object = None,
        ref: object = None,
    ) -> None:
        self.role = role
        self.parts = parts
        self.origin = origin
        self.harness_written = harness_written
        self.notice = notice
        self.dup_key = dup_key
        self.ref = ref

    @property
    def tool_calls(self) -> list[Part]:
        return [p for p in self.parts if p.kind is PartKind.TOOL_CALL]

    @property
    def tool_results(self) -> list[Part]:
        return [p for p in self.parts if p.kind is PartKind.TOOL_RESULT]

    @property
    def visible_text(self) -> str:
        """Non-thought text parts joined, as a placeholder check compares them."""
        return "".join(p.text for p in self.parts if p.kind is PartKind.TEXT)

    @property
    def is_prompt(self) -> bool:
        """A user message that carries something besides tool results and their output."""
        return self.role is Role.USER and any(
            p.kind is not PartKind.TOOL_RESULT and not p.of_result for p in self.parts
        )


class Dialect(Value):
    """What the vendor does with a stored history before sending it.

    Rules read these flags instead of reader names, so that a new reader states its
    vendor's behaviour once and every rule follows.
    """

    __slots__ = (
        "coalesce_roles",
        "final_text_is_prefill",
        "fuses_tool_response",
        "replays_arguments_text",
        "thinking_only_is_empty",
    )
    # The vendor merges consecutive same-role messages before sending (Gemini, Qwen,
    # Claude Code user lines): pairing treats such a run as one message.
    coalesce_roles: Final[bool]
    # Gemini API histories: a tool-response turn followed directly by a prompt is fused
    # into one user turn on replay (TD104).
    fuses_tool_response: Final[bool]
    # Claude Code drops a thinking-only assistant message on resume and the API rejects a
    # final thinking block: such a turn counts as empty (TD103).
    thinking_only_is_empty: Final[bool]
    # The final assistant text may reach a provider as prefill (Anthropic rejects it when
    # it ends in whitespace: TD102).  Gemini API histories go only to Gemini, which
    # rejects any history ending with a model turn, so Gemini CLI always appends the next
    # prompt first: their final text is never prefill and its whitespace harms nothing.
    final_text_is_prefill: Final[bool]
    # The vendor replays each call's stored arguments text verbatim (Part.arguments), and the
    # servers it is used with parse it: text that does not parse fails every later request
    # (Kimi CLI: kimi-cli#2165 on vLLM, #1171 on SGLang; TD405).
    replays_arguments_text: Final[bool]

    def __init__(
        self,
        coalesce_roles: bool = False,
        fuses_tool_response: bool = False,
        thinking_only_is_empty: bool = False,
        final_text_is_prefill: bool = True,
        replays_arguments_text: bool = False,
    ) -> None:
        self.coalesce_roles = coalesce_roles
        self.fuses_tool_response = fuses_tool_response
        self.thinking_only_is_empty = thinking_only_is_empty
        self.final_text_is_prefill = final_text_is_prefill
        self.replays_arguments_text = replays_arguments_text


class BrokenLink(Value):
    """A record whose parent link names a record that is not in the file (TD404)."""

    __slots__ = ("missing", "origin", "ref")
    origin: Final[Origin]
    missing: Final[str]
    ref: Final[object]

    def __init__(self, origin: Origin, missing: str, ref: object = None) -> None:
        self.origin = origin
        self.missing = missing
        self.ref = ref


class Repeat(Value):
    """One structural cause behind many repeated tool call ids (TD305 reports it once).

    Set by a reader that can tell why calls repeat: Claude Code files that record the same
    responses twice (same ``message.id``, new uuids), which the vendor replays as one.
    ``cause`` says in the reader's words what was recorded twice and where.
    """

    __slots__ = ("call_ids", "cause")
    call_ids: Final[frozenset[str]]
    cause: Final[str]

    def __init__(self, call_ids: frozenset[str], cause: str) -> None:
        self.call_ids = call_ids
        self.cause = cause


_PLAIN = Dialect()


class Conversation(Plain):
    __slots__ = ("broken_links", "dialect", "label", "memo", "messages", "ref", "repeats")
    _fields = ("messages", "dialect", "broken_links", "label", "ref", "repeats")  # (repr)
    messages: list[Message]
    dialect: Dialect
    broken_links: list[BrokenLink]
    # Several conversations can share a file (fine-tuning JSONL); findings then say which.
    label: str | None
    ref: object
    # Analyses computed once and shared by every rule and repair that reads them.
    memo: dict[object, object]
    repeats: list[Repeat]

    def __init__(
        self,
        messages: list[Message],
        dialect: Dialect = _PLAIN,
        broken_links: list[BrokenLink] | None = None,
        label: str | None = None,
        ref: object = None,
        memo: dict[object, object] | None = None,
        repeats: list[Repeat] | None = None,
    ) -> None:
        self.messages = messages
        self.dialect = dialect
        self.broken_links = [] if broken_links is None else broken_links
        self.label = label
        self.ref = ref
        self.memo = {} if memo is None else memo
        self.repeats = [] if repeats is None else repeats


class Finding(Plain):
    """One rule violation.  ``action`` is the abstract repair a reader may apply;
    ``safety`` says whether ``fix`` applies it by default (set by the check, which knows
    what the repair would destroy)."""

    __slots__ = ("action", "message", "origin", "rule", "safety")
    rule: Rule
    origin: Origin
    message: str
    action: Action | None
    safety: Safety

    def __init__(
        self,
        rule: Rule,
        origin: Origin,
        message: str,
        action: Action | None = None,
        safety: Safety = UNDECIDED,
    ) -> None:
        self.rule = rule
        self.origin = origin
        self.message = message
        self.action = action
        self.safety = safety
