"""`LocalRunner`: attempts on this machine, each under its `baton attempt` shim.

The conductor has made the task's worktree, recorded the attempt and composed its words; a
start spawns the shim (`launcher.start_attempt`: forked by the warm spawner where it can be)
on a worker thread. The shim's exit wakes the loop through a pidfd where the platform has
one, so no thread is tied up waiting for a running agent. Output is read in bounded chunks
from each attempt's log; a stop signals the agent's whole process group; the supervisor's
looks at an agent's changed files are a `git status` of its worktree (`changes`), its
activity the CPU time of its process tree. What is known of every live attempt — its record
as of the last look, its log offset, its shim — stays here, keyed by its `AttemptHandle`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from baton_tui import layout, procs
from baton_tui.plan.model import Task
from baton_tui.runners import changes, launcher, logcap, spawner
from baton_tui.runners.base import AttemptHandle, Changes, Looked, StartRequest
from baton_tui.runners.spawner import Forked
from baton_tui.store.rows import AttemptRow
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


@dataclass(eq=False)
class _Live:
    """What the local runner knows of one attempt it follows."""

    exit: asyncio.Future[object] | None  # our own shim's exit (None: adopted after a crash)
    row: AttemptRow | None = None        # the attempt's record as of the last look
    log_offset: int = 0                  # logical offset in its log read so far
    log_seen: tuple[int, int] | None = None  # the log's (size, mtime) at the last read
    mark: tuple[object, ...] | None = None            # the record's mark at the last look (`attempt_marks`)


class LocalRunner:
    """Attempts as `baton attempt` shims on this machine (see the module docstring)."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.store = ws.store
        self._live: dict[AttemptHandle, _Live] = {}
        self._ended: dict[AttemptHandle, _Live] = {}  # ended, not collected yet
        layout.shim_dir()  # written once here, not by each starting thread
        spawner.warm()  # its imports overlap ours; the first shim is forked, not started

    def runs_here(self, task: Task) -> bool:
        return True

    # starting ------------------------------------------------------------------------------
    async def start(self, request: StartRequest) -> AttemptHandle:
        shim = await asyncio.to_thread(self._start, request)
        handle = AttemptHandle(request.attempt_id, request.task.id)
        self._live[handle] = _Live(exited(shim))  # wakes the loop the moment it exits
        return handle

    def _start(self, request: StartRequest) -> "subprocess.Popen[bytes] | Forked":
        """On a worker thread, with a workspace of its own: the shim spawned."""
        ws = self.ws.sibling()
        try:
            with launcher.start_failures(also=(NotImplementedError,)):
                return launcher.start_attempt(ws, request)
        finally:
            ws.close()

    def adopt(self, attempt: AttemptRow) -> AttemptHandle:
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

    def activity(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
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

    def changed_files(self, handle: AttemptHandle) -> asyncio.Future[Changes] | None:
        live = self._live.get(handle)
        cwd = live.row.spec.get("cwd") if live is not None and live.row is not None else None
        return changes.look(Path(cwd)) if cwd else None

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

    def close(self) -> None:
        spawner.stop()
