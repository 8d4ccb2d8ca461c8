"""A diff viewer that stays fast on big patches: lines are stored as strings and styled
only when they scroll into view (Textual's `Log` renders lazily), by their leading mark.

A `+`/`-` line keeps its mark, so the diff reads the same without colour (NO_COLOR).
"""

from __future__ import annotations

from rich.highlighter import Highlighter
from rich.text import Text
from textual.widgets import Log

STYLES = (
    ("diff --git ", "bold"), ("+++ ", "bold"), ("--- ", "bold"), ("@@", "cyan"),
    ("+", "green"), ("-", "red"), ("index ", "dim"), ("new file", "dim"),
    ("deleted file", "dim"), ("similarity", "dim"), ("rename ", "dim"), ("Binary", "italic"),
)


class DiffHighlighter(Highlighter):
    """Styles a whole diff line by what it starts with (the order above decides)."""

    def highlight(self, text: Text) -> None:
        plain = text.plain
        for prefix, style in STYLES:
            if plain.startswith(prefix):
                text.stylize(style)
                return


class DiffView(Log):
    """Read-only, scrollable, highlighted diff; `show(text)` replaces what it holds."""

    DEFAULT_CSS = "DiffView { height: 1fr; }"

    def __init__(self, text: str = "", *, id: str | None = None,
                 max_lines: int | None = None) -> None:
        super().__init__(highlight=True, max_lines=max_lines, auto_scroll=False, id=id)
        self.highlighter = DiffHighlighter()
        self.text = ""
        if text:
            self.call_later(self.show, text)

    def show(self, text: str) -> None:
        if text == self.text and self.line_count:
            return
        self.text = text
        self.clear()
        self.write_lines(text.splitlines() or ["(no changes)"], scroll_end=False)
        self.scroll_home(animate=False)
