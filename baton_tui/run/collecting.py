"""Collecting ended attempts and landing finished tasks, off the conductor's loop.

The `Collector` brings an ended attempt's result home (`Runner.collect`) and hands it to a
`Finisher` on a worker thread (with a store connection of its own): report, check, commit,
landing. It also lands what was finished outside an attempt — a task the person took over
and marked done, one whose conductor died while landing — and releases a task held at a
review once the person answered. Autopilot's one retry of a failed task is decided here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from baton_tui.core import policy
from baton_tui.core.events import EventKind, State
from baton_tui.core.words import Autonomy, Mode
from baton_tui.plan.model import Task
from baton_tui.run.finish import Finisher, Intent
from baton_tui.runners.base import AttemptHandle, Runner
from baton_tui.run.state import RunState
from baton_tui.workspace import Workspace

K = EventKind


FEEDBACK_TAIL_LINES = 40     # of a failure's output, in autopilot's retry feedback
FEEDBACK_TAIL_CHARS = 3000


def retry_feedback(reason: str, output: str | None) -> str:
    """Autopilot's word to a failed task's retry: why it failed and, when output came with
    the failure (a check's, the agent's last lines), its tail — the name of a failing check
    alone does not say what failed."""
    text = f"The previous attempt failed: {reason}. Fix that and finish."
    tail = "\n".join((output or "").rstrip().splitlines()[-FEEDBACK_TAIL_LINES:])
    tail = tail[-FEEDBACK_TAIL_CHARS:]
    if not tail.strip():
        return text
    return f"{text}\n\nThe end of its output:\n```\n{tail}\n```"


class Collector:
    """Turns ended attempts and finished tasks into landings, on worker threads."""

    def __init__(self, ws: Workspace, run: RunState, runner: Runner,
                 reload: Callable[[], None]):
        self.ws = ws
        self.store = ws.store
        self.run = run
        self.runner = runner
        self.reload = reload  # the conductor's: fold new events, take the person's requests

    def emit(self, task_id: int | None, kind: str, **data: object) -> None:
        self.store.append(self.run.plan_id, task_id, kind, data)

    async def collect(self, handle: AttemptHandle) -> None:
        """Finish the task of an ended attempt: its report decides (`Finisher.finish`)."""
        run, task_id = self.run, handle.task_id
        task = run.task(task_id)
        intent = run.intents.pop(task_id, Intent())
        if (run.pause_requested or task_id in run.hard_stop) and not intent.stop:
            intent.pause = True
        try:
            attempt = await self.runner.collect(handle)
        except Exception as exc:  # its result could not be brought home: said, never dropped
            where = "its attempt" if self.runner.runs_here(task) else f"runner {task.runner}"
            self.emit(task_id, K.TASK_FAILED, stage="collect", attempt=handle.attempt_id,
                      reason=f"Baton could not bring its result home from {where}: {exc}"[:500]
                      + f" (`baton retry {task_id}` brings it home and lands it without "
                      "running the agent again)")
            return
        run.strays = run.strays or bool(attempt.spec.get("leftover"))  # never quiet again
        plan, doc = run.plan, run.doc

        def work() -> State:
            ws = self.ws.sibling()  # a connection of its own for the thread
            try:
                state = Finisher(ws, plan, doc).finish(task, attempt, intent)
                ws.store.update_attempt(attempt.id, collected=True)
                return state
            finally:
                ws.close()

        try:
            state = await asyncio.to_thread(work)
        except Exception as exc:  # a bug or a git failure must fail the task visibly
            self.emit(task_id, K.TASK_FAILED, reason=f"Baton could not finish the task: {exc}")
            state = State.FAILED
        if state == State.FAILED and policy.level(run.doc.autonomy) == Autonomy.AUTOPILOT \
                and not intent.stop:
            self._autopilot_retry(task)

    async def land_again(self, task: Task) -> None:
        """Commit and land a task marked done outside an attempt's end."""
        plan, doc = self.run.plan, self.run.doc

        def work() -> None:
            ws = self.ws.sibling()
            try:
                Finisher(ws, plan, doc).commit_and_land(task)
            finally:
                ws.close()

        try:
            await asyncio.to_thread(work)
        except Exception as exc:  # visible, never swallowed: the task must not stay `done`
            self.emit(task.id, K.TASK_FAILED, reason=f"landing failed: {exc}"[:500])

    async def release_held(self, task: Task, yes: bool) -> None:
        """The person's answer to a task held before landing: land it, or fail it (its branch
        is kept)."""
        run = self.run
        attempt = self.store.latest_attempt(run.plan_id, task.id)
        summary = ((attempt.report or {}).get("summary") if attempt else None) or ""
        plan, doc, checkpoint = run.plan, run.doc, run.view(task.id).pending_checkpoint

        def work() -> None:
            ws = self.ws.sibling()
            try:
                finisher = Finisher(ws, plan, doc)
                if not yes:
                    finisher.emit(task, K.TASK_FAILED, reason="you said no at its review: "
                                  "nothing landed (its branch is kept)")
                    return
                finisher.emit(task, K.TASK_CONTINUED, checkpoint=checkpoint)
                finisher.emit(task, K.TASK_DONE, summary=summary, by="person")
                finisher.land(task, attempt.spec.get("branch") if attempt else None)
            finally:
                ws.close()

        await asyncio.to_thread(work)

    def land_taken_over(self) -> None:
        """A build task the person finished (`baton done N` after taking it over) lands now,
        while the run goes on."""
        run = self.run
        if not run.git_mode:
            return
        for task_id in sorted(run.ready.ids(State.DONE)):
            task = run.task(task_id)
            if task.mode == Mode.BUILD and not run.busy(task.id):
                run.finishing[task.id] = asyncio.ensure_future(self.land_again(task))

    def land_reported(self, task: Task) -> None:
        """A task whose agent reported before Baton could land it (`finish_only`): done, and
        only Baton's commit and landing are left."""
        self.emit(task.id, K.TASK_DONE, summary=self.run.view(task.id).summary or "", by="retry")
        self.run.finishing[task.id] = asyncio.ensure_future(self.land_again(task))

    def collect_again(self, task: Task) -> None:
        """A task whose ended attempt could not be brought home (`finish_only` "collect"):
        its runner collects that attempt again — its agent is not run again."""
        attempt = self.store.latest_attempt(self.run.plan_id, task.id)
        if attempt is None or attempt.collected:
            self.emit(task.id, K.TASK_FAILED, reason="its attempt's result is gone: retry "
                      "it with `baton retry` after `baton task-runner` (its agent runs again)")
            return
        self.emit(task.id, K.TASK_PROGRESS, message="bringing its finished result home",
                  attempt=attempt.id)
        handle = self.runner.adopt(attempt)
        self.run.finishing[task.id] = asyncio.ensure_future(self.collect(handle))

    def release(self, task: Task, yes: bool) -> None:
        """Act on the answer to a task held at its review (`release_held`)."""
        self.run.finishing[task.id] = asyncio.ensure_future(self.release_held(task, yes))

    def _autopilot_retry(self, task: Task) -> None:
        """Autopilot: retry a failed task once with its failure as feedback, then park it."""
        self.reload()
        view = self.run.view(task.id)
        reason = view.reason or "it failed"
        if view.autopilot_retries >= 1:
            self.emit(task.id, K.TASK_PARKED, reason=f"failed twice: {reason}")
        else:
            self.emit(task.id, K.TASK_QUEUED, by=Autonomy.AUTOPILOT,
                      feedback=retry_feedback(reason, view.failure_output))
