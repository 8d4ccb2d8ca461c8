"""Bringing a remote attempt home: the attempt recorded as if it had run on this machine.

Any runner whose agents run elsewhere (a Dask worker today; a Kubernetes pod or a Ray job
would fit the same) ends the same way: what ran there comes back as a commit of the worktree
as the agent left it, the agent's own commits, its output, and the events its attempt
recorded in the store it had there. `arrive` puts that into the task's local worktree, its
log and this store — so the finisher judges, commits and lands a remote attempt exactly as a
local one. `lost` records an attempt that cannot come home, and why (the finisher fails the
task with that reason). Nothing here knows how the work travelled.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton_tui import killpoints
from baton_tui.core.events import EventKind
from baton_tui.gitops.git import NO_HOOKS, GitError, git, run_git
from baton_tui.gitops.refs import read_ref
from baton_tui.store.rows import AttemptRow
from baton_tui.workspace import Workspace

K = EventKind


def _get(wire: Mapping[str, object], key: str, kind: type) -> Any:
    value = wire.get(key)
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Ran:
    """The attempt as the store where it ran has it once its agent ended."""

    exit_status: int | None = None
    report: dict[str, Any] | None = None
    session_id: str | None = None
    started: float | None = None
    ended: float | None = None
    leftover: list[dict[str, Any]] | None = None  # processes that could not be ended there
    log_cut: int | None = None      # output bytes left out of the log there
    node_attempt: int | None = None  # its id in that store

    def to_wire(self) -> dict[str, Any]:
        return {"exit_status": self.exit_status, "report": self.report,
                "session_id": self.session_id, "started": self.started, "ended": self.ended,
                "leftover": self.leftover, "log_cut": self.log_cut,
                "node_attempt": self.node_attempt}

    @classmethod
    def from_wire(cls, wire: Mapping[str, object]) -> Ran:
        started, ended = wire.get("started"), wire.get("ended")
        return cls(exit_status=_get(wire, "exit_status", int), report=_get(wire, "report", dict),
                   session_id=_get(wire, "session_id", str),
                   started=float(started) if isinstance(started, (int, float)) else None,
                   ended=float(ended) if isinstance(ended, (int, float)) else None,
                   leftover=_get(wire, "leftover", list), log_cut=_get(wire, "log_cut", int),
                   node_attempt=_get(wire, "node_attempt", int))


@dataclass(frozen=True)
class RemoteEvent:
    """One event the attempt recorded where it ran (a report, progress, usage, a refused
    report, a flag): replayed into this store when it comes home."""

    kind: str
    data: dict[str, Any]
    ts: float
    id: int

    def to_wire(self) -> dict[str, Any]:
        return {"kind": self.kind, "data": self.data, "ts": self.ts, "id": self.id}

    @classmethod
    def from_wire(cls, wire: Mapping[str, object]) -> RemoteEvent:
        ts = wire.get("ts")
        return cls(kind=str(wire.get("kind")), data=dict(_get(wire, "data", dict) or {}),
                   ts=float(ts) if isinstance(ts, (int, float)) else 0.0,
                   id=_get(wire, "id", int) or 0)


@dataclass(frozen=True)
class Arrival:
    """What came home of a remote attempt that ran: where, its commits, its attempt, its
    events and its output. `head` is the agent's last commit, `result` the worktree as it
    left it (a commit on top of `head`); both are in this repository already."""

    node: str | None
    head: str | None
    result: str | None
    ran: Ran
    events: tuple[RemoteEvent, ...] = ()
    output: bytes = b""
    streamed: Collection[int] = field(default_factory=frozenset)  # progress recorded live


def lost(ws: Workspace, attempt: AttemptRow, why: str, node: str | None = None) -> None:
    """Record an attempt that cannot come home (`spec.lost`: the finisher's reason)."""
    spec = attempt.spec.copy()
    spec["lost"] = why
    if node:
        spec["node"] = node
    ws.store.update_attempt(attempt.id, spec=spec, ended=time.time())


def arrive(ws: Workspace, attempt: AttemptRow, arrival: Arrival) -> None:
    """The remote attempt as if it had run here: log, work, report, events, record — once
    (a conductor killed after this point finds it `replayed` and does nothing again)."""
    store, spec = ws.store, attempt.spec.copy()
    if spec.get("replayed"):  # collected before by a conductor killed after this point:
        return                 # its work is home and its events are in — not twice
    if attempt.log_path:
        Path(attempt.log_path).write_bytes(arrival.output)
    if arrival.head and arrival.result and spec.get("cwd"):
        bring_home(spec["cwd"], spec["pushed"], arrival.head, arrival.result)
    ran = arrival.ran
    spec["replayed"] = True
    spec.update({"node": arrival.node, "node_attempt": ran.node_attempt})
    if ran.leftover:
        spec["leftover"] = ran.leftover
    if ran.log_cut:
        spec["log_cut"] = ran.log_cut
    with store.tx():
        for event in arrival.events:
            if event.kind == K.TASK_PROGRESS and event.id in arrival.streamed:
                continue  # recorded as it came
            data = dict(event.data)
            if "attempt" in data:
                data["attempt"] = attempt.id
            store.append(attempt.plan_id, attempt.task_id, event.kind, data)
        fields: dict[str, Any] = {"spec": spec, "exit_status": ran.exit_status,
                                  "ended": ran.ended or time.time()}
        if ran.report is not None:
            fields["report"] = ran.report
        if ran.session_id:
            fields["session_id"] = ran.session_id
        store.update_attempt(attempt.id, **fields)
    killpoints.reached("collected")


def bring_home(worktree: str | os.PathLike[str], base: str, head: str, result: str) -> None:
    """Put a remote attempt's work into the task's local worktree as a local agent would have
    left it: the agent's own commits on its branch (fast-forward from `base`), the rest as
    uncommitted changes — which Baton then commits and lands exactly as a local task's."""
    current = read_ref(worktree, "HEAD") or git(worktree, "rev-parse", "HEAD")
    if head != base and head != current:
        if run_git(worktree, "merge-base", "--is-ancestor", current, head).returncode != 0:
            raise GitError(["merge", "--ff-only", head], "the agent's commits do not follow "
                           "the task's branch", 1)
        git(worktree, *NO_HOOKS, "merge", "--ff-only", "--quiet", head)
    if result != read_ref(worktree, "HEAD"):
        git(worktree, "read-tree", "--reset", "-u", result)
        git(worktree, "reset", "--quiet")  # the index back at HEAD: the rest is uncommitted
