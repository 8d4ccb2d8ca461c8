"""One typed status snapshot: what `baton status`, the TUI board and its header all show.

Built from the plan row and the folded events, read with the standard library only
(a second terminal must answer at once while a run is live). Plan-level words
(`merged`, `complete`, `failed` …) are decided here and nowhere else.
"""

from __future__ import annotations

import time
from typing import Any

from baton_tui import procs
from baton_tui.plan.dag import blocked_by, levels, topo_order
from baton_tui.plan.slug import task_branch
from baton_tui.run import budget, policy
from baton_tui.store.db import PlanRow, Store
from baton_tui.store.events import BROKEN, FINISHED, PENDING, SETTLED, WAITING, State
from baton_tui.store.views import Folder, TaskView

NO_PLAN = ("no plan yet: draft one with `baton plan --goal \"…\"` or load one with "
           "`baton plan --from FILE`")


class _Frozen:
    """Slots-based value object: equal when every field is (the TUI redraws on change)."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, **fields: Any):
        for name in self.__slots__:
            object.__setattr__(self, name, fields.get(name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def _key(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__ if name not in _UNCOMPARED)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # holds lists and dicts


_UNCOMPARED = frozenset({"doc"})


class TaskSnap(_Frozen):
    """One task: its plan fields and what its events say."""

    __slots__ = (
        "id", "title", "prompt", "player", "model", "effort", "mode", "depends_on", "skills",
        "scope", "checkpoint", "check", "branch", "worktree", "level", "state", "words",
        "unready",  # why its player cannot start here (a pending task only), else None
        "reason", "progress", "until", "started_at", "wall", "tokens", "cost", "summary",
        "last_report", "flags", "attempts", "started", "blocked_by", "question", "answerable",
        "decisions", "needs_approval", "limit", "reassigned",
    )

    def as_json(self) -> dict[str, Any]:
        """The task in `status --json` (pinned keys first)."""
        return {
            "id": self.id, "title": self.title, "player": self.player, "mode": self.mode,
            "state": self.state, "model": self.model, "effort": self.effort,
            "depends_on": list(self.depends_on), "branch": self.branch,
            "worktree": self.worktree, "started_at": self.started_at,
            "blocked_by": self.blocked_by, "reason": self.reason, "progress": self.progress,
            "until": self.until, "checkpoint": self.question, "summary": self.summary,
            "last_report": self.last_report, "flags": [dict(f) for f in self.flags],
            "decisions": [dict(d) for d in self.decisions], "words": self.words,
            "needs_approval": self.needs_approval,
            "wall": self.wall, "tokens": self.tokens, "cost": self.cost,
            "attempts": self.attempts,
            "player_ready": self.unready is None, "player_problem": self.unready,
        }


class Snapshot(_Frozen):
    """The whole plan as every front end shows it; `plan_id is None`: there is no plan.

    `tasks` are in plan order (as `status` lists them), `rows` in dependency order (as the
    TUI's cards show them): the same objects twice.
    """

    __slots__ = (
        "plan_id", "slug", "goal", "autonomy", "approved", "state", "conductor", "stopped_by",
        "budget",
        "base_branch", "base_commit", "integration_branch", "folder_mode", "tasks", "rows",
        "questions", "summary", "doc",
    )

    @property
    def empty(self) -> bool:
        return self.plan_id is None

    @property
    def conductor_pid(self) -> int | None:
        return self.conductor["pid"] if self.conductor else None

    def task(self, task_id: int | None) -> TaskSnap | None:
        for task in self.tasks:
            if task.id == task_id:
                return task
        return None

    def dependents(self, task_id: int) -> list[int]:
        """Tasks that name `task_id` among their direct dependencies."""
        return [t.id for t in self.tasks if task_id in t.depends_on]

    def as_json(self) -> dict[str, Any]:
        """`baton status --json`: plan, conductor, tasks, summary."""
        if self.empty:
            return {"plan": None, "conductor": self.conductor, "tasks": [], "summary": None}
        return {
            "plan": {"goal": self.goal, "slug": self.slug, "approved": self.approved,
                     "autonomy": self.autonomy, "state": self.state,
                     "stopped_by": self.stopped_by, "budget": self.budget,
                     "base_branch": self.base_branch, "base_commit": self.base_commit,
                     "integration_branch": self.integration_branch},
            "conductor": self.conductor,
            "tasks": [t.as_json() for t in self.tasks],
            "summary": self.summary,
        }


def empty(conductor: dict[str, Any] | None = None) -> Snapshot:
    return Snapshot(plan_id=None, state="no plan", tasks=(), rows=(), questions=(), budget=None,
                    conductor=conductor, approved=False, autonomy="guarded", goal="", slug="")


def conductor_info(store: Store) -> dict[str, Any] | None:
    """The live conductor (pid, since), or None when none runs."""
    row = store.conductor()
    if row is None or not procs.alive(row["pid"], row["create_time"]):
        return None
    return {"pid": row["pid"], "started": row["started"], "plan": row["plan_id"]}


def plan_word(approved: bool, tasks: list[TaskSnap], running: bool, check_failed: bool) -> str:
    """One word for the plan: draft, approved, running, waiting, failed, complete, merged."""
    states = [t.state for t in tasks]
    if running:
        return "running"
    if states and "merged" in states and all(
            t.state in SETTLED or (t.mode != "build" and t.state == State.DONE) for t in tasks):
        return "merged"
    if any(s in BROKEN for s in states) or (check_failed and states):
        return "failed"
    if states and all(s in FINISHED for s in states):
        return "complete"
    if any(s in WAITING for s in states):
        return "waiting"
    return "approved" if approved else "draft"


def _clock(at: float) -> str:
    return time.strftime("%H:%M", time.localtime(at))


def describe(state: str, blocked: int | None, until: float | None, reason: str | None,
             view: TaskView | None = None, waits_for: tuple[str, float] | None = None) -> str:
    """A task's state in plain words: `blocked by #3`, `paused until 15:00`, `failed: why`,
    `waiting for codex's limit, resets 14:05`, `waiting for your approval`."""
    if blocked:
        return f"blocked by #{blocked}"
    if view is not None and view.needs_approval and state in PENDING:
        return "waiting for your approval (edited mid-run)"
    if waits_for and state == State.QUEUED:
        return f"waiting for {waits_for[0]}'s limit, resets {_clock(waits_for[1])}"
    if state == State.PAUSED and view is not None and view.limit == "unknown" and until:
        return f"paused: usage limit, reset unknown — probing at {_clock(until)}"
    if state == State.PAUSED and until:
        return "paused until " + _clock(until)
    if state == State.CHECKPOINT:
        return "checkpoint: waiting for you"
    if state in BROKEN and reason:
        return f"{state}: {reason}"
    return str(state)


def build(plan: PlanRow, folder: Folder, conductor: dict[str, Any] | None,
          folder_mode: bool, now: float, unready: dict[str, str] | None = None) -> Snapshot:
    """The snapshot of `plan`, from its folded events; `unready` names the players recorded as
    unable to start here (see `unready_players`), with why."""
    doc = plan.doc
    specs = doc["tasks"]
    deps = {t["id"]: list(t.get("depends_on", [])) for t in specs}
    views = folder.tasks
    blank = TaskView()
    blocked = blocked_by(deps, {i: (views.get(i) or blank).state for i in deps})
    level_of = levels(deps)
    limits = {p: at for p, at in folder.plan.player_limits.items() if at > now}
    tasks = [_task(plan, spec, views.get(spec["id"]) or blank, blocked.get(spec["id"]),
                   level_of.get(spec["id"], 0), folder_mode, now, limits) for spec in specs]
    tasks = [_unready(t, unready) for t in tasks] if unready else tasks
    check = folder.plan.run_check
    by_id = {t.id: t for t in tasks}
    return Snapshot(
        plan_id=plan.id, slug=plan.slug, goal=doc.get("goal", ""),
        autonomy=policy.level(doc.get("autonomy")), approved=plan.approved,
        stopped_by=folder.plan.stopped_by,
        budget=budget.status(plan.options.get("budget"), tasks, folder, now),
        state=plan_word(plan.approved, tasks, conductor is not None,
                        bool(check and check.get("exit") not in (0, None))),
        conductor=conductor, base_branch=plan.base_branch, base_commit=plan.base_commit,
        integration_branch=None if folder_mode else plan.integration_branch,
        folder_mode=folder_mode, tasks=tuple(tasks),
        rows=tuple(by_id[i] for i in topo_order(deps, [t["id"] for t in specs])),
        questions=tuple((q.get("question", ""), q.get("recommendation", ""), q.get("answer"))
                        for q in doc.get("questions", [])),
        summary=_summary(folder, tasks, conductor is not None, now), doc=doc)


def _task(plan: PlanRow, spec: dict[str, Any], view: TaskView, blocked: int | None, level: int,
          folder_mode: bool, now: float, limits: dict[str, float]) -> TaskSnap:
    mode = spec.get("mode", "build")
    wall = view.wall + ((now - view.started_at) if view.started_at else 0.0)
    state = view.state
    build_task = mode == "build" and not folder_mode
    return TaskSnap(
        id=spec["id"], title=spec["title"], prompt=spec.get("prompt", ""), player=spec["player"],
        model=spec.get("model"), effort=spec.get("effort"), mode=mode,
        depends_on=tuple(spec.get("depends_on", [])), skills=tuple(spec.get("skills", [])),
        scope=tuple(spec.get("scope", [])), checkpoint=bool(spec.get("checkpoint")),
        check=spec.get("check"),
        branch=task_branch(plan.slug, spec["id"], spec["title"]) if build_task else None,
        worktree=view.workdir if build_task else None, level=level, state=str(state),
        words=describe(state, blocked, view.until, view.reason, view,
                       (spec["player"], limits[spec["player"]]) if spec["player"] in limits
                       else None), reason=view.reason,
        progress=view.progress, until=view.until, started_at=view.started_at,
        wall=round(max(0.0, wall), 2), tokens=view.tokens,
        cost=round(view.cost, 6) if view.cost_known else None,
        decisions=tuple(dict(d) for d in view.decisions), needs_approval=view.needs_approval,
        limit=view.limit, reassigned=bool(view.reassigned),
        summary=view.summary, last_report=view.last_report,
        flags=tuple(dict(f) for f in view.flags),
        attempts=view.attempts, started=view.started or state not in PENDING,
        blocked_by=blocked, answerable=view.answerable,
        question=({"what": view.checkpoint, "evidence": view.checkpoint_evidence}
                  if state == State.CHECKPOINT else None))


def _summary(folder: Folder, tasks: list[TaskSnap], running: bool, now: float) -> dict[str, Any]:
    first, last = folder.plan.first_start, folder.plan.last_end
    run_wall = ((now if running else (last or now)) - first) if first is not None else 0.0
    task_time = sum(t.wall for t in tasks)
    states = [t.state for t in tasks]
    players: dict[str, dict[str, Any]] = {}
    for task in tasks:
        if not (task.tokens or task.cost is not None or task.attempts):
            continue
        use = players.setdefault(task.player, {"tasks": 0, "tokens": 0, "cost": None,
                                               "task_time": 0.0})
        use["tasks"] += 1
        use["tokens"] += task.tokens
        use["task_time"] = round(use["task_time"] + task.wall, 2)
        if task.cost is not None:
            use["cost"] = round((use["cost"] or 0.0) + task.cost, 6)
    costs = [t.cost for t in tasks if t.cost is not None]
    return {
        "wall": round(run_wall, 2), "task_time": round(task_time, 2),
        "speedup": round(task_time / run_wall, 2) if run_wall > 0 else None,
        "tokens": sum(t.tokens for t in tasks),
        "cost": round(sum(costs), 6) if costs else None,  # None: no player reported a cost
        "counts": {s: states.count(s) for s in sorted(set(states))},
        "players": players,
    }


def unready_players(store: Store) -> dict[str, str]:
    """Players the last detection found unable to start here (`players.readiness` in the
    store's meta, written by whatever detected them), each with its reason and fix."""
    record = store.get_meta("players.readiness") or {}
    return {name: entry.get("reason", "") + (f" — {entry['fix']}" if entry.get("fix") else "")
            for name, entry in record.items() if isinstance(entry, dict) and not entry.get("ready")}


def _unready(task: TaskSnap, unready: dict[str, str]) -> TaskSnap:
    """Mark a task that has not started and whose player cannot start here."""
    if task.player not in unready or task.started:
        return task
    fields = {name: getattr(task, name) for name in TaskSnap.__slots__}
    fields["unready"] = unready[task.player]
    if task.state in PENDING and not task.blocked_by:
        fields["words"] = f"{task.player} is not ready here: {unready[task.player]}"
    return TaskSnap(**fields)


def folder_mode(store: Store, folder: Folder) -> bool:
    """No git (the store is in `.baton/state`), or git too old: tasks ran in the folder itself
    (an attempt started with neither branch nor base), so no task has a branch."""
    return store.path.parent.parts[-2:] == (".baton", "state") or folder.plan.unbranched


def read(store: Store, now: float | None = None) -> Snapshot:
    """The current plan's snapshot, read from the store."""
    conductor = conductor_info(store)
    plan = store.current_plan()
    if plan is None:
        return empty(conductor)
    folder = Folder().feed(store.events(plan.id))
    return build(plan, folder, conductor, folder_mode(store, folder),
                 time.time() if now is None else now, unready_players(store))


class Reader:
    """Snapshots of the current plan, folding only the events added since the last read
    (a front end that polls the store keeps one)."""

    def __init__(self) -> None:
        self.plan_id: int | None = None
        self.folder = Folder()

    def read(self, store: Store, now: float | None = None) -> Snapshot:
        conductor = conductor_info(store)
        plan = store.current_plan()
        if plan is None:
            return empty(conductor)
        if plan.id != self.plan_id:
            self.plan_id, self.folder = plan.id, Folder()
        self.folder.feed(store.events(plan.id, after=self.folder.last_id))
        return build(plan, self.folder, conductor, folder_mode(store, self.folder),
                     time.time() if now is None else now, unready_players(store))
