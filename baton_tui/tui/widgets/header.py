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


def running(board: Snapshot, named: int = 3) -> str | None:
    """`running #2 #5 +1`: which tasks run now, so progress shows wherever the cursor is."""
    ids = [t.id for t in board.tasks if t.state == State.RUNNING]
    if not ids:
        return None
    more = f" +{len(ids) - named}" if len(ids) > named else ""
    return "running " + " ".join(f"#{i}" for i in ids[:named]) + more


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


def _parts(repo_name: str, board: Snapshot) -> list[tuple[int, str, str]]:
    """(rank, words, style) in reading order; rank 0 is kept longest when space runs out."""
    if board.empty:
        return [(1, f" {repo_name} ", ""), (0, "· no plan yet", "dim")]
    parts = [(6, f" {repo_name} ", ""), (5, f"· {board.slug} ", ""),
             (0, f"· {board.state}", "bold")]
    approval = "approved" if board.approved else "not approved"
    if approval != board.state:  # "approved · approved" says it twice
        parts.append((4, f" · {approval}", "bold" if board.approved else "italic"))
    parts.append((3, f" · autonomy {board.autonomy}", ""))
    done = progress(board)
    if done:
        parts.append((1, f" · {done}", ""))
    now = running(board)
    if now:
        parts.append((3, f" · {now}", "bold"))  # after autonomy when space runs out
    meter = budget_meter(getattr(board, "budget", None))
    if meter:
        parts.append((2, f" · {meter[0]}", "bold" if meter[1] else ""))
    stopped = getattr(board, "stopped_by", None)
    if stopped:
        parts.append((0, f" · stopped by {stopped}", "bold"))
    if board.conductor_pid:
        parts.append((7, f" · conductor pid {board.conductor_pid}", "dim"))
    return parts


def header_text(repo_name: str, board: Snapshot, width: int | None = None) -> Text:
    """The header's words; given a `width`, the least needed parts are left out until the
    rest fits (the state, progress and budget outlast the repository and plan names)."""
    parts = _parts(repo_name, board)
    badge = " baton "
    if width is not None:
        while len(parts) > 1 and len(badge) + sum(len(w) for _, w, _ in parts) > width:
            drop = max(range(len(parts)), key=lambda i: (parts[i][0], i))
            del parts[drop]
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(badge, style="bold reverse")
    for _rank, words, style in parts:
        text.append(words, style=style)
    return text


class BatonHeader(Static):
    """No clock here: the header changes only when the plan does (stable snapshots)."""

    def __init__(self, repo_name: str) -> None:
        self.board = snapshot_empty()
        self.shown = header_text(repo_name, self.board)
        super().__init__(self.shown, id="header")
        self.repo_name = repo_name

    def on_resize(self) -> None:
        self.show(self.board)

    def show(self, board: Snapshot) -> None:
        self.board = board
        text = header_text(self.repo_name, board, self.size.width or None)
        if text != self.shown:
            self.shown = text
            self.update(text, layout=False)  # one line, always: no layout pass
