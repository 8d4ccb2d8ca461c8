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

from baton_tui import procs
from baton_tui.run import control
from baton_tui.store.events import Event
from baton_tui.workspace import Workspace


def _line(event: Event, titles: dict[int, str]) -> str | None:
    who = f"#{event.task_id} {titles.get(event.task_id or 0, '')}".rstrip()
    data = event.data
    kind = event.kind
    if kind in ("task.started", "task.resumed"):
        verb = "started" if kind == "task.started" else "resumed"
        return f"{who}: {verb} on {data.get('player')}"
    if kind == "task.done":
        return f"{who}: done — {data.get('summary', '')}".rstrip(" —")
    if kind == "task.landed":
        return f"{who}: landed ({str(data.get('commit', ''))[:10]})"
    if kind == "task.failed":
        return f"{who}: FAILED — {data.get('reason', '')}"
    if kind == "task.parked":
        return f"{who}: parked — {data.get('reason', '')}"
    if kind == "task.paused":
        until = data.get("until")
        when = f" until {time.strftime('%H:%M', time.localtime(until))}" if until else ""
        return f"{who}: paused{when} ({data.get('reason', '')})"
    if kind == "task.checkpoint":
        return f"{who}: checkpoint — {data.get('what', '')} (answer: baton checkpoint-answer " \
               f"{event.task_id} yes|no)"
    if kind == "task.progress":
        return f"{who}: {data.get('message', '')}"
    if kind == "task.flagged":
        return f"{who}: flagged — {data.get('message', '')}"
    if kind == "conductor.crashed":
        return (f"the conductor stopped unexpectedly ({data.get('error')}); running agents go on "
                "— `baton resume` reattaches to them")
    if kind == "run.check":
        return f"run check: exit {data.get('exit')}"
    return None


def follow(ws: Workspace, pid: int | None, since: int) -> int:
    """Print the run's events until its conductor exits; return the run's exit code."""
    from baton_tui.commands.info import render_status
    from baton_tui.plan.current import current
    from baton_tui.store.status import build_status

    interrupted = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = True
            print("\nbaton: pausing the running tasks (state is saved; `baton resume` continues)",
                  file=sys.stderr)
            control.pause_run(ws)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    cur = current(ws)
    assert cur is not None
    titles = {t.id: t.title for t in cur.doc.tasks}
    token = procs.start_token(pid) if pid else None
    last = since
    code: int | None = None
    while True:
        alive = bool(pid and procs.alive(pid, token))
        for event in ws.store.events(cur.row.id, after=last):
            last = event.id
            if event.kind == "run.finished":
                code = int(event.data.get("code", 1))
            text = _line(event, titles)
            if text:
                print(text, flush=True)
        if not alive:
            break
        time.sleep(0.2)
    print()
    print(render_status(build_status(ws.store)))
    if interrupted:
        return 130
    if code is None:
        code = control.last_run_code(ws)
    return 1 if code is None else code


def cmd_run(args: Namespace) -> int:
    ws = Workspace()
    since = ws.store.last_event_id()
    if args.approve:
        from baton_tui.plan.current import approve, current

        cur = current(ws)
        if cur is not None:
            control.ensure_trusted(ws, cur)  # a refused `run --approve` must change nothing
        if cur is not None and not cur.row.approved:
            for warning in approve(ws)[1]:
                print(f"baton: warning: {warning}", file=sys.stderr)
    pid = control.start_run(ws, approve=args.approve)
    if args.detach:
        print(f"conductor running (pid {pid}) — follow with `baton status` or `baton run`")
        return 0
    return follow(ws, pid, since)


def cmd_resume(args: Namespace) -> int:
    ws = Workspace()
    since = ws.store.last_event_id()
    pid = control.resume_run(ws)
    if args.detach:
        print(f"conductor running (pid {pid})")
        return 0
    return follow(ws, pid, since)


def cmd_retry(args: Namespace) -> int:
    ws = Workspace()
    control.retry_task(ws, args.id, args.feedback)
    print(f"task {args.id} queued again — follow with `baton status` or `baton run`")
    return 0


def cmd_stop(args: Namespace) -> int:
    ws = Workspace()
    control.stop_task(ws, args.id)
    print(f"task {args.id}: stopping (its worktree and branch are kept; `baton retry "
          f"{args.id}` runs it again)")
    return 0


def cmd_done(args: Namespace) -> int:
    ws = Workspace()
    control.mark_done(ws, args.id)
    print(f"task {args.id} marked done")
    return 0


def cmd_checkpoint_answer(args: Namespace) -> int:
    ws = Workspace()
    control.answer_checkpoint(ws, args.id, args.answer == "yes")
    print(f"task {args.id}: checkpoint answered {args.answer}")
    return 0
