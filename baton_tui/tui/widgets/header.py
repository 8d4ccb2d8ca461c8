"""The top line: repository, plan, its state, approval, autonomy, overall progress, the budget
meter and what stopped the run — whatever the snapshot has (fields that a Baton without
them lacks are skipped, not guessed)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from baton_tui.api import Snapshot, snapshot_empty
from baton_tui.core.events import State

DONE_WORDS = frozenset({State.DONE, State.LANDED, State.MERGED})
METER = 8


def progress(board: Snapshot) -> str | None:
    """`3/6 done` over the tasks that still count (discarded ones do not)."""
    counted = [t for t in board.tasks if t.state != State.DISCARDED]
    if not counted or not any(t.started for t in counted):
        return None
    return f"{sum(t.state in DONE_WORDS for t in counted)}/{len(counted)} done"


def budget_meter(budget: Any) -> tuple[str, bool] | None:
    """`budget ▰▰▰▱▱▱▱▱ 40% tokens` for the limit nearest to its end; (text, reached)."""
    if not isinstance(budget, dict):
        return None
    limits, used = budget.get("limits") or {}, budget.get("used") or {}
    shares = [(used.get(key) / limit, key) for key, limit in limits.items()
              if limit and isinstance(used.get(key), (int, float))]
    if not shares:
        return None
    share, key = max(shares)
    filled = min(METER, int(round(share * METER)))
    return (f"budget {'▰' * filled}{'▱' * (METER - filled)} {share:.0%} {key}", share >= 1)


def header_text(repo_name: str, board: Snapshot) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" baton ", style="bold reverse")
    text.append(f" {repo_name} ")
    if board.empty:
        text.append("· no plan yet", style="dim")
        return text
    text.append(f"· {board.slug} · ")
    text.append(board.state, style="bold")
    approval = "approved" if board.approved else "not approved"
    if approval != board.state:  # "approved · approved" says it twice
        text.append(" · ")
        text.append(approval, style="bold" if board.approved else "italic")
    text.append(f" · autonomy {board.autonomy}")
    done = progress(board)
    if done:
        text.append(f" · {done}")
    meter = budget_meter(getattr(board, "budget", None))
    if meter:
        text.append(" · ")
        text.append(meter[0], style="bold" if meter[1] else "")
    stopped = getattr(board, "stopped_by", None)
    if stopped:
        text.append(f" · stopped by {stopped}", style="bold")
    if board.conductor_pid:
        text.append(f" · conductor pid {board.conductor_pid}", style="dim")
    return text


class BatonHeader(Static):
    """No clock here: the header changes only when the plan does (stable snapshots)."""

    def __init__(self, repo_name: str) -> None:
        self.shown = header_text(repo_name, snapshot_empty())
        super().__init__(self.shown, id="header")
        self.repo_name = repo_name

    def show(self, board: Snapshot) -> None:
        text = header_text(self.repo_name, board)
        if text != self.shown:
            self.shown = text
            self.update(text, layout=False)  # one line, always: no layout pass
