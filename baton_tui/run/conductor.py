"""The conductor: schedules an approved plan's DAG and follows every attempt to its end.

It runs detached, in a session of its own, holding the repository's lock. All its
inputs and outputs go through the store: the CLI and the TUI write requests
(stop, pause, retry, checkpoint answers) as events; the conductor answers with
state events. Killed, it loses nothing: attempts run under their own shims, and
a new conductor reattaches to them (`reconcile`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from baton_tui import procs
from baton_tui.errors import BatonError
from baton_tui.plan.current import current
from baton_tui.plan.dag import remaining_path
from baton_tui.plan.model import PlanDocument, Task
from baton_tui.run import launcher, layout, supervisor
from baton_tui.run.finish import Finisher, Intent, run_check
from baton_tui.store.db import AttemptRow, PlanRow
from baton_tui.store.events import Event, TaskView, fold
from baton_tui.workspace import Workspace

TICK = 0.05
PROGRESS_EVERY = 1.0
STOP_GRACE = 5.0

# What an agent itself writes to the store, through `baton report` / `baton checkpoint`.
AGENT_EVENTS = frozenset({"task.progress", "task.reported", "task.checkpoint", "task.continued"})

# Exit codes of a run (DESIGN.md).
COMPLETE, FAILED, BAD_INPUT, WAITING, INTERRUPTED = 0, 1, 2, 3, 130


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
    seen_event: int = 0


def _satisfied(dep: Task, state: str, git_mode: bool) -> bool:
    if dep.mode == "build" and git_mode:
        return state in ("landed", "merged")
    return state in ("done", "landed", "merged")


class Conductor:
    """One run of the scheduling loop over the current plan."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.store = ws.store
        self.tracked: dict[int, Tracked] = {}
        self.finishing: dict[int, asyncio.Task] = {}
        self.starting: dict[int, asyncio.Future] = {}
        self.exits: dict[int, asyncio.Future] = {}   # shims this conductor started
        self.intents: dict[int, Intent] = {}
        self.pause_requested = False
        self.events: list[Event] = []
        self.last_event = 0
        self.announced_manual: set[int] = set()
        self.started_after = self.store.last_event_id()
        from baton_tui.run.launcher import _git_mode

        self.git_mode = _git_mode(ws)
        layout.shim_dir()  # written once here, not by each starting thread

    # state ----------------------------------------------------------------
    def reload(self) -> None:
        cur = current(self.ws)
        assert cur is not None
        self.plan: PlanRow = cur.row
        self.doc: PlanDocument = cur.doc
        new = self.store.events(self.plan.id, after=self.last_event)
        if new:
            self.events.extend(new)
            self.last_event = new[-1].id
            self._take_requests(new)
        self.views: dict[int, TaskView] = fold(self.events)

    def state(self, task_id: int) -> str:
        return self.views.get(task_id, TaskView()).state

    def emit(self, task_id: int | None, kind: str, **data: object) -> None:
        self.store.append(self.plan.id, task_id, kind, data)

    def _take_requests(self, new: list[Event]) -> None:
        """Stop and pause requests made while this conductor runs (older ones are history)."""
        for event in new:
            if event.id <= self.started_after:
                continue
            if event.kind == "task.stop_requested" and event.task_id is not None:
                self.intents.setdefault(event.task_id, Intent()).stop = True
                self._signal(event.task_id)
            elif event.kind == "run.pause_requested":
                self.pause_requested = True

    # starting -------------------------------------------------------------
    def _deps_ready(self, task: Task) -> bool:
        by_id = {t.id: t for t in self.doc.tasks}
        return all(_satisfied(by_id[d], self.state(d), self.git_mode) for d in task.depends_on
                   if d in by_id)

    def _not_before(self, task_id: int) -> float:
        for event in reversed(self.events):
            if event.task_id == task_id and event.kind == "task.queued":
                return float(event.data.get("not_before") or 0)
        return 0.0

    def _checkpoint_answer(self, task_id: int) -> str | None:
        """The answer to the task's open checkpoint, once the person gave it."""
        pending = None
        for event in self.events:
            if event.task_id != task_id:
                continue
            if event.kind == "task.checkpoint":
                pending = event.id
            elif event.kind == "task.continued":
                pending = None
            elif event.kind == "task.checkpoint_answered" and event.data.get("checkpoint") == pending:
                return event.data.get("answer")
        return None

    def candidates(self) -> list[tuple[Task, str | None]]:
        """Tasks that may start now, with a resume message where they continue a session."""
        ready: list[tuple[Task, str | None]] = []
        now = time.time()
        for task in self.doc.tasks:
            if task.id in self.tracked or task.id in self.finishing or task.id in self.starting:
                continue
            view = self.views.get(task.id, TaskView())
            state = view.state
            if state == "queued" and self._deps_ready(task):
                if task.mode == "manual":
                    if task.id not in self.announced_manual:
                        self.announced_manual.add(task.id)
                        self.emit(task.id, "task.progress", message="manual task: do it yourself, "
                                  f"then run `baton done {task.id}`")
                    continue
                if task.mode == "build" and not self.plan.approved:
                    continue
                if self._not_before(task.id) > now:
                    continue
                ready.append((task, None))
            elif state == "paused" and not self.pause_requested:
                if view.until and view.until > now:
                    continue
                ready.append((task, "You were paused (" + (view.reason or "paused")
                              + "). Continue the task where you left off."))
            elif state == "checkpoint":
                answer = self._checkpoint_answer(task.id)
                if answer == "yes":
                    ready.append((task, "The person answered your checkpoint: YES — go ahead "
                                  "with the step, then finish and report."))
                elif answer == "no":
                    ready.append((task, "The person answered your checkpoint: NO — do not take "
                                  "that step. Finish without it if you can, else report failed."))
        weights = {t.id: 1.0 for t in self.doc.tasks}
        longest = remaining_path(self.doc.deps(), weights)
        ready.sort(key=lambda item: (-longest.get(item[0].id, 0), item[0].id))
        return ready

    def capacity_for(self, task: Task) -> bool:
        limit = self.ws.config.limits.max_parallel
        if not self.git_mode:
            limit = 1  # folder mode: one task at a time, in the folder itself
        if len(self.tracked) + len(self.finishing) + len(self.starting) >= limit:
            return False
        player = self.ws.catalog.players.get(task.player)
        cap = player.max_parallel if player else None
        if cap:
            same = sum(1 for task_id in [*self.tracked, *self.starting]
                       if self._task(task_id).player == task.player)
            if same >= cap:
                return False
        return True

    def _task(self, task_id: int) -> Task:
        return self.doc.task(task_id)

    def artifacts(self, task: Task) -> dict[int, str]:
        """Reports of the tasks this one depends on: a research task's findings, a build's summary."""
        found = {}
        for dep in task.depends_on:
            summary = self.views.get(dep, TaskView()).summary
            if summary:
                found[dep] = summary
        return found

    def _lost_landing(self, task_id: int) -> bool:
        """The task's last failure was a conflict landing on the integration branch."""
        for event in reversed(self.events):
            if event.task_id == task_id and event.kind == "task.failed":
                return bool(event.data.get("conflicts"))
        return False

    def start(self, task: Task, resume_message: str | None) -> None:
        """Start an attempt on a worker thread: worktree set-up and spawning take a while,
        and the other ready tasks should not wait for them."""
        previous = self.store.latest_attempt(self.plan.id, task.id)
        feedback = None
        for event in reversed(self.events):
            if event.task_id == task.id and event.kind == "task.queued":
                feedback = event.data.get("feedback")
                if event.data.get("rate_limited") and resume_message is None:
                    # A 429 retry continues the saved session rather than starting over.
                    resume_message = ("You were stopped by a rate limit (HTTP 429). Continue the "
                                      "task where you left off.")
                break
        session = previous.session_id if previous and resume_message else None
        attempts = len(self.store.attempts(self.plan.id, task.id))
        refresh = task.mode == "build" and self._lost_landing(task.id)
        artifacts = self.artifacts(task)
        plan, doc = self.plan, self.doc

        def work() -> tuple[int, subprocess.Popen] | None:
            ws = self.ws.sibling()
            feedback_now = feedback
            try:
                if task.mode == "research":
                    workdir = launcher.prepare_research(ws, plan, task, attempts + 1)
                else:
                    workdir = launcher.prepare_build(ws, plan, task, refresh=refresh)
                    if workdir.conflicts:
                        feedback_now = ((feedback_now + "\n\n") if feedback_now else "") + (
                            "Your branch now includes the latest integration branch, and these "
                            "files conflict — resolve the conflict markers (keep both sides' "
                            "intent): " + ", ".join(workdir.conflicts))
                return launcher.start_attempt(
                    ws, plan, doc, task, workdir, artifacts=artifacts, feedback=feedback_now,
                    resume_message=resume_message, session_id=session)
            except launcher.SetupFailed as exc:
                ws.store.append(plan.id, task.id, "task.failed", {"reason": str(exc),
                                                                  "output": exc.output})
            except (BatonError, OSError, ValueError, NotImplementedError) as exc:
                message = exc.message if isinstance(exc, BatonError) else str(exc)
                ws.store.append(plan.id, task.id, "task.failed",
                                {"reason": f"could not start: {message}"})
            finally:
                ws.close()
            return None

        async def run() -> None:
            try:
                started = await asyncio.to_thread(work)
            except Exception as exc:  # a bug must fail the task visibly, not the conductor
                self.emit(task.id, "task.failed", reason=f"could not start: {exc}")
                started = None
            if started is not None:
                attempt_id, shim = started
                self.tracked[task.id] = Tracked(attempt_id, task.id)
                # Our own child: wake the loop the moment it exits (and reap it).
                self.exits[task.id] = asyncio.ensure_future(asyncio.to_thread(shim.wait))
                if self.intents.get(task.id, Intent()).stop or self.pause_requested:
                    self._signal(task.id)  # asked to stop while it was starting
            self.starting.pop(task.id, None)

        self.starting[task.id] = asyncio.ensure_future(run())

    # following ------------------------------------------------------------
    def reconcile(self) -> None:
        """Reattach to attempts that outlived a previous conductor; collect finished ones.

        A build task left `done` but not landed (the conductor died while landing) lands now.
        """
        for task in self.doc.tasks:
            if self.git_mode and task.mode == "build" and self.state(task.id) == "done":
                self.finishing[task.id] = asyncio.ensure_future(self._land_again(task))
                continue
            if self.state(task.id) not in ("running", "checkpoint"):
                continue
            attempt = self.store.latest_attempt(self.plan.id, task.id)
            if attempt is None or attempt.collected:
                if self.state(task.id) == "running":
                    self.emit(task.id, "task.failed", reason="its attempt was lost (Baton was "
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
            if stall and quiet > stall and tracked.signalled is None and self.state(task_id) == "running":
                spec = dict(attempt.spec)
                spec["silenced"] = quiet
                self.store.update_attempt(attempt.id, spec=spec)
                self.emit(task_id, "task.flagged", message=f"silent for {int(quiet)}s: stopping it")
                self._signal(task_id)

    def _supervise(self, task_id: int, tracked: Tracked, attempt: AttemptRow) -> None:
        """Watch mode: flag a stall before it is stopped, and edits outside the scope."""
        watch = tracked.watch
        quiet = supervisor.quiet_for(tracked.last_activity, self.ws.config.limits.stall)
        if quiet and watch.once("quiet"):
            self.emit(task_id, "task.flagged", message=f"quiet for {int(quiet)}s — stalled? "
                      f"(`baton stop {task_id}` to take over)", flag="stall")
        cwd = attempt.spec.get("cwd")
        task = self._task(task_id)
        if cwd and task.mode == "build" and self.git_mode:
            outside = supervisor.off_plan(watch, Path(cwd), task.scope)
            if outside:
                self.emit(task_id, "task.flagged", flag="scope",
                          message="editing outside its scope: " + ", ".join(outside[:8]))

    def _agent_spoke(self, tracked: Tracked) -> bool:
        """Whether the agent used the report channel since the last look (quiet output is
        not silence while it reports progress or waits at a checkpoint)."""
        spoke = False
        for event in reversed(self.events):  # only the events since the last look
            if event.id <= tracked.seen_event:
                break
            spoke = spoke or (event.task_id == tracked.task_id and event.kind in AGENT_EVENTS)
        tracked.seen_event = self.last_event
        return spoke

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
                    looping = supervisor.loop_line(tracked.watch, text or line)
                    if looping and self.doc.autonomy == "watch" and tracked.watch.once("loop"):
                        self.emit(tracked.task_id, "task.flagged", flag="loop",
                                  message=f"looping: “{looping[:80]}” {supervisor.LOOP_REPEATS}"
                                          "× in a row")
        elif self._agent_spoke(tracked):
            tracked.last_activity = time.monotonic()
        now = time.monotonic()
        if tracked.pending_line and now - tracked.last_progress >= PROGRESS_EVERY:
            self.emit(tracked.task_id, "task.progress", message=tracked.pending_line[:300],
                      attempt=tracked.attempt_id)
            tracked.pending_line = None
            tracked.last_progress = now

    async def _finish(self, task_id: int, attempt_id: int) -> None:
        task = self._task(task_id)
        intent = self.intents.pop(task_id, Intent())
        if self.pause_requested and not intent.stop:
            intent.pause = True
        attempt = self.store.attempt(attempt_id)
        assert attempt is not None

        def work() -> str:

            ws = self.ws.sibling()  # a connection of its own for the thread
            try:
                state = Finisher(ws, self.plan, self.doc).finish(task, attempt, intent)
                ws.store.update_attempt(attempt_id, collected=True)
                return state
            finally:
                ws.close()

        try:
            state = await asyncio.to_thread(work)
        except Exception as exc:  # a bug or a git failure must fail the task visibly
            self.emit(task_id, "task.failed", reason=f"Baton could not finish the task: {exc}")
            state = "failed"
        if state == "failed" and self.doc.autonomy == "autopilot" and not intent.stop:
            self._autopilot_retry(task)

    async def _land_again(self, task: Task) -> None:
        def work() -> None:
            ws = self.ws.sibling()
            try:
                Finisher(ws, self.plan, self.doc).commit_and_land(task)
            finally:
                ws.close()

        await asyncio.to_thread(work)

    def _autopilot_retry(self, task: Task) -> None:
        """Autopilot: retry a failed task once with its failure as feedback, then park it."""
        self.reload()
        retries = sum(1 for e in self.events if e.task_id == task.id and e.kind == "task.queued"
                      and e.data.get("by") == "autopilot")
        reason = self.views.get(task.id, TaskView()).reason or "it failed"
        if retries >= 1:
            self.emit(task.id, "task.parked", reason=f"failed twice: {reason}")
        else:
            self.emit(task.id, "task.queued", by="autopilot",
                      feedback=f"The previous attempt failed: {reason}. Fix that and finish.")

    # the loop ---------------------------------------------------------------
    def queue_plan(self) -> None:
        """Queue every draft task once a run was asked for (build tasks wait for approval)."""
        if not self.plan.options.get("run_requested"):
            return
        for task in self.doc.tasks:
            if self.state(task.id) == "draft":
                self.emit(task.id, "task.queued")

    def outcome(self) -> int | None:
        """The run's exit code when nothing can move without the person, else None."""
        if self.tracked or self.finishing or self.starting:
            return None
        states = {t.id: self.state(t.id) for t in self.doc.tasks}
        if self.pause_requested:
            return INTERRUPTED
        now = time.time()
        waits = [v.until for v in self.views.values() if v.state == "paused" and v.until]
        max_wait = self.ws.config.limits.max_wait
        if any(u - now <= max_wait for u in waits if u > now):
            return None  # wait through a known reset
        not_before = [self._not_before(t.id) for t in self.doc.tasks if states[t.id] == "queued"]
        if any(nb > now for nb in not_before):
            return None
        if any(s in ("failed", "parked") for s in states.values()):
            return FAILED
        if any(s in ("paused", "checkpoint") for s in states.values()):
            return WAITING
        pending = [t for t in self.doc.tasks if states[t.id] in ("draft", "queued")]
        if any(t.mode == "manual" for t in pending):
            return WAITING
        if pending and not self.plan.approved:
            return BAD_INPUT
        if pending:
            return WAITING
        return COMPLETE

    async def run_level_check(self) -> int:
        """`[checks] run` once on the integration branch after every task landed."""
        command = self.ws.config.checks.run
        if not command or not self.git_mode:
            return COMPLETE
        from baton_tui.gitops import git, worktrees
        from baton_tui.plan.slug import integration_branch
        from baton_tui.run import layout

        head = git.rev_parse(self.ws.root, f"refs/heads/{integration_branch(self.plan.slug)}")
        for event in reversed(self.events):
            if event.kind == "run.check" and event.data.get("head") == head:
                return COMPLETE if event.data.get("exit") == 0 else FAILED
        path = layout.worktree_path(self.ws.paths, self.plan.slug, 0, "run-check")

        def work() -> tuple[int, str]:  # in a thread: git and the check only, no store access
            if (path / ".git").exists():
                worktrees.remove_worktree(self.ws.root, path)
            worktrees.add_detached_worktree(self.ws.root, path, head or "HEAD")
            try:
                return run_check(command, path)
            finally:
                worktrees.remove_worktree(self.ws.root, path)

        code, output = await asyncio.to_thread(work)
        self.emit(None, "run.check", head=head, exit=code, output=output[-4000:])
        return COMPLETE if code == 0 else FAILED

    async def run(self) -> int:
        self.reload()
        self.emit(None, "conductor.started", pid=os.getpid())
        self.queue_plan()
        self.reload()
        self.reconcile()
        code: int | None = None
        while code is None:
            self.reload()
            self.follow()
            if self.pause_requested:
                for task_id in list(self.tracked):
                    if self.tracked[task_id].signalled is None:
                        self.intents.setdefault(task_id, Intent()).pause = True
                        self._signal(task_id)
            else:
                for task, message in self.candidates():
                    if self.capacity_for(task):
                        self.start(task, message)
            if self.finishing:
                done = [t for t, f in self.finishing.items() if f.done()]
                for task_id in done:
                    self.finishing.pop(task_id)
                if done:
                    continue
            self.reload()  # starts may have failed tasks (set-up); decide on fresh states
            code = self.outcome()
            if code == COMPLETE:
                code = await self.run_level_check()
            if code is None:
                # Wake as soon as a finish (landing) completes, so its dependents start at once.
                self.exits = {t: f for t, f in self.exits.items() if not f.done()}
                pending = [f for f in (*self.finishing.values(), *self.exits.values())
                           if not f.done()]
                if pending:
                    await asyncio.wait(pending, timeout=TICK, return_when=asyncio.FIRST_COMPLETED)
                else:
                    await asyncio.sleep(TICK)
        self.emit(None, "run.finished", code=code)
        return code


def conduct(root: str) -> int:
    """Entry of the detached conductor process (`baton conductor --root R`)."""
    from baton_tui.run.lock import ConductorLock

    ws = Workspace(root)
    lock = ConductorLock(ws.paths.state_dir)
    if not lock.acquire():
        return 0  # another conductor already runs this repository
    for sig in (signal.SIGHUP,):
        signal.signal(sig, signal.SIG_IGN)  # a lost terminal must not end the run

    def pause(signum: int, _frame: object) -> None:
        ws_store = Workspace(paths=ws.paths).store
        row = ws_store.current_plan()
        ws_store.append(row.id if row else None, None, "run.pause_requested", {"signal": signum})

    signal.signal(signal.SIGTERM, pause)
    signal.signal(signal.SIGINT, pause)
    plan = ws.store.current_plan()
    ws.store.set_conductor(os.getpid(), procs.start_token(os.getpid()), plan.id if plan else 0)
    try:
        return asyncio.run(Conductor(ws).run())
    except Exception as exc:
        # Attempts keep running under their shims; `baton resume` reattaches to them.
        import traceback

        traceback.print_exc()
        ws.store.append(plan.id if plan else None, None, "conductor.crashed",
                        {"error": f"{type(exc).__name__}: {exc}"[:500]})
        return 1
    finally:
        ws.store.clear_conductor(os.getpid())
        lock.release()
