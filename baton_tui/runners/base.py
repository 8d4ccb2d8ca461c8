"""The runner seam: how the conductor starts, follows, stops and collects an attempt.

The conductor decides *what* runs and *when*; a runner decides *where and how*. It speaks
to its attempts only through `Runner`, and holds of each attempt only an `AttemptHandle`:
no pid, process group or log path reaches the conductor's decisions. `LocalRunner`
(runners/local.py: the `baton attempt` shim on this machine) is today's one implementation; a
cluster runner (remote workers whose results come back as git refs) fits the same shape —
`start` and `collect` are awaitable for that reason, so a runner may take its time on a
worker thread or over the network without holding up the conductor's loop.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from baton_tui.plan.model import PlanDocument, Task
from baton_tui.store.rows import AttemptRow, PlanRow


@dataclass(frozen=True)
class AttemptHandle:
    """One attempt as its runner knows it. The conductor keeps it and hands it back; what
    the runner remembers of the attempt (a process, a log offset, a remote job) stays
    inside the runner, keyed by the handle."""

    attempt_id: int
    task_id: int


@dataclass(frozen=True)
class StartRequest:
    """Everything the conductor decided about one start; the runner does the rest."""

    plan: PlanRow
    doc: PlanDocument
    task: Task
    attempt_no: int                   # this attempt's number for the task, from 1
    artifacts: dict[int, str] = field(default_factory=dict)  # dependencies' reports
    feedback: str | None = None       # a failure, a handoff packet, a retry's note
    resume_message: str | None = None  # continue a saved session with this message
    session_id: str | None = None     # the session to continue, when the player has one
    refresh: bool = False             # bring the integration branch into its worktree first
    spare: Spare | None = None        # a landed task's worktree it may take over


@dataclass(frozen=True)
class Spare:
    """A landed task's worktree that a starting task may take over instead of checking out
    one of its own (`gitops.recycling`), as far as the conductor knows."""

    task_id: int
    path: str
    branch: str
    landed: str | None                # the integration commit its landing made


class StartFailed(Exception):
    """The attempt could not start (set-up failed, the player is unknown…): the task fails
    with `reason`, and `output` when there is some to show."""

    def __init__(self, reason: str, output: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.output = output


class StartDeferred(Exception):
    """The attempt cannot start now — its runner's cluster is unreachable: nothing was
    started or lost, and the task stays queued (tried again a while later) with `reason`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Looked:
    """What one look at the followed attempts found."""

    ended: set[AttemptHandle] = field(default_factory=set)  # finished: collect them
    lost: set[AttemptHandle] = field(default_factory=set)   # no record left: forget them


class Runner(Protocol):
    """Start, follow, stop and collect attempts. Every method but `start`, `collect` and
    `make_ahead` is called on the conductor's loop and must return at once."""

    async def start(self, request: StartRequest) -> AttemptHandle:
        """Record and start one attempt (raises `StartFailed`)."""
        ...

    def adopt(self, attempt: AttemptRow) -> AttemptHandle:
        """Follow again an attempt that outlived a previous conductor (its old output is
        not read again)."""
        ...

    def on_its_way(self, attempt: AttemptRow) -> bool:
        """Whether an attempt recorded but not yet claimed by its agent may still be."""
        ...

    def look(self, handles: Collection[AttemptHandle]) -> Looked:
        """Refresh what is known of the followed attempts (once per tick, for all of them)."""
        ...

    def exited(self, handle: AttemptHandle) -> asyncio.Future[object] | None:
        """A future done when the attempt ends, to wake the loop; None when the runner can
        only tell at a `look`."""
        ...

    def output(self, handle: AttemptHandle) -> bytes:
        """The attempt's output since the last call (b"" when nothing new)."""
        ...

    def cpu_times(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
        """CPU seconds each attempt's agent has used so far, where the runner can tell."""
        ...

    def worktree(self, handle: AttemptHandle) -> Path | None:
        """The attempt's working tree on this machine, for the supervisor's looks at its
        changed files; None when it runs elsewhere."""
        ...

    def stop(self, handle: AttemptHandle, sig: signal.Signals) -> bool:
        """Ask the attempt to stop (SIGTERM: gently, its session saved; SIGKILL: now).
        False when there is nothing to signal yet."""
        ...

    async def collect(self, handle: AttemptHandle) -> AttemptRow:
        """The ended attempt's result as recorded (exit status, report, session): brought
        home first where it ran elsewhere."""
        ...

    def make_ahead(self, plan: PlanRow, task: Task, spare: Spare | None = None) -> bool:
        """Prepare a task's place before it may start (blocking: called on a worker
        thread), taking over `spare` where it may; False when there is nothing to prepare
        ahead."""
        ...

    def drop_ahead(self, plan: PlanRow, task: Task) -> None:
        """Undo `make_ahead` for a task that never started (blocking)."""
        ...

    def close(self) -> None:
        """The run is over: release what the runner holds (its attempts go on)."""
        ...
