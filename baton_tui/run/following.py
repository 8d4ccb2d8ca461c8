"""Following live attempts: their output, progress lines, stalls, loops, stops and ends.

The `Follower` reads each attempt's output through the runner (`Runner.output`), turns it
into progress lines and supervision flags (`supervisor`: the runner tells what the agent
changed and whether it works, `Runner.changed_files`/`activity`, wherever it runs), stops
what must stop, and hands an ended attempt to the `Collector`. After a crash it reattaches
to the attempts that outlived the previous conductor (`reconcile`).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable

from baton_tui.core.events import ACTIVE, EventKind, State
from baton_tui.core.words import Mode
from baton_tui.players.base import Player
from baton_tui.run import supervisor
from baton_tui.run.collecting import Collector
from baton_tui.runners.base import AttemptHandle, Runner
from baton_tui.run.state import RunState, Tracked
from baton_tui.store.rows import AttemptRow
from baton_tui.workspace import Workspace

K = EventKind
PROGRESS_EVERY = 1.0
STOP_GRACE = 5.0


class Follower:
    """Reattaching, reading output, supervising and handing over ended attempts."""

    def __init__(self, ws: Workspace, run: RunState, runner: Runner, collector: Collector,
                 reload: Callable[[], None]):
        self.ws = ws
        self.store = ws.store
        self.run = run
        self.runner = runner
        self.collector = collector
        self.reload = reload  # the conductor's: fold new events, take the person's requests

    def emit(self, task_id: int | None, kind: str, **data: object) -> None:
        self.store.append(self.run.plan_id, task_id, kind, data)

    # after a crash ---------------------------------------------------------------------------
    def reconcile(self) -> None:
        """Reattach to attempts that outlived a previous conductor; collect finished ones.

        A build task left `done` but not landed (the conductor died while landing) lands now.
        An attempt recorded whose start was not (the conductor died right after spawning its
        shim) is adopted when its shim runs the agent, else given up: never a second agent.
        """
        run = self.run
        for task in run.doc.tasks:
            if run.git_mode and task.mode == Mode.BUILD and run.state(task.id) == State.DONE:
                run.finishing[task.id] = asyncio.ensure_future(self.collector.land_again(task))
                continue
            attempt = self.store.latest_attempt(run.plan_id, task.id)
            if attempt is not None and not attempt.collected \
                    and attempt.id != run.view(task.id).attempt:
                attempt = self._adopt(task.id, attempt)
            if run.state(task.id) not in ACTIVE:
                continue
            if attempt is not None and self._never_ran(task.id, attempt):
                again = "resumed" if attempt.spec.get("resumed") else "started"
                self.emit(task.id, K.TASK_QUEUED, reason=f"its agent never {again} (Baton was "
                          f"killed as it started it): starting it again")
                continue
            if attempt is None or attempt.collected:
                if run.state(task.id) == State.RUNNING:
                    self.emit(task.id, K.TASK_FAILED, reason="its attempt was lost (Baton was "
                              "killed before it started); retry it")
                continue
            run.tracked[task.id] = Tracked(self.runner.adopt(attempt))
            run.untouched = False  # its agent may be at work

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

    def _never_ran(self, task_id: int, attempt: AttemptRow) -> bool:
        """Whether a running task's attempt never got its agent: its start was recorded, but
        its shim died before claiming it (a shim is forked in Baton's process group and
        leaves it only then, so killing the group can take it). Given up here, atomically:
        a shim that claims it from now on is refused, so no agent ever runs for it. A resume
        given up so is made again from its spec (`Starter.start`), in the same session."""
        if attempt.collected or attempt.started is not None \
                or self.run.state(task_id) != State.RUNNING:
            return False
        if self.runner.on_its_way(attempt):
            return False  # still on its way: it claims the attempt, or gives it up, itself
        return self.store.abandon_attempt(attempt.id)

    # stopping --------------------------------------------------------------------------------
    def stop(self, task_id: int, sig: signal.Signals = signal.SIGTERM) -> None:
        """Ask a running task's agent to stop (nothing when it does not run)."""
        tracked = self.run.tracked.get(task_id)
        if tracked is None:
            return
        if self.runner.stop(tracked.handle, sig) and tracked.signalled is None:
            tracked.signalled = time.monotonic()

    # every tick ------------------------------------------------------------------------------
    def follow(self) -> None:
        """Progress, stalls, loops, off-plan edits and ends of the tracked attempts."""
        run, runner = self.run, self.runner
        stall = self.ws.config.limits.stall
        now = time.monotonic()
        looked = runner.look([tr.handle for tr in run.tracked.values()])
        flag = self.ws.config.supervision.stall_flag
        near_stall = [tr for tr in run.tracked.values()
                      if supervisor.cpu_wanted(now - tr.last_activity, stall, flag)]
        cpu: dict[AttemptHandle, float] = {}
        if any(supervisor.cpu_due(tr.watch, now) for tr in near_stall):
            # One look at every agent near a stall (a local runner's: the process table):
            # from then on they fall due together, once a second, instead of one or another
            # on every tick.
            cpu = runner.activity([tr.handle for tr in near_stall])
        for task_id, tracked in list(run.tracked.items()):
            handle = tracked.handle
            if handle in looked.lost:
                del run.tracked[task_id]
                continue
            self._read_output(tracked)
            if handle in looked.ended:
                del run.tracked[task_id]
                run.finishing[task_id] = asyncio.ensure_future(self.collector.collect(handle))
                if not (run.tracked or run.starting or run.strays):
                    run.quiet_since = time.monotonic()  # no agent runs from now on
                continue
            if tracked.signalled and time.monotonic() - tracked.signalled > STOP_GRACE:
                runner.stop(handle, signal.SIGKILL)
            total = cpu.get(handle)
            if total is not None and supervisor.cpu_grew(tracked.watch, total, now):
                tracked.last_activity = time.monotonic()  # busy in silence is not stalled
            self._supervise(tracked)
            quiet = time.monotonic() - tracked.last_activity
            if stall and quiet > stall and tracked.signalled is None \
                    and run.state(task_id) == State.RUNNING:
                self._silenced(tracked, quiet)
        self._overlaps()

    def _silenced(self, tracked: Tracked, quiet: float) -> None:
        """Stop an attempt silent past the stall limit, noting it for its finish."""
        attempt = self.store.attempt(tracked.attempt_id)
        if attempt is not None:
            self.store.update_attempt(attempt.id, spec={**attempt.spec, "silenced": quiet})
        self.emit(tracked.task_id, K.TASK_FLAGGED, flag="stall",
                  message=f"silent for {int(quiet)}s (no output, report or CPU): stopping it")
        self.stop(tracked.task_id)

    def _flag(self, task_id: int, key: str, kind: str, message: str, **data: object) -> None:
        """Raise one flag once per attempt."""
        tracked = self.run.tracked.get(task_id)
        if tracked is not None and tracked.watch.once(key):
            self.emit(task_id, K.TASK_FLAGGED, flag=kind, message=message, **data)

    def _supervise(self, tracked: Tracked) -> None:
        """Flag a stall before it is stopped, a task going round without changing anything,
        and edits outside the scope."""
        settings = self.ws.config.supervision
        task_id, watch = tracked.task_id, tracked.watch
        quiet = supervisor.quiet_for(tracked.last_activity, self.ws.config.limits.stall,
                                     settings.stall_flag)
        if quiet and self.run.state(task_id) == State.RUNNING:
            self._flag(task_id, "quiet", "stall", f"quiet for {int(quiet)}s: no output, report "
                       f"or CPU — stalled? (`baton take {task_id}` to take over)")
        task = self.run.task(task_id)
        if not (task.mode == Mode.BUILD and self.run.git_mode):
            return
        outside = self._look_at_files(tracked, task.scope)
        if outside:
            self.emit(task_id, K.TASK_FLAGGED, flag="scope", files=outside,
                      message="editing outside its scope: " + ", ".join(outside[:8]))
        if watch.steps_since_change >= settings.idle_turns:
            self._flag(task_id, "idle", "loop", f"{watch.steps_since_change} steps without "
                       "changing any file — going round in circles?")

    def _look_at_files(self, tracked: Tracked, scope: list[str]) -> list[str] | None:
        """The newly changed files outside the scope, when a look has just come back. The
        look (`Runner.changed_files`: a `git status` for a local agent) completes off the
        loop: on the loop it held up every other agent — 32 of them looked every 5 s."""
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
            tracked.files = self.runner.changed_files(tracked.handle)
        return None

    def _overlaps(self) -> None:
        """Two running tasks changing the same file will conflict when they land: say so."""
        changed = {t: tr.watch.changed for t, tr in self.run.tracked.items() if tr.watch.changed}
        for task_id, (other, files) in supervisor.overlaps(changed).items():
            self._flag(task_id, f"overlap-{other}", "overlap", f"task {other} is changing the "
                       f"same files: {', '.join(files[:5])}", files=files)

    def _agent_spoke(self, tracked: Tracked) -> bool:
        """Whether the agent used the report channel since the last look (quiet output is
        not silence while it reports progress or waits at a checkpoint)."""
        if tracked.task_id in self.run.spoke:
            self.run.spoke.discard(tracked.task_id)
            return True
        return False

    def _read_lines(self, tracked: Tracked, player: Player, text: str) -> None:
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
            concern = player.concern(line)
            if concern:
                self._flag(tracked.task_id, "contained", "contained", concern[:500])
            halt = player.halt(line)
            if halt and tracked.signalled is None:
                self.emit(tracked.task_id, K.TASK_PROGRESS, message=f"stopping it: {halt}",
                          attempt=tracked.attempt_id)
                self.stop(tracked.task_id)
            looping = supervisor.loop_line(watch, progress or line)
            if looping:
                self._flag(tracked.task_id, "loop", "loop", f"looping: “{looping[:80]}” "
                           f"{watch.repeats}× in a row")

    def _read_output(self, tracked: Tracked) -> None:
        chunk = self.runner.output(tracked.handle)
        if chunk:
            tracked.last_activity = time.monotonic()
            player = self.ws.catalog.players.get(self.run.task(tracked.task_id).player)
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
