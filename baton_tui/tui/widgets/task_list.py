"""The plan's cards as one virtual list: every card laid out, only those on screen drawn.

A widget per card made a 1,000-task plan slow to open and a 10,000-task one slow to move
through. Here each card is a height (`card_height`, cheap) and a running top; drawing a
line finds its card by bisection and renders that card alone, cached — selected and not, so
a cursor going back and forth renders nothing — until its task or the clock changes it. A new
board redraws, of the cards whose tasks changed, only the lines that now read differently.
After each frame the cards a j or k would show next are drawn ahead (the cursor's neighbours
selected, its own card not), so the frame a key asks for renders no card: running cards
change every second, and a key would otherwise pay for two of them before its paint.
The cards' styles are asked of Textual once per style update: each ask walks every ancestor.
A scroll moves every line, and Textual's styles cache keeps lines by their row: finished
lines are kept by what they show instead (`FinishedLines`), so a j or k that scrolls draws
no line it has drawn before — and its scrollbar is drawn without the console
(`LightScrollBar`).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Callable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip

from baton_tui.api import TaskSnap
from baton_tui.core.events import State
from baton_tui.tui.widgets.finished_lines import FinishedLines
from baton_tui.tui.widgets.light_scrollbar import light_vertical_scrollbar
from baton_tui.tui.widgets.task_card import card_height, card_state, card_text, ticks
from baton_tui.tui.widgets.text_lines import text_lines

EDGE = "▌"  # the card's colour edge (Textual's `outer` left border)
# The states with an edge colour of their own, and `blocked` (card_state's word for a task
# with `blocked_by` set).
EDGE_STATES = (*map(str, (State.RUNNING, State.DONE, State.LANDED, State.MERGED, State.PAUSED,
                          State.CHECKPOINT, State.FAILED, State.PARKED)), "blocked")
CACHE_CARDS = 400  # rendered cards kept; far more than a screen holds
CACHE_LINES = 4_000  # rendered card lines kept, by what they say


class TaskList(FinishedLines, ScrollView, can_focus=False):
    """Cards in dependency order with a cursor; the plan pane owns the keys."""

    COMPONENT_CLASSES = {"task-list--edge", "task-list--edge-selected", "task-list--selected",
                         *(f"task-list--edge-{state}" for state in EDGE_STATES)}

    class Clicked(Message):
        """The mouse picked a card (the plan pane moves its cursor there)."""

        def __init__(self, task_id: int) -> None:
            super().__init__()
            self.task_id = task_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: tuple[TaskSnap, ...] = ()
        self.index: dict[int, int] = {}   # task id -> position
        self.cursor = 0
        self.now: float | None = None
        # Which players run no agent (their check is the task); from the players' facts,
        # which arrive after the first frame.
        self.agentless: Callable[[str], bool] = lambda name: False
        self.heights: list[int] = []      # each card's lines, its margin line included
        self.tops: list[int] = []         # the first line of each card
        self.ticking: set[int] = set()    # positions of cards that show a countdown
        self._cards: dict[tuple[int, bool], list[Strip]] = {}  # (position, selected) -> lines
        self._width = 0
        self._style_key: tuple = ()
        self._looks: dict[tuple[str, bool], Style] = {}
        self._ahead_due = False
        self._card_lines: dict[tuple, list[Segment]] = {}  # (what it says, look) -> drawing
        self._view: tuple[int, int] | None = None  # (scroll y, width) while a frame is drawn
        self._blank: Strip | None = None  # the margin below a card (one object: FinishedLines)

    # what to show ---------------------------------------------------------------------
    def show(self, rows: tuple[TaskSnap, ...], cursor: int, now: float | None,
             changed: frozenset[int] | None) -> None:
        """Take a new board: `changed` names the tasks whose rows differ from the last ones
        shown (None: the list itself changed, lay everything out again)."""
        clock_moved = now != self.now
        self.now = now
        if changed is None or len(rows) != len(self.rows):
            self.rows, self.cursor = rows, cursor
            self.index = {task.id: at for at, task in enumerate(rows)}
            self.heights = [card_height(task) + 1 for task in rows]
            self.ticking = {at for at, task in enumerate(rows) if ticks(task)}
            self._clear_cards()
            self._relayout()
            return
        self.rows = rows
        moved = {self.index[task_id] for task_id in changed if task_id in self.index}
        if clock_moved:
            moved |= self.ticking
        grew = False
        shown: dict[int, list[Strip]] = {}  # the drawings on screen of the cards that moved
        for at in moved:
            task = rows[at]
            height = card_height(task) + 1
            if height != self.heights[at]:
                self.heights[at] = height
                grew = True
            self.ticking.discard(at)
            if ticks(task):
                self.ticking.add(at)
            drawn = self._cards.get((at, at == self.cursor))
            if drawn is not None:
                shown[at] = drawn
            self._forget(at)
        if cursor != self.cursor:
            self.move_cursor(cursor)
        if grew:
            self._relayout()
        else:
            for at in moved:
                self._refresh_changed_lines(at, shown.get(at))
        self._draw_ahead_later()

    def _refresh_changed_lines(self, at: int, drawn: list[Strip] | None) -> None:
        """Card `at` changed: redraw only its lines that differ from `drawn` (what the screen
        shows; None: all). A running card's time and last words change every second, its
        other lines seldom: the screen and Textual's line cache redraw a line, not the card."""
        if not 0 <= at < len(self.rows):
            return
        top = self.tops[at]
        visible = top < self.scroll_offset.y + self.size.height and \
            self.scroll_offset.y < top + self.heights[at]
        width = self.size.width
        if drawn is None or not visible or width != self._width or width <= 0:
            self._refresh_card(at)
            return
        key = (at, at == self.cursor)
        strips = self._cards[key] = self._render_card(at, width)
        for line, strip in enumerate(strips):
            if line >= len(drawn) or strip != drawn[line]:
                self.refresh_line(top + line)

    def move_cursor(self, cursor: int) -> None:
        """Redraw the two cards the cursor left and reached, and bring the new one into view."""
        old, self.cursor = self.cursor, cursor
        for at in (old, cursor):
            self._refresh_card(at)
        self.scroll_to_card(cursor)
        self._draw_ahead_later()

    def _draw_ahead_later(self) -> None:
        if not self._ahead_due and self.is_mounted:
            self._ahead_due = True
            self.call_after_refresh(self._draw_ahead)

    def _draw_ahead(self) -> None:
        """Draw, after the frame, what the next cursor move shows: the cards beside the
        cursor selected and the cursor's own card not (kept until their tasks change)."""
        self._ahead_due = False
        width = self.size.width
        if width <= 0 or width != self._width:
            return  # not drawn yet at this width: render_line starts the cache
        for at, selected in ((self.cursor + 1, True), (self.cursor - 1, True),
                             (self.cursor, False)):
            if 0 <= at < len(self.rows) and (at, selected) not in self._cards:
                if len(self._cards) >= CACHE_CARDS:
                    return
                self._cards[at, selected] = self._render_card(at, width, selected)

    def scroll_to_card(self, at: int) -> None:
        """Bring card `at` into view (nothing moves, nothing redraws, when it is in view)."""
        if 0 <= at < len(self.rows):
            top, bottom = self.tops[at], self.tops[at] + self.heights[at] - 1
            if self.scroll_offset.y <= top and bottom <= self.scroll_offset.y + self.size.height:
                return
            self.scroll_to_region(Region(0, self.tops[at], max(1, self.size.width),
                                         self.heights[at] - 1), animate=False, force=True,
                                  immediate=True)

    def _relayout(self) -> None:
        self.tops = [0, *accumulate(self.heights)][:-1] if self.heights else []
        self.virtual_size = Size(self.size.width, self.tops[-1] + self.heights[-1]
                                 if self.heights else 0)
        self.refresh()
        self.scroll_to_card(self.cursor)

    def _clear_cards(self) -> None:
        """Every drawing is stale (a new list, width or look): drop them, draw ahead anew."""
        self._cards.clear()
        self._card_lines.clear()
        self._blank = None
        self._draw_ahead_later()

    def _forget(self, at: int) -> None:
        """Card `at` changed: neither of its drawings holds."""
        self._cards.pop((at, False), None)
        self._cards.pop((at, True), None)

    def _refresh_card(self, at: int) -> None:
        """Redraw card `at`'s text (its margin line below is blank whatever it shows)."""
        if 0 <= at < len(self.rows):
            self.refresh_lines(self.tops[at], self.heights[at] - 1)

    # drawing ---------------------------------------------------------------------------
    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """A scroll redraws the bar as well as the list: one drawn without the console."""
        return light_vertical_scrollbar(self)

    def on_resize(self) -> None:
        # A new width is noticed where lines are drawn (the cards' cache is cut to it there).
        self.virtual_size = Size(self.size.width, self.virtual_size.height)

    def notify_style_update(self) -> None:
        # Textual calls this whenever the styles are applied again (an ancestor's class or
        # focus changed, say); the cards are drawn again only when their colours changed.
        super().notify_style_update()
        self._looks.clear()
        if self.is_mounted:
            key = (self.rich_style, *(self.get_component_rich_style(name)
                                      for name in sorted(self.COMPONENT_CLASSES)))
            if key != self._style_key:
                self._style_key = key
                self._clear_cards()

    def _look(self, name: str = "", partial: bool = False) -> Style:
        """The cards' base style (`name` empty) or a component's, until the styles change."""
        style = self._looks.get((name, partial))
        if style is None:
            style = self._looks[name, partial] = (
                self.get_component_rich_style(name, partial=partial) if name
                else self.rich_style)
        return style

    def set_agentless(self, agentless: Callable[[str], bool]) -> None:
        """The players' facts arrived: cards of agentless players say so."""
        self.agentless = agentless
        self._clear_cards()
        self.refresh()

    def _card_at(self, line: int) -> int:
        """The position of the card that holds `line` of the list (-1 above the first)."""
        return bisect_right(self.tops, line) - 1

    def render_lines(self, crop: Region) -> list[Strip]:
        # Textual asks `render_line` for every line of the list in every frame that draws any
        # of it; where the list is scrolled to and how wide it is are asked once here (each
        # ask walks the screen's map of widgets).
        self._view = (self.scroll_offset.y, self.size.width)
        try:
            return super().render_lines(crop)
        finally:
            self._view = None

    def render_line(self, y: int) -> Strip:
        top, width = self._view or (self.scroll_offset.y, self.size.width)
        line = top + y
        at = self._card_at(line)
        if width != self._width:
            self._clear_cards()
            self._width = width
        if at < 0 or at >= len(self.rows) or width <= 0:
            return self._blank_line(width)
        key = (at, at == self.cursor)
        strips = self._cards.get(key)
        if strips is None:
            if len(self._cards) >= CACHE_CARDS:
                self._cards.clear()
            strips = self._cards[key] = self._render_card(at, width)
        within = line - self.tops[at]
        return strips[within] if within < len(strips) else self._blank_line(width)

    def _blank_line(self, width: int) -> Strip:
        if self._blank is None:
            self._blank = Strip.blank(width, self._look())
        return self._blank

    def _render_card(self, at: int, width: int, selected: bool | None = None) -> list[Strip]:
        """Card `at`'s lines; `selected` (default: whether the cursor is on it) picks its look."""
        task = self.rows[at]
        if selected is None:
            selected = at == self.cursor
        base = self._look()
        style = base + self._look("task-list--selected") if selected else base
        state = card_state(task)
        edge_name = (f"task-list--edge-{state}" if state in EDGE_STATES
                     else "task-list--edge-selected" if selected else "task-list--edge")
        edge = style + self._look(edge_name, partial=True)
        text = card_text(task, selected, self.now, self.agentless(task.player), width - 1)
        return [Strip([Segment(EDGE, edge), *self._line(line, width - 1, style)], width)
                for line in text.split("\n", allow_blank=True)]

    def _line(self, line: Text, width: int, style: Style) -> list[Segment]:
        """One line of a card, drawn once per what it says: a running card's time and last
        words change every second, its other lines seldom."""
        key = (line.plain, tuple(line.spans), line.style, style, width)
        segments = self._card_lines.get(key)
        if segments is None:
            if len(self._card_lines) >= CACHE_LINES:
                self._card_lines.clear()
            segments = self._card_lines[key] = text_lines(self, line, width, style)[0]
        return segments

    def on_click(self, event: events.Click) -> None:
        line = self.scroll_offset.y + event.y
        at = self._card_at(line)
        if 0 <= at < len(self.rows) and line - self.tops[at] < self.heights[at] - 1:
            self.post_message(self.Clicked(self.rows[at].id))
