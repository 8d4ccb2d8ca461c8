"""Starting attempts: which queued tasks may start now, in what order, and on what capacity.

A mixin of the `Conductor` (it reads the conductor's folded views and plan). Set-up
runs on a worker thread; the shim's exit wakes the loop through a pidfd where the
platform has one, so no thread is tied up waiting for a running agent.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from baton_tui.core.errors import BatonError
from baton_tui.plan.model import Task
from baton_tui.run import launcher, outside
from baton_tui.run.finish import Intent
from baton_tui.run.following import Tracked
from baton_tui.core.events import BROKEN, EventKind, State

if TYPE_CHECKING:
    from baton_tui.run.spawner import Forked

K = EventKind


def exited(shim: "subprocess.Popen | Forked") -> asyncio.Future:
    """A future that completes when the shim exits: our own child is reaped here, one the
    spawner forked is reaped by the spawner."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future = loop.create_future()
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


class Turns:
    """Starts take turns on the machine's cores, in the order they were asked for (the ready
    queue's rank). A start is mostly CPU — git making a worktree, composing the prompt,
    forking the shim — so eight begun at once on two cores share them and all end late
    together, the best-ranked with the rest; taking turns, the first ones start at once and
    the mean start comes about twice as early, for the same last one. A start steps out of
    its turn while its `[worktree] setup` command runs (`aside`): a long install must not
    hold the others up."""

    def __init__(self, width: int | None = None):
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else os.cpu_count()
        self.width = width or max(2, cores or 2)
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


def handoff_packet(conductor: Any, task: Task, view: Any) -> str:
    """What a reassigned task's new player needs: the previous player's progress and last
    summary, the files changed so far, a failed check's output — and "continue from here"."""
    previous = (view.reassigned or {}).get("from", "another player")
    lines = [f"## Handoff: this task was started by {previous}, and moves to you",
             "The original brief is above. Here is how far it got:"]
    if view.progress_log:
        lines += ["", "Its progress, oldest first:", *(f"- {p}" for p in view.progress_log)]
    if view.last_report or view.summary:
        lines += ["", f"Its last report: {view.last_report or view.summary}"]
    if view.reason:
        lines += ["", f"Why it stopped: {view.reason}"]
    stat = _diff_stat(conductor, view)
    if stat:
        lines += ["", "Files changed so far (already in your working tree):", stat]
    if view.check and view.check.get("exit") not in (0, None):
        lines += ["", f"Its check failed (exit {view.check['exit']}):",
                  str(view.check.get("output", ""))[-2000:]]
    lines += ["", "Continue from here: keep what is done, finish the rest, then report."]
    return "\n".join(lines)


def _diff_stat(conductor: Any, view: Any) -> str:
    if not (view.workdir and view.base and conductor.git_mode):
        return ""
    from baton_tui.gitops.git import run_git

    done = run_git(view.workdir, "diff", "--stat", view.base, "--")
    untracked = run_git(view.workdir, "ls-files", "--others", "--exclude-standard")
    extra = "".join(f" {path} (new, untracked)\n" for path in untracked.stdout.splitlines())
    return (done.stdout + extra).rstrip() if done.returncode == 0 else extra.rstrip()


class Starting:
    """Choosing and starting attempts; `self` is the Conductor."""

    def _deps_ready(self, task: Task) -> bool:
        return self.ready.deps_ready(task.id)  # counted as dependencies land or fail

    def candidates(self) -> list[tuple[Task, str | None]]:
        """Tasks that may start now, with a resume message where they continue a session.

        Paused sessions come first (a reset has arrived), then the longest remaining path,
        then the most direct dependents (`Ready.rank`).
        Nothing new starts once a stop condition is met; a task edited mid-run waits for
        approval; a player at its usage limit is waited for. Only the tasks the ready queue
        offers are looked at, and only while there is room to start one (`run.ready`).
        """
        ready: list[tuple[Task, str | None]] = []
        now = time.time()
        players: dict[str, int] = {}  # tasks of each capped player running or chosen

        def room() -> int:
            return self._free_slots() - len(ready)

        def take(task: Task, message: str | None) -> None:
            if self._player_room(task, players):
                ready.append((task, message))
        if self.folder.plan.stopped_by:
            return ready
        limited = {p for p, at in self.folder.plan.player_limits.items() if at > now}
        limited |= {self.by_id[t].player for t in [*self.tracked, *self.finishing]
                    if t in self.by_id and self.view(t).declared_limit}  # being collected
        for task_id in self.ready.walk(room):
            task = self.by_id[task_id]
            if task.id in self.tracked or task.id in self.finishing or task.id in self.starting \
                    or task.id in self.making_ahead:
                continue  # (one whose worktree is being made ahead starts once it is made)
            view = self.view(task.id)
            state = view.state
            if state == State.QUEUED and (view.needs_approval or task.player in limited):
                continue
            if state == State.QUEUED and view.finish_only and task.mode == "build" \
                    and self.git_mode:  # its agent reported: only Baton's commit or landing
                self.emit(task.id, K.TASK_DONE, summary=view.summary or "", by="retry")
                self.finishing[task.id] = asyncio.ensure_future(self._land_again(task))
                continue
            if state == State.QUEUED and self._deps_ready(task):
                if task.mode == "manual":
                    if task.id not in self.announced_manual:
                        self.announced_manual.add(task.id)
                        self.emit(task.id, K.TASK_PROGRESS, message="manual task: do it yourself, "
                                  f"then run `baton done {task.id}`")
                    continue
                if task.mode == "build" and not self.plan.approved:
                    continue
                if view.not_before > now:
                    continue
                take(task, None)
            elif state in BROKEN and view.reassigned and not self.pause_requested:
                take(task, None)  # moved to another player: it starts there at once
            elif state == State.PAUSED and not self.pause_requested and not view.taken:
                if view.until and view.until > now:
                    continue
                take(task, "You were paused (" + (view.reason or "paused")
                     + "). Continue the task where you left off.")
            elif state == State.CHECKPOINT and view.held and view.checkpoint_answer:
                self.finishing[task.id] = asyncio.ensure_future(
                    self._release_held(task, view.checkpoint_answer == "yes"))
            elif state == State.CHECKPOINT:
                answer = view.checkpoint_answer
                if answer == "yes":
                    take(task, "The person answered your checkpoint: YES — go ahead "
                         "with the step, then finish and report.")
                elif answer == "no":
                    take(task, "The person answered your checkpoint: NO — do not take "
                         "that step. Finish without it if you can, else report failed.")
        ready.sort(key=lambda item: (self.view(item[0].id).state != State.PAUSED,
                                     self.ready.rank.get(item[0].id, (0, 0)), item[0].id))
        return ready

    def _free_slots(self) -> int:
        limit = self.ws.config.limits.max_parallel
        if not self.git_mode:
            limit = 1  # folder mode: one task at a time, in the folder itself
        return limit - len(self.tracked) - len(self.finishing) - len(self.starting)

    def _player_room(self, task: Task, chosen: dict[str, int]) -> bool:
        """Whether `task`'s player is under its own `max_parallel`, counting its tasks
        running, starting and already `chosen` (updated when there is room)."""
        player = self.ws.catalog.players.get(task.player)
        cap = player.max_parallel if player else None
        if not cap:
            return True
        if task.player not in chosen:
            chosen[task.player] = sum(1 for task_id in [*self.tracked, *self.starting]
                                      if self._task(task_id).player == task.player)
        if chosen[task.player] >= cap:
            return False
        chosen[task.player] += 1
        return True

    def capacity_for(self, task: Task) -> bool:
        return self._free_slots() > 0 and self._player_room(task, {})

    def _task(self, task_id: int) -> Task:
        return self.by_id[task_id]

    def artifacts(self, task: Task) -> dict[int, str]:
        """Reports of the tasks this one depends on: a research task's findings, a build's summary."""
        summaries = {dep: self.view(dep).summary for dep in task.depends_on}
        return {dep: text for dep, text in summaries.items() if text}

    def start(self, task: Task, resume_message: str | None) -> None:
        """Start an attempt on a worker thread: worktree set-up and spawning take a while,
        and the other ready tasks should not wait for them."""
        view = self.view(task.id)
        tried = self.store.attempts(self.plan.id, task.id)
        last = tried[-1] if tried else None
        if last is not None and last.started is None and last.collected and resume_message \
                is None and last.spec.get("resumed") and not view.reassigned:
            # Its last start was a resume that never ran (Baton was killed as it started it,
            # `_never_ran`): the same resume again.
            resume_message = last.spec.get("resume_message")
        # The session to continue is the last attempt's that ran: one given up unclaimed
        # holds no session of its own.
        previous = next((a for a in reversed(tried) if a.started is not None), None)
        feedback = view.feedback
        if view.reassigned:  # a new player: a fresh session, briefed on the work so far
            resume_message = None
            feedback = "\n\n".join(x for x in (handoff_packet(self, task, view), feedback) if x)
        if view.state == State.QUEUED and view.rate_limited and resume_message is None:
            # A 429 retry continues the saved session rather than starting over.
            resume_message = ("You were stopped by a rate limit (HTTP 429). Continue the "
                              "task where you left off.")
        session = previous.session_id if previous and resume_message \
            and previous.player == task.player else None
        attempts = len(tried)
        refresh = task.mode == "build" and view.lost_landing
        artifacts = self.artifacts(task)
        plan, doc = self.plan, self.doc
        quiet = self.quiet_since if not (self.tracked or self.starting) else None
        self.quiet_since = None  # an agent runs from now on

        turns = self.turns

        def work() -> "tuple[int, subprocess.Popen | Forked] | None":
            ws = self.ws.sibling()
            # The checkout looked at while the worktree is made (or the last look, when no
            # agent ran since it began) — asked before this start's turn, so the starts
            # waiting for theirs share one look (a big checkout's `git status` takes seconds).
            ahead = outside.ahead(ws, quiet)
            with turns:
                return begin(ws, ahead)

        def begin(ws: Any, ahead: Any) -> "tuple[int, subprocess.Popen | Forked] | None":
            feedback_now = feedback
            try:
                if task.mode == "research":
                    workdir = launcher.prepare_research(ws, plan, task, attempts + 1)
                else:
                    workdir = launcher.prepare_build(ws, plan, task, refresh=refresh,
                                                     aside=turns.aside)
                    if workdir.conflicts:
                        feedback_now = ((feedback_now + "\n\n") if feedback_now else "") + (
                            "Your branch now includes the latest integration branch, and these "
                            "files conflict — resolve the conflict markers (keep both sides' "
                            "intent): " + ", ".join(workdir.conflicts))
                return launcher.start_attempt(
                    ws, plan, doc, task, workdir, artifacts=artifacts, feedback=feedback_now,
                    resume_message=resume_message, session_id=session, ahead=ahead)
            except launcher.SetupFailed as exc:
                ws.store.append(plan.id, task.id, K.TASK_FAILED, {"reason": str(exc),
                                                                  "output": exc.output})
            except (BatonError, OSError, ValueError, NotImplementedError) as exc:
                message = exc.message if isinstance(exc, BatonError) else str(exc)
                ws.store.append(plan.id, task.id, K.TASK_FAILED,
                                {"reason": f"could not start: {message}"})
            finally:
                ws.close()
            return None

        async def run() -> None:
            try:
                started = await asyncio.to_thread(work)
            except Exception as exc:  # a bug must fail the task visibly, not the conductor
                self.emit(task.id, K.TASK_FAILED, reason=f"could not start: {exc}")
                started = None
            if started is not None:
                attempt_id, shim = started
                self.tracked[task.id] = Tracked(attempt_id, task.id)
                self.wanted_ahead.extend(self.ready.below.get(task.id, ()))
                # Wake the loop the moment it exits.
                self.exits[task.id] = exited(shim)
                if self.intents.get(task.id, Intent()).stop or self.pause_requested:
                    self._signal(task.id)  # asked to stop while it was starting
            self.starting.pop(task.id, None)

        self.made_ahead.discard(task.id)
        self.starting[task.id] = asyncio.ensure_future(run())

    # worktrees made ahead ----------------------------------------------------------------
    def make_ahead(self) -> None:
        """Make the worktree of a task whose last dependencies are still running, so that it
        starts from a checkout already there the moment they land (`launcher.prepare_ahead`):
        one at a time, never while a task is starting (they share git's worktree lock), and
        at most `max_parallel` made and waiting. Tasks are looked at as their dependencies
        start (`wanted_ahead`); one not ready for it then is looked at again by the next."""
        room = self.ws.config.limits.max_parallel - len(self.made_ahead)
        if self.making_ahead or self.starting or room <= 0 or not self.wanted_ahead \
                or not (self.git_mode and self.plan.approved) or self.pause_requested \
                or self.folder.plan.stopped_by:
            return
        while self.wanted_ahead:
            task_id = self.wanted_ahead.popleft()
            if self._worth_making_ahead(task_id):
                break
        else:
            return
        task, plan = self.by_id[task_id], self.plan

        def work() -> bool:
            ws = self.ws.sibling()
            try:
                return launcher.prepare_ahead(ws, plan, task)
            except Exception as exc:  # no harm done: it is made the usual way when it starts
                print(f"baton conductor: task {task.id}'s worktree was not made ahead: {exc}",
                      flush=True)
                return False
            finally:
                ws.close()

        async def run() -> None:
            try:
                if await asyncio.to_thread(work):
                    self.made_ahead.add(task.id)
            finally:
                self.making_ahead.pop(task.id, None)

        self.making_ahead[task.id] = asyncio.ensure_future(run())

    def drop_made_ahead(self) -> None:
        """At the run's end: the worktrees made ahead for tasks that never started (a
        dependency failed, the run stopped) go, as Baton made them (`launcher.drop_ahead`)
        — this conductor's, and any a killed one left."""
        if not self.git_mode:
            return
        for task in self.doc.tasks:
            if task.mode == "build" and self.view(task.id).workdir is None:
                try:
                    launcher.drop_ahead(self.ws, self.plan, task)
                except Exception as exc:  # kept: it is used if the task starts later
                    print(f"baton conductor: task {task.id}'s worktree made ahead was "
                          f"kept: {exc}", flush=True)
        self.made_ahead.clear()

    def _worth_making_ahead(self, task_id: int) -> bool:
        task = self.by_id.get(task_id)
        if task is None or task.mode != "build" or task_id in self.made_ahead:
            return False
        view = self.view(task_id)
        if view.state != State.QUEUED or view.needs_approval or view.workdir:
            return False
        busy = (self.tracked, self.finishing, self.starting)
        if any(task_id in group for group in busy):
            return False
        return all(self.ready.satisfies.get(dep) or any(dep in group for group in busy)
                   for dep in self.ready.deps[task_id])
