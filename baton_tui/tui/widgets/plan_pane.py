"""The plan pane: the DAG, then one card per task in dependency order, and a cursor."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static

from baton_tui.api import Snapshot, TaskSnap, snapshot_empty
from baton_tui.tui import bindings
from baton_tui.tui.paint import paint_soon
from baton_tui.tui.widgets.dag import DagView
from baton_tui.tui.widgets.task_list import TaskList

EMPTY = ("No plan yet.\n\nState a goal in the chat on the left, or load a plan file with\n"
         "`baton plan --from FILE`.")


class PlanPane(Vertical, can_focus=True):
    """Focusable; j/k move the cursor, the App's actions act on the task under it."""

    BINDINGS = [*bindings.PLAN_PANE]  # a fresh list of Textual's declared type
    cursor = var(0, init=False)  # its watcher redraws the two cards, not the whole pane

    class CursorMoved(Message):
        """The focused task changed."""

        def __init__(self, task_id: int | None) -> None:
            super().__init__()
            self.task_id = task_id

    def __init__(self) -> None:
        super().__init__(id="plan")
        self.board = snapshot_empty()
        self.now: float | None = None
        self.border_title = "plan"

    def compose(self) -> ComposeResult:
        yield Static(EMPTY, id="plan-empty")
        yield DagView(id="dag")
        yield TaskList(id="cards")

    @property
    def selected_task(self) -> TaskSnap | None:
        if not self.board.rows:
            return None
        return self.board.rows[min(self.cursor, len(self.board.rows) - 1)]

    def show(self, board: Snapshot, now: float | None = None,
             changed: frozenset[int] | None = None, since: Snapshot | None = None) -> None:
        """Show a new board; `changed` names the tasks whose rows differ from `since`, the
        board shown last (None: treat every card as new). `now` is the app's clock (limit
        countdowns on the cards). The cursor stays on its task."""
        keep = self.selected_task.id if self.selected_task else None
        self.board = board
        self.now = now
        self.query_one("#plan-empty").display = board.empty
        cards = self.query_one(TaskList)
        at = self.cursor
        if changed is None and keep is not None:  # the list changed: find the task again
            at = next((i for i, t in enumerate(board.rows) if t.id == keep), at)
        self.set_reactive(PlanPane.cursor, max(0, min(at, len(board.rows) - 1)))
        cards.show(board.rows, self.cursor, now, changed)
        self.query_one(DagView).show(board, self.selected_id,
                                     changed if since is not None else None, since)
        subtitle = f"{len(board.rows)} tasks" if board.rows else ""
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle

    @property
    def selected_id(self) -> int | None:
        task = self.selected_task
        return task.id if task else None

    def watch_cursor(self, old: int, new: int) -> None:
        self.query_one(TaskList).move_cursor(new)
        self.query_one(DagView).select(self.selected_id)
        self.post_message(self.CursorMoved(self.selected_id))
        if self.is_mounted:
            paint_soon(self.screen)  # not at the frame timer's next tick

    def action_cursor(self, step: int) -> None:
        if self.board.rows:
            self.cursor = max(0, min(len(self.board.rows) - 1, self.cursor + step))

    def action_cursor_page(self, pages: int) -> None:
        """A screenful of cards up or down (about as many cards as fit)."""
        cards = self.query_one(TaskList)
        per_page = max(1, cards.size.height // 5)
        self.action_cursor(pages * per_page)

    def action_cursor_to(self, at: int) -> None:
        """The first card (0) or the last (-1)."""
        if self.board.rows:
            self.cursor = at % len(self.board.rows)

    def on_task_list_clicked(self, event: TaskList.Clicked) -> None:
        event.stop()
        self.focus()
        self.select(event.task_id)

    def select(self, task_id: int) -> None:
        at = self.query_one(TaskList).index.get(task_id)
        if at is not None:
            self.cursor = at
