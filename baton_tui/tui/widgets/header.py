"""The top line: repository, plan, its state, approval and autonomy."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from baton_tui.api import Snapshot, snapshot_empty


def header_text(repo_name: str, board: Snapshot) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" baton ", style="bold reverse")
    text.append(f" {repo_name} ")
    if board.empty:
        text.append("· no plan yet", style="dim")
        return text
    text.append(f"· {board.slug} · ")
    text.append(board.state, style="bold")
    text.append(" · ")
    text.append("approved" if board.approved else "not approved",
                style="bold" if board.approved else "italic")
    text.append(f" · autonomy {board.autonomy}")
    if board.conductor_pid:
        text.append(f" · conductor pid {board.conductor_pid}", style="dim")
    return text


class BatonHeader(Static):
    """No clock here: the header changes only when the plan does (stable snapshots)."""

    def __init__(self, repo_name: str) -> None:
        super().__init__(header_text(repo_name, snapshot_empty()), id="header")
        self.repo_name = repo_name

    def show(self, board: Snapshot) -> None:
        self.update(header_text(self.repo_name, board))
