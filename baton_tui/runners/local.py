"""`LocalRunner`: attempts on this machine, each under its `baton attempt` shim.

A start prepares the task's worktree (`launcher.prepare_build`/`prepare_research`) and
spawns the shim (`launcher.start_attempt`: forked by the warm spawner where it can be) on a
worker thread, the worktree made in turn on the cores (`Turns`). The shim's exit wakes the loop through
a pidfd where the platform has one, so no thread is tied up waiting for a running agent.
Output is read in bounded chunks from each attempt's log; a stop signals the agent's whole
process group. What is known of every live attempt — its record as of the last look, its
log offset, its shim — stays here, keyed by its `AttemptHandle`.

It also keeps what only local agents call for: since when no agent has run (a look at the
person's checkout begun after it still holds for the next start, `outside.fingerprint`),
and whether one left processes Baton could not end (then never quiet again).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from baton_tui import layout, procs
from baton_tui.core.words import Mode
from baton_tui.gitops import fresh_index
from baton_tui.plan.model import Task
from baton_tui.run import outside
from baton_tui.runners import launcher, logcap, spawner
from baton_tui.runners.base import AttemptHandle, Looked, Spare, StartRequest
from baton_tui.runners.spawner import Forked
from baton_tui.store.rows import AttemptRow, PlanRow
from baton_tui.workspace import Workspace


def exited(shim: "subprocess.Popen[bytes] | Forked") -> asyncio.Future[object]:
    """A future that completes when the shim exits: our own child is reaped here, one the
    spawner forked is reaped by the spawner."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[object] = loop.create_future()
    try:
        fd = os.pidfd_open(shim.pid)
    except (AttributeError, OSError):
        if isinstance(shim, subprocess.Popen):  # no pidfd here: a thread waits instead
            return asyncio.ensure_future(asyncio.to_thread(shim.wait))
        future.set_result(None)  # forked, and already gone
        return future

    def ready() -> None:
        loop.remove_reader(fd)
        os.close(fd)
        code = shim.wait() if isinstance(shim, subprocess.Popen) else None
        if not future.done():
            future.set_result(code)

    loop.add_reader(fd, ready)
    return future


def refresh_index_later(worktree: Path) -> threading.Timer | None:
    """Refresh a copy of a just-checked-out worktree's index once its files are a second old
    (`fresh_index.refresh`), on a timer thread, so that the task's commit does not hash
    every file again on the way to its dependents' start. Nothing is lost if it fails.
    None: too few files for it to be worth a thread."""
    return fresh_index.refresh_later(worktree) if fresh_index.big_enough(worktree) else None


class Turns:
    """Starts take turns on the machine's cores for what is heavy in them, in the order they
    were asked for (the ready queue's rank): git making a worktree (a checkout) is CPU and
    disk, so eight begun at once on two cores share them and all end late together, the
    best-ranked with the rest; taking turns, the first ones start at once and the mean start
    comes about twice as early, for the same last one. Only the worktree is made in turn:
    the rest of a start (the prompt, the store's records, forking the shim) is light, and a
    turn held through it kept the others waiting (at 32 slots, 73 % of start time went to
    waiting for a turn). A start
    steps out of its turn while its `[worktree] setup` command runs (`aside`): a long
    install must not hold the others up. One turn more than there are cores: a start that
    waits in its turn (git's worktree lock, a landing's moment between moving the
    integration branch and noting it, `refguard.check_integration`) leaves the cores to the
    others instead of halving them (two turns on two cores, one landing stalled every
    queued start)."""

    def __init__(self, width: int | None = None):
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else os.cpu_count()
        self.width = width or max(2, cores or 2) + 1
        self._free = threading.Semaphore(self.width)  # waiters are woken first come, first served

    def __enter__(self) -> "Turns":
        self._free.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._free.release()

    @contextmanager
    def aside(self) -> Iterator[None]:
        self._free.release()
        try:
            yield
        finally:
            self._free.acquire()


@dataclass(eq=False)
class _Live:
    """What the local runner knows of one attempt it follows."""

    exit: asyncio.Future[object] | None  # our own shim's exit (None: adopted after a crash)
    row: AttemptRow | None = None        # the attempt's record as of the last look
    log_offset: int = 0                  # logical offset in its log read so far
    log_seen: tuple[int, int] | None = None  # the log's (size, mtime) at the last read
    mark: tuple | None = None            # the record's mark at the last look (`attempt_marks`)


class LocalRunner:
    """Attempts as `baton attempt` shims on this machine (see the module docstring)."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.store = ws.store
        self.turns = Turns()  # starts take turns on the cores, best-ranked first
        self._live: dict[AttemptHandle, _Live] = {}
        self._ended: dict[AttemptHandle, _Live] = {}  # ended, not collected yet
        self._starting = 0
        # Since when no agent has run (monotonic; None while one runs, or may): a look at the
        # checkout begun after it still holds for the next start (`outside.fingerprint`).
        self.quiet_since: float | None = None
        self.strays = False  # an agent left processes Baton could not end: never quiet again
        # No agent has run under this runner yet (none spawned, none adopted): the first
        # starts of a run share one look at the checkout, even one begun before they asked.
        self.untouched = True
        layout.shim_dir()  # written once here, not by each starting thread
        spawner.warm()  # its imports overlap ours; the first shim is forked, not started

    # starting ------------------------------------------------------------------------------
    async def start(self, request: StartRequest) -> AttemptHandle:
        quiet = self.quiet_since if not (self._live or self._starting) else None
        self.quiet_since = None  # an agent runs from now on
        first = self.untouched and not (self._live or self.strays)
        self._starting += 1
        try:
            attempt_id, shim = await asyncio.to_thread(self._start, request, quiet, first)
        finally:
            self._starting -= 1
        handle = AttemptHandle(attempt_id, request.task.id)
        self._live[handle] = _Live(exited(shim))  # wakes the loop the moment it exits
        return handle

    def _start(self, request: StartRequest, quiet: float | None, first: bool = False
               ) -> "tuple[int, subprocess.Popen[bytes] | Forked]":
        """On a worker thread: the worktree, then the shim. `first`: asked before any agent
        ran under this runner."""
        ws = self.ws.sibling()
        try:
            # The checkout looked at while the worktree is made (or the last look, when no
            # agent ran since it began) — asked before this start's turn, so the starts
            # waiting for theirs share one look (a big checkout's `git status` takes seconds).
            with launcher.start_failures(also=(NotImplementedError,)):
                ahead = outside.ahead(ws, quiet, join=first)
                return self._begin(ws, request, ahead)
        finally:
            ws.close()

    def _begin(self, ws: Workspace, request: StartRequest, ahead: Future[object]
               ) -> "tuple[int, subprocess.Popen[bytes] | Forked]":
        task, plan, feedback = request.task, request.plan, request.feedback
        with self.turns:  # the checkout: the heavy part (the rest waits on locks, or forks)
            if task.mode == Mode.RESEARCH:
                workdir = launcher.prepare_research(ws, plan, task, request.attempt_no)
            else:
                workdir = launcher.prepare_build(ws, plan, task, refresh=request.refresh,
                                                 aside=self.turns.aside, spare=request.spare)
        if workdir.fresh and workdir.branch:
            refresh_index_later(workdir.path)
        self.untouched = False  # its agent is spawned next
        if workdir.conflicts:
            feedback = ((feedback + "\n\n") if feedback else "") + (
                "Your branch now includes the latest integration branch, and these "
                "files conflict — resolve the conflict markers (keep both sides' "
                "intent): " + ", ".join(workdir.conflicts))
        return launcher.start_attempt(
            ws, plan, request.doc, task, workdir, artifacts=request.artifacts,
            feedback=feedback, resume_message=request.resume_message,
            session_id=request.session_id, ahead=ahead)

    def adopt(self, attempt: AttemptRow) -> AttemptHandle:
        self.untouched = False  # its agent may be at work
        handle = AttemptHandle(attempt.id, attempt.task_id)
        self._live[handle] = _Live(None, attempt, logcap.logical_size(attempt.log_path))
        return handle

    def on_its_way(self, attempt: AttemptRow) -> bool:
        # A shim is forked in Baton's process group and leaves it only as it claims its
        # attempt: while it lives, it claims the attempt or gives it up itself.
        return bool(attempt.shim_pid and procs.alive(attempt.shim_pid))

    # following -----------------------------------------------------------------------------
    def look(self, handles: Collection[AttemptHandle]) -> Looked:
        looked = Looked()
        if not handles:
            return looked
        # Every tick reads each live attempt's mark; the whole record (its JSON decoded)
        # only when it changed — hundreds of attempts may be live.
        marks = self.store.attempt_marks([h.attempt_id for h in handles])
        changed = [h.attempt_id for h in handles if (live := self._live.get(h)) is not None
                   and live.mark != marks.get(h.attempt_id)]
        rows = self.store.attempts_by_id(changed) if changed else {}
        for handle in handles:
            live = self._live.get(handle)
            if live is not None and handle.attempt_id in rows:
                live.row, live.mark = rows[handle.attempt_id], marks[handle.attempt_id]
            row = live.row if live is not None and handle.attempt_id in marks else None
            if live is None or row is None:
                self._live.pop(handle, None)
                looked.lost.add(handle)
                continue
            if self._has_ended(row, live.exit):
                del self._live[handle]
                self._ended[handle] = live
                looked.ended.add(handle)
                self.strays = self.strays or bool(row.spec.get("leftover"))
        if looked.ended and not (self._live or self._starting or self.strays):
            self.quiet_since = time.monotonic()
        return looked

    @staticmethod
    def _has_ended(attempt: AttemptRow, exit: asyncio.Future[object] | None) -> bool:
        if attempt.ended is not None:
            return True
        if exit is not None and not exit.done():
            return False  # our own shim, still running (its exit wakes the loop)
        if attempt.shim_pid and procs.alive(attempt.shim_pid):
            return False
        # The shim is gone: finished only once the agent's group is gone too.
        if attempt.pgid and procs.group_alive(attempt.pgid):
            return False
        return True

    def exited(self, handle: AttemptHandle) -> asyncio.Future[object] | None:
        live = self._live.get(handle)
        return live.exit if live is not None else None

    def output(self, handle: AttemptHandle) -> bytes:
        # At most 1 MiB a look, by logical offset (a capped log's cut middle is skipped); a log
        # whose size and last write are as at the last look is not opened (32 agents' logs
        # were opened 20 times a second each, most of them with nothing new).
        live = self._live.get(handle) or self._ended.get(handle)
        path = live.row.log_path if live is not None and live.row is not None else None
        if live is None or path is None:
            return b""
        seen = logcap.stamp(path)
        if seen is not None and seen == live.log_seen:
            return b""
        chunk, live.log_offset, _cut = logcap.read_from(path, live.log_offset)
        if len(chunk) < logcap.LOOK:  # (a full chunk: more may be waiting, look again)
            live.log_seen = seen
        return chunk

    def cpu_times(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
        # One look at the process table for all of them (`procs.tree_cpu_times`).
        pids: dict[int, AttemptHandle] = {}
        for handle in handles:
            live = self._live.get(handle)
            if live is not None and live.row is not None and live.row.pid:
                pids[live.row.pid] = handle
        if not pids:
            return {}
        return {pids[pid]: total for pid, total in procs.tree_cpu_times(list(pids)).items()
                if pid in pids}

    def worktree(self, handle: AttemptHandle) -> Path | None:
        live = self._live.get(handle)
        cwd = live.row.spec.get("cwd") if live is not None and live.row is not None else None
        return Path(cwd) if cwd else None

    def stop(self, handle: AttemptHandle, sig: signal.Signals) -> bool:
        # The record of this tick's look, unless its agent's group was not known then.
        live = self._live.get(handle)
        row = live.row if live is not None else None
        if row is None or not row.pgid:
            row = self.store.attempt(handle.attempt_id)
        if row is None or not row.pgid:
            return False
        procs.signal_group(row.pgid, sig)
        return True

    async def collect(self, handle: AttemptHandle) -> AttemptRow:
        self._ended.pop(handle, None)
        self._live.pop(handle, None)
        attempt = self.store.attempt(handle.attempt_id)  # the shim recorded it all
        assert attempt is not None  # attempts are never deleted while their plan runs
        return attempt

    # worktrees made ahead ------------------------------------------------------------------
    def make_ahead(self, plan: PlanRow, task: Task, spare: Spare | None = None) -> bool:
        ws = self.ws.sibling()
        try:
            made = launcher.prepare_ahead(ws, plan, task, spare)
            if made:  # its index refreshed for its start, once its checkout is a second old
                refresh_index_later(launcher.build_path(ws, plan, task))
            return made
        finally:
            ws.close()

    def drop_ahead(self, plan: PlanRow, task: Task) -> None:
        launcher.drop_ahead(self.ws, plan, task)

    def close(self) -> None:
        spawner.stop()
