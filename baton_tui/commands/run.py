"""`baton run`, `resume`, `retry`, `stop`, `done`, `checkpoint-answer`.

A foreground `run` is a view: it follows the conductor's events, prints them,
and returns the run's exit code. Ctrl-C, SIGTERM or SIGHUP ask the conductor to
pause the running tasks; the view then exits 130 with the state saved.
"""

from __future__ import annotations

import signal
import sys
import time
from argparse import Namespace

from typing import Any

from baton_tui import api
from baton_tui.api import EventKind

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
    if kind == K.TASK_PROGRESS:
        return f"{who}: {data.get('message', '')}"
    if kind == K.TASK_FLAGGED:
        return f"{who}: flagged — {data.get('message', '')}"
    if kind == K.CONDUCTOR_CRASHED:
        return (f"the conductor stopped unexpectedly ({data.get('error')}); running agents go on "
                "— `baton resume` reattaches to them")
    if kind == K.RUN_CHECK:
        return f"run check: exit {data.get('exit')}"
    return None


def follow(ws: Any, pid: int | None, since: int) -> int:
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
        if not alive:
            break
        time.sleep(0.2)
    print()
    print(api.status_text(api.snapshot(ws.store).as_json()))
    if interrupted:
        return 130
    if code is None:
        code = api.last_run_code(ws)
    return 1 if code is None else code


def cmd_run(args: Namespace) -> int:
    ws = api.open_workspace()
    since = api.last_event_id(ws.store)
    if args.approve:
        cur = api.current_plan(ws)
        api.ensure_trusted(ws)  # a refused `run --approve` must change nothing
        if not cur.row.approved:
            for warning in api.approve(ws)[1]:
                print(f"baton: warning: {warning}", file=sys.stderr)
    pid = api.start_run(ws, approve=args.approve)
    if args.detach:
        print(f"conductor running (pid {pid}) — follow with `baton status` or `baton run`")
        return 0
    return follow(ws, pid, since)


def cmd_resume(args: Namespace) -> int:
    ws = api.open_workspace()
    since = api.last_event_id(ws.store)
    pid = api.resume_run(ws)
    if args.detach:
        print(f"conductor running (pid {pid})")
        return 0
    return follow(ws, pid, since)


def cmd_retry(args: Namespace) -> int:
    api.retry_task(api.open_workspace(), args.id, args.feedback)
    print(f"task {args.id} queued again — follow with `baton status` or `baton run`")
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
