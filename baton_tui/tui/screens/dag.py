"""The dependency overview, full-screen: every level, scrollable, the selected task's inputs
and dependents marked; j/k move the selection through the tasks."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from baton_tui.api import Snapshot
from baton_tui.tui.widgets.dag import DagView


class DagScreen(Screen[int | None]):
    """Returns the task selected last (the plan pane follows it), or None."""

    BINDINGS = [Binding("escape,q,g", "close", "back", id="dag-back"),
                Binding("j,down", "move(1)", "next", id="dag-down"),
                Binding("k,up", "move(-1)", "previous", id="dag-up")]

    def __init__(self, board: Snapshot, selected: int | None) -> None:
        super().__init__()
        self.board = board
        self.order = [t.id for t in board.rows]
        self.at = {task_id: at for at, task_id in enumerate(self.order)}
        self.selected = selected if selected in self.at else (
            self.order[0] if self.order else None)

    def compose(self) -> ComposeResult:
        view = DagView(id="dag", full=True)
        view.border_title = f"dependencies of {self.board.slug}"
        yield view
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DagView).show(self.board, self.selected)

    def action_move(self, step: int) -> None:
        if not self.order or self.selected is None:
            return
        at = self.at.get(self.selected, 0)
        self.selected = self.order[max(0, min(len(self.order) - 1, at + step))]
        self.query_one(DagView).select(self.selected)

    def action_close(self) -> None:
        self.dismiss(self.selected)
