"""`a` asks once before approving: what will run, on which players, where it will stop.

Approval covers the whole plan, so the dialog counts it for the person: build tasks by
player, research and manual tasks, checks (the shell strings approved with the plan),
checkpoints, and the autonomy level that decides who answers them.
"""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from baton_tui.api import PlayerFacts, Snapshot
from baton_tui.core.words import Mode
from baton_tui.tui.words import AUTONOMY_NOTES, counted


def _by_player(tasks: list) -> str:
    counts = Counter(t.player for t in tasks)
    return ", ".join(f"{player} ×{n}" if n > 1 else player for player, n in counts.items())


def approval_text(board: Snapshot, players: PlayerFacts | None = None) -> Text:
    """What approving this plan lets run, counted. `players` says which players run no agent
    (their task's check is the whole task); without it every check follows an agent."""
    agentless = players.check_is_task if players is not None else (lambda name: False)
    tasks = [t for t in board.tasks if not t.started]
    build = [t for t in tasks if t.mode == Mode.BUILD]
    research = [t for t in tasks if t.mode == Mode.RESEARCH]
    manual = [t for t in tasks if t.mode == Mode.MANUAL]
    checks = [t for t in board.tasks if t.check]
    checkpoints = [t for t in board.tasks if t.checkpoint]
    text = Text()
    text.append(counted(len(build), "build task", start=True), style="bold")
    text.append(f" on {_by_player(build)}" if build else "")
    text.append(" — each in its own worktree and branch\n")
    if research:
        text.append(f"{counted(len(research), 'research task')} on {_by_player(research)} (read-only)\n")
    if manual:
        text.append(f"{counted(len(manual), 'manual task')}: you do "
                    f"{'it' if len(manual) == 1 else 'them'}, then mark "
                    f"{'it' if len(manual) == 1 else 'them'} done\n")
    if checks:
        text.append(f"{counted(len(checks), 'check command')}, run with sh -c in the task's worktree:\n")
        for task in checks[:4]:
            when = ("the whole task (no agent)" if agentless(task.player)
                    else "after the agent reports")
            text.append(f"  #{task.id} {when}: {task.check}\n", style="dim")
        if len(checks) > 4:
            text.append(f"  … and {len(checks) - 4} more\n", style="dim")
    text.append(counted(len(checkpoints), "checkpoint", start=True), style="bold" if checkpoints else "")
    text.append(f" · autonomy {board.autonomy}: ", style="")
    text.append(AUTONOMY_NOTES.get(board.autonomy, ""), style="italic")
    ran = sum(t.started for t in board.tasks)
    if ran:
        text.append(f"\n{counted(ran, 'task')} already ran and "
                    f"{'keeps its' if ran == 1 else 'keep their'} state", style="dim")
    return text


class ApproveModal(ModalScreen[bool | None]):
    """Enter approves, escape (or n) does not; nothing is approved by this screen itself."""

    BINDINGS = [Binding("enter,y", "yes", "approve", id="approve-yes", priority=True),
                Binding("escape,n", "no", "cancel", id="approve-no", priority=True)]

    def __init__(self, board: Snapshot, players: PlayerFacts | None = None) -> None:
        super().__init__()
        self.board = board
        self.summary = approval_text(board, players)

    def compose(self) -> ComposeResult:
        box = Vertical(classes="dialog approve")
        box.border_title = f"approve {self.board.slug}?"
        box.border_subtitle = "enter approve · esc cancel"
        with box:
            yield Static(self.summary, id="approve-summary")
            yield Static("Nothing builds until you approve; editing a task that has not "
                         "started voids the approval.", classes="note")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)
