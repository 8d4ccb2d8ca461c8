"""The plan pane's view model: what the store's events say, folded into plain rows.

Built by the poller thread from its own store connection (SQLite connections stay in
the thread that opened them) and handed to the UI in a message; the UI only renders
it. Elapsed times come from the injected clock, so snapshots can fix it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from baton_tui.commands.info import describe_state
from baton_tui.plan.dag import levels, topo_order
from baton_tui.plan.model import PlanDocument, parse_document
from baton_tui.plan.slug import task_branch
from baton_tui.store.db import Store
from baton_tui.store.events import Event, blocked_by, fold
from baton_tui.store.status import conductor_info, plan_state

STARTED_STATES = frozenset({"running", "done", "landed", "merged", "paused", "checkpoint",
                            "failed", "parked", "discarded"})


@dataclass(frozen=True)
class TaskRow:
    """One card: the task's fields plus what its events say."""

    id: int
    title: str
    prompt: str
    player: str
    model: str | None
    effort: str | None
    mode: str
    depends_on: tuple[int, ...]
    skills: tuple[str, ...]
    scope: tuple[str, ...]
    checkpoint: bool
    check: str | None
    branch: str | None
    level: int
    state: str = "draft"
    words: str = "draft"
    progress: str | None = None
    elapsed: float = 0.0
    reason: str | None = None
    summary: str | None = None
    attempts: int = 0
    started: bool = False
    blocked_by: int | None = None


@dataclass(frozen=True)
class Board:
    """The whole plan as the UI shows it; `plan_id is None` means there is no plan."""

    plan_id: int | None = None
    slug: str = ""
    goal: str = ""
    autonomy: str = "guarded"
    approved: bool = False
    state: str = "no plan"
    conductor_pid: int | None = None
    base_commit: str | None = None
    tasks: tuple[TaskRow, ...] = ()
    questions: tuple[tuple[str, str, str | None], ...] = ()
    doc: PlanDocument | None = field(default=None, compare=False)

    @property
    def empty(self) -> bool:
        return self.plan_id is None

    def task(self, task_id: int | None) -> TaskRow | None:
        for row in self.tasks:
            if row.id == task_id:
                return row
        return None

    def dependents(self, task_id: int) -> list[int]:
        return [t.id for t in self.tasks if task_id in t.depends_on]


def build_board(store: Store, events: list[Event], clock: Callable[[], float]) -> Board:
    """Fold `events` (the current plan's, in id order) into a Board."""
    plan = store.current_plan()
    if plan is None:
        return Board()
    doc = parse_document(plan.doc, "stored plan")
    views = fold(events)
    deps = doc.deps()
    blocked = blocked_by(deps, views)
    level_of = levels(deps)
    order = topo_order(deps, [t.id for t in doc.tasks])
    now = clock()
    rows: list[TaskRow] = []
    by_id = {t.id: t for t in doc.tasks}
    for task_id in order:
        task = by_id[task_id]
        view = views.get(task_id)
        state = view.state if view else "draft"
        elapsed = 0.0
        if view is not None:
            elapsed = view.wall + (max(0.0, now - view.started_at) if view.started_at else 0.0)
        words = describe_state({"state": state, "blocked_by": blocked.get(task_id),
                                "until": view.until if view else None,
                                "reason": view.reason if view else None})
        rows.append(TaskRow(
            id=task.id, title=task.title, prompt=task.prompt, player=task.player,
            model=task.model, effort=task.effort, mode=task.mode,
            depends_on=tuple(task.depends_on), skills=tuple(task.skills),
            scope=tuple(task.scope), checkpoint=task.checkpoint, check=task.check,
            branch=task_branch(plan.slug, task.id, task.title) if task.mode == "build" else None,
            level=level_of.get(task_id, 0), state=state, words=words,
            progress=view.progress if view else None, elapsed=round(elapsed),
            reason=view.reason if view else None, summary=view.summary if view else None,
            attempts=view.attempts if view else 0,
            started=bool(view and (view.started or state in STARTED_STATES)),
            blocked_by=blocked.get(task_id)))
    conductor = conductor_info(store)
    states = [r.state for r in rows]
    return Board(
        plan_id=plan.id, slug=plan.slug, goal=doc.goal, autonomy=doc.autonomy,
        approved=plan.approved, state=plan_state(plan, states, conductor is not None),
        conductor_pid=conductor["pid"] if conductor else None, base_commit=plan.base_commit,
        tasks=tuple(rows),
        questions=tuple((q.question, q.recommendation, q.answer) for q in doc.questions),
        doc=doc)


class EventCache:
    """The current plan's events, read incrementally (only rows after the last seen id)."""

    def __init__(self) -> None:
        self.plan_id: int | None = None
        self.events: list[Event] = []
        self.last_id = 0

    def refresh(self, store: Store) -> bool:
        """Read new events; True when anything changed."""
        plan = store.current_plan()
        plan_id = plan.id if plan else None
        changed = False
        if plan_id != self.plan_id:
            self.plan_id, self.events, self.last_id, changed = plan_id, [], 0, True
        if plan_id is None:
            return changed
        new = store.events(plan_id, after=self.last_id)
        if new:
            self.events.extend(new)
            self.last_id = new[-1].id
            changed = True
        return changed
