"""`a` asks once before approving: what will run, on which players, where it will stop.

Approval covers the whole plan, so the dialog counts it for the person: build tasks by
player, research and manual tasks, checks (the shell strings approved with the plan),
checkpoints, and the autonomy level that decides who answers them. It opens at once with
the counts: reading the players (catalogs, readiness) may take seconds while their CLIs are
asked, and fills in when it is done; an enter pressed meanwhile is held, never lost.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Awaitable, Callable

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
            when = ("" if players is None else " the whole task (no agent)"
                    if agentless(task.player) else " after the agent reports")
            text.append(f"  #{task.id}{when}: {task.check}\n", style="dim")
        if len(checks) > 4:
            text.append(f"  … and {len(checks) - 4} more\n", style="dim")
    text.append(counted(len(checkpoints), "checkpoint", start=True), style="bold" if checkpoints else "")
    text.append(f" · autonomy {board.autonomy}: ", style="")
    text.append(AUTONOMY_NOTES.get(board.autonomy, "") if checkpoints
                else "no task is marked risky, so none stops to ask you", style="italic")
    ran = sum(t.started for t in board.tasks)
    if ran:
        text.append(f"\n{counted(ran, 'task')} already ran and "
                    f"{'keeps its' if ran == 1 else 'keep their'} state", style="dim")
    return text


def readiness_text(board: Snapshot, detections: dict[str, Any] | None) -> Text:
    """Whether the players of the tasks still to run are ready here (installed, signed in)."""
    if detections is None:
        return Text("players: not looked for", style="dim")
    names = sorted({t.player for t in board.tasks if not t.started and t.mode != Mode.MANUAL})
    unready = [(n, detections[n].reason) for n in names
               if n in detections and not detections[n].ready]
    if not unready:
        return Text(f"players ready here: {', '.join(names) or 'none needed'}", style="dim")
    text = Text()
    for name, why in unready:
        text.append(f"⚠ {name} is not ready here ({why}): its tasks cannot start until it "
                    "is — `baton players` says how\n", style="bold")
    return text


Loading = Callable[[], Awaitable[tuple[PlayerFacts, dict[str, Any] | None]]]
HINT = "enter approve · esc cancel"


class ApproveModal(ModalScreen[bool | None]):
    """Enter approves, escape (or n) does not; nothing is approved by this screen itself.

    With `reading` (the players not read yet) it shows the counts at once and fills in the
    players when `reading` returns; an enter before then approves as soon as it does."""

    BINDINGS = [Binding("enter,y", "yes", "approve", id="approve-yes", priority=True),
                Binding("escape,n", "no", "cancel", id="approve-no", priority=True)]

    def __init__(self, board: Snapshot, players: PlayerFacts | None = None,
                 detections: dict[str, Any] | None = None,
                 reading: Loading | None = None) -> None:
        super().__init__()
        self.board = board
        self.summary = approval_text(board, players)
        self.players = (Text("reading the players…", style="italic") if reading is not None
                        else readiness_text(board, detections))
        self.reading = reading
        self.confirmed = False  # enter pressed while the players were read

    def compose(self) -> ComposeResult:
        box = Vertical(classes="dialog approve", id="approve-box")
        box.border_title = f"approve {self.board.slug}?"
        box.border_subtitle = HINT
        with box:
            yield Static(self.summary, id="approve-summary")
            yield Static(self.players, id="approve-players")
            yield Static("Nothing builds until you approve; editing a task that has not "
                         "started voids the approval.", classes="note")

    def on_mount(self) -> None:
        if self.reading is not None:
            self.run_worker(self._load(self.reading), exit_on_error=False,
                            description="read the players")

    async def _load(self, loading: Loading) -> None:
        try:
            facts, detections = await loading()
        except Exception as exc:  # noqa: BLE001 — approval does not wait on a broken probe
            self.query_one("#approve-players", Static).update(
                Text(f"players could not be read: {exc}", style="dim"))
        else:
            self.summary = approval_text(self.board, facts)
            self.query_one("#approve-summary", Static).update(self.summary)
            self.query_one("#approve-players", Static).update(
                readiness_text(self.board, detections))
        self.reading = None
        if self.confirmed:
            self.dismiss(True)

    def action_yes(self) -> None:
        if self.reading is None:
            self.dismiss(True)
            return
        self.confirmed = True  # held until the players are read: never dropped
        self.query_one("#approve-box").border_subtitle = \
            "approving once the players are read… · esc cancel"

    def action_no(self) -> None:
        self.dismiss(False)
