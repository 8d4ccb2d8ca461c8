"""What one run of the conductor knows, in one place: the plan, its folded views, the ready
queue, and the attempts being started, followed, finished and made ahead.

The conductor's collaborators (`starting.Starter`, `following.Follower`,
`collecting.Collector`) share one `RunState`; each reads what it needs and changes only its
own part. The choice of what starts next is a pure function of it (`decide.choose`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field

from baton_tui.core.errors import BatonError
from baton_tui.core.events import AGENT_EVENTS, Event, EventKind, State
from baton_tui.core.views import Folder, TaskView
from baton_tui.core.words import Mode
from baton_tui.plan.model import PlanDocument, Task, parse_document
from baton_tui.run.finish import Intent
from baton_tui.run.ready import Ready
from baton_tui.run.placing import Spare
from baton_tui.runners.base import AttemptHandle, Changes
from baton_tui.run.supervisor import Watch
from baton_tui.store import foldcache
from baton_tui.store.db import Store
from baton_tui.store.rows import PlanRow


@dataclass(eq=False)
class Tracked:
    """A live attempt the conductor follows: its runner's handle and what the supervisor
    has seen of it."""

    handle: AttemptHandle
    last_activity: float = field(default_factory=time.monotonic)
    last_progress: float = 0.0
    pending_line: str | None = None
    signalled: float | None = None     # when it was asked to stop (monotonic)
    # The look at its changed files under way (`Runner.changed_files`): (files, signature).
    files: asyncio.Future[Changes] | None = None
    watch: Watch = field(default_factory=Watch)

    @property
    def attempt_id(self) -> int:
        return self.handle.attempt_id

    @property
    def task_id(self) -> int:
        return self.handle.task_id


SPARE_EXTRA = 2  # spare worktrees kept in mind beyond `max_parallel`


@dataclass(eq=False)
class RunState:
    """The state the conductor's collaborators share (one run, one plan)."""

    plan: PlanRow                 # this run's plan row, as last read
    doc: PlanDocument             # its document, parsed from revision `revision`
    folder: Folder                # the views, folded from the events so far
    ready: Ready                  # tasks by state, unmet dependencies, the start heap
    git_mode: bool                # worktrees and branches (else: folder mode, one at a time)
    max_parallel: int             # `[limits] max_parallel`
    started_after: int = 0        # requests older than this event are history
    tracked: dict[int, Tracked] = field(default_factory=dict)               # running
    starting: dict[int, asyncio.Future[None]] = field(default_factory=dict)  # being started
    finishing: dict[int, asyncio.Future[None]] = field(default_factory=dict)  # being collected
    # Worktrees made ahead of their tasks (`Starter.make_ahead`): being made, made and not
    # started yet, and the tasks to look at for it.
    making_ahead: dict[int, asyncio.Future[None]] = field(default_factory=dict)
    made_ahead: set[int] = field(default_factory=set)
    wanted_ahead: deque[int] = field(default_factory=deque)
    # Landed tasks' worktrees a starting task may take over (`placing._take_over`), the
    # latest landed last: its files are the nearest to the integration tip.
    spare: deque[Spare] = field(default_factory=deque)
    intents: dict[int, Intent] = field(default_factory=dict)  # what the person asked of each
    pause_requested: bool = False
    hard_stop: set[int] = field(default_factory=set)   # running tasks a hard budget pauses
    spoke: set[int] = field(default_factory=set)       # used the report channel lately
    announced_manual: set[int] = field(default_factory=set)
    # For the look at the person's checkout an agent on this machine starts from
    # (`outside.ahead`): since when none has run (monotonic; None while one runs, or may),
    # whether none has run yet this run, and whether one left processes Baton could not end
    # (then a look is never reused).
    quiet_since: float | None = None
    untouched: bool = True
    strays: bool = False
    plan_id: int = field(init=False)  # this run's plan, whatever happens to the current one
    by_id: dict[int, Task] = field(init=False)  # the document's tasks
    revision: int = field(init=False)           # the plan revision `doc` was parsed from

    def __post_init__(self) -> None:
        self.plan_id = self.plan.id
        self.by_id = {t.id: t for t in self.doc.tasks}
        self.revision = self.plan.revision

    @classmethod
    def of(cls, plan: PlanRow, doc: PlanDocument, folder: Folder, git_mode: bool,
           max_parallel: int, started_after: int = 0) -> "RunState":
        """A run's state over `doc`'s tasks as `folder` has them (its ready queue built)."""
        ready = Ready(doc, folder, git_mode, plan.approved)
        run = cls(plan=plan, doc=doc, folder=folder, ready=ready, git_mode=git_mode,
                  max_parallel=max_parallel, started_after=started_after)
        for task_id in folder.tasks:  # landed in an earlier run
            run.note_landed(task_id, None)
        return run

    def note_landed(self, task_id: int, landed: str | None) -> None:
        """A landed build task's worktree becomes a spare; at most `max_parallel` plus a few
        are kept in mind (a start takes the latest; the oldest are left as they are)."""
        view = self.view(task_id)
        if not (self.git_mode and view.state == State.LANDED and view.workdir and view.branch):
            return
        self.spare.append(Spare(task_id, view.workdir, view.branch, landed))
        while len(self.spare) > self.max_parallel + SPARE_EXTRA:
            self.spare.popleft()

    def take_spare(self, task: Task) -> Spare | None:
        """A spare worktree for `task`'s start or its making ahead (asked for a task whose
        agent runs on this machine, `Runner.runs_here`): only for a build task
        with no worktree of its own yet (none made ahead or being made), and only a spare
        whose task is still landed in that worktree. Never for a task that landed before (a
        follow-up of its review comments): its branch exists, and it is checked out again."""
        view = self.view(task.id)
        if task.mode != Mode.BUILD or not self.git_mode \
                or view.workdir or view.ever_landed or task.id in self.made_ahead \
                or task.id in self.making_ahead:
            return None
        while self.spare:
            spare = self.spare.pop()
            view = self.view(spare.task_id)
            if view.state == State.LANDED and view.workdir == spare.path:
                return spare
        return None

    # views ---------------------------------------------------------------------------------
    def view(self, task_id: int) -> TaskView:
        return self.folder.view(task_id)

    def state(self, task_id: int) -> str:
        return self.view(task_id).state

    def task(self, task_id: int) -> Task:
        return self.by_id[task_id]

    def busy(self, task_id: int) -> bool:
        """Whether the task is being started, runs or is being collected."""
        return task_id in self.tracked or task_id in self.finishing or task_id in self.starting

    def free_slots(self) -> int:
        """Starts the run has room for now (`max_parallel`; one at a time in folder mode)."""
        limit = self.max_parallel if self.git_mode else 1
        return limit - len(self.tracked) - len(self.finishing) - len(self.starting)

    def idle(self) -> bool:
        """Nothing is being started, run, collected or made ahead."""
        return not (self.tracked or self.finishing or self.starting or self.making_ahead)

    # keeping it current --------------------------------------------------------------------
    def reload(self, store: Store) -> list[Event]:
        """Fold the events written since the last look; re-parse the plan only when it
        changed. Returns the new events (the conductor takes the person's requests from them).

        The ready queue re-reads only the tasks the new events name — every task after a
        plan-level event, a new revision or a change of approval.
        """
        row = store.plan(self.plan_id, known=self.plan)
        assert row is not None  # a plan is archived, never deleted, while its run goes on
        self.plan = row
        new = store.events(self.plan_id, after=self.folder.last_id)
        if new:
            self.folder.feed(new)
            self.spoke.update(e.task_id for e in new
                              if e.kind in AGENT_EVENTS and e.task_id is not None)
            for event in new:
                if event.kind == EventKind.TASK_LANDED and event.task_id is not None:
                    self.note_landed(event.task_id, event.data.get("commit"))
        if row.revision != self.revision:
            self.doc = parse_document(row.doc, "stored plan", stored=True)
            self.revision = row.revision
            self.by_id = {t.id: t for t in self.doc.tasks}
            self.ready = Ready(self.doc, self.folder, self.git_mode, row.approved)
            return new
        if new:
            touched = {event.task_id for event in new}
            if None in touched:
                self.ready.touch_all()
            else:
                self.ready.touch(t for t in touched if t is not None)
        self.ready.set_approved(row.approved)
        return new

    def requests(self, new: list[Event]) -> list[Event]:
        """The events among `new` written while this run goes on (older ones are history)."""
        return [event for event in new if event.id > self.started_after]


def load(store: Store, git_mode: bool, max_parallel: int) -> tuple[RunState, list[Event]]:
    """The state of a run of the current plan, from the store's cached fold and the events
    after it; and those events (requests among them may be this run's)."""
    started_after = store.last_event_id()
    row = store.current_plan()
    if row is None:
        raise BatonError("no plan to run")
    # The views so far: the store's cached fold, then only the events after it.
    folder = foldcache.cached(store, row.id) or Folder()
    new = store.events(row.id, after=folder.last_id)
    folder.feed(new)
    doc = parse_document(row.doc, "stored plan", stored=True)
    state = RunState.of(row, doc, folder, git_mode, max_parallel, started_after)
    state.spoke.update(e.task_id for e in new if e.kind in AGENT_EVENTS and e.task_id is not None)
    return state, new

