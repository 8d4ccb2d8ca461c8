"""Lines finished once per what they show, for widgets drawn through the Line API.

Textual's styles cache finishes each line a widget's `render_line` gives (its background,
effects, the app's filters) and keeps the result by its row: a scroll, or a selection moving
back and forth, finishes the same lines again at every move. For a widget with no border,
outline or padding a line's finishing does not depend on its row, so `FinishedLines` keeps
each finished line by the line it was made from (the widget hands back the same `Strip`
while a line shows the same thing) and finishes only lines it has not seen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.geometry import Region
from textual.strip import Strip

if TYPE_CHECKING:
    from textual.widget import Widget

    _Mixed = Widget
else:  # not a widget class itself: a DOM class in the MRO would move the widget's default CSS
    _Mixed = object

CACHE_FINISHED = 4_000  # finished lines kept; far more than a screen shows


class FinishedLines(_Mixed):
    """Mixin for a Line API widget (`render_line`) whose lines are kept `Strip`s; first among
    its bases."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # id of a line `render_line` gave -> (that line, the line finished), under
        # `_finished_look`: what else the finishing depends on
        self._finished: dict[int, tuple[Strip, Strip]] = {}
        self._finished_look: tuple = ()

    def render_lines(self, crop: Region) -> list[Strip]:
        look = self._finishing_look()
        if look is None:
            return super().render_lines(crop)
        if look != self._finished_look:
            self._finished.clear()
            self._finished_look = look
        finished = self._finished
        lines = []
        for y in crop.line_range:
            line = self.render_line(y)
            seen = finished.get(id(line))
            if seen is None or seen[0] is not line:
                if len(finished) >= CACHE_FINISHED:
                    finished.clear()
                seen = finished[id(line)] = (line, self._finish(line, look))
            lines.append(seen[1])
        width = look[0].width
        if crop.column_span != (0, width):
            lines = [line.crop(crop.x, crop.right) for line in lines]
        return lines

    def _finishing_look(self) -> tuple | None:
        """What a line's finishing depends on besides the line: the widget's sizes and
        colours, the app's filters and themes, the widget's effects. None when it has a
        border, an outline or padding (a line's finishing then depends on its row)."""
        styles = self.styles
        if any(styles.gutter) or any(edge for edge, _color in styles.outline):
            return None
        app = self.app
        return (self.region.size, self.content_region.size, self.background_colors,
                tuple(self.get_line_filters()), styles.tint, self.opacity, styles.text_opacity,
                styles.hatch if styles.has_rule("hatch") else None, app.ansi_theme,
                app.native_ansi_color)

    def _finish(self, line: Strip, look: tuple) -> Strip:
        """`line` as Textual's styles cache finishes a content line of a widget with no
        border, outline or padding (Textual 8.2.8, pinned): background and effects, then
        the app's filters."""
        size, content_size, (base_background, background), filters = look[:4]
        finished = self._styles_cache.render_line(
            self.styles, 0, size, content_size, self.styles.padding, base_background,
            background, lambda _y: line, None, None, look[5], look[8], look[9])
        for line_filter in filters:
            finished = finished.apply_filter(line_filter, background)
        return finished
