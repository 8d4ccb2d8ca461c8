"""Typed events and task states — the vocabulary every other module speaks (stdlib only).

A task's state is never stored on its own: it is whatever its latest state-changing
event says (`store/views.py` folds them). Kinds and states are `StrEnum`s whose values
are exactly the strings stored in the database, so today's databases read unchanged
and an unknown kind (from a newer Baton) stays a plain string that nothing acts on.
"""

from __future__ import annotations

from enum import StrEnum

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any


class State(StrEnum):
    """Where a task is (DESIGN.md: draft → queued → running → done → landed → merged)."""

    DRAFT = "draft"
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    LANDED = "landed"
    MERGED = "merged"
    PAUSED = "paused"
    CHECKPOINT = "checkpoint"
    FAILED = "failed"
    PARKED = "parked"
    DISCARDED = "discarded"


STATES = tuple(State)

# Named groups: every rule about "which states" uses one of these, never a fresh tuple.
PENDING = frozenset({State.DRAFT, State.QUEUED})                    # not started yet
ACTIVE = frozenset({State.RUNNING, State.CHECKPOINT})               # an agent may be live
RESTARTABLE = frozenset({State.FAILED, State.PARKED, State.PAUSED})  # retry / reassign / take over
BROKEN = frozenset({State.FAILED, State.PARKED})                    # the run did not succeed
BLOCKING = frozenset({State.FAILED, State.PARKED, State.DISCARDED})  # dependents cannot start
WAITING = frozenset({State.PAUSED, State.CHECKPOINT})               # on the person or a reset
LANDED = frozenset({State.LANDED, State.MERGED})                    # on the integration branch
FINISHED = frozenset({State.DONE, State.LANDED, State.MERGED, State.DISCARDED})
SETTLED = frozenset({State.MERGED, State.DISCARDED})                # nothing left to bring home
ENDED = frozenset({State.DONE, State.LANDED, State.MERGED, State.FAILED, State.PARKED,
                   State.DISCARDED})


class EventKind(StrEnum):
    """Every kind of event Baton writes. The value is what the store holds."""

    # a task's state changes
    TASK_QUEUED = "task.queued"
    TASK_STARTED = "task.started"
    TASK_RESUMED = "task.resumed"
    TASK_CONTINUED = "task.continued"
    TASK_DONE = "task.done"
    TASK_LANDED = "task.landed"
    TASK_MERGED = "task.merged"
    TASK_PAUSED = "task.paused"
    TASK_CHECKPOINT = "task.checkpoint"
    TASK_FAILED = "task.failed"
    TASK_PARKED = "task.parked"
    TASK_DISCARDED = "task.discarded"
    TASK_RESET = "task.reset"
    # details about a task
    TASK_PROGRESS = "task.progress"
    TASK_REPORTED = "task.reported"
    TASK_REPORT_REFUSED = "task.report_refused"
    TASK_CHECKPOINT_ANSWERED = "task.checkpoint_answered"
    TASK_USAGE = "task.usage"
    TASK_FLAGGED = "task.flagged"
    TASK_CHECK = "task.check"
    TASK_STOP_REQUESTED = "task.stop_requested"
    TASK_REASSIGNED = "task.reassigned"
    TASK_APPROVAL_VOIDED = "task.approval_voided"  # edited mid-run: only it waits for approval
    TASK_RECYCLED = "task.recycled"    # landed: its worktree now serves another task
    TASK_PR = "task.pr"                # its pull request of a stack, opened or updated
    TASK_COMMENT = "task.comment"      # a review comment on a line the task wrote
    TASK_TOLD = "task.told"            # `baton tell`: a message for its running agent
    TASK_TOLD_READ = "task.told_read"  # … delivered (the inbox tool, or its next prompt)
    # the plan
    PLAN_CREATED = "plan.created"
    PLAN_ARCHIVED = "plan.archived"
    PLAN_EDITED = "plan.edited"
    PLAN_APPROVED = "plan.approved"
    PLAN_APPROVAL_VOIDED = "plan.approval_voided"
    PLAN_AUTONOMY = "plan.autonomy"
    PLAN_BUDGET = "plan.budget"
    # the run and its conductor
    RUN_STARTED = "run.started"
    RUN_RESUMED = "run.resumed"
    RUN_PAUSE_REQUESTED = "run.pause_requested"
    RUN_CHECK = "run.check"
    RUN_STOPPED = "run.stopped"        # a stop condition met: nothing new starts
    RUN_FINISHED = "run.finished"
    CONDUCTOR_STARTED = "conductor.started"
    CONDUCTOR_CRASHED = "conductor.crashed"
    RUN_REPAIRED = "run.repaired"      # Baton put back what a crash or an agent broke
    # handoff, trust, planning
    HANDOFF_MERGED = "handoff.merged"
    HANDOFF_PR = "handoff.pr"          # the plan's one pull request, opened or updated
    TRUST_RECORDED = "trust.recorded"
    PLANNER_STEP = "planner.step"
    PLANNER_QUESTIONS = "planner.questions"
    PLANNER_PLAN = "planner.plan"
    PLANNER_REPAIR = "planner.repair"
    PLANNER_SPEC = "planner.spec"      # `--skill to-spec`: the spec the plan is built against
    PLANNER_FAILED = "planner.failed"


K = EventKind

# Event kind -> the state it puts the task in. Every other kind adds detail only.
STATE_EVENTS: dict[str, State] = {
    K.TASK_QUEUED: State.QUEUED, K.TASK_STARTED: State.RUNNING, K.TASK_RESUMED: State.RUNNING,
    K.TASK_CONTINUED: State.RUNNING, K.TASK_DONE: State.DONE, K.TASK_LANDED: State.LANDED,
    K.TASK_MERGED: State.MERGED, K.TASK_PAUSED: State.PAUSED,
    K.TASK_CHECKPOINT: State.CHECKPOINT, K.TASK_FAILED: State.FAILED,
    K.TASK_PARKED: State.PARKED, K.TASK_DISCARDED: State.DISCARDED, K.TASK_RESET: State.DRAFT,
}
STARTS = frozenset({K.TASK_STARTED, K.TASK_RESUMED})
# What an agent itself writes, through `baton report` / `baton checkpoint`: activity.
AGENT_EVENTS = frozenset({K.TASK_PROGRESS, K.TASK_REPORTED, K.TASK_CHECKPOINT, K.TASK_CONTINUED})


# The typed payloads (`Queued`, `Started`, … and `PAYLOADS`, kind -> its payload) live one
# floor up, in `payloads.py`: TypedDict would import `typing` on the status path.


_KINDS: dict[str, EventKind] = {kind.value: kind for kind in EventKind}


def kind_of(raw: str) -> EventKind | str:
    """The typed kind of a stored string; an unknown one stays a string (forward compatible).
    A dict lookup: `EventKind(raw)` costs microseconds, times every event of a 10,000-task log."""
    return _KINDS.get(raw, raw)


class Event:
    """One row of the event log (a plain class: see `paths.RepoPaths` on `dataclasses`)."""

    __slots__ = ("id", "plan_id", "task_id", "kind", "data", "ts")

    def __init__(self, id: int, plan_id: int | None, task_id: int | None, kind: str,
                 data: dict[str, Any] | None = None, ts: float = 0.0):
        self.id, self.plan_id, self.task_id = id, plan_id, task_id
        self.kind = kind_of(kind)
        self.data = data if data is not None else {}
        self.ts = ts

    def __repr__(self) -> str:
        return f"Event({self.id}, {str(self.kind)!r}, task={self.task_id}, data={self.data!r})"

    @property
    def state(self) -> State | None:
        return STATE_EVENTS.get(self.kind)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "ts": self.ts, "plan": self.plan_id, "task": self.task_id,
                "kind": str(self.kind), **({"data": self.data} if self.data else {})}
