"""When to call the person: what changed between two boards that now waits for them.

A checkpoint that started waiting, a task paused at a usage limit, a run that ended with
work landed (the handoff is ready). The App rings the terminal bell and shows a note for
each — once per change, never on the first board read (the person just opened the app).
"""

from __future__ import annotations

from dataclasses import dataclass

from baton_tui.api import Snapshot

LANDED_WORDS = frozenset({"landed", "merged"})


@dataclass(frozen=True)
class Call:
    what: str          # checkpoint | limit | handoff
    text: str
    task_id: int | None = None


def calls(old: Snapshot, new: Snapshot, first: bool = False) -> list[Call]:
    """What newly waits for the person in `new` compared with `old`."""
    if first or new.empty or old.plan_id != new.plan_id:
        return []
    found: list[Call] = []
    before = {t.id: t for t in old.tasks}
    for task in new.tasks:
        was = before.get(task.id)
        if task.state == "checkpoint" and (was is None or was.state != "checkpoint"):
            what = (task.question or {}).get("what") or "a risky step"
            found.append(Call("checkpoint", f"#{task.id} asks before: {what} — press y",
                              task.id))
        if task.state == "paused" and task.until and (was is None or was.state != "paused"):
            found.append(Call("limit", f"#{task.id} {task.words}", task.id))
    landed = any(t.state in LANDED_WORDS and t.mode == "build" for t in new.tasks)
    if old.conductor_pid and not new.conductor_pid and landed and new.state != "merged":
        found.append(Call("handoff", "the run ended — the handoff is ready: press H"))
    return found
