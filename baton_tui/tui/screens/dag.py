"""The dependency overview, full-screen: every level, scrollable, the selected task's inputs
and dependents marked; j/k move the selection through the tasks."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from baton_tui.api import Snapshot
from baton_tui.tui.widgets.dag import dag_text


class DagScreen(Screen[int | None]):
    """Returns the task selected last (the plan pane follows it), or None."""

    BINDINGS = [Binding("escape,q,g", "close", "back", id="dag-back"),
                Binding("j,down", "move(1)", "next", id="dag-down"),
                Binding("k,up", "move(-1)", "previous", id="dag-up")]

    def __init__(self, board: Snapshot, selected: int | None) -> None:
        super().__init__()
        self.board = board
        self.order = [t.id for t in board.rows]
        self.selected = selected if selected in self.order else (
            self.order[0] if self.order else None)

    def compose(self) -> ComposeResult:
        box = VerticalScroll(Static(dag_text(self.board, self.selected), id="dag-full"),
                             id="dag-box")
        box.border_title = f"dependencies of {self.board.slug}"
        yield box
        yield Footer()

    def action_move(self, step: int) -> None:
        if not self.order:
            return
        at = self.order.index(self.selected) if self.selected in self.order else 0
        self.selected = self.order[max(0, min(len(self.order) - 1, at + step))]
        self.query_one("#dag-full", Static).update(dag_text(self.board, self.selected))

    def action_close(self) -> None:
        self.dismiss(self.selected)
