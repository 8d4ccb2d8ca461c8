"""The dependency graph as text: one line per level, with each task's incoming edges."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from baton_tui.api import Snapshot


def dag_text(board: Snapshot) -> Text:
    """`L0 #1 #2` / `L1 #3←1,2` … — levels left to right in rows, edges after the arrow."""
    text = Text(no_wrap=True, overflow="ellipsis")
    by_level: dict[int, list] = {}
    for task in board.rows:
        by_level.setdefault(task.level, []).append(task)
    for level in sorted(by_level):
        if level:
            text.append("\n")
        text.append(f"L{level} ", style="dim")
        for i, task in enumerate(by_level[level]):
            if i:
                text.append("  ")
            text.append(f"#{task.id}", style="bold")
            if task.depends_on:
                text.append("←" + ",".join(map(str, task.depends_on)), style="dim")
    return text


class DagView(Static):
    """A compact graph above the cards; hidden when the plan has no dependencies."""

    def show(self, board: Snapshot) -> None:
        has_edges = any(t.depends_on for t in board.rows)
        self.display = has_edges
        if has_edges:
            self.update(dag_text(board))
