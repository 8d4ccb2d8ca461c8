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
import signal
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import baton_tui.config  # noqa: F401 — a run needs it: imported before the cue's wait (`_cued`)
from baton_tui import killpoints, layout, procs
from baton_tui.core import budget
from baton_tui.core.errors import BatonError
from baton_tui.core.events import BROKEN, WAITING, Event, EventKind, State
from baton_tui.core.slug import integration_branch
from baton_tui.core.words import Mode, counted
from baton_tui.gitops import git, making, worktrees
from baton_tui.paths import private_file
from baton_tui.plan.model import Task
from baton_tui.run import decide, state
from baton_tui.runners import spawner
from baton_tui.run.collecting import Collector
from baton_tui.run.finish import Intent, run_check
from baton_tui.run.following import Follower
from baton_tui.run.placing import git_mode
from baton_tui.run.lock import ConductorLock
from baton_tui.runners.base import Runner
from baton_tui.run.starting import Starter
from baton_tui.runners.switch import RunnerSwitch
from baton_tui.store import foldcache
from baton_tui.store.db import Unwritable
from baton_tui.store.snapshot import conductor_info
from baton_tui.trust import ensure_trusted
from baton_tui.workspace import Workspace

K = EventKind

TICK = 0.05

# Exit codes of a run (DESIGN.md).
COMPLETE, FAILED, BAD_INPUT, WAITING_CODE, INTERRUPTED = 0, 1, 2, 3, 130


def _cued() -> str | None:
    """Wait for the cue ("go ROOT"), the code of a run imported meanwhile; the repository
    to run, or None when the caller went away or changed its mind."""
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
    fd = os.open(private_file(log), os.O_WRONLY | os.O_APPEND)
    for std in (1, 2):
        os.dup2(fd, std)
    os.close(fd)


class Conductor:
    """One run of the scheduling loop over the current plan: it decides (`decide.choose`,
    the stop conditions, the outcome) and its collaborators act — the `Starter` starts,
    the `Follower` follows, the `Collector` finishes and lands — all on one `RunState`, and
    through one `Runner`."""

    def __init__(self, ws: Workspace, runner: Runner, crashed: int | None = None):
        self.ws = ws
        self.store = ws.store
        self.runner = runner
        self.crashed = crashed  # the pid of a conductor that died without clearing up
        self.began = time.time()
        run, new = state.load(self.store, git_mode(ws), ws.config.limits.max_parallel)
        self.run = run
        self.collector = Collector(ws, run, runner, self.reload)
        self.follower = Follower(ws, run, runner, self.collector, self.reload)
        self.starter = Starter(ws, run, runner, self.follower)
        self._take_requests(run.requests(new))

    # state ----------------------------------------------------------------
    def reload(self) -> None:
        """Fold the events written since the last look (`RunState.reload`); act on the
        person's requests among them."""
        self._take_requests(self.run.requests(self.run.reload(self.store)))

    def emit(self, task_id: int | None, kind: str, **data: object) -> None:
        self.store.append(self.run.plan_id, task_id, kind, data)

    def _take_requests(self, requests: list[Event]) -> None:
        """Stop and pause requests made while this conductor runs."""
        for event in requests:
            if event.kind == K.TASK_STOP_REQUESTED and event.task_id is not None:
                intent = self.run.intents.setdefault(event.task_id, Intent())
                intent.take = bool(event.data.get("take"))
                intent.stop = not intent.take
                self.follower.stop(event.task_id)
            elif event.kind == K.RUN_PAUSE_REQUESTED:
                self.run.pause_requested = True

    def _cap(self, player: str) -> int | None:
        """A player's own `max_parallel` (None: no cap of its own)."""
        adapter = self.ws.catalog.players.get(player)
        return adapter.max_parallel if adapter else None

    def _check_stops(self) -> None:
        """Stop conditions: failures, a deadline, the budget. Once met nothing new starts;
        running tasks finish (or, at a hard budget, pause in their saved sessions)."""
        run = self.run
        plan = run.folder.plan
        if plan.stopped_by:
            return
        stop = None
        if plan.until_failures and plan.failures >= plan.until_failures:
            stop = ("failures", counted(plan.failures, "task failure"))
        elif plan.deadline and time.time() >= plan.deadline:
            stop = ("deadline", "the deadline "
                    + time.strftime("%H:%M", time.localtime(plan.deadline)) + " passed")
        elif any(v is not None for k, v in (run.plan.options.get("budget") or {}).items()
                 if k in budget.KEYS):
            # The use so far from the ready queue's running sums (no snapshot of every task).
            ready = run.ready
            used = budget.usage(run.plan.options.get("budget"), ready.tokens,
                                ready.cost if ready.costed else None,
                                bool(ready.ids(State.RUNNING)), run.folder, time.time())
            reached = budget.reached(used)
            if reached:
                stop = ("budget", reached)
                if used.get("hard"):
                    for task_id in list(run.tracked):
                        run.hard_stop.add(task_id)
                        self.follower.stop(task_id)
        if stop:
            self.emit(None, K.RUN_STOPPED, by=stop[0], detail=stop[1])
            self.reload()

    def _act(self) -> None:
        """Start what `decide.choose` chose; land, release and announce what it found."""
        run = self.run
        choice = decide.choose(run, time.time(), self._cap)
        for task in choice.announce:
            run.announced_manual.add(task.id)
            self.emit(task.id, K.TASK_PROGRESS, message="manual task: do it yourself, "
                      f"then run `baton done {task.id}`")
        for task, yes in choice.release:
            self.collector.release(task, yes)
        for task in choice.land:
            if run.view(task.id).finish_only == "collect":
                self.collector.collect_again(task)
            else:
                self.collector.land_reported(task)
        for task, message in choice.starts:
            if decide.has_room(run, task, self._cap) and self._runner_room(task):
                self.starter.start(task, message)

    def _runner_room(self, task: Task) -> bool:
        """Whether the task's runner is under its own `max_parallel` (`[runners.NAME]`; this
        machine's has none: its limit is `[limits] max_parallel`)."""
        settings = self.ws.config.runners.get(task.runner)
        limit = settings.max_parallel if settings is not None else None
        if not limit:
            return True
        run = self.run
        busy = sum(1 for task_id in [*run.tracked, *run.starting]
                   if run.by_id[task_id].runner == task.runner)
        return busy < limit

    def _pause_all(self) -> None:
        """A pause was asked for: every running task stops in its saved session."""
        for task_id, tracked in list(self.run.tracked.items()):
            if tracked.signalled is None:
                self.run.intents.setdefault(task_id, Intent()).pause = True
                self.follower.stop(task_id)

    # the loop ---------------------------------------------------------------
    def _clear_left_locks(self) -> None:
        """After a crash, the lock files its killed git left on the run's refs (see
        gitops/left_locks.py): else the run could never move those refs again."""
        if not self.crashed or not self.run.git_mode:
            return
        # lazy: only a run after a crash needs it (the conductor's start)
        from baton_tui.gitops import left_locks

        slug = self.run.plan.slug
        worktrees = layout.worktree_path(self.ws.paths, slug, 0, "").parent
        for lock in left_locks.clear(self.ws.root, slug, worktrees,
                                     group=self.crashed, before=self.began):
            self.emit(None, K.RUN_REPAIRED, what="git-lock", detail=f"removed {lock}")

    def _try_deferred_now(self) -> None:
        """A task put off because its runner's cluster was unreachable is tried at once by a
        new conductor — the person's `run` or `resume` — not only once its wait is over."""
        run, now = self.run, time.time()
        put_off = [t for t in sorted(run.ready.delayed)
                   if (v := run.view(t)).deferred and v.not_before > now]
        for task_id in put_off:
            self.emit(task_id, K.TASK_QUEUED, by="resume", feedback=run.view(task_id).feedback)
        if put_off:
            self.reload()

    def queue_plan(self) -> None:
        """Queue every draft task once a run was asked for (build tasks wait for approval)."""
        if not self.run.plan.options.get("run_requested"):
            return
        drafts = sorted(self.run.ready.ids(State.DRAFT))
        with self.store.tx():  # one write for a 10,000-task plan, not one each
            for task_id in drafts:
                self.emit(task_id, K.TASK_QUEUED)

    def outcome(self) -> int | None:
        """The run's exit code when nothing can move without the person, else None."""
        run = self.run
        if not run.idle():
            return None
        if run.pause_requested:
            return INTERRUPTED
        stopped = run.folder.plan.stopped_by
        if stopped:
            return FAILED if stopped == "failures" else WAITING_CODE
        now = time.time()
        ready = run.ready  # tasks by state: no walk over every task
        waits = [v.until for v in map(run.view, ready.ids(State.PAUSED))
                 if v.until and not v.taken]
        max_wait = self.ws.config.limits.max_wait
        # Wait through a known reset — one that came since this loop's starts looked too:
        # the next look resumes that task (exiting "waiting" then was a race).
        if any(u - now <= max_wait for u in waits):
            return None
        # (A task whose cluster was unreachable waits only while something else runs: alone,
        # the run ends waiting, and `baton resume` tries that cluster again.)
        if any((v := run.view(t)).not_before > now and not v.deferred for t in ready.delayed):
            return None
        if ready.ids(*BROKEN):
            return FAILED
        if ready.ids(*WAITING):
            return WAITING_CODE
        pending = [run.task(t) for t in ready.ids(State.DRAFT, State.QUEUED)]
        if any(t.mode == Mode.MANUAL for t in pending):
            return WAITING_CODE
        if pending and not run.plan.approved:
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
        if not self.store.events(self.run.plan_id, after=self.run.folder.last_id):
            return True
        if record is not None:
            self.store.set_conductor(record["pid"], record["create_time"], record["plan_id"],
                                     record["started"])
        return False

    async def run_level_check(self) -> int:
        """`[checks] run` once on the integration branch after every task landed."""
        command = self.ws.config.checks.run
        if not command or not self.run.git_mode:
            return COMPLETE
        slug = self.run.plan.slug
        try:
            ensure_trusted(self.ws, (), keys=("checks.run",))
        except BatonError as exc:  # the file changed after the run was asked for
            self.emit(None, K.RUN_CHECK, head=None, exit=126, output=str(exc))
            return FAILED
        head = git.rev_parse(self.ws.root, f"refs/heads/{integration_branch(slug)}")
        last = self.run.folder.plan.run_check
        if last and last.get("head") == head:
            return COMPLETE if last.get("exit") == 0 else FAILED
        path = layout.worktree_path(self.ws.paths, slug, 0, "run-check")

        def work() -> tuple[int, str]:  # in a thread: git and the check only, no store access
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

    def _pending(self) -> list[asyncio.Future[Any]]:
        """What the loop may wake for before its tick: a finish (a landing: its dependents
        start at once), an agent's exit, a worktree made ahead."""
        run = self.run
        exits = (self.runner.exited(tracked.handle) for tracked in run.tracked.values())
        return [f for f in (*run.finishing.values(), *exits, *run.making_ahead.values())
                if f is not None and not f.done()]

    async def loop(self) -> int:
        """The scheduling loop, until nothing can move without the person; the exit code."""
        run = self.run
        # Set-ups, landings and checks run on threads: enough of them that a full house of
        # `max_parallel` tasks never waits for a worker (asyncio's default is cores + 4).
        workers = max(8, 2 * self.ws.config.limits.max_parallel + 4)
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="baton-conductor"))
        self.reload()
        self.emit(None, K.CONDUCTOR_STARTED, pid=os.getpid())
        self.queue_plan()
        self.reload()
        self._clear_left_locks()
        self.follower.reconcile()
        self._try_deferred_now()
        # The plan, its views and the ready queue live as long as the run: out of the cycle
        # collector's sight, so its full passes do not grow with the plan (at 10,000 tasks
        # they cost every started task milliseconds). No collection first: it would hold up
        # the first start by ~25 ms, to free a few objects the imports left.
        gc.freeze()
        code: int | None = None
        while code is None:
            self.reload()
            self.follower.follow()
            self._check_stops()
            self.collector.land_taken_over()
            if run.pause_requested:
                self._pause_all()
            else:
                self._act()
                self.starter.make_ahead()
            if run.finishing:
                done = [t for t, f in run.finishing.items() if f.done()]
                for task_id in done:
                    failed = run.finishing.pop(task_id).exception()
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
                pending = self._pending()
                if pending:
                    await asyncio.wait(pending, timeout=TICK, return_when=asyncio.FIRST_COMPLETED)
                else:
                    await asyncio.sleep(TICK)
        killpoints.reached("gone")
        self.starter.drop_made_ahead()
        self.emit(None, K.RUN_FINISHED, code=code)
        self.reload()
        # The whole run folded: kept in the store, the next `status` or command starts here.
        foldcache.save(self.store, run.plan_id, run.folder)
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
    runner: Runner | None = None
    try:
        runner = RunnerSwitch(ws)  # each task's `runner` field chooses (local, a cluster)
        runner.connect_ahead(plan)
        return asyncio.run(Conductor(ws, runner, crashed).loop())
    except Exception as exc:
        # Attempts keep running under their shims; `baton resume` reattaches to them.
        if isinstance(exc, Unwritable):  # one line; on a full disk, the reserve makes room
            print(f"baton conductor: {exc.message}", flush=True)
            if exc.full:
                ws.store.release_reserve()
        else:
            traceback.print_exc()
        try:
            ws.store.append(plan.id if plan else None, None, K.CONDUCTOR_CRASHED,
                            {"error": f"{type(exc).__name__}: {exc}"[:500]})
        except Unwritable:
            pass  # nowhere to record it: its log says why
        return 1
    finally:
        if runner is not None:
            runner.close()  # its attempts go on
        else:
            spawner.stop()  # warmed while it waited for its cue
        try:
            ws.store.clear_conductor(os.getpid())
        except Exception:  # the store cannot be written: the lock still goes
            pass
        lock.release()
