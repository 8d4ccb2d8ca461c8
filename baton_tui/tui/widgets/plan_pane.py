"""The plan pane: the DAG, then one card per task in dependency order, and a cursor."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from baton_tui.tui import bindings
from baton_tui.api import Snapshot, TaskSnap, snapshot_empty
from baton_tui.tui.widgets.dag import DagView
from baton_tui.tui.widgets.task_card import TaskCard

EMPTY = ("No plan yet.\n\nState a goal in the chat on the left, or load a plan file with\n"
         "`baton plan --from FILE`.")


class PlanPane(VerticalScroll, can_focus=True):
    """Focusable; j/k move the cursor, the App's actions act on the task under it."""

    BINDINGS = bindings.PLAN_PANE
    cursor = reactive(0, init=False)

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
        yield Vertical(id="cards")

    @property
    def selected_task(self) -> TaskSnap | None:
        if not self.board.rows:
            return None
        return self.board.rows[min(self.cursor, len(self.board.rows) - 1)]

    def show(self, board: Snapshot, now: float | None = None) -> None:
        """Reconcile the cards with a new board: update in place, mount only when ids change.
        `now` is the app's clock (limit countdowns on the cards)."""
        keep = self.selected_task.id if self.selected_task else None
        self.board = board
        self.now = now
        self.query_one("#plan-empty").display = board.empty
        ids = [t.id for t in board.rows]
        if keep in ids:
            self.set_reactive(PlanPane.cursor, ids.index(keep))
        self.cursor = min(self.cursor, max(0, len(ids) - 1))
        self.query_one(DagView).show(board, self.selected_task.id if self.selected_task
                                     else None)
        container = self.query_one("#cards", Vertical)
        cards = list(container.query_children(TaskCard))
        if [c.row.id for c in cards] != ids:
            container.remove_children()
            container.mount_all(TaskCard(t, i == self.cursor, now)
                                for i, t in enumerate(board.rows))
        else:
            for i, (card, row) in enumerate(zip(cards, board.rows)):
                card.show(row, i == self.cursor, now)
        self.border_subtitle = f"{len(ids)} tasks" if ids else ""

    def watch_cursor(self, old: int, new: int) -> None:
        cards = list(self.query_one("#cards").query_children(TaskCard))
        for i in (old, new):
            if 0 <= i < len(cards):
                cards[i].show(cards[i].row, i == new)
        if 0 <= new < len(cards):
            self.scroll_to_widget(cards[new], animate=False)
        self.query_one(DagView).show(self.board, self.selected_task.id if self.selected_task
                                     else None)
        self.post_message(self.CursorMoved(self.selected_task.id if self.selected_task else None))

    def action_cursor(self, step: int) -> None:
        if self.board.rows:
            self.cursor = max(0, min(len(self.board.rows) - 1, self.cursor + step))

    def on_task_card_clicked(self, event: TaskCard.Clicked) -> None:
        event.stop()
        self.focus()
        self.select(event.task_id)

    def select(self, task_id: int) -> None:
        for i, row in enumerate(self.board.rows):
            if row.id == task_id:
                self.cursor = i
