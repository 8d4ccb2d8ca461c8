"""A vertical scrollbar drawn straight into its lines, for the card list.

Textual's `ScrollBar` renders a Rich renderable through the console and its styles cache on
every move: about as long as the card list's own 29 lines, so a j or k that scrolls the list
paid for it twice. The bar is a column of one-cell segments that depends on a handful of
numbers; here those segments (Textual's own, `ScrollBarRender.render_bar`) are made into
lines directly, with the app's line filters applied as the styles cache would, and kept
while the numbers stay the same. Everything else — the mouse, hover and grab colours — is
Textual's `ScrollBar`.
"""

from __future__ import annotations

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.color import Color as TextualColor
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget

_BACK = Color.parse("#555555")  # ScrollBarRender's own defaults
_BAR = Color.parse("bright_magenta")


class LightScrollBar(ScrollBar):
    """`ScrollBar`, its vertical lines drawn without the console (`render_lines`)."""

    def __init__(self, vertical: bool = True, name: str | None = None, *, thickness: int = 1):
        super().__init__(vertical=vertical, name=name, thickness=thickness)
        self._drawn: tuple[tuple, list[Strip]] | None = None  # (what it shows, its lines)

    def render_lines(self, crop: Region) -> list[Strip]:
        renderable = self.render()
        if not self.vertical or not isinstance(renderable, ScrollBarRender) \
                or not isinstance(renderable.style, Style):
            return super().render_lines(crop)
        width, height = self.size
        filters = tuple(self.get_line_filters())
        background = self.background_colors[1]
        base = self.rich_style  # beneath the bar's own, as Textual draws any content
        shows = (width, height, renderable.virtual_size, renderable.window_size,
                 renderable.position, renderable.style, base, filters, background)
        if self._drawn is None or self._drawn[0] != shows:
            self._drawn = shows, self._draw(renderable, width, height, base, filters,
                                            background)
        lines = self._drawn[1][crop.y:crop.bottom]
        if crop.column_span != (0, width):
            lines = [line.crop(crop.x, crop.right) for line in lines]
        return lines

    @staticmethod
    def _draw(bar: ScrollBarRender, width: int, height: int, base: Style, filters: tuple,
              background: TextualColor) -> list[Strip]:
        style = bar.style
        assert isinstance(style, Style)  # (checked by the caller)
        segments = bar.render_bar(size=height, virtual_size=bar.virtual_size,
                                  window_size=bar.window_size, position=bar.position,
                                  thickness=width, vertical=True,
                                  back_color=style.bgcolor or _BACK,
                                  bar_color=style.color or _BAR).segments
        made: dict[Segment, Strip] = {}  # a bar has four or five kinds of row: each made once
        lines = []
        for segment in segments:  # one per row: the vertical bar's segments are its rows
            line = made.get(segment)
            if line is None:
                line = Strip([Segment(segment.text, base + segment.style)], width)
                for line_filter in filters:
                    line = line.apply_filter(line_filter, background)
                made[segment] = line
            lines.append(line)
        return lines


def light_vertical_scrollbar(widget: Widget) -> ScrollBar:
    """What `Widget.vertical_scrollbar` makes on first use (Textual 8.2.8, pinned), with a
    `LightScrollBar` in place of the `ScrollBar`."""
    if widget._vertical_scrollbar is None:
        bar = widget._vertical_scrollbar = LightScrollBar(
            vertical=True, name="vertical", thickness=widget.scrollbar_size_vertical)
        bar.display = False
        widget.app._start_widget(widget, bar)
    return widget._vertical_scrollbar
