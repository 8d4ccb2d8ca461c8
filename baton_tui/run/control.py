"""Run commands for both front ends: start, pause, stop, retry, done, checkpoint answers.

Each writes a request or a state event to the store and, where work must move,
makes sure a conductor runs. None of them waits for the run.
"""

from __future__ import annotations

import signal
import subprocess
import time
from contextlib import nullcontext
from typing import Any

from baton_tui import procs
from baton_tui.config import deadline_at
from baton_tui.core.errors import BatonError
from baton_tui.paths import own_module, private_file
from baton_tui.plan import current as plans
from baton_tui import layout
from baton_tui.run.early import Early
from baton_tui.run.lock import ConductorLock
from baton_tui.core import budget
from baton_tui.core.comments import as_feedback, open_comments
from baton_tui.core.rules import Action
from baton_tui.core.events import ACTIVE, EventKind, State
from baton_tui.core.words import Mode
from baton_tui.runners_config import LOCAL
from baton_tui.store.snapshot import conductor_info
from baton_tui.trust import ensure_trusted as ensure
from baton_tui.workspace import Workspace

K = EventKind


def conductor_pid(ws: Workspace) -> int | None:
    info = conductor_info(ws.store)
    return info["pid"] if info else None


def ensure_trusted(ws: Workspace, cur: plans.Current) -> None:
    """Refuse a run whose players or settings come from an untrusted baton.toml — or that
    could not start: a store or `$BATON_HOME` that cannot be written (every path that starts
    a conductor asks here before it writes anything)."""
    runners = sorted({f"runners.{t.runner}" for t in cur.doc.tasks if t.runner != LOCAL})
    ensure(ws, {t.player for t in cur.doc.tasks}, keys=("worktree.setup", "checks.run", *runners))
    ws.store.check_writable()
    layout.check_writable(ws.paths)


def spawn_conductor(ws: Workspace, early: Early | None = None, *, checked: bool = False) -> int:
    """Start the detached conductor (or find the live one); returns its pid.

    A new conductor reads baton.toml afresh and may run its commands, so it refuses an
    untrusted file here unless the caller `checked` it before recording what it asked for:
    a second check after the record could refuse a file changed in between and leave the
    request (a queued task) stranded. Either way nothing untrusted runs: the conductor asks
    again before each agent, set-up, runner and run-level check it starts.
    `early`, a conductor started ahead (`Early`), is cued instead of starting another."""
    pid = conductor_pid(ws)
    if pid:
        return pid
    cur = plans.current(ws, required=False)
    if cur is not None and not checked:
        ensure_trusted(ws, cur)
    proc = early.cue(ws.root) if early is not None else None
    if proc is None:
        with open(private_file(layout.conductor_log(ws.paths)), "ab") as log:
            proc = subprocess.Popen(own_module("baton_tui", "conductor", "--root", str(ws.root)),
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    cwd=str(ws.root))
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
        time.sleep(0.01)
    if proc.poll() is None and ConductorLock(ws.paths.state_dir).held_by_other():
        return proc.pid  # it waits for the lock of one stepping down, then runs
    raise BatonError(f"the conductor did not start; see {layout.conductor_log(ws.paths)}", code=1)


def stop_conditions(ws: Workspace, until_failures: int | None = None,
                    deadline: str | None = None) -> dict[str, Any]:
    """A run's stop conditions: the command's own, else `[autopilot]` in config."""
    settings = ws.config.autopilot
    until = until_failures if until_failures is not None else settings.stop_after_failures
    text = deadline if deadline is not None else settings.deadline
    try:
        at = deadline_at(text, time.time()) if text else None
    except ValueError as exc:
        raise BatonError(f"--deadline {text!r}: {exc}") from None
    return {"until_failures": until, "deadline": at}


def _with_budget(ws: Workspace, options: dict[str, Any]) -> dict[str, Any]:
    """The plan's budget: what `baton budget` set, else `[limits] budget_*`."""
    if "budget" not in options:
        options["budget"] = budget.from_config(ws.config.limits)
    return options


def start_run(ws: Workspace, approve: bool = False, until_failures: int | None = None,
              deadline: str | None = None, early: Early | None = None) -> int:
    """Approve if asked, check trust, mark the run requested, and start the conductor —
    `early`'s, when the caller started one ahead of its own work (`Early`)."""
    cur = plans.current(ws)
    assert cur is not None
    ensure_trusted(ws, cur)  # before approving: a refused `run --approve` changes nothing
    with nullcontext(early) if early is not None else Early() as early:
        if approve and not cur.row.approved:
            plans.approve(ws)
            cur = plans.current(ws)
            assert cur is not None
        cur.refuse(ws, Action.RUN)
        ensure_trusted(ws, cur)
        stops = stop_conditions(ws, until_failures, deadline)
        options = _with_budget(ws, dict(cur.row.options))
        options.update(run_requested=True, checkpoint_wait=ws.config.limits.checkpoint_wait)
        options["auto_checkpoints"] = approve  # only a pipeline's `run --approve` answers them
        ws.store.update_plan(cur.row.id, options=options)
        if approve:
            _answer_waiting(ws, cur)
        ws.store.append(cur.row.id, None, K.RUN_STARTED, {"approve": approve, **stops})
        return spawn_conductor(ws, early, checked=True)


def _answer_waiting(ws: Workspace, cur: plans.Current) -> None:
    """`run --approve` answers checkpoints yes as they come — and the ones an earlier run
    stopped at, still waiting (an agent's question, or a task held before landing)."""
    for task in cur.doc.tasks:
        view = cur.view(task.id)
        if view.answerable:
            ws.store.append(cur.row.id, task.id, K.TASK_CHECKPOINT_ANSWERED,
                            {"checkpoint": view.pending_checkpoint, "answer": "yes",
                             "by": "run --approve"})


def resume_run(ws: Workspace, early: Early | None = None) -> int:
    """Go on after a pause, a stop condition, a budget raised or a reset: stop conditions
    start afresh (a duration deadline counts from now)."""
    cur = plans.current(ws)
    assert cur is not None
    ensure_trusted(ws, cur)
    ws.store.update_plan(cur.row.id, options=_with_budget(ws, dict(cur.row.options)))
    ws.store.append(cur.row.id, None, K.RUN_RESUMED, stop_conditions(ws))
    return spawn_conductor(ws, early, checked=True)


def pause_run(ws: Workspace) -> None:
    """Ask the conductor to pause running tasks (Ctrl-C, SIGTERM, SIGHUP in a view)."""
    cur = plans.current(ws)
    assert cur is not None
    ws.store.append(cur.row.id, None, K.RUN_PAUSE_REQUESTED, {})


def _allowed(ws: Workspace, action: Action, task_id: int) -> plans.Current:
    """The current plan, once the rule book allows `action` on `task_id`."""
    cur = plans.current(ws)
    assert cur is not None
    cur.refuse(ws, action, task_id)
    return cur


def stop_task(ws: Workspace, task_id: int) -> None:
    """Stop a running task: signal its agent's group; its work stays in its worktree."""
    cur = _allowed(ws, Action.STOP_TASK, task_id)
    ws.store.append(cur.row.id, task_id, K.TASK_STOP_REQUESTED, {})
    attempt = ws.store.latest_attempt(cur.row.id, task_id)
    if attempt and attempt.pgid and attempt.ended is None:
        procs.signal_group(attempt.pgid, signal.SIGTERM)
    if not conductor_pid(ws):
        ws.store.append(cur.row.id, task_id, K.TASK_FAILED, {"reason": "stopped by you"})
        if attempt:
            ws.store.update_attempt(attempt.id, collected=True)


def retry_task(ws: Workspace, task_id: int, feedback: str | None = None) -> int | None:
    """Queue a failed, parked or paused task again (with feedback) and start the conductor;
    a landed task's open review comments go with it (a follow-up that lands on top of it).
    Under a plan whose approval an edit voided, the task (and its feedback) waits for the
    approval; None is returned then."""
    cur = _allowed(ws, Action.RETRY_TASK, task_id)
    ensure_trusted(ws, cur)  # once, before the record: a refusal later would strand the task
    sent = open_comments(cur.view(task_id).comments)  # closed when this retry lands
    if sent:
        feedback = "\n\n".join(x for x in (as_feedback(sent), feedback) if x)
    ws.store.append(cur.row.id, task_id, K.TASK_QUEUED, {
        "feedback": feedback, "by": "retry", "comments": [c["id"] for c in sent]})
    if cur.doc.task(task_id).mode == Mode.BUILD and not cur.row.approved:
        return None
    return spawn_conductor(ws, checked=True)


def tell(ws: Workspace, task_id: int, text: str) -> str:
    """Record a message for the task's agent (`baton tell`): a running agent reads it at its
    next turn through its inbox (`baton inbox`, the `baton_inbox` tool); any message not read
    by then goes into its next prompt (a resume, a retry). Never stops it. Returns how it
    will reach the agent."""
    cur = plans.current(ws)
    assert cur is not None
    task = cur.doc.task(task_id)
    if not text.strip():
        raise BatonError("the message is empty")
    if task.mode == Mode.MANUAL or not ws.catalog.runs_agent(task.player) \
            or ws.catalog.check_is_task(task.player):
        raise BatonError(f"task {task_id} runs no agent to tell")
    state = cur.view(task_id).state
    if state in (State.DONE, State.LANDED, State.MERGED, State.DISCARDED):
        raise BatonError(f"task {task_id} is {state}: no agent works on it now — comment on "
                         f"its lines (`baton comment {task_id} FILE:LINE TEXT`) or retry it "
                         "with `--feedback`")
    number = 1 + max((int(m.get("id", 0)) for m in cur.view(task_id).messages), default=0)
    ws.store.append(cur.row.id, task_id, K.TASK_TOLD, {"id": number, "text": text.strip()})
    if state in ACTIVE:
        return "its agent reads it at its next turn (or, without an inbox, when it resumes)"
    return "it is delivered when the task next starts or resumes"


def take_task(ws: Workspace, task_id: int) -> dict[str, Any]:
    """Take a task over: stop its agent with its session saved (the task pauses, "taken over
    by you"). Returns what the person needs: its worktree, player and session."""
    cur = _allowed(ws, Action.TAKE, task_id)
    view = cur.view(task_id)
    attempt = ws.store.latest_attempt(cur.row.id, task_id)
    if view.state in ACTIVE:
        ws.store.append(cur.row.id, task_id, K.TASK_STOP_REQUESTED, {"take": True})
        if attempt and attempt.pgid and attempt.ended is None:
            procs.signal_group(attempt.pgid, signal.SIGTERM)
        if not conductor_pid(ws):
            ws.store.append(cur.row.id, task_id, K.TASK_PAUSED, {"reason": "taken over by you",
                                                                 "by": "person"})
            if attempt:
                ws.store.update_attempt(attempt.id, collected=True)
    task = cur.doc.task(task_id)
    path = view.workdir or str(layout.worktree_path(ws.paths, cur.row.slug, task_id, task.title))
    return {"worktree": path, "player": task.player,
            "session": attempt.session_id if attempt else None, "was": str(view.state)}


def wait_stopped(ws: Workspace, task_id: int, timeout: float = 30.0) -> tuple[str, str | None]:
    """Wait until the task's agent has stopped (its state leaves running); returns the state
    and the session id its last attempt saved."""
    deadline = time.monotonic() + timeout
    while True:
        cur = plans.current(ws)
        assert cur is not None
        state = cur.view(task_id).state
        if state not in ACTIVE or time.monotonic() > deadline:
            attempt = ws.store.latest_attempt(cur.row.id, task_id)
            return str(state), attempt.session_id if attempt else None
        time.sleep(0.2)


def set_budget(ws: Workspace, tokens: int | None = None, cost: float | None = None,
               seconds: float | None = None) -> dict[str, Any]:
    """Change the plan's budget (unset limits stay); returns the new budget."""
    cur = plans.current(ws)
    assert cur is not None
    cur.refuse(ws, Action.BUDGET)
    options = _with_budget(ws, dict(cur.row.options))
    changed = {k: v for k, v in (("tokens", tokens), ("cost", cost), ("time", seconds))
               if v is not None}
    options["budget"] = {**options["budget"], **changed}
    ws.store.update_plan(cur.row.id, options=options)
    ws.store.append(cur.row.id, None, K.PLAN_BUDGET, {k: options["budget"].get(k)
                                                       for k in budget.KEYS})
    return options["budget"]


def mark_done(ws: Workspace, task_id: int) -> None:
    """The person did the task: a manual task, or a stopped build task they took over.

    Taking over: after `baton stop N`, the person finishes the work in the task's worktree;
    `baton done N` then has the conductor commit it and land it like an agent's.
    """
    cur = _allowed(ws, Action.DONE, task_id)
    took_over = cur.doc.task(task_id).mode == Mode.BUILD
    starts = took_over or bool(cur.row.options.get("run_requested"))
    if starts:  # a manual task's `done` starts the conductor too: trust first
        ensure_trusted(ws, cur)
    ws.store.append(cur.row.id, task_id, K.TASK_DONE,
                    {"summary": "taken over and finished by you" if took_over else "done by hand",
                     "by": "person", "took_over": took_over})
    if starts:
        spawn_conductor(ws, checked=True)


def answer_checkpoint(ws: Workspace, task_id: int, yes: bool) -> None:
    """Answer the task's open checkpoint; a conductor resumes an agent that ended its turn."""
    cur = _allowed(ws, Action.ANSWER_CHECKPOINT, task_id)
    pending = cur.view(task_id).pending_checkpoint
    attempt = ws.store.latest_attempt(cur.row.id, task_id)
    starts = attempt is None or attempt.ended is not None
    if starts:  # before the answer is recorded: a refusal changes nothing
        ensure_trusted(ws, cur)
    ws.store.append(cur.row.id, task_id, K.TASK_CHECKPOINT_ANSWERED,
                    {"checkpoint": pending, "answer": "yes" if yes else "no", "by": "person"})
    if starts:
        spawn_conductor(ws, checked=True)


def start_task(ws: Workspace, task_id: int) -> int:
    """Start one task now: research may run before approval, build only after."""
    cur = _allowed(ws, Action.START_TASK, task_id)
    ensure_trusted(ws, cur)
    ws.store.append(cur.row.id, task_id, K.TASK_QUEUED, {"by": "start"})
    return spawn_conductor(ws, checked=True)


def last_run_code(ws: Workspace) -> int | None:
    cur = plans.current(ws, required=False)
    return cur.folder.plan.last_code if cur is not None else None
