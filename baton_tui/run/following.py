"""Following live attempts: their output, progress lines, stalls, loops, stops and ends.

A mixin of the `Conductor`. Output is read in bounded chunks from each attempt's log;
watch-mode flags come from `supervisor`.
"""

from __future__ import annotations

import asyncio
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton_tui import procs
from baton_tui.run import logcap, supervisor
from baton_tui.store.db import AttemptRow
from baton_tui.core.events import ACTIVE, EventKind, State

K = EventKind
PROGRESS_EVERY = 1.0
STOP_GRACE = 5.0


@dataclass
class Tracked:
    """A live attempt the conductor follows."""

    attempt_id: int
    task_id: int
    log_offset: int = 0
    log_seen: tuple | None = None  # the log's (size, mtime) at the last look that read it
    last_activity: float = field(default_factory=time.monotonic)
    last_progress: float = 0.0
    pending_line: str | None = None
    signalled: float | None = None
    files: Any = None  # the look at its changed files under way on a worker thread
    watch: supervisor.Watch = field(default_factory=supervisor.Watch)


class Following:
    """Reattaching, reading output, supervising and collecting ended attempts."""

    def reconcile(self) -> None:
        """Reattach to attempts that outlived a previous conductor; collect finished ones.

        A build task left `done` but not landed (the conductor died while landing) lands now.
        An attempt recorded whose start was not (the conductor died right after spawning its
        shim) is adopted when its shim runs the agent, else given up: never a second agent.
        """
        for task in self.doc.tasks:
            if self.git_mode and task.mode == "build" and self.state(task.id) == State.DONE:
                self.finishing[task.id] = asyncio.ensure_future(self._land_again(task))
                continue
            attempt = self.store.latest_attempt(self.plan.id, task.id)
            if attempt is not None and not attempt.collected \
                    and attempt.id != self.view(task.id).attempt:
                attempt = self._adopt(task.id, attempt)
            if self.state(task.id) not in ACTIVE:
                continue
            if self._never_ran(task.id, attempt):
                again = "resumed" if attempt.spec.get("resumed") else "started"
                self.emit(task.id, K.TASK_QUEUED, reason=f"its agent never {again} (Baton was "
                          f"killed as it started it): starting it again")
                continue
            if attempt is None or attempt.collected:
                if self.state(task.id) == State.RUNNING:
                    self.emit(task.id, K.TASK_FAILED, reason="its attempt was lost (Baton was "
                              "killed before it started); retry it")
                continue
            self.tracked[task.id] = Tracked(attempt.id, task.id,
                                            log_offset=self._log_size(attempt))

    def _adopt(self, task_id: int, attempt: AttemptRow) -> AttemptRow | None:
        """Record the start of an attempt whose shim claimed it; give up one it never did.
        Returns the attempt as the store has it now."""
        if self.store.abandon_attempt(attempt.id):
            return self.store.attempt(attempt.id)  # nothing ran: the task starts afresh
        spec = attempt.spec
        self.emit(task_id, K.TASK_RESUMED if spec.get("resumed") else K.TASK_STARTED,
                  attempt=attempt.id, player=attempt.player, workdir=spec.get("cwd"),
                  base=spec.get("base"), branch=spec.get("branch"), shim_token=None,
                  adopted=True)
        self.reload()
        return self.store.attempt(attempt.id)

    def _never_ran(self, task_id: int, attempt: AttemptRow | None) -> bool:
        """Whether a running task's attempt never got its agent: its start was recorded, but
        its shim died before claiming it (a shim is forked in Baton's process group and
        leaves it only then, so killing the group can take it). Given up here, atomically:
        a shim that claims it from now on is refused, so no agent ever runs for it. A resume
        given up so is made again from its spec (`Starting.start`), in the same session."""
        if attempt is None or attempt.collected or attempt.started is not None \
                or self.state(task_id) != State.RUNNING:
            return False
        if attempt.shim_pid and procs.alive(attempt.shim_pid):
            return False  # still on its way: it claims the attempt, or gives it up, itself
        return self.store.abandon_attempt(attempt.id)

    @staticmethod
    def _log_size(attempt: AttemptRow) -> int:
        return logcap.logical_size(attempt.log_path)

    def _ended(self, attempt: AttemptRow, exit: asyncio.Future | None = None) -> bool:
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
        """Progress, stalls, loops, off-plan edits and ends of the tracked attempts."""
        stall = self.ws.config.limits.stall
        now = time.monotonic()
        rows = self.store.attempts_by_id([tr.attempt_id for tr in self.tracked.values()])
        attempts = {t: rows.get(tr.attempt_id) for t, tr in self.tracked.items()}
        flag = self.ws.config.supervision.stall_flag
        near_stall = {t for t, tr in self.tracked.items()
                      if supervisor.cpu_wanted(now - tr.last_activity, stall, flag)}
        cpu: dict[int, float] = {}
        if any(a is not None and t in near_stall and supervisor.cpu_due(self.tracked[t].watch,
                                                                        a.pid, now)
               for t, a in attempts.items()):
            # One look at the process table for every agent near a stall: from then on they
            # fall due together, once a second, instead of one or another on every tick.
            cpu = procs.tree_cpu_times([a.pid for t, a in attempts.items()
                                        if a and a.pid and t in near_stall])
        for task_id, tracked in list(self.tracked.items()):
            attempt = attempts.get(task_id)
            if attempt is None:
                del self.tracked[task_id]
                continue
            self._read_output(tracked, attempt)
            if self._ended(attempt, self.exits.get(task_id)):
                del self.tracked[task_id]
                self.strays = self.strays or bool(attempt.spec.get("leftover"))
                if not (self.tracked or self.starting or self.strays):
                    self.quiet_since = time.monotonic()
                self.finishing[task_id] = asyncio.ensure_future(self._finish(task_id, attempt.id))
                continue
            if tracked.signalled and time.monotonic() - tracked.signalled > STOP_GRACE:
                procs.signal_group(attempt.pgid, signal.SIGKILL)
            if task_id in near_stall and supervisor.cpu_busy(tracked.watch, attempt.pid, now,
                                                             total=cpu.get(attempt.pid)):
                tracked.last_activity = time.monotonic()  # busy in silence is not stalled
            self._supervise(task_id, tracked, attempt)
            quiet = time.monotonic() - tracked.last_activity
            if stall and quiet > stall and tracked.signalled is None \
                    and self.state(task_id) == State.RUNNING:
                spec = dict(attempt.spec)
                spec["silenced"] = quiet
                self.store.update_attempt(attempt.id, spec=spec)
                self.emit(task_id, K.TASK_FLAGGED, flag="stall",
                          message=f"silent for {int(quiet)}s (no output, report or CPU): "
                                  "stopping it")
                self._signal(task_id)
        self._overlaps()

    def _flag(self, task_id: int, key: str, kind: str, message: str, **data: object) -> None:
        """Raise one flag once per attempt."""
        tracked = self.tracked.get(task_id)
        if tracked is not None and tracked.watch.once(key):
            self.emit(task_id, K.TASK_FLAGGED, flag=kind, message=message, **data)

    def _supervise(self, task_id: int, tracked: Tracked, attempt: AttemptRow) -> None:
        """Flag a stall before it is stopped, a task going round without changing anything,
        and edits outside the scope."""
        settings = self.ws.config.supervision
        watch = tracked.watch
        quiet = supervisor.quiet_for(tracked.last_activity, self.ws.config.limits.stall,
                                     settings.stall_flag)
        if quiet and self.state(task_id) == State.RUNNING:
            self._flag(task_id, "quiet", "stall", f"quiet for {int(quiet)}s: no output, report "
                       f"or CPU — stalled? (`baton take {task_id}` to take over)")
        cwd = attempt.spec.get("cwd")
        task = self._task(task_id)
        if not (cwd and task.mode == "build" and self.git_mode):
            return
        outside = self._look_at_files(tracked, Path(cwd), task.scope)
        if outside:
            self.emit(task_id, K.TASK_FLAGGED, flag="scope", files=outside,
                      message="editing outside its scope: " + ", ".join(outside[:8]))
        if watch.steps_since_change >= settings.idle_turns:
            self._flag(task_id, "idle", "loop", f"{watch.steps_since_change} steps without "
                       "changing any file — going round in circles?")

    def _look_at_files(self, tracked: Tracked, worktree: Path, scope: list[str]
                       ) -> list[str] | None:
        """The newly changed files outside the scope, when a look has just come back. The
        look (a `git status`) runs on a worker thread: on the loop it held up every other
        agent — 32 of them looked every 5 s."""
        watch = tracked.watch
        if tracked.files is not None:
            if not tracked.files.done():
                return None
            future, tracked.files = tracked.files, None
            try:
                changed, signature = future.result()
            except Exception:  # the worktree went away meanwhile: the next look tells
                return None
            return supervisor.take_files(watch, changed, signature, scope)
        if supervisor.files_due(watch):
            tracked.files = asyncio.ensure_future(asyncio.to_thread(supervisor.read_files,
                                                                    worktree))
        return None

    def _overlaps(self) -> None:
        """Two running tasks changing the same file will conflict when they land: say so."""
        changed = {t: tr.watch.changed for t, tr in self.tracked.items() if tr.watch.changed}
        for task_id, (other, files) in supervisor.overlaps(changed).items():
            self._flag(task_id, f"overlap-{other}", "overlap", f"task {other} is changing the "
                       f"same files: {', '.join(files[:5])}", files=files)

    def _agent_spoke(self, tracked: Tracked) -> bool:
        """Whether the agent used the report channel since the last look (quiet output is
        not silence while it reports progress or waits at a checkpoint)."""
        if tracked.task_id in self.spoke:
            self.spoke.discard(tracked.task_id)
            return True
        return False

    def _read_lines(self, tracked: Tracked, player: Any, text: str) -> None:
        """Each line: a progress line for the card, a step the loop watch counts, and a halt
        the player's adapter recognises (a CLI retrying forever on its own)."""
        watch = tracked.watch
        watch.repeats = self.ws.config.supervision.loop_repeats
        for line in text.splitlines():
            progress = player.progress(line)
            if progress:
                tracked.pending_line = progress
            if progress or (line.strip() and not player.parses_output):
                supervisor.step(watch, self.ws.config.supervision.idle_turns)
            halt = player.halt(line)
            if halt and tracked.signalled is None:
                self.emit(tracked.task_id, K.TASK_PROGRESS, message=f"stopping it: {halt}",
                          attempt=tracked.attempt_id)
                self._signal(tracked.task_id)
            looping = supervisor.loop_line(watch, progress or line)
            if looping:
                self._flag(tracked.task_id, "loop", "loop", f"looping: “{looping[:80]}” "
                           f"{watch.repeats}× in a row")

    def _read_output(self, tracked: Tracked, attempt: AttemptRow) -> None:
        # At most 1 MiB a look, by logical offset (a capped log's cut middle is skipped); a log
        # whose size and last write are as at the last look is not opened (32 agents' logs
        # were opened 20 times a second each, most of them with nothing new).
        seen = logcap.stamp(attempt.log_path)
        if seen is not None and seen == tracked.log_seen:
            chunk = b""
        else:
            chunk, tracked.log_offset, _cut = logcap.read_from(attempt.log_path,
                                                               tracked.log_offset)
            if len(chunk) < logcap.LOOK:  # (a full chunk: more may be waiting, look again)
                tracked.log_seen = seen
        if chunk:
            tracked.last_activity = time.monotonic()
            player = self.ws.catalog.players.get(self._task(tracked.task_id).player)
            if player is not None:
                self._read_lines(tracked, player, chunk.decode("utf-8", "replace"))
        elif self._agent_spoke(tracked):
            tracked.last_activity = time.monotonic()
        now = time.monotonic()
        if tracked.pending_line and now - tracked.last_progress >= PROGRESS_EVERY:
            self.emit(tracked.task_id, K.TASK_PROGRESS, message=tracked.pending_line[:300],
                      attempt=tracked.attempt_id)
            tracked.pending_line = None
            tracked.last_progress = now
