"""Typed events and the task state they imply (standard library only).

A task's state is never stored on its own: it is whatever its latest
state-changing event says. Other events (progress, output, flags) only add detail.
"""

from __future__ import annotations

from typing import Any

STATES = (
    "draft", "queued", "running", "done", "landed", "merged",
    "paused", "checkpoint", "failed", "parked", "discarded",
)

# Event kind -> the state it puts the task in.
STATE_EVENTS: dict[str, str] = {
    "task.queued": "queued",
    "task.started": "running",
    "task.resumed": "running",
    "task.continued": "running",
    "task.done": "done",
    "task.landed": "landed",
    "task.merged": "merged",
    "task.paused": "paused",
    "task.checkpoint": "checkpoint",
    "task.failed": "failed",
    "task.parked": "parked",
    "task.discarded": "discarded",
    "task.reset": "draft",
}
# Every other kind (task.progress, task.reported, task.flagged, plan.*, run.*, …) adds detail
# and leaves the state alone.


class Event:
    """One row of the event log (a plain class: see `paths.RepoPaths` on `dataclasses`)."""

    __slots__ = ("id", "plan_id", "task_id", "kind", "data", "ts")

    def __init__(self, id: int, plan_id: int | None, task_id: int | None, kind: str,
                 data: dict[str, Any] | None = None, ts: float = 0.0):
        self.id, self.plan_id, self.task_id, self.kind = id, plan_id, task_id, kind
        self.data = data if data is not None else {}
        self.ts = ts

    def __repr__(self) -> str:
        return f"Event({self.id}, {self.kind!r}, task={self.task_id}, data={self.data!r})"

    @property
    def state(self) -> str | None:
        return STATE_EVENTS.get(self.kind)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "ts": self.ts, "plan": self.plan_id, "task": self.task_id,
                "kind": self.kind, **({"data": self.data} if self.data else {})}


class TaskView:
    """What the events say about one task: its state and the latest details."""

    def __init__(self) -> None:
        self.state = "draft"
        self.reason: str | None = None
        self.progress: str | None = None
        self.until: float | None = None
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.wall = 0.0
        self.tokens = 0
        self.cost = 0.0
        self.summary: str | None = None
        self.checkpoint: str | None = None
        self.flags: list[str] = []
        self.attempts = 0
        self.started = False


def fold(events: list[Event]) -> dict[int, TaskView]:
    """Fold a plan's events (in id order) into one view per task."""
    views: dict[int, TaskView] = {}
    for event in events:
        if event.task_id is None:
            continue
        view = views.setdefault(event.task_id, TaskView())
        data = event.data
        if event.kind == "task.reset":
            views[event.task_id] = TaskView()
            continue
        state = event.state
        if state is not None:
            if view.state == "running" and view.started_at is not None and state != "running":
                view.wall += event.ts - view.started_at
                view.started_at = None
            view.state = state
            view.reason = data.get("reason")
            view.until = data.get("until")
            if state == "running":
                view.started = True
                view.started_at = event.ts
                if event.kind == "task.started":
                    view.attempts += 1
            if state in ("done", "landed", "failed", "parked", "merged", "discarded"):
                view.ended_at = event.ts
            if state == "checkpoint":
                view.checkpoint = data.get("what")
            if state == "done" and data.get("summary"):
                view.summary = data["summary"]
        elif event.kind == "task.progress":
            view.progress = data.get("message")
        elif event.kind == "task.reported" and data.get("summary"):
            view.summary = data["summary"]
        elif event.kind == "task.usage":
            view.tokens += int(data.get("tokens") or 0)
            view.cost += float(data.get("cost") or 0.0)
        elif event.kind == "task.flagged":
            view.flags.append(str(data.get("message")))
    return views


def blocked_by(task_deps: dict[int, list[int]], views: dict[int, TaskView]) -> dict[int, int]:
    """Queued or draft tasks whose dependency failed (directly or transitively): id -> blocker."""
    result: dict[int, int] = {}

    def blocker(task_id: int, seen: frozenset[int]) -> int | None:
        for dep in task_deps.get(task_id, []):
            if dep in seen:
                continue
            dep_state = views.get(dep, TaskView()).state
            if dep_state in ("failed", "parked", "discarded"):
                return dep
            found = blocker(dep, seen | {dep})
            if found is not None:
                return found
        return None

    for task_id in task_deps:
        if views.get(task_id, TaskView()).state in ("draft", "queued"):
            found = blocker(task_id, frozenset({task_id}))
            if found is not None:
                result[task_id] = found
    return result
