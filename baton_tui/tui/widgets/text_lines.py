"""Rich text cut into screen lines for the Line API widgets (the card list, the graph)."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.widget import Widget


def text_lines(widget: Widget, text: Text, width: int, style: Style) -> list[list[Segment]]:
    """`text`'s lines at `width` cells, never wrapped (an ellipsis cuts a long one), padded."""
    console = widget.app.console
    options = console.options.update(width=max(1, width), height=None, no_wrap=True,
                                     overflow="ellipsis", highlight=False)
    return console.render_lines(text, options, style=style, pad=True)
