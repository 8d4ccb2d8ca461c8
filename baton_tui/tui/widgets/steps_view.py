"""An agent's readable steps: what it said, tool calls, commands with their exit status,
files touched — one line each, marked so they read the same without colour."""

from __future__ import annotations

from typing import Any, Iterable

from rich.text import Text
from textual.widgets import RichLog

from baton_tui import api

MARK = {"said": "  ", "tool": "⚙ ", "command": "$ ", "file": "✎ ", "result": "✓ ",
        "error": "✗ ", "note": "· "}
STYLE = {"said": "", "tool": "", "command": "bold", "file": "", "result": "",
         "error": "bold", "note": "dim"}


def step_text(step: Any) -> Text:
    """One step as a line (and its detail, dimmed, indented under it)."""
    text = Text(no_wrap=False)
    mark = MARK.get(step.kind, "· ")
    if step.kind == "result" and step.ok is False:
        mark = "✗ "
    body = step.text[2:] if step.kind == "command" and step.text.startswith("$ ") else step.text
    text.append(mark, style="bold" if step.kind in ("error", "command") else "dim")
    # Agent text reaches the terminal only escaped (Rich keeps ESC) and with secrets redacted.
    text.append(api.terminal_text(body), style=STYLE.get(step.kind, ""))
    if step.ok is not None and step.kind in ("command", "tool", "file"):
        text.append(" ✓" if step.ok else " ✗ failed", style="" if step.ok else "bold")
    if step.detail:
        text.append("\n    " + api.terminal_text(step.detail), style="dim")
    return text


class StepsView(RichLog):
    """Steps appended in batches (one write per batch); keeps the last `max_lines`."""

    def __init__(self, *, id: str | None = None, max_lines: int = 2_000) -> None:
        super().__init__(id=id, wrap=True, markup=False, max_lines=max_lines, auto_scroll=True)
        self.files: dict[str, None] = {}
        self.count = 0

    def add(self, steps: Iterable[Any]) -> None:
        lines = []
        for step in steps:
            lines.append(step_text(step))
            if step.kind == "file":
                self.files[step.text.split(" ", 1)[-1]] = None
        if lines:
            self.count += len(lines)
            self.write(Text("\n").join(lines))

    def reset(self) -> None:
        self.clear()
        self.files.clear()
        self.count = 0
