"""What the chat records of a run: when it started, when it ended with its totals (the same
lines `baton status` ends with), and when its work was merged — read from two boards, as
`attention.py` reads what waits for the person."""

from __future__ import annotations

from baton_tui import api
from baton_tui.api import Snapshot, State
from baton_tui.core.events import LANDED
from baton_tui.core.words import Mode

WELCOME = ("Say what you want built. The planner studies the repository, asks only what "
           "changes the plan, and drafts tasks you can edit on the right. Nothing builds "
           "until you approve. Type /help for commands.")


def opening(board: Snapshot | None, handoff_key: str = "H") -> str:
    """The chat's first line: what to do next with the plan the app opens on (a plan whose
    run is over points at its handoff, not at typing a goal)."""
    if board is None or board.empty:
        return WELCOME
    if board.state == State.MERGED:
        return (f"Plan {board.slug} is merged: its work is on "
                f"{board.base_branch or 'your branch'}. Type a new goal to plan the next "
                "thing (/help for commands).")
    landed = any(t.state in LANDED and t.mode == Mode.BUILD for t in board.tasks)
    if landed and not board.conductor_pid and board.state in ("complete", State.FAILED):
        return (f"Plan {board.slug}'s run is over and its landed work waits for you: press "
                f"{handoff_key} for the handoff — review the combined diff, then merge it. "
                "Type /help for commands.")
    return WELCOME


def record(old: Snapshot, new: Snapshot, first: bool = False) -> list[str]:
    """The lines to add to the chat for what happened between `old` and `new` (none on the
    first board: the app just opened, nothing happened while it looked). The run's totals
    are indented under the line that ended it."""
    if first or new.empty or old.plan_id != new.plan_id:
        return []
    lines = []
    if new.conductor_pid and not old.conductor_pid:
        lines.append(f"run started — plan {new.slug}, conductor pid {new.conductor_pid}")
    if old.conductor_pid and not new.conductor_pid:
        lines.append(f"run ended — {new.state}"
                     + (f", stopped by {new.stopped_by}" if new.stopped_by else ""))
        lines += [f"  {line}" for line in api.summary_lines(new.summary)]
    if new.state == State.MERGED and old.state != State.MERGED:
        onto = f" onto {new.base_branch}" if new.base_branch else ""
        lines.append(f"merged{onto} — plan {new.slug} is done")
    return lines
