"""The dependency graph as text: one row per level, every level and every task (rows wrap,
the box scrolls), with the selected task's inputs and dependents marked in words too.

`g` opens the same graph full-screen (screens/dag.py).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from baton_tui.api import Snapshot


def related(board: Snapshot, selected: int | None) -> tuple[set[int], set[int]]:
    """(inputs, dependents) of the selected task — direct ones."""
    task = board.task(selected)
    if task is None:
        return set(), set()
    return set(task.depends_on), set(board.dependents(task.id))


def dag_text(board: Snapshot, selected: int | None = None) -> Text:
    """`L0 #1 #2` / `L1 #3←1,2` … — every level, edges after the arrow; the selected task in
    reverse, its inputs underlined, its dependents in italics, and a closing line saying so."""
    text = Text()
    inputs, dependents = related(board, selected)
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
            style = "bold reverse" if task.id == selected else (
                "bold underline" if task.id in inputs else
                "bold italic" if task.id in dependents else "bold")
            text.append(f"#{task.id}", style=style)
            if task.depends_on:
                text.append("←" + ",".join(map(str, task.depends_on)), style="dim")
    if selected is not None and (inputs or dependents):
        text.append(f"\n#{selected}: ", style="dim")
        text.append("needs " + " ".join(f"#{i}" for i in sorted(inputs)) if inputs
                    else "needs nothing", style="underline" if inputs else "dim")
        text.append(" · ", style="dim")
        text.append("feeds " + " ".join(f"#{d}" for d in sorted(dependents)) if dependents
                    else "feeds nothing", style="italic" if dependents else "dim")
    return text


class DagView(VerticalScroll, can_focus=False):
    """A compact graph above the cards; hidden when the plan has no dependencies."""

    def compose(self) -> ComposeResult:
        yield Static(id="dag-text")

    def show(self, board: Snapshot, selected: int | None = None) -> None:
        has_edges = any(t.depends_on for t in board.rows)
        self.display = has_edges
        if has_edges:
            self.query_one("#dag-text", Static).update(dag_text(board, selected))
            depth = 1 + max((t.level for t in board.rows), default=0)
            self.border_subtitle = f"{depth} levels · g: full view"
