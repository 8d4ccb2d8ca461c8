"""The main screen, which paints what a key changed as soon as it is ready.

Textual paints a screen on a timer at its frame rate (60 a second): a change made within a
frame's time of the last paint waits for the timer's next tick. While agents stream, the
board repaints a card or the header every few hundred milliseconds, so a cursor key would
often wait up to 16 ms behind one — a bare app, which paints nothing between keys, never
does. `paint_soon` marks the change as a key's: when the screen next goes idle (its widgets'
updates taken in), it paints at once, as the timer's tick would (Textual 8.2.8, pinned);
everything else keeps the timer's pace.
"""

from __future__ import annotations

from textual import events
from textual.screen import Screen


class PromptScreen(Screen):
    """A `Screen` that paints a key's change at its next idle, not at the timer's tick."""

    def __init__(self, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._prompt = False  # a key's change waits: paint at the next idle

    def paint_soon(self) -> None:
        self._prompt = True
        self.check_idle()

    async def _on_idle(self, event: events.Idle) -> None:
        # (Textual calls each class's `_on_idle` along the MRO: this one first, then Screen's
        # unless the default is prevented here.) The key's change may reach the screen after
        # an idle or two (each widget hands its own over when it goes idle): the wish waits
        # for it, until a paint.
        if self._prompt and self.is_current and not self.app._batch_count and (
                self._dirty_widgets or self._layout_required or self._scroll_required
                or self._repaint_required):
            event.prevent_default()
            self._on_timer_update()

    def _on_timer_update(self) -> None:
        self._prompt = False  # any paint, the timer's or a prompt one, shows what waited
        super()._on_timer_update()


def paint_soon(screen: Screen) -> None:
    """Paint what a key just changed on `screen` as soon as it is ready (a `PromptScreen`;
    any other paints at the timer's pace)."""
    if isinstance(screen, PromptScreen):
        screen.paint_soon()
