"""The conductor: schedules an approved plan's DAG and follows every attempt to its end.

It runs detached, in a session of its own, holding the repository's lock. All its
inputs and outputs go through the store: the CLI and the TUI write requests
(stop, pause, retry, checkpoint answers) as events; the conductor answers with
state events. Killed, it loses nothing: attempts run under their own shims, and
a new conductor reattaches to them (`reconcile`).
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import signal
import sys
import time

from baton_tui import killpoints, procs
from baton_tui.core.errors import BatonError
from baton_tui.plan.model import PlanDocument, Task, parse_document
from baton_tui.run import spawner
from baton_tui.core import budget
from baton_tui import layout
from baton_tui.core import policy
from baton_tui.run.finish import Finisher, Intent, run_check
from baton_tui.run.following import Following, Tracked
from baton_tui.run.lock import ConductorLock
from baton_tui.run.ready import Ready
from baton_tui.run.starting import Starting, Turns
from baton_tui.store import foldcache
from baton_tui.store.db import PlanRow, Unwritable
from baton_tui.store.snapshot import conductor_info
from baton_tui.core.events import (
    AGENT_EVENTS, BROKEN, WAITING, Event, EventKind, State,
)
from baton_tui.core.views import Folder, TaskView
from baton_tui.workspace import Workspace

K = EventKind

TICK = 0.05

# Exit codes of a run (DESIGN.md).
COMPLETE, FAILED, BAD_INPUT, WAITING_CODE, INTERRUPTED = 0, 1, 2, 3, 130


def _cued() -> str | None:
    """Wait for the cue ("go ROOT"), the code of a run imported meanwhile; the repository
    to run, or None when the caller went away or changed its mind."""
    import baton_tui.config  # noqa: F401 — the imports a run needs, before the wait
    import baton_tui.run.launcher  # noqa: F401

    spawner.warm()
    cue = sys.stdin.buffer.readline().decode("utf-8", "surrogateescape").rstrip("\n")
    null = os.open(os.devnull, os.O_RDONLY)  # as if started with nothing on stdin
    os.dup2(null, 0)
    os.close(null)
    word, _, root = cue.partition(" ")
    if word != "go" or not root:
        spawner.stop()
        return None
    os.chdir(root)
    return root


def _output_to(log: Path) -> None:
    from baton_tui.paths import private_file

    fd = os.open(private_file(log), os.O_WRONLY | os.O_APPEND)
    for std in (1, 2):
        os.dup2(fd, std)
    os.close(fd)


class Conductor(Starting, Following):
    """One run of the scheduling loop over the current plan."""

    def __init__(self, ws: Workspace, crashed: int | None = None):
        self.ws = ws
        self.crashed = crashed  # the pid of a conductor that died without clearing up
        self.began = time.time()
        self.store = ws.store
        self.tracked: dict[int, Tracked] = {}
        self.finishing: dict[int, asyncio.Task] = {}
        self.starting: dict[int, asyncio.Future] = {}
        self.turns = Turns()  # starts take turns on the cores, best-ranked first
        self.exits: dict[int, asyncio.Future] = {}   # shims this conductor started
        # Worktrees made ahead of their tasks (`Starting.make_ahead`): being made, made and
        # not started yet, and the tasks to look at for it.
        self.making_ahead: dict[int, asyncio.Future] = {}
        self.made_ahead: set[int] = set()
        self.wanted_ahead: deque[int] = deque()
        self.intents: dict[int, Intent] = {}
        self.pause_requested = False
        self.hard_stop: set[int] = set()  # running tasks a hard budget pauses
        self.spoke: set[int] = set()      # tasks whose agent used the report channel lately
        # Since when no agent has run (monotonic; None while one runs, or may): a look at the
        # checkout begun after it still holds for the next start (`outside.fingerprint`).
        self.quiet_since: float | None = None
        self.strays = False  # an agent left processes Baton could not end: never quiet again
        self.revision: int | None = None  # the plan revision `doc` was parsed from
        self.announced_manual: set[int] = set()
        self.started_after = self.store.last_event_id()
        row = self.store.current_plan()
        if row is None:
            raise BatonError("no plan to run")
        self.plan_id = row.id  # this run's plan, whatever happens to the current one
        # The views so far: the store's cached fold, then only the events after it.
        self.folder = foldcache.cached(self.store, row.id) or Folder()
        self.plan = row
        self.ready: Ready | None = None
        from baton_tui.run.launcher import _git_mode

        self.git_mode = _git_mode(ws)
        layout.shim_dir()  # written once here, not by each starting thread

    # state ----------------------------------------------------------------
    def reload(self) -> None:
        """Fold the events written since the last look; re-parse the plan only when it changed.

        The ready queue re-reads only the tasks the new events name — every task after a
        plan-level event, a new revision or a change of approval.
        """
        row = self.store.plan(self.plan_id, known=self.plan)
        assert row is not None
        self.plan: PlanRow = row
        new = self.store.events(self.plan_id, after=self.folder.last_id)
        if new:
            self.folder.feed(new)
            self._take_requests(new)
        if row.revision != self.revision or self.ready is None:
            self.doc: PlanDocument = parse_document(row.doc, "stored plan")
            self.revision = row.revision
            self.by_id = {t.id: t for t in self.doc.tasks}
            self.ready = Ready(self.doc, self.folder, self.git_mode, row.approved)
            return
        if new:
            touched = {event.task_id for event in new}
            if None in touched:
                self.ready.touch_all()
            else:
                self.ready.touch(touched)
        self.ready.set_approved(row.approved)

    def view(self, task_id: int) -> TaskView:
        return self.folder.view(task_id)

    def state(self, task_id: int) -> str:
        return self.view(task_id).state

    def emit(self, task_id: int | None, kind: str, **data: object) -> None:
        self.store.append(self.plan.id, task_id, kind, data)

    def _take_requests(self, new: list[Event]) -> None:
        """Stop and pause requests made while this conductor runs (older ones are history)."""
        for event in new:
            if event.kind in AGENT_EVENTS and event.task_id is not None:
                self.spoke.add(event.task_id)
            if event.id <= self.started_after:
                continue
            if event.kind == K.TASK_STOP_REQUESTED and event.task_id is not None:
                intent = self.intents.setdefault(event.task_id, Intent())
                intent.take = bool(event.data.get("take"))
                intent.stop = not intent.take
                self._signal(event.task_id)
            elif event.kind == K.RUN_PAUSE_REQUESTED:
                self.pause_requested = True

    async def _finish(self, task_id: int, attempt_id: int) -> None:
        task = self._task(task_id)
        intent = self.intents.pop(task_id, Intent())
        if (self.pause_requested or task_id in self.hard_stop) and not intent.stop:
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
            self.emit(task_id, K.TASK_FAILED, reason=f"Baton could not finish the task: {exc}")
            state = State.FAILED
        if state == State.FAILED and policy.level(self.doc.autonomy) == "autopilot" \
                and not intent.stop:
            self._autopilot_retry(task)

    async def _land_again(self, task: Task) -> None:
        def work() -> None:
            ws = self.ws.sibling()
            try:
                Finisher(ws, self.plan, self.doc).commit_and_land(task)
            finally:
                ws.close()

        try:
            await asyncio.to_thread(work)
        except Exception as exc:  # visible, never swallowed: the task must not stay `done`
            self.emit(task.id, K.TASK_FAILED, reason=f"landing failed: {exc}"[:500])

    async def _release_held(self, task: Task, yes: bool) -> None:
        """The person's answer to a task held before landing: land it, or fail it (its branch
        is kept)."""
        attempt = self.store.latest_attempt(self.plan.id, task.id)
        summary = ((attempt.report or {}).get("summary") if attempt else None) or ""

        def work() -> None:
            ws = self.ws.sibling()
            try:
                finisher = Finisher(ws, self.plan, self.doc)
                if not yes:
                    finisher.emit(task, K.TASK_FAILED, reason="you said no at its review: "
                                  "nothing landed (its branch is kept)")
                    return
                finisher.emit(task, K.TASK_CONTINUED, checkpoint=self.view(task.id)
                              .pending_checkpoint)
                finisher.emit(task, K.TASK_DONE, summary=summary, by="person")
                finisher.land(task, attempt.spec.get("branch") if attempt else None)
            finally:
                ws.close()

        await asyncio.to_thread(work)

    def _land_taken_over(self) -> None:
        """A build task the person finished (`baton done N` after taking it over) lands now,
        while the run goes on."""
        if not self.git_mode:
            return
        for task_id in sorted(self.ready.ids(State.DONE)):
            task = self.by_id[task_id]
            busy = task.id in self.tracked or task.id in self.finishing or task.id in self.starting
            if task.mode == "build" and not busy:
                self.finishing[task.id] = asyncio.ensure_future(self._land_again(task))

    def _check_stops(self) -> None:
        """Stop conditions: failures, a deadline, the budget. Once met nothing new starts;
        running tasks finish (or, at a hard budget, pause in their saved sessions)."""
        plan = self.folder.plan
        if plan.stopped_by:
            return
        stop = None
        if plan.until_failures and plan.failures >= plan.until_failures:
            stop = ("failures", f"{plan.failures} task failure(s)")
        elif plan.deadline and time.time() >= plan.deadline:
            stop = ("deadline", "the deadline "
                    + time.strftime("%H:%M", time.localtime(plan.deadline)) + " passed")
        elif any(v is not None for k, v in (self.plan.options.get("budget") or {}).items()
                 if k in budget.KEYS):
            # The use so far from the ready queue's running sums (no snapshot of every task).
            ready = self.ready
            state = budget.usage(self.plan.options.get("budget"), ready.tokens,
                                 ready.cost if ready.costed else None,
                                 bool(ready.ids(State.RUNNING)), self.folder, time.time())
            reached = budget.reached(state)
            if reached:
                stop = ("budget", reached)
                if state.get("hard"):
                    for task_id in list(self.tracked):
                        self.hard_stop.add(task_id)
                        self._signal(task_id)
        if stop:
            self.emit(None, K.RUN_STOPPED, by=stop[0], detail=stop[1])
            self.reload()

    def _autopilot_retry(self, task: Task) -> None:
        """Autopilot: retry a failed task once with its failure as feedback, then park it."""
        self.reload()
        view = self.view(task.id)
        reason = view.reason or "it failed"
        if view.autopilot_retries >= 1:
            self.emit(task.id, K.TASK_PARKED, reason=f"failed twice: {reason}")
        else:
            self.emit(task.id, K.TASK_QUEUED, by="autopilot",
                      feedback=f"The previous attempt failed: {reason}. Fix that and finish.")

    # the loop ---------------------------------------------------------------
    def _clear_left_locks(self) -> None:
        """After a crash, the lock files its killed git left on the run's refs (see
        gitops/left_locks.py): else the run could never move those refs again."""
        if not self.crashed or not self.git_mode:
            return
        from baton_tui.gitops import left_locks

        worktrees = layout.worktree_path(self.ws.paths, self.plan.slug, 0, "").parent
        for lock in left_locks.clear(self.ws.root, self.plan.slug, worktrees,
                                     group=self.crashed, before=self.began):
            self.emit(None, K.RUN_REPAIRED, what="git-lock", detail=f"removed {lock}")

    def queue_plan(self) -> None:
        """Queue every draft task once a run was asked for (build tasks wait for approval)."""
        if not self.plan.options.get("run_requested"):
            return
        drafts = sorted(self.ready.ids(State.DRAFT))
        with self.store.tx():  # one write for a 10,000-task plan, not one each
            for task_id in drafts:
                self.emit(task_id, K.TASK_QUEUED)

    def outcome(self) -> int | None:
        """The run's exit code when nothing can move without the person, else None."""
        if self.tracked or self.finishing or self.starting or self.making_ahead:
            return None
        if self.pause_requested:
            return INTERRUPTED
        stopped = self.folder.plan.stopped_by
        if stopped:
            return FAILED if stopped == "failures" else WAITING_CODE
        now = time.time()
        ready = self.ready  # tasks by state: no walk over every task
        waits = [v.until for v in map(self.view, ready.ids(State.PAUSED))
                 if v.until and not v.taken]
        max_wait = self.ws.config.limits.max_wait
        # Wait through a known reset — one that came since this loop's starts looked too:
        # the next look resumes that task (exiting "waiting" then was a race).
        if any(u - now <= max_wait for u in waits):
            return None
        if any(self.view(t).not_before > now for t in ready.delayed):
            return None
        if ready.ids(*BROKEN):
            return FAILED
        if ready.ids(*WAITING):
            return WAITING_CODE
        pending = [self.by_id[t] for t in ready.ids(State.DRAFT, State.QUEUED)]
        if any(t.mode == "manual" for t in pending):
            return WAITING_CODE
        if pending and not self.plan.approved:
            return BAD_INPUT
        if pending:
            return WAITING_CODE
        return COMPLETE

    def _step_down(self) -> bool:
        """Nothing moves without the person: clear this conductor's record before it exits,
        then look once more. A command that asked for something (`done`, `retry`, a
        checkpoint's answer) before the clear found this conductor recorded and counted on
        it: when anything came in since the look that decided, the record is put back and
        the run goes on (False). One that asks after the clear finds no conductor and starts
        a successor, which waits for this one's lock (`_acquire`)."""
        killpoints.reached("leaving")
        record = self.store.conductor()
        self.store.clear_conductor(os.getpid())
        if not self.store.events(self.plan_id, after=self.folder.last_id):
            return True
        if record is not None:
            self.store.set_conductor(record["pid"], record["create_time"], record["plan_id"],
                                     record["started"])
        return False

    async def run_level_check(self) -> int:
        """`[checks] run` once on the integration branch after every task landed."""
        command = self.ws.config.checks.run
        if not command or not self.git_mode:
            return COMPLETE
        from baton_tui.gitops import git, worktrees
        from baton_tui.core.slug import integration_branch
        from baton_tui import layout

        head = git.rev_parse(self.ws.root, f"refs/heads/{integration_branch(self.plan.slug)}")
        last = self.folder.plan.run_check
        if last and last.get("head") == head:
            return COMPLETE if last.get("exit") == 0 else FAILED
        path = layout.worktree_path(self.ws.paths, self.plan.slug, 0, "run-check")

        def work() -> tuple[int, str]:  # in a thread: git and the check only, no store access
            from baton_tui.gitops import making

            if making.pending(path):  # a kill cut its making short: nothing in it is anyone's
                making.undo(self.ws.root, path)
            if (path / ".git").exists():
                worktrees.remove_worktree(self.ws.root, path)
            made = making.Making(path)
            made.begin()
            worktrees.add_detached_worktree(self.ws.root, path, head or "HEAD", making=made)
            made.done()
            try:
                return run_check(command, path)
            finally:
                worktrees.remove_worktree(self.ws.root, path)

        code, output = await asyncio.to_thread(work)
        self.emit(None, K.RUN_CHECK, head=head, exit=code, output=output[-4000:])
        return COMPLETE if code == 0 else FAILED

    async def run(self) -> int:
        # Set-ups, landings and checks run on threads: enough of them that a full house of
        # `max_parallel` tasks never waits for a worker (asyncio's default is cores + 4).
        workers = max(8, 2 * self.ws.config.limits.max_parallel + 4)
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="baton-conductor"))
        spawner.warm()  # its imports overlap ours; the first shim is forked, not started
        self.reload()
        self.emit(None, K.CONDUCTOR_STARTED, pid=os.getpid())
        self.queue_plan()
        self.reload()
        self._clear_left_locks()
        self.reconcile()
        # The plan, its views and the ready queue live as long as the run: out of the cycle
        # collector's sight, so its full passes do not grow with the plan (at 10,000 tasks
        # they cost every started task milliseconds). No collection first: it would hold up
        # the first start by ~25 ms, to free a few objects the imports left.
        gc.freeze()
        code: int | None = None
        while code is None:
            self.reload()
            self.follow()
            self._check_stops()
            self._land_taken_over()
            if self.pause_requested:
                for task_id in list(self.tracked):
                    if self.tracked[task_id].signalled is None:
                        self.intents.setdefault(task_id, Intent()).pause = True
                        self._signal(task_id)
            else:
                for task, message in self.candidates():
                    if self.capacity_for(task):
                        self.start(task, message)
                self.make_ahead()
            if self.finishing:
                done = [t for t, f in self.finishing.items() if f.done()]
                for task_id in done:
                    failed = self.finishing.pop(task_id).exception()
                    if isinstance(failed, Unwritable):  # the store is full or read-only: stop
                        raise failed
                if done:
                    continue
            self.reload()  # starts may have failed tasks (set-up); decide on fresh states
            code = self.outcome()
            if code == COMPLETE:
                code = await self.run_level_check()
            if code is not None and not self._step_down():
                code = None  # asked for more as it stepped down: it runs on
                continue
            if code is None:
                # Wake as soon as a finish (landing) completes, so its dependents start at once.
                self.exits = {t: f for t, f in self.exits.items() if not f.done()}
                pending = [f for f in (*self.finishing.values(), *self.exits.values(),
                                       *self.making_ahead.values()) if not f.done()]
                if pending:
                    await asyncio.wait(pending, timeout=TICK, return_when=asyncio.FIRST_COMPLETED)
                else:
                    await asyncio.sleep(TICK)
        killpoints.reached("gone")
        self.drop_made_ahead()
        self.emit(None, K.RUN_FINISHED, code=code)
        self.reload()
        # The whole run folded: kept in the store, the next `status` or command starts here.
        foldcache.save(self.store, self.plan_id, self.folder)
        return code


def _acquire(lock: ConductorLock, ws: Workspace) -> bool:
    """The repository's lock, or False when another conductor runs it. A holder that is no
    longer recorded is stepping down (`Conductor._step_down`): whoever started this one found
    no conductor to count on, so this one waits for the lock instead of leaving its request
    to nobody."""
    deadline, said = time.monotonic() + 60, False
    while not lock.acquire():
        if conductor_info(ws.store) is not None or time.monotonic() > deadline:
            return False
        if not said:
            print("baton conductor: waiting for the conductor that is leaving", flush=True)
            said = True
        time.sleep(0.02)
    return True


def conduct(root: str | None, on_cue: bool = False) -> int:
    """Entry of the detached conductor process (`baton conductor --root R`). `on_cue`: it
    was started ahead of its run (`early.Early`), before its repository was known; it
    waits for "go ROOT" on stdin before it reads anything, and leaves quietly without."""
    if on_cue:
        root = _cued()
        if root is None:
            return 0
    assert root is not None
    killpoints.arm()  # the crash tests' kill point, if one is named; nothing inherits it
    ws = Workspace(root)
    if on_cue:  # started ahead with no output: its log, as a fresh conductor's would be
        _output_to(layout.conductor_log(ws.paths))
    lock = ConductorLock(ws.paths.state_dir)
    if not _acquire(lock, ws):
        return 0  # another conductor already runs this repository
    ws.store.keep_reserve()
    for sig in (signal.SIGHUP,):
        signal.signal(sig, signal.SIG_IGN)  # a lost terminal must not end the run

    def pause(signum: int, _frame: object) -> None:
        ws_store = Workspace(paths=ws.paths).store
        row = ws_store.current_plan()
        ws_store.append(row.id if row else None, None, K.RUN_PAUSE_REQUESTED, {"signal": signum})

    signal.signal(signal.SIGTERM, pause)
    signal.signal(signal.SIGINT, pause)
    plan = ws.store.current_plan()
    previous = ws.store.conductor()  # still recorded: it died without clearing up
    crashed = previous["pid"] if previous and previous["pid"] != os.getpid() else None
    ws.store.set_conductor(os.getpid(), procs.start_token(os.getpid()), plan.id if plan else 0)
    try:
        return asyncio.run(Conductor(ws, crashed).run())
    except Exception as exc:
        # Attempts keep running under their shims; `baton resume` reattaches to them.
        from baton_tui.store.db import Unwritable

        if isinstance(exc, Unwritable):  # one line; on a full disk, the reserve makes room
            print(f"baton conductor: {exc.message}", flush=True)
            if exc.full:
                ws.store.release_reserve()
        else:
            import traceback

            traceback.print_exc()
        try:
            ws.store.append(plan.id if plan else None, None, K.CONDUCTOR_CRASHED,
                            {"error": f"{type(exc).__name__}: {exc}"[:500]})
        except Unwritable:
            pass  # nowhere to record it: its log says why
        return 1
    finally:
        spawner.stop()
        try:
            ws.store.clear_conductor(os.getpid())
        except Exception:  # the store cannot be written: the lock still goes
            pass
        lock.release()
