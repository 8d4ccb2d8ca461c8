"""`baton run`, `resume`, `retry`, `stop`, `done`, `checkpoint-answer`.

A foreground `run` is a view: it follows the conductor's events, prints them,
and returns the run's exit code. Ctrl-C, SIGTERM or SIGHUP ask the conductor to
pause the running tasks; the view then exits 130 with the state saved.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from argparse import Namespace

from typing import Any

from baton_tui import api
from baton_tui.api import EventKind
from baton_tui.commands.kept_demo import on_the_demos_model

K = EventKind


def _line(event: Any, titles: dict[int, str]) -> str | None:
    who = f"#{event.task_id} {titles.get(event.task_id or 0, '')}".rstrip()
    data = event.data
    kind = event.kind
    if kind in (K.TASK_STARTED, K.TASK_RESUMED):
        verb = "started" if kind == K.TASK_STARTED else "resumed"
        return f"{who}: {verb} on {data.get('player')}"
    if kind == K.TASK_DONE:
        return f"{who}: done — {data.get('summary', '')}".rstrip(" —")
    if kind == K.TASK_LANDED:
        return f"{who}: landed ({str(data.get('commit', ''))[:10]})"
    if kind == K.TASK_FAILED:
        return f"{who}: FAILED — {data.get('reason', '')}"
    if kind == K.TASK_PARKED:
        return f"{who}: parked — {data.get('reason', '')}"
    if kind == K.TASK_PAUSED:
        until = data.get("until")
        when = f" until {time.strftime('%H:%M', time.localtime(until))}" if until else ""
        return f"{who}: paused{when} ({data.get('reason', '')})"
    if kind == K.TASK_CHECKPOINT:
        return f"{who}: checkpoint — {data.get('what', '')} (answer: baton checkpoint-answer " \
               f"{event.task_id} yes|no)"
    if kind == K.TASK_QUEUED and data.get("deferred"):  # its runner's cluster: unreachable
        when = time.strftime("%H:%M:%S", time.localtime(float(data.get("not_before") or 0)))
        return (f"{who}: waiting — {data.get('reason', '')} (tried again at {when} while the "
                "run goes on; `baton resume` tries it at once)")
    if kind == K.TASK_PROGRESS:
        return f"{who}: {data.get('message', '')}"
    if kind == K.TASK_FLAGGED:
        return f"{who}: flagged — {data.get('message', '')}"
    if kind == K.CONDUCTOR_CRASHED:
        return (f"the conductor stopped unexpectedly ({data.get('error')}); running agents go on "
                "— `baton resume` reattaches to them")
    if kind == K.RUN_STOPPED:
        return (f"run stopped by {data.get('by')} ({data.get('detail', '')}): nothing new starts; "
                "running tasks finish — `baton resume` continues")
    if kind == K.TASK_REASSIGNED:
        return f"{who}: moved from {data.get('from')} to {data.get('to')}"
    if kind == K.TASK_APPROVAL_VOIDED:
        return f"{who}: edited mid-run — it waits for your approval (`baton approve`)"
    if kind == K.RUN_CHECK:
        return f"run check: exit {data.get('exit')}"
    return None


def follow(ws: api.Workspace, pid: int | None, since: int) -> int:
    """Print the run's events until its conductor exits; return the run's exit code."""
    interrupted = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = True
            print("\nbaton: pausing the running tasks (state is saved; `baton resume` continues)",
                  file=sys.stderr)
            api.pause_run(ws)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    cur = api.current_plan(ws)
    assert cur is not None  # required: no plan is refused before this
    titles = {t.id: t.title for t in cur.doc.tasks}
    token = api.process_token(pid) if pid else None
    last = since
    code: int | None = None
    while True:
        alive = bool(pid and api.conductor_alive(pid, token))
        for event in api.events(ws.store, cur.row.id, after=last):
            last = event.id
            if event.kind == K.RUN_FINISHED:
                code = int(event.data.get("code", 1))
            text = _line(event, titles)
            if text:
                print(text, flush=True)
        if not alive or pid is None:
            break
        api.wait_conductor(pid, 0.2)  # its events as they come; its end at once
    print()
    print(api.status_text(api.snapshot(ws.store).as_json()))
    if interrupted:
        return 130
    if code is None:
        code = api.last_run_code(ws)
    return 1 if code is None else code


def cmd_run(args: Namespace) -> int:
    with on_the_demos_model(args.detach):
        return _run(args)


def _run(args: Namespace) -> int:
    with api.conductor_ahead() as early:  # it starts up while we open and approve
        ws = api.open_workspace()
        since = api.last_event_id(ws.store)
        if args.approve:
            cur = api.current_plan(ws)
            assert cur is not None  # required: no plan is refused
            api.ensure_trusted(ws)  # a refused `run --approve` must change nothing
            if not cur.row.approved:
                for warning in api.approve(ws)[1]:
                    print(f"baton: warning: {warning}", file=sys.stderr)
        pid = api.start_run(ws, approve=args.approve, until_failures=args.until_failures,
                            deadline=args.deadline, early=early)
    if args.detach:
        print(f"conductor running (pid {pid}) — follow with `baton status` or `baton run`")
        return 0
    return follow(ws, pid, since)


def cmd_resume(args: Namespace) -> int:
    with on_the_demos_model(args.detach):
        with api.conductor_ahead() as early:  # it starts up while we open the repository
            ws = api.open_workspace()
            since = api.last_event_id(ws.store)
            pid = api.resume_run(ws, early)
        if args.detach:
            print(f"conductor running (pid {pid})")
            return 0
        return follow(ws, pid, since)


def cmd_tell(args: Namespace) -> int:
    ws = api.open_workspace()
    how = api.tell(ws, args.id, args.text)
    print(f"told task {args.id} — {how}")
    return 0


def cmd_retry(args: Namespace) -> int:
    with on_the_demos_model() as demo:
        ws = api.open_workspace()
        since = api.last_event_id(ws.store)
        pid = api.retry_task(ws, args.id, args.feedback)
        if pid is None:
            print(f"task {args.id} queued again{' with your feedback' if args.feedback else ''} "
                  "— it starts once you approve the plan (`baton approve`)")
        elif demo:  # the demo's model lives as long as this command: follow the run here
            print(f"task {args.id} queued again — following the run (Ctrl-C pauses it)")
            return follow(ws, pid, since)
        else:
            print(f"task {args.id} queued again — follow with `baton status` or `baton run`")
        return 0


def cmd_take(args: Namespace) -> int:
    """Take a task over: its agent stops (session saved); in a terminal, the agent's own
    session opens resumed in the worktree (a shell for players without one); afterwards
    Baton asks whether the task is done and, if so, commits and lands it."""
    ws = api.open_workspace()
    in_terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if in_terminal:  # an untrusted interactive command is refused before anything changes
        api.interactive_argv(ws, api.current_doc(ws).task(args.id).player, None)
    info = api.take_task(ws, args.id)
    print(f"task {args.id}: taken over (its agent stops; its session is saved)")
    print(f"worktree: {info['worktree']}")
    if not in_terminal:
        print(f"finish the work there, then `baton done {args.id}` (Baton commits and lands it) "
              f"or `baton retry {args.id}`")
        return 0
    _state, session = api.wait_stopped(ws, args.id)
    argv = api.interactive_argv(ws, info["player"], session or info["session"])
    if argv is None:
        argv = [os.environ.get("SHELL") or "/bin/sh"]
        print(f"{info['player']} has no interactive session to resume: a shell in the worktree "
              "(exit it when you are done)")
    else:
        print(f"opening {info['player']}'s session in the worktree (leave it when you are done)")
    sys.stdout.flush()
    try:
        subprocess.run(argv, cwd=info["worktree"])
    except OSError as exc:
        print(f"baton: could not start {argv[0]}: {exc.strerror}", file=sys.stderr)
    answer = input(f"Is task {args.id} done? Baton commits and lands it [y/N] ").strip().lower()
    if answer in ("y", "yes"):
        api.mark_done(ws, args.id)
        print(f"task {args.id} done — it lands now; follow with `baton status`")
    else:
        print(f"task {args.id} stays taken over: `baton done {args.id}` when it is finished, or "
              f"`baton retry {args.id}` to give it back to its agent")
    return 0


def cmd_budget(args: Namespace) -> int:
    ws = api.open_workspace()
    seconds = api.parse_duration(args.time) if args.time else None
    if args.tokens is not None or args.cost is not None or seconds is not None:
        api.set_budget(ws, args.tokens, args.cost, seconds)
    budget = api.snapshot(ws.store).budget
    if budget is None:
        return 0
    limits, used = budget["limits"], budget["used"]
    for key, shown in (("tokens", str), ("cost", lambda v: f"${v:.2f}"),
                       ("time", lambda v: f"{v:.0f}s")):
        limit = "none" if limits[key] is None else shown(limits[key])
        spent = "unknown" if used[key] is None else shown(used[key])
        print(f"{key:<7} {spent} used of {limit}")
    if budget.get("hard"):
        print("hard: at the budget, running tasks pause in their saved sessions")
    return 0


def cmd_stop(args: Namespace) -> int:
    api.stop_task(api.open_workspace(), args.id)
    print(f"task {args.id}: stopping (its worktree and branch are kept; `baton retry "
          f"{args.id}` runs it again)")
    return 0


def cmd_done(args: Namespace) -> int:
    api.mark_done(api.open_workspace(), args.id)
    print(f"task {args.id} marked done")
    return 0


def cmd_checkpoint_answer(args: Namespace) -> int:
    api.answer_checkpoint(api.open_workspace(), args.id, args.answer == "yes")
    print(f"task {args.id}: checkpoint answered {args.answer}")
    return 0
