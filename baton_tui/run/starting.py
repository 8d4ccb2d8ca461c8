"""Starting attempts the conductor chose (`decide.choose`), and making worktrees ahead.

The `Starter` works out what a start continues from — a saved session, a handoff from
another player, a retry's feedback — then, off the loop, makes the task's place
(`placing`), composes the agent's words (`briefing`), records the attempt and, for an agent
that runs on this machine, what it must not change (`outside`, `refguard`); only then does it
ask the runner to start the agent (`Runner.start`). It also has the places of tasks whose
last dependencies still run made ahead (`placing.make_ahead`), so they start the moment
those land.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from baton_tui.channel.report import told_text
from baton_tui.core import views
from baton_tui.core.events import EventKind, State
from baton_tui.core.views import TaskView
from baton_tui.core.words import Mode
from baton_tui.gitops.git import run_git
from baton_tui.plan.model import PlanDocument, Task
from baton_tui.run import briefing, outside, placing, refguard
from baton_tui.run.finish import Intent
from baton_tui.run.following import Follower
from baton_tui.run.placing import Spare
from baton_tui.run.state import RunState, Tracked
from baton_tui.runners import launcher
from baton_tui.runners.base import Runner, StartDeferred, StartFailed, StartRequest
from baton_tui.store.rows import PlanRow
from baton_tui.workspace import Workspace

K = EventKind
DEFER_FOR = 30.0  # a task whose runner is unreachable is tried again after this long


def handoff_packet(view: TaskView, diff_stat: str) -> str:
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
    if diff_stat:
        lines += ["", "Files changed so far (already in your working tree):", diff_stat]
    if view.check and view.check.get("exit") not in (0, None):
        lines += ["", f"Its check failed (exit {view.check['exit']}):",
                  str(view.check.get("output", ""))[-2000:]]
    lines += ["", "Continue from here: keep what is done, finish the rest, then report."]
    return "\n".join(lines)


def diff_stat(view: TaskView, git_mode: bool) -> str:
    """The files a task's worktree changed since its base, untracked ones included."""
    if not (view.workdir and view.base and git_mode):
        return ""
    done = run_git(view.workdir, "diff", "--stat", view.base, "--")
    untracked = run_git(view.workdir, "ls-files", "--others", "--exclude-standard")
    extra = "".join(f" {path} (new, untracked)\n" for path in untracked.stdout.splitlines())
    return (done.stdout + extra).rstrip() if done.returncode == 0 else extra.rstrip()


@dataclass(frozen=True)
class Start:
    """What the conductor decided about one start, before its place is made."""

    task: Task
    attempt_no: int                   # this attempt's number for the task, from 1
    artifacts: dict[int, str] = field(default_factory=dict)  # dependencies' reports
    feedback: str | None = None       # a failure, a handoff packet, a retry's note
    resume_message: str | None = None  # continue a saved session with this message
    session_id: str | None = None     # the session to continue, when the player has one
    refresh: bool = False             # bring the integration branch into its worktree first
    spare: Spare | None = None        # a landed task's worktree it may take over
    here: bool = True                 # its agent runs on this machine (`Runner.runs_here`)
    quiet: float | None = None        # no agent ran since then: a look at the checkout holds
    first: bool = False               # no agent ran yet this run: share the first look


def prepare(ws: Workspace, plan: PlanRow, doc: PlanDocument, start: Start,
            turns: placing.Turns) -> StartRequest:
    """What a runner needs to start the attempt `start` decided (blocking: off the loop, on
    `ws`, a workspace of the thread's own): the task's place, the agent's words, the attempt
    recorded and — for an agent on this machine — the look at the checkout it starts from
    (taken while the worktree is made) and the refs it must not move. Raises `StartFailed`."""
    task = start.task
    with placing.start_failures():
        ahead: Future[outside.Fingerprint] | None = (
            outside.ahead(ws, start.quiet, join=start.first) if start.here else None)
        workdir = placing.prepare(ws, plan, task, start.attempt_no, turns,
                                  refresh=start.refresh, spare=start.spare)
        prompt = briefing.brief(ws, doc, task, start.artifacts, start.feedback,
                                start.resume_message, workdir.conflicts)
        attempt_id, nonce, folder = launcher.record(ws, plan, task)
        held: tuple[str, ...] = ()
        try:
            if start.here:
                outside.before(ws, folder, ahead)
                refguard.record(ws, plan, folder)
                if ws.config.worktree.protect_checkout:
                    held = tuple(refguard.held(ws, plan, workdir.branch))
        except BaseException:
            ws.store.abandon_attempt(attempt_id)  # recorded, never to start
            raise
    resumed = bool(start.session_id or start.resume_message)
    return StartRequest(
        plan=plan, doc=doc, task=task, attempt_id=attempt_id, folder=folder, workdir=workdir,
        prompt=prompt, nonce=nonce, resume_message=start.resume_message,
        session_id=start.session_id, held=held,
        rebrief=_rebrief(ws, plan, doc, start, workdir.conflicts) if resumed else None)


def _rebrief(ws: Workspace, plan: PlanRow, doc: PlanDocument, start: Start,
             conflicts: list[str]) -> Callable[[str], str]:
    """The brief for a fresh session when the one to resume is lost where `gone` held it
    (a remote worker gone): the handoff packet of the work so far, as a task moved to another
    player gets (blocking: the runner calls it off the loop, on a workspace of its own)."""
    task = start.task

    def rebrief(gone: str) -> str:
        own = ws.sibling()
        try:
            view = views.fold(own.store.events(plan.id, task_id=task.id)).get(task.id)
            packet = ""
            if view is not None:
                view.reassigned = {"from": f"{task.player} on worker {gone} "
                                           "(gone, with its session)"}
                packet = handoff_packet(view, diff_stat(view, True))
            feedback = "\n\n".join(x for x in (packet, start.feedback) if x)
            return briefing.brief(own, doc, task, start.artifacts, feedback or None, None,
                                  conflicts)
        finally:
            own.close()

    return rebrief


class Starter:
    """Starting the attempts the conductor chose; making worktrees ahead."""

    def __init__(self, ws: Workspace, run: RunState, runner: Runner, follower: Follower):
        self.ws = ws
        self.store = ws.store
        self.run = run
        self.runner = runner
        self.follower = follower  # to stop a task asked to stop while it was starting
        self.turns = placing.Turns()  # starts make their worktrees in turn, best-ranked first

    def emit(self, task_id: int | None, kind: str, **data: object) -> None:
        self.store.append(self.run.plan_id, task_id, kind, data)

    def artifacts(self, task: Task) -> dict[int, str]:
        """Reports of the tasks this one depends on: a research task's findings, a build's summary."""
        summaries = {dep: self.run.view(dep).summary for dep in task.depends_on}
        return {dep: text for dep, text in summaries.items() if text}

    def decide(self, task: Task, resume_message: str | None) -> Start:
        """What this start continues from: the session to resume, the feedback to give."""
        run = self.run
        view = run.view(task.id)
        tried = self.store.attempts(run.plan_id, task.id)
        last = tried[-1] if tried else None
        if last is not None and last.started is None and last.collected and resume_message \
                is None and last.spec.get("resumed") and not view.reassigned:
            # Its last start was a resume that never ran (Baton was killed as it started it,
            # `Follower._never_ran`): the same resume again.
            resume_message = last.spec.get("resume_message")
        # The session to continue is the last attempt's that ran: one given up unclaimed
        # holds no session of its own.
        previous = next((a for a in reversed(tried) if a.started is not None), None)
        feedback = view.feedback
        if view.reassigned:  # a new player: a fresh session, briefed on the work so far
            resume_message = None
            packet = handoff_packet(view, diff_stat(view, run.git_mode))
            feedback = "\n\n".join(x for x in (packet, feedback) if x)
        if view.state == State.QUEUED and view.rate_limited and resume_message is None:
            # A 429 retry continues the saved session rather than starting over.
            resume_message = ("You were stopped by a rate limit (HTTP 429). Continue the "
                              "task where you left off.")
        unread = [m for m in view.messages if not m.get("read")]
        if unread:  # `baton tell` messages its agent has not read: in this prompt
            said = told_text(unread)
            if resume_message:
                resume_message = f"{resume_message}\n\n{said}"
            else:
                feedback = "\n\n".join(x for x in (feedback, said) if x)
            self.emit(task.id, K.TASK_TOLD_READ, ids=[m.get("id") for m in unread],
                      via="prompt")
        session = previous.session_id if previous and resume_message \
            and previous.player == task.player else None
        here = self.runner.runs_here(task)
        busy = bool(run.tracked or run.starting)
        quiet = run.quiet_since if here and not (busy or run.strays) else None
        first = here and run.untouched and not (run.tracked or run.strays)
        if here:
            run.quiet_since = None  # an agent runs from now on
        return Start(
            task=task, attempt_no=len(tried) + 1, artifacts=self.artifacts(task),
            feedback=feedback, resume_message=resume_message, session_id=session,
            refresh=task.mode == Mode.BUILD and view.lost_landing,
            spare=run.take_spare(task) if here else None,
            here=here, quiet=quiet, first=first)

    def start(self, task: Task, resume_message: str | None) -> None:
        """Start an attempt: its place is made and its agent started off the loop, and the
        other ready tasks do not wait for it."""
        start = self.decide(task, resume_message)
        run = self.run

        async def starting() -> None:
            request: StartRequest | None = None
            try:
                request = await asyncio.to_thread(self._prepare, start)
                if start.here:
                    run.untouched = False  # its agent is started next
                handle = await self.runner.start(request)
            except StartDeferred as exc:  # its cluster is unreachable: queued, tried again
                self.emit(task.id, K.TASK_QUEUED, reason=exc.reason, deferred=True,
                          not_before=time.time() + DEFER_FOR, feedback=run.view(task.id).feedback)
                handle = None
            except StartFailed as exc:
                self.emit(task.id, K.TASK_FAILED, reason=exc.reason,
                          **({"output": exc.output} if exc.output is not None else {}))
                handle = None
            except Exception as exc:  # a bug must fail the task visibly, not the conductor
                self.emit(task.id, K.TASK_FAILED, reason=f"could not start: {exc}")
                handle = None
            if handle is None and request is not None:  # recorded, never started: given up
                self.store.abandon_attempt(request.attempt_id)
            if handle is not None:
                run.tracked[task.id] = Tracked(handle)
                run.wanted_ahead.extend(run.ready.below.get(task.id, ()))
                if run.intents.get(task.id, Intent()).halts or run.pause_requested:
                    self.follower.stop(task.id)  # asked to stop (or taken) while starting
            run.starting.pop(task.id, None)

        run.made_ahead.discard(task.id)
        run.starting[task.id] = asyncio.ensure_future(starting())

    def _prepare(self, start: Start) -> StartRequest:
        ws = self.ws.sibling()  # a connection of its own for the thread
        try:
            return prepare(ws, self.run.plan, self.run.doc, start, self.turns)
        finally:
            ws.close()

    # worktrees made ahead ----------------------------------------------------------------
    def make_ahead(self) -> None:
        """Make the worktree of a task whose last dependencies are still running, so that it
        starts from a checkout already there the moment they land (`placing.make_ahead`; a
        landed task's worktree taken over where one is to spare): one at a time, never while
        a task is starting (they share git's worktree lock), and at most `max_parallel` made
        and waiting. Tasks are looked at as their dependencies start (`wanted_ahead`); one
        not ready for it then is looked at again by the next."""
        run = self.run
        room = run.max_parallel - len(run.made_ahead)
        if run.making_ahead or run.starting or room <= 0 or not run.wanted_ahead \
                or not (run.git_mode and run.plan.approved) or run.pause_requested \
                or run.folder.plan.stopped_by:
            return
        while run.wanted_ahead:
            task_id = run.wanted_ahead.popleft()
            if self._worth_making_ahead(task_id):
                break
        else:
            return
        task, plan = run.task(task_id), run.plan
        # a landed task's worktree: only what differs is written
        spare = run.take_spare(task) if self.runner.runs_here(task) else None

        def work() -> bool:
            ws = self.ws.sibling()
            try:
                return placing.make_ahead(ws, plan, task, spare)
            except Exception as exc:  # no harm done: it is made the usual way when it starts
                print(f"baton conductor: task {task.id}'s worktree was not made ahead: {exc}",
                      flush=True)
                return False
            finally:
                ws.close()

        async def making() -> None:
            try:
                if await asyncio.to_thread(work):
                    run.made_ahead.add(task.id)
            finally:
                run.making_ahead.pop(task.id, None)

        run.making_ahead[task.id] = asyncio.ensure_future(making())

    def drop_made_ahead(self) -> None:
        """At the run's end: the worktrees made ahead for tasks that never started (a
        dependency failed, the run stopped) go, as Baton made them (`placing.drop_ahead`)
        — this conductor's, and any a killed one left."""
        run = self.run
        if not run.git_mode:
            return
        for task in run.doc.tasks:
            if task.mode == Mode.BUILD and run.view(task.id).workdir is None:
                try:
                    placing.drop_ahead(self.ws, run.plan, task)
                except Exception as exc:  # kept: it is used if the task starts later
                    print(f"baton conductor: task {task.id}'s worktree made ahead was "
                          f"kept: {exc}", flush=True)
        run.made_ahead.clear()

    def _worth_making_ahead(self, task_id: int) -> bool:
        run = self.run
        task = run.by_id.get(task_id)
        if task is None or task.mode != Mode.BUILD or task_id in run.made_ahead:
            return False
        view = run.view(task_id)
        if view.state != State.QUEUED or view.needs_approval or view.workdir:
            return False
        if run.busy(task_id):
            return False
        return all(run.ready.satisfies.get(dep) or run.busy(dep)
                   for dep in run.ready.deps[task_id])
