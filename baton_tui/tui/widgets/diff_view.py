"""A diff viewer that stays fast on big patches: lines are stored as strings and styled
only when they scroll into view (Textual's `Log` renders lazily), by their leading mark.

A `+`/`-` line keeps its mark, so the diff reads the same without colour (NO_COLOR). A line
wider than the view ends in `…` (scroll right, or `f` for the file full-screen, to read it).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.highlighter import Highlighter
from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip
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

    def render_line(self, y: int) -> Strip:
        """The line as `Log` draws it, its last cell a `…` when more of it is off the right."""
        strip = super().render_line(y)
        scroll_x, scroll_y = self.scroll_offset
        lines, width = self.lines, strip.cell_length
        index = scroll_y + y
        if width > 1 and index < len(lines) and cell_len(lines[index]) - scroll_x > width:
            strip = Strip.join([strip.crop(0, width - 1),
                                Strip([Segment("…", self.rich_style)], 1)])
            strip = strip.apply_offsets(scroll_x, index)
        return strip

    def show(self, text: str) -> None:
        if text == self.text and self.line_count:
            return
        self.text = text
        self.clear()
        self.write_lines(text.splitlines() or ["(no changes)"], scroll_end=False)
        self.scroll_home(animate=False)
