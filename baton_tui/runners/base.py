"""The runner seam: how the conductor starts, follows, stops and collects an attempt.

The conductor decides *what* runs, *when*, and *with which words*; a runner decides *where
and how*. Before a start the conductor has made the task's place (its worktree, on this
machine: a task lands here wherever it ran), recorded the attempt, done the containment
bookkeeping for an agent that runs here, and composed every word the agent receives (the
brief, a resume's message, a handoff packet, a conflict note): the runner gets all of it in
the `StartRequest` and only starts the agent. It speaks to its attempts through `Runner` and
holds of each attempt only an `AttemptHandle`: no pid, process group, log or local path
reaches the conductor's decisions — the supervisor asks the runner what changed
(`changed_files`) and whether the agent works (`activity`), so a remote attempt is supervised
like a local one. `LocalRunner` (runners/local.py: the `baton attempt` shim on this machine)
and the Dask runner (runners/dask/) implement it; `start` and `collect` are awaitable so a
runner may take its time on a worker thread or over the network without holding up the
conductor's loop.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from baton_tui.plan.model import PlanDocument, Task
from baton_tui.store.rows import AttemptRow, PlanRow

# What an agent changed in its worktree so far: the changed paths (relative to the worktree,
# untracked ones included) and a signature that differs whenever any of them changes (here:
# each path's size and modification time).
Signature = tuple[tuple[str, int, int], ...]
Changes = tuple[list[str], Signature]


@dataclass(frozen=True)
class AttemptHandle:
    """One attempt as its runner knows it. The conductor keeps it and hands it back; what
    the runner remembers of the attempt (a process, a log offset, a remote job) stays
    inside the runner, keyed by the handle."""

    attempt_id: int
    task_id: int


@dataclass
class Workdir:
    """Where an attempt runs on this machine, and what it started from (made by the
    conductor, `run/placing.py`)."""

    path: Path
    base: str | None          # the commit the task's branch was cut from
    branch: str | None        # None for research (detached) and folder mode
    fresh: bool = False
    conflicts: list[str] = field(default_factory=list)  # left with markers for the agent


@dataclass(frozen=True)
class StartRequest:
    """Everything the conductor decided and made for one start; the runner starts the agent.

    The attempt is recorded (`attempt_id`, its `nonce`'s hash in the store) but not started:
    the runner writes its spec and log path, starts its agent, and records the start (the
    `task.started`/`task.resumed` event) — or raises `StartFailed`/`StartDeferred`, and the
    conductor gives the attempt up."""

    plan: PlanRow
    doc: PlanDocument
    task: Task
    attempt_id: int
    folder: Path                      # the attempt's own (private) folder on this machine
    workdir: Workdir                  # the task's place, made by the conductor
    prompt: str                       # every word of the agent's brief, composed
    nonce: str = field(default="", repr=False)  # what the agent's reports must carry
    resume_message: str | None = None  # continue a saved session with this message
    session_id: str | None = None     # the session to continue, when the player has one
    held: tuple[str, ...] = ()        # refs the agent must not move (read-only where it can)
    # The brief for a fresh session, for a runner that finds the session to resume lost (a
    # remote worker gone with it): composed by the conductor (a handoff packet: the work so
    # far), given where the session was. Blocking: called off the loop. None: not a resume.
    rebrief: Callable[[str], str] | None = None


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
    """Start, follow, stop and collect attempts. Every method but `start` and `collect` is
    called on the conductor's loop and must return at once."""

    def runs_here(self, task: Task) -> bool:
        """Whether the task's agent runs on this machine, within reach of the person's
        checkout and Baton's home: the conductor then fingerprints them and records the
        refs it must not move before the start (`run/outside`, `run/refguard`), and finds
        what the agent wrote there after it."""
        ...

    async def start(self, request: StartRequest) -> AttemptHandle:
        """Start the recorded attempt's agent in its prepared place with the composed words
        (raises `StartFailed`, or `StartDeferred` when nothing could be sent)."""
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

    def activity(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
        """How much work each attempt's agent has done so far — CPU seconds of its process
        tree — for those the runner can tell (asked once a second for agents silent near the
        stall limit: busy in silence is not stalled). Only growth is read, so the number
        may come from anywhere that measures the agent: a local runner reads the process
        table (once for all of them); a remote runner answers from what its node last sent
        (the node samples its agent's CPU seconds into its events), never by a round trip."""
        ...

    def changed_files(self, handle: AttemptHandle) -> asyncio.Future[Changes] | None:
        """A look at the files the attempt's agent has changed in its worktree so far
        (`Changes`), for the supervisor's scope, idle and overlap flags — asked every few
        seconds while the attempt runs; None when the runner cannot tell now (nothing known
        yet). The look may take its time (a `git status`): the future completes off the
        loop, and a failed one is simply looked at again later. A local runner looks at
        the worktree on a worker thread (`runners/changes.py`); a remote runner answers
        from what its node last sent (the node looks at its checkout as its agent works and
        sends the changes in its events), never by a round trip per look."""
        ...

    def stop(self, handle: AttemptHandle, sig: signal.Signals) -> bool:
        """Ask the attempt to stop (SIGTERM: gently, its session saved; SIGKILL: now).
        False when there is nothing to signal yet."""
        ...

    async def collect(self, handle: AttemptHandle) -> AttemptRow:
        """The ended attempt's result as recorded (exit status, report, session): brought
        home first where it ran elsewhere."""
        ...

    def close(self) -> None:
        """The run is over: release what the runner holds (its attempts go on)."""
        ...
