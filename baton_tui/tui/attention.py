"""When to call the person: what changed between two boards that now waits for them.

A checkpoint that started waiting, a task paused at a usage limit, a run that ended with
work landed (the handoff is ready). The App rings the terminal bell and shows a note for
each — once per change, never on the first board read (the person just opened the app).
"""

from __future__ import annotations

from dataclasses import dataclass

from baton_tui.api import Snapshot
from baton_tui.core.events import LANDED, State
from baton_tui.core.words import Mode


@dataclass(frozen=True)
class Call:
    what: str          # checkpoint | limit | handoff
    text: str
    task_id: int | None = None


def calls(old: Snapshot, new: Snapshot, first: bool = False,
          changed: frozenset[int] | None = None) -> list[Call]:
    """What newly waits for the person in `new` compared with `old`; `changed` names the
    tasks whose rows differ (None: look at every task)."""
    if first or new.empty or old.plan_id != new.plan_id:
        return []
    found: list[Call] = []
    tasks = new.tasks if changed is None else [
        t for t in map(new.task, sorted(changed)) if t is not None]
    for task in tasks:
        was = old.task(task.id)
        if task.state == State.CHECKPOINT and (was is None or was.state != State.CHECKPOINT):
            what = (task.question or {}).get("what") or "a risky step"
            found.append(Call("checkpoint", f"#{task.id} asks before: {what} — press y",
                              task.id))
        if task.state == State.PAUSED and task.until and (
                was is None or was.state != State.PAUSED):
            found.append(Call("limit", f"#{task.id} {task.words}", task.id))
    # The plan's word for "all merged" is the task state's.
    if old.conductor_pid and not new.conductor_pid and new.state != State.MERGED and any(
            t.state in LANDED and t.mode == Mode.BUILD for t in new.tasks):
        found.append(Call("handoff", "the run ended — the handoff is ready: press H"))
    return found
