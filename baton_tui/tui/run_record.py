"""What the chat records of a run: when it started, when it ended with its totals (the same
lines `baton status` ends with), and when its work was merged — read from two boards, as
`attention.py` reads what waits for the person."""

from __future__ import annotations

from baton_tui import api
from baton_tui.api import Snapshot, State


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
