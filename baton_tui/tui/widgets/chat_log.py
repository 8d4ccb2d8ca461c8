"""The chat's log: a RichLog that wraps its lines again when its width changes.

RichLog wraps each line once, at the width it has when the line is written; after a resize
(a terminal narrowed to 80 columns, a split pane) the old lines kept their first width, were
cut at the right edge and a horizontal scrollbar took a row. This one remembers what it was
given (the last `KEPT` entries) and writes it again at the new width.
"""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.events import Resize
from textual.widgets import RichLog

KEPT = 5000


class ChatLog(RichLog):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._written: deque[tuple[object, tuple, dict]] = deque(maxlen=KEPT)
        self._wrapped_at = 0
        self._again = False

    def write(self, content, *args, **kwargs):  # noqa: ANN001 — RichLog.write's own signature
        # Kept once its size is known: RichLog replays the writes it deferred until then.
        if self._size_known and not self._again:
            self._written.append((content.copy() if isinstance(content, Text) else content,
                                  args, kwargs))
        return super().write(content, *args, **kwargs)

    def on_resize(self, event: Resize) -> None:
        # RichLog's own handler runs too (Textual calls each class's): it writes the
        # deferred lines the first time a size is known.
        width = event.size.width
        if width and self._wrapped_at and width != self._wrapped_at:
            self.call_after_refresh(self._wrap_again)
        if width:
            self._wrapped_at = width

    def _wrap_again(self) -> None:
        at_end = self.is_vertical_scroll_end
        self._again = True
        try:
            self.clear()
            for content, args, kwargs in self._written:
                super().write(content, *args, **{**kwargs, "scroll_end": False})
        finally:
            self._again = False
        if at_end:
            self.scroll_end(animate=False, immediate=False, x_axis=False)
