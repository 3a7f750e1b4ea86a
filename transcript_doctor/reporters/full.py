"""``full``: findings grouped by file, rendered with rich, then the summary.

Within a file the locations form one aligned column and each message wraps under its
own start at the console's width, so that a finding stays readable in a narrow
terminal (rich takes the width from the terminal, else ``COLUMNS``, else 80).
"""

from __future__ import annotations

from itertools import groupby
from typing import TextIO

from transcript_doctor.model import Severity
from transcript_doctor.reporters import Run, fix_note, ordered, summary_lines
from transcript_doctor.safetext import printable

STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
INDENT, GAP, CODE_WIDTH = 2, 2, len("TD000 [*]")
MIN_MESSAGE_WIDTH = 30  # narrower than this, wrapping would only make a tall column


def report(run: Run, out: TextIO) -> None:
    findings = ordered(run)
    if not findings:  # nothing to colour: a hook run on clean files does not import rich
        if not run.quiet:
            out.write("".join(line + "\n" for line in summary_lines(run)))
        return
    from rich.console import Console
    from rich.text import Text

    if run.color is None:
        console = Console(file=out, highlight=False)
    elif run.color:
        # Colour even where rich would not (NO_COLOR, TERM=dumb, a pipe): it was asked for.
        console = Console(
            file=out, highlight=False, force_terminal=True, no_color=False, color_system="standard"
        )
    else:
        console = Console(file=out, highlight=False, color_system=None)
    # One print per file, of its lines joined: each print asks the console its size and
    # whether it is a terminal (the environment, every time), which cost more than the
    # rendering.  The width is read once, as it was for each file.
    width = console.width
    for path, group in groupby(findings, key=lambda pair: pair[0].path):
        items = list(group)
        reader = items[0][0].reader or "unknown layout"
        lines = [Text.assemble((printable(path), "bold"), " ", (f"({printable(reader)})", "dim"))]
        digits = max(len(str(located.origin.line)) for _, located in items)
        places = [
            f"{located.origin.line:>{digits}}"
            + (f" {printable(located.origin.pointer)}" if located.origin.pointer else "")
            for _, located in items
        ]
        column = max(map(len, places))
        indent = INDENT + column + GAP + CODE_WIDTH + GAP
        wrap = width - indent
        for place, (_, located) in zip(places, items, strict=True):
            finding = located.finding
            rule = finding.rule
            message = Text.assemble(printable(finding.message), " ", (f"({printable(rule.name)})", "dim"))
            wrapped = message.wrap(console, wrap) if wrap >= MIN_MESSAGE_WIDTH else [message]
            head = Text.assemble(
                " " * INDENT,
                (place.ljust(column), "dim"),
                " " * GAP,
                (rule.code, STYLE[rule.severity]),
                " [*]" if located.fixable else "    ",
                " " * GAP,
            )
            for index, line in enumerate(wrapped):
                line.rstrip()
                lines.append(head + line if index == 0 else Text(" " * indent) + line)
            note = fix_note(located) if run.show_fixes else None
            if note is not None:  # --show-fixes: under the message, wrapped like it
                text = Text(printable(note), "dim")
                for line in text.wrap(console, wrap) if wrap >= MIN_MESSAGE_WIDTH else [text]:
                    lines.append(Text(" " * indent) + line)
        lines.append(Text())
        console.print(Text("\n").join(lines), soft_wrap=True)
    if not run.quiet:
        for summary in summary_lines(run):  # wrapped too: the hidden-fixes hint is long
            for line in Text(summary).wrap(console, width):
                line.rstrip()
                console.print(line, soft_wrap=True)
