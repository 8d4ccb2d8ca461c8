"""`baton status`: the pinned JSON shape, read with the standard library only."""

from __future__ import annotations

import time
from typing import Any

from baton_tui import procs
from baton_tui.plan.slug import task_branch
from baton_tui.store.db import PlanRow, Store
from baton_tui.store.events import blocked_by, fold


def conductor_info(store: Store) -> dict[str, Any] | None:
    """The live conductor (pid, since), or None when none runs."""
    row = store.conductor()
    if row is None or not procs.alive(row["pid"], row["create_time"]):
        return None
    return {"pid": row["pid"], "started": row["started"], "plan": row["plan_id"]}


def plan_state(plan: PlanRow, states: list[str], running: bool, settled: bool = False) -> str:
    """One word for the header: draft, approved, running, waiting, failed, complete, merged.

    `settled`: every task is merged, discarded, or a research/manual task that is done —
    nothing is left to bring home.
    """
    if running:
        return "running"
    if states and settled and "merged" in states:
        return "merged"
    if states and all(s in ("done", "landed", "merged", "discarded") for s in states):
        return "complete"
    if any(s in ("failed", "parked") for s in states):
        return "failed"
    if any(s in ("paused", "checkpoint") for s in states):
        return "waiting"
    return "approved" if plan.approved else "draft"


def _folder_mode(store: Store, events: list) -> bool:
    """No git (the store is in `.baton/state`), or git too old: tasks ran in the folder itself
    (an attempt started with neither branch nor base), so no task has a branch."""
    if store.path.parent.parts[-2:] == (".baton", "state"):
        return True
    return any(e.kind == "task.started" and e.data.get("branch") is None
               and e.data.get("base") is None for e in events)


def build_status(store: Store) -> dict[str, Any]:
    """The status object: plan, conductor, tasks (pinned keys first), run summary."""
    plan = store.current_plan()
    conductor = conductor_info(store)
    if plan is None:
        return {"plan": None, "conductor": conductor, "tasks": [], "summary": None}
    doc = plan.doc
    events = store.events(plan.id)  # read once: with a long run's log this is most of the work
    views = fold(events)
    folder_mode = _folder_mode(store, events)
    deps = {t["id"]: list(t.get("depends_on", [])) for t in doc["tasks"]}
    blocked = blocked_by(deps, views)
    now = time.time()
    tasks: list[dict[str, Any]] = []
    total_wall = 0.0
    first_start: float | None = None
    last_end: float | None = None
    for spec in doc["tasks"]:
        view = views.get(spec["id"])
        state = view.state if view else "draft"
        wall = 0.0
        if view:
            wall = view.wall + ((now - view.started_at) if view.started_at else 0.0)
        total_wall += wall
        entry = {
            "id": spec["id"], "title": spec["title"], "player": spec["player"],
            "mode": spec.get("mode", "build"), "state": state,
            "model": spec.get("model"), "effort": spec.get("effort"),
            "depends_on": spec.get("depends_on", []),
            "branch": task_branch(plan.slug, spec["id"], spec["title"])
            if spec.get("mode", "build") == "build" and not folder_mode else None,
            "started_at": view.started_at if view else None,
            "blocked_by": blocked.get(spec["id"]),
            "reason": view.reason if view else None,
            "progress": view.progress if view else None,
            "until": view.until if view else None,
            "checkpoint": view.checkpoint if view and state == "checkpoint" else None,
            "summary": view.summary if view else None,
            "flags": view.flags if view else [],
            "wall": round(wall, 2),
            "tokens": view.tokens if view else 0,
            "cost": round(view.cost, 6) if view else 0.0,
            "attempts": view.attempts if view else 0,
        }
        tasks.append(entry)
    for event in events:
        if event.kind in ("task.started", "task.resumed") and first_start is None:
            first_start = event.ts
        if event.state in ("done", "landed", "failed", "parked") or event.kind == "run.finished":
            last_end = event.ts
    run_wall = 0.0
    if first_start is not None:
        run_wall = ((now if conductor else (last_end or now)) - first_start)
    states = [t["state"] for t in tasks]
    summary = {
        "wall": round(run_wall, 2),
        "task_time": round(total_wall, 2),
        "speedup": round(total_wall / run_wall, 2) if run_wall > 0 else None,
        "tokens": sum(t["tokens"] for t in tasks),
        "cost": round(sum(t["cost"] for t in tasks), 6),
        "counts": {s: states.count(s) for s in sorted(set(states))},
    }
    return {
        "plan": {
            "goal": doc.get("goal", ""), "slug": plan.slug, "approved": plan.approved,
            "autonomy": doc.get("autonomy", "guarded"),
            "state": plan_state(plan, states, conductor is not None, settled=all(
                t["state"] in ("merged", "discarded")
                or (t["mode"] != "build" and t["state"] == "done") for t in tasks)),
            "base_branch": plan.base_branch, "base_commit": plan.base_commit,
            "integration_branch": None if folder_mode else plan.integration_branch,
        },
        "conductor": conductor,
        "tasks": tasks,
        "summary": summary,
    }
