"""Following live attempts: their output, progress lines, stalls, loops, stops and ends.

A mixin of the `Conductor`. Output is read in bounded chunks from each attempt's log;
watch-mode flags come from `supervisor`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from baton_tui import procs
from baton_tui.run import supervisor
from baton_tui.store.db import AttemptRow
from baton_tui.store.events import ACTIVE, EventKind, State

K = EventKind
PROGRESS_EVERY = 1.0
STOP_GRACE = 5.0


@dataclass
class Tracked:
    """A live attempt the conductor follows."""

    attempt_id: int
    task_id: int
    log_offset: int = 0
    last_activity: float = field(default_factory=time.monotonic)
    last_progress: float = 0.0
    pending_line: str | None = None
    signalled: float | None = None
    watch: supervisor.Watch = field(default_factory=supervisor.Watch)


class Following:
    """Reattaching, reading output, supervising and collecting ended attempts."""

    def reconcile(self) -> None:
        """Reattach to attempts that outlived a previous conductor; collect finished ones.

        A build task left `done` but not landed (the conductor died while landing) lands now.
        """
        for task in self.doc.tasks:
            if self.git_mode and task.mode == "build" and self.state(task.id) == State.DONE:
                self.finishing[task.id] = asyncio.ensure_future(self._land_again(task))
                continue
            if self.state(task.id) not in ACTIVE:
                continue
            attempt = self.store.latest_attempt(self.plan.id, task.id)
            if attempt is None or attempt.collected:
                if self.state(task.id) == State.RUNNING:
                    self.emit(task.id, K.TASK_FAILED, reason="its attempt was lost (Baton was "
                              "killed before it started); retry it")
                continue
            self.tracked[task.id] = Tracked(attempt.id, task.id,
                                            log_offset=self._log_size(attempt))

    @staticmethod
    def _log_size(attempt: AttemptRow) -> int:
        try:
            return os.path.getsize(attempt.log_path or "")
        except OSError:
            return 0

    def _ended(self, attempt: AttemptRow) -> bool:
        if attempt.ended is not None:
            return True
        if attempt.shim_pid and procs.alive(attempt.shim_pid):
            return False
        # The shim is gone: finished only once the agent's group is gone too.
        if attempt.pgid and procs.group_alive(attempt.pgid):
            return False
        return True

    def _signal(self, task_id: int, sig: int = signal.SIGTERM) -> None:
        tracked = self.tracked.get(task_id)
        if tracked is None:
            return
        attempt = self.store.attempt(tracked.attempt_id)
        if attempt and attempt.pgid:
            procs.signal_group(attempt.pgid, sig)
            if tracked.signalled is None:
                tracked.signalled = time.monotonic()

    def follow(self) -> None:
        """Progress, stalls and ends of the tracked attempts."""
        stall = self.ws.config.limits.stall
        for task_id, tracked in list(self.tracked.items()):
            attempt = self.store.attempt(tracked.attempt_id)
            if attempt is None:
                del self.tracked[task_id]
                continue
            self._read_output(tracked, attempt)
            if self._ended(attempt):
                del self.tracked[task_id]
                self.finishing[task_id] = asyncio.ensure_future(self._finish(task_id, attempt.id))
                continue
            if tracked.signalled and time.monotonic() - tracked.signalled > STOP_GRACE:
                procs.signal_group(attempt.pgid, signal.SIGKILL)
            if self.doc.autonomy == "watch":
                self._supervise(task_id, tracked, attempt)
            quiet = time.monotonic() - tracked.last_activity
            if stall and quiet > stall and tracked.signalled is None \
                    and self.state(task_id) == State.RUNNING:
                spec = dict(attempt.spec)
                spec["silenced"] = quiet
                self.store.update_attempt(attempt.id, spec=spec)
                self.emit(task_id, K.TASK_FLAGGED, flag="stall",
                          message=f"silent for {int(quiet)}s: stopping it")
                self._signal(task_id)

    def _supervise(self, task_id: int, tracked: Tracked, attempt: AttemptRow) -> None:
        """Watch mode: flag a stall before it is stopped, and edits outside the scope."""
        watch = tracked.watch
        quiet = supervisor.quiet_for(tracked.last_activity, self.ws.config.limits.stall)
        if quiet and watch.once("quiet"):
            self.emit(task_id, K.TASK_FLAGGED, message=f"quiet for {int(quiet)}s — stalled? "
                      f"(`baton stop {task_id}` to take over)", flag="stall")
        cwd = attempt.spec.get("cwd")
        task = self._task(task_id)
        if cwd and task.mode == "build" and self.git_mode:
            outside = supervisor.off_plan(watch, Path(cwd), task.scope)
            if outside:
                self.emit(task_id, K.TASK_FLAGGED, flag="scope",
                          message="editing outside its scope: " + ", ".join(outside[:8]))

    def _agent_spoke(self, tracked: Tracked) -> bool:
        """Whether the agent used the report channel since the last look (quiet output is
        not silence while it reports progress or waits at a checkpoint)."""
        if tracked.task_id in self.spoke:
            self.spoke.discard(tracked.task_id)
            return True
        return False

    def _read_output(self, tracked: Tracked, attempt: AttemptRow) -> None:
        size = self._log_size(attempt)
        if size > tracked.log_offset:
            tracked.last_activity = time.monotonic()
            player = self.ws.catalog.players.get(self._task(tracked.task_id).player)
            with open(attempt.log_path or "", "rb") as fh:
                fh.seek(tracked.log_offset)
                chunk = fh.read(min(size - tracked.log_offset, 1 << 20))
            tracked.log_offset += len(chunk)
            if player is not None:
                for line in chunk.decode("utf-8", "replace").splitlines():
                    text = player.progress(line)
                    if text:
                        tracked.pending_line = text
                    halt = player.halt(line)
                    if halt and tracked.signalled is None:
                        self.emit(tracked.task_id, K.TASK_PROGRESS, message=f"stopping it: {halt}",
                                  attempt=tracked.attempt_id)
                        self._signal(tracked.task_id)
                    looping = supervisor.loop_line(tracked.watch, text or line)
                    if looping and self.doc.autonomy == "watch" and tracked.watch.once("loop"):
                        self.emit(tracked.task_id, K.TASK_FLAGGED, flag="loop",
                                  message=f"looping: “{looping[:80]}” {supervisor.LOOP_REPEATS}"
                                          "× in a row")
        elif self._agent_spoke(tracked):
            tracked.last_activity = time.monotonic()
        now = time.monotonic()
        if tracked.pending_line and now - tracked.last_progress >= PROGRESS_EVERY:
            self.emit(tracked.task_id, K.TASK_PROGRESS, message=tracked.pending_line[:300],
                      attempt=tracked.attempt_id)
            tracked.pending_line = None
            tracked.last_progress = now
