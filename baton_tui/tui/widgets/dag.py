"""The dependency graph as text: one row per level, every level and every task (rows wrap,
the box scrolls), with the selected task's inputs and dependents marked in words too.

Laid out once per plan shape and width, drawn a line at a time: moving the selection
redraws the lines that hold it and its neighbours, not a 10,000-task text.
`g` opens the same graph full-screen (screens/dag.py).
"""

from __future__ import annotations

from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from baton_tui.api import Snapshot, TaskSnap
from baton_tui.tui.widgets.finished_lines import FinishedLines
from baton_tui.tui.widgets.text_lines import text_lines

INDENT = 2  # between two tasks on a row


class Piece(NamedTuple):
    """A run of text on a graph line; `task` is set on a task's `#id`."""

    text: str
    task: int | None = None
    dim: bool = False


def shape(board: Snapshot) -> tuple:
    """What the layout depends on: the tasks, their order, levels, inputs and titles."""
    return tuple((t.id, t.level, t.depends_on, t.title) for t in board.rows)


def _place(task: TaskSnap | None) -> tuple[int, tuple[int, ...], str] | None:
    """Where one task sits in the layout: its level and inputs (None: not on the board)."""
    return None if task is None else (task.level, task.depends_on, task.title)


TITLE = 28  # the longest title the full view shows beside an id


def dag_lines(board: Snapshot, width: int, titles: bool = False
              ) -> tuple[list[list[Piece]], dict[int, int]]:
    """Every level as rows of `#id←deps` tokens wrapped to `width` (continuations indented
    under the first task), and the line each task is on; `titles`: `#id title←deps`, a
    title cut to TITLE characters (the full view has the room)."""
    by_level: dict[int, list] = {}
    for task in board.rows:
        by_level.setdefault(task.level, []).append(task)
    lines: list[list[Piece]] = []
    line_of: dict[int, int] = {}
    for level in sorted(by_level):
        prefix = f"L{level} "
        line, used = [Piece(prefix, dim=True)], len(prefix)
        for task in by_level[level]:
            label = f"#{task.id}"
            if titles:
                name = task.title if len(task.title) <= TITLE else task.title[:TITLE - 1] + "…"
                label += f" {name}"
            deps = "←" + ",".join(map(str, task.depends_on)) if task.depends_on else ""
            size = len(label) + len(deps)
            if len(line) > 1 and used + INDENT + size > width:
                lines.append(line)
                line, used = [Piece(" " * len(prefix))], len(prefix)
            elif len(line) > 1:
                line.append(Piece(" " * INDENT))
                used += INDENT
            line.append(Piece(label, task.id))
            if deps:
                line.append(Piece(deps, dim=True))
            used += size
            line_of[task.id] = len(lines)
        lines.append(line)
    return lines, line_of


def related(board: Snapshot, selected: int | None) -> tuple[set[int], set[int]]:
    """(inputs, dependents) of the selected task — direct ones."""
    task = board.task(selected)
    if task is None:
        return set(), set()
    return set(task.depends_on), set(board.dependents(task.id))


def line_text(pieces: list[Piece], selected: int | None, inputs: set[int],
              dependents: set[int]) -> Text:
    """One graph line: the selected task in reverse, its inputs underlined, its dependents in
    italics, other tasks bold, levels and edges dim."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for piece in pieces:
        if piece.task is None:
            text.append(piece.text, style="dim" if piece.dim else "")
        else:
            text.append(piece.text, style="bold reverse" if piece.task == selected else (
                "bold underline" if piece.task in inputs else
                "bold italic" if piece.task in dependents else "bold"))
    return text


def neighbours_text(board: Snapshot, selected: int | None) -> Text:
    """`#2: needs #1 · feeds #3 #8` — the selected task's inputs and dependents in words
    (one line always: the graph's height never changes with the selection)."""
    inputs, dependents = related(board, selected)
    text = Text(no_wrap=True, overflow="ellipsis")
    if selected is None:
        return text
    text.append(f"#{selected}: ", style="dim")
    text.append("needs " + " ".join(f"#{i}" for i in sorted(inputs)) if inputs
                else "needs nothing", style="underline" if inputs else "dim")
    text.append(" · ", style="dim")
    text.append("feeds " + " ".join(f"#{d}" for d in sorted(dependents)) if dependents
                else "feeds nothing", style="italic" if dependents else "dim")
    return text


CACHE_LINES = 2000  # drawn lines kept (a line per selection it was drawn under)


class DagLines(FinishedLines, ScrollView, can_focus=False):
    """The graph's lines; only the ones on screen are drawn, each kept per selection (a line
    looks only at the selected task and its neighbours) and finished once (`FinishedLines`),
    so a cursor going back and forth draws nothing again."""

    def __init__(self, *, id: str | None = None, titles: bool = False) -> None:
        super().__init__(id=id)
        self.titles = titles
        self.board: Snapshot | None = None
        self.selected: int | None = None
        self.lines: list[list[Piece]] = []
        self.line_of: dict[int, int] = {}
        self._width = -1
        self._marks: tuple[set[int], set[int]] = (set(), set())
        self._cache: dict[tuple[int, int | None], Strip] = {}  # (line, selected) -> drawn
        self._style: Style | None = None  # the widget's own, until the styles change
        self._blank: Strip | None = None  # below the graph (one object: FinishedLines)

    def show(self, board: Snapshot, selected: int | None) -> None:
        """A board of a new shape: its lines laid out again, the selection marked."""
        self.board = board
        self._layout()
        self.select(selected)

    def select(self, selected: int | None) -> None:
        """Move the selection: redraw the lines of the old and new task and their neighbours."""
        if self.board is None:
            return
        old = {self.selected, *self._marks[0], *self._marks[1]}
        self.selected = selected
        self._marks = related(self.board, selected)
        for task_id in old | {selected, *self._marks[0], *self._marks[1]}:
            line = self.line_of.get(task_id) if task_id is not None else None
            if line is not None:
                self.refresh_line(line)
        line = self.line_of.get(selected) if selected is not None else None
        top = self.scroll_offset.y
        if line is not None and not top <= line < top + self.size.height:
            self.scroll_to_region(Region(0, line, 1, 1), animate=False, force=True,
                                  immediate=True)

    def _layout(self) -> None:
        self._width = self.size.width
        if self.board is None or not self._width:
            return  # (not sized yet, or hidden: the resize that sizes it lays it out)
        self.lines, self.line_of = dag_lines(self.board, max(8, self._width), self.titles)
        self._cache.clear()
        self.virtual_size = Size(self._width, len(self.lines))
        self.refresh()

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._layout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()
        self._style = self._blank = None

    def render_line(self, y: int) -> Strip:
        at = self.scroll_offset.y + y
        width = self.size.width
        if self._style is None:
            self._style = self.rich_style  # (walks every ancestor: asked once)
        if not 0 <= at < len(self.lines):
            if self._blank is None or self._blank.cell_length != width:
                self._blank = Strip.blank(width, self._style)
            return self._blank
        strip = self._cache.get((at, self.selected))
        if strip is None:
            if len(self._cache) >= CACHE_LINES:
                self._cache.clear()
            text = line_text(self.lines[at], self.selected, *self._marks)
            strip = Strip(text_lines(self, text, width, self._style)[0], width)
            self._cache[at, self.selected] = strip
        return strip


class NeighboursLine(FinishedLines, Widget, can_focus=False):
    """`neighbours_text` of the selected task, one line drawn through the Line API and kept
    per selection while the graph's shape holds, finished once (`FinishedLines`): a cursor
    going back and forth draws nothing again; a Static would lay its text out anew on every
    move."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.board: Snapshot | None = None
        self.selected: int | None = None
        self._cache: dict[int | None, Strip] = {}  # selected -> drawn
        self._width = -1
        self._style: Style | None = None  # the widget's own, until the styles change

    def show(self, board: Snapshot, selected: int | None, relaid: bool) -> None:
        """`relaid`: the graph's shape changed (the lines kept no longer hold)."""
        self.board = board
        if relaid:
            self._cache.clear()
        if relaid or selected != self.selected:
            self.selected = selected
            self.refresh()

    def render(self) -> Text:
        """The words shown (what a test, or a screen reader, reads)."""
        return Text() if self.board is None else neighbours_text(self.board, self.selected)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()
        self._style = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self._style is None:
            self._style = self.rich_style  # (walks every ancestor: asked once)
        if y or self.board is None:
            return Strip.blank(width, self._style)
        if width != self._width:
            self._cache.clear()
            self._width = width
        strip = self._cache.get(self.selected)
        if strip is None:
            text = neighbours_text(self.board, self.selected)
            strip = self._cache[self.selected] = Strip(
                text_lines(self, text, width, self._style)[0], width)
        return strip


class DagView(Vertical, can_focus=False):
    """The graph and, under it, the selected task's neighbours in words; hidden when the
    plan has no dependencies (`full`: the whole screen, for `g`)."""

    def __init__(self, *, id: str | None = None, full: bool = False) -> None:
        super().__init__(id=id, classes="-full" if full else "")
        self.board: Snapshot | None = None
        self._shape: tuple | None = None

    def compose(self) -> ComposeResult:
        yield DagLines(id="dag-lines", titles=self.has_class("-full"))
        yield NeighboursLine(id="dag-neighbours")

    def show(self, board: Snapshot, selected: int | None = None,
             changed: frozenset[int] | None = None, since: Snapshot | None = None) -> None:
        """A new board: laid out again only when the plan's shape changed (states do not
        show here). `changed` names the tasks that differ from `since` (None: any may)."""
        if self.board is not None and since is self.board and changed is not None and all(
                _place(since.task(i)) == _place(board.task(i)) for i in changed):
            self.board = board
            return self.select(selected)
        layout = shape(board)
        same = self.board is not None and layout == self._shape
        self.board, self._shape = board, layout
        if same:
            return self.select(selected)
        has_edges = any(t.depends_on for t in board.rows)
        self.display = has_edges or self.has_class("-full")
        depth = 1 + max((t.level for t in board.rows), default=0)
        self.border_subtitle = f"{depth} levels" + ("" if self.has_class("-full") else
                                                    " · g: full view")
        if self.display:
            self.query_one(DagLines).show(board, selected)
            self.query_one(NeighboursLine).show(board, selected, relaid=True)

    def select(self, selected: int | None) -> None:
        lines = self.query_one(DagLines)
        if self.board is not None and self.display and selected != lines.selected:
            lines.select(selected)
            self.query_one(NeighboursLine).show(self.board, selected, relaid=False)
