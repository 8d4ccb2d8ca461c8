"""Run commands for both front ends: start, pause, stop, retry, done, checkpoint answers.

Each writes a request or a state event to the store and, where work must move,
makes sure a conductor runs. None of them waits for the run.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from baton_tui import procs
from baton_tui.errors import BatonError
from baton_tui.plan import current as plans
from baton_tui.run import layout
from baton_tui.run.lock import ConductorLock
from baton_tui.store.status import conductor_info
from baton_tui.workspace import Workspace

RESTARTABLE = ("failed", "parked", "paused")


def conductor_pid(ws: Workspace) -> int | None:
    info = conductor_info(ws.store)
    return info["pid"] if info else None


def ensure_trusted(ws: Workspace, cur: plans.Current) -> None:
    """Refuse a run whose players or settings come from an untrusted baton.toml."""
    from baton_tui.trust import ensure_trusted as ensure

    ensure(ws, {t.player for t in cur.doc.tasks})


def spawn_conductor(ws: Workspace) -> int:
    """Start the detached conductor (or find the live one); returns its pid."""
    pid = conductor_pid(ws)
    if pid:
        return pid
    log = open(layout.conductor_log(ws.paths), "ab")
    proc = subprocess.Popen([sys.executable, "-m", "baton_tui", "conductor", "--root",
                             str(ws.root)], stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True, cwd=str(ws.root))
    log.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        pid = conductor_pid(ws)
        if pid:
            return pid
        code = proc.poll()
        if code is not None:
            pid = conductor_pid(ws)
            if pid:
                return pid
            if ConductorLock(ws.paths.state_dir).held_by_other():
                time.sleep(0.05)
                continue
            return proc.pid  # it already finished its work (nothing to do)
        time.sleep(0.02)
    raise BatonError(f"the conductor did not start; see {layout.conductor_log(ws.paths)}", code=1)


def start_run(ws: Workspace, approve: bool = False) -> int:
    """Approve if asked, check trust, mark the run requested, and start the conductor."""
    cur = plans.current(ws)
    assert cur is not None
    ensure_trusted(ws, cur)  # before approving: a refused `run --approve` changes nothing
    if approve and not cur.row.approved:
        plans.approve(ws)
        cur = plans.current(ws)
        assert cur is not None
    if not cur.row.approved:
        raise BatonError("the plan is not approved: review it (`baton plan`), then `baton approve`"
                         " or `baton run --approve`")
    ensure_trusted(ws, cur)
    options = dict(cur.row.options)
    options.update(run_requested=True, checkpoint_wait=ws.config.limits.checkpoint_wait)
    options["auto_checkpoints"] = approve  # only a pipeline's `run --approve` answers them
    ws.store.update_plan(cur.row.id, options=options)
    ws.store.append(cur.row.id, None, "run.started", {"approve": approve})
    return spawn_conductor(ws)


def resume_run(ws: Workspace) -> int:
    cur = plans.current(ws)
    assert cur is not None
    ensure_trusted(ws, cur)
    ws.store.append(cur.row.id, None, "run.resumed", {})
    return spawn_conductor(ws)


def pause_run(ws: Workspace) -> None:
    """Ask the conductor to pause running tasks (Ctrl-C, SIGTERM, SIGHUP in a view)."""
    cur = plans.current(ws)
    assert cur is not None
    ws.store.append(cur.row.id, None, "run.pause_requested", {})


def _require_task(ws: Workspace, task_id: int) -> plans.Current:
    cur = plans.current(ws)
    assert cur is not None
    cur.doc.task(task_id)
    return cur


def stop_task(ws: Workspace, task_id: int) -> None:
    """Stop a running task: signal its agent's group; its work stays in its worktree."""
    cur = _require_task(ws, task_id)
    state = cur.view(task_id).state
    if state not in ("running", "checkpoint"):
        raise BatonError(f"task {task_id} is not running ({state})")
    ws.store.append(cur.row.id, task_id, "task.stop_requested", {})
    attempt = ws.store.latest_attempt(cur.row.id, task_id)
    if attempt and attempt.pgid and attempt.ended is None:
        procs.signal_group(attempt.pgid, signal.SIGTERM)
    if not conductor_pid(ws):
        ws.store.append(cur.row.id, task_id, "task.failed", {"reason": "stopped by you"})
        if attempt:
            ws.store.update_attempt(attempt.id, collected=True)


def retry_task(ws: Workspace, task_id: int, feedback: str | None = None) -> int:
    """Queue a failed, parked or paused task again (with feedback) and start the conductor."""
    cur = _require_task(ws, task_id)
    state = cur.view(task_id).state
    if state not in RESTARTABLE:
        raise BatonError(f"task {task_id} is {state}: only a failed, parked or paused task can be "
                         "retried")
    if cur.doc.task(task_id).mode == "build" and not cur.row.approved:
        raise BatonError("the plan is not approved (an edit voided it): `baton approve` first")
    ensure_trusted(ws, cur)
    ws.store.append(cur.row.id, task_id, "task.queued", {"feedback": feedback, "by": "retry"})
    return spawn_conductor(ws)


def mark_done(ws: Workspace, task_id: int) -> None:
    """The person did the task: a manual task, or a stopped build task they took over.

    Taking over: after `baton stop N`, the person finishes the work in the task's worktree;
    `baton done N` then has the conductor commit it and land it like an agent's.
    """
    cur = _require_task(ws, task_id)
    task = cur.doc.task(task_id)
    state = cur.view(task_id).state
    took_over = task.mode == "build" and state in RESTARTABLE
    if task.mode != "manual" and not took_over:
        raise BatonError(f"task {task_id} is a {task.mode} task ({state}): an agent's task is done "
                         f"when it reports; to finish it yourself, `baton stop {task_id}` first")
    if task.mode == "manual" and state not in ("draft", "queued"):
        raise BatonError(f"task {task_id} is already {state}")
    if took_over:
        ensure_trusted(ws, cur)
    ws.store.append(cur.row.id, task_id, "task.done",
                    {"summary": "taken over and finished by you" if took_over else "done by hand",
                     "by": "person", "took_over": took_over})
    if took_over or cur.row.options.get("run_requested"):
        spawn_conductor(ws)


def answer_checkpoint(ws: Workspace, task_id: int, yes: bool) -> None:
    cur = _require_task(ws, task_id)
    events = ws.store.events(cur.row.id, task_id=task_id)
    pending = None
    for event in events:
        if event.kind == "task.checkpoint":
            pending = event
        elif event.kind in ("task.continued", "task.checkpoint_answered"):
            pending = None
    if pending is None:
        raise BatonError(f"task {task_id} has no checkpoint waiting for an answer")
    ws.store.append(cur.row.id, task_id, "task.checkpoint_answered",
                    {"checkpoint": pending.id, "answer": "yes" if yes else "no", "by": "person"})
    attempt = ws.store.latest_attempt(cur.row.id, task_id)
    if attempt is None or attempt.ended is not None:
        spawn_conductor(ws)  # the agent ended its turn: a conductor resumes it with the answer


def start_task(ws: Workspace, task_id: int) -> int:
    """Start one task now: research may run before approval, build only after."""
    cur = _require_task(ws, task_id)
    task = cur.doc.task(task_id)
    if task.mode == "manual":
        raise BatonError(f"task {task_id} is manual: do it yourself, then `baton done {task_id}`")
    if task.mode == "build" and not cur.row.approved:
        raise BatonError("build tasks start only after approval (`a` / `baton approve`)")
    state = cur.view(task_id).state
    if state != "draft":
        raise BatonError(f"task {task_id} is already {state}")
    ensure_trusted(ws, cur)
    ws.store.append(cur.row.id, task_id, "task.queued", {"by": "start"})
    return spawn_conductor(ws)


def last_run_code(ws: Workspace) -> int | None:
    cur = plans.current(ws, required=False)
    if cur is None:
        return None
    for event in reversed(ws.store.events(cur.row.id)):
        if event.kind == "run.finished":
            return int(event.data.get("code", 1))
    return None
