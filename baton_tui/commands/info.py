"""Read-only commands: status, log, logs, players, doctor — and trust.

`status` and `log` use the standard library only: they must answer at once from
a second terminal while a run is live.
"""

from __future__ import annotations

import json
import os
import sys
import time
from argparse import Namespace

from baton_tui.errors import BatonError
from baton_tui.paths import find_repo
from baton_tui.store.db import Store


def _open_store(create: bool = False) -> Store | None:
    paths = find_repo()
    if not paths.store_path.exists() and not create:
        return None
    try:
        store = Store(paths.store_path, create=create)
        # Opening reads nothing: touch the schema now, so a damaged file is one clear line.
        store.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return store
    except Exception as exc:  # sqlite3.DatabaseError and friends
        raise BatonError(f"{paths.store_path}: cannot read Baton's store: {exc}") from None


def _fmt_secs(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def describe_state(task: dict) -> str:
    """A task's state in plain words: `blocked by #3`, `paused until 15:00`, `failed: why`."""
    state = task["state"]
    if task.get("blocked_by"):
        return f"blocked by #{task['blocked_by']}"
    if state == "paused" and task.get("until"):
        return "paused until " + time.strftime("%H:%M", time.localtime(task["until"]))
    if state == "checkpoint":
        return "checkpoint: waiting for you"
    if state in ("failed", "parked") and task.get("reason"):
        return f"{state}: {task['reason']}"
    return state


def render_status(status: dict) -> str:
    plan = status["plan"]
    if plan is None:
        return "no plan yet — `baton plan --goal \"…\"` or `baton plan --from FILE`"
    conductor = status["conductor"]
    lines = [f"plan {plan['slug']} · {plan['state']} · {plan['autonomy']} · "
             f"{'approved' if plan['approved'] else 'not approved'}",
             f"goal: {plan['goal']}",
             f"conductor: pid {conductor['pid']}" if conductor else "conductor: not running"]
    width = max((len(t["title"]) for t in status["tasks"]), default=10)
    width = min(width, 40)
    for task in status["tasks"]:
        who = " · ".join(x for x in (task["player"], task.get("model")) if x)
        extra = f"  {_fmt_secs(task['wall'])}" if task["wall"] else ""
        if task.get("progress") and task["state"] == "running":
            extra += f"  — {task['progress'][:60]}"
        lines.append(f"  #{task['id']:<3}{task['title'][:width]:<{width}}  "
                     f"{describe_state(task):<22} {task['mode']:<8} {who}{extra}")
        for flag in task.get("flags", [])[-2:]:
            lines.append(f"       ⚑ {flag}")
    summary = status.get("summary")
    if summary and summary["wall"]:
        speed = f" · speedup {summary['speedup']}×" if summary["speedup"] else ""
        money = f" · ${summary['cost']:.4f}" if summary["cost"] else ""
        tokens = f" · {summary['tokens']} tokens" if summary["tokens"] else ""
        lines.append(f"run: wall {_fmt_secs(summary['wall'])} · task time "
                     f"{_fmt_secs(summary['task_time'])}{speed}{tokens}{money}")
    return "\n".join(lines)


def cmd_status(args: Namespace) -> int:
    from baton_tui.store.status import build_status

    store = _open_store()
    status = build_status(store) if store else {"plan": None, "conductor": None, "tasks": [],
                                                "summary": None}
    if args.json:
        print(json.dumps(status, indent=2))
    else:
        print(render_status(status))
    return 0


def cmd_log(args: Namespace) -> int:
    store = _open_store()
    if store is None:
        return 0
    for event in store.events():
        if args.json:
            print(json.dumps(event.as_json()))
        else:
            stamp = time.strftime("%H:%M:%S", time.localtime(event.ts))
            task = f" #{event.task_id}" if event.task_id else ""
            detail = " ".join(f"{k}={v}" for k, v in event.data.items()
                              if not isinstance(v, (dict, list)))
            print(f"{stamp} {event.kind}{task} {detail}".rstrip())
    return 0


def cmd_logs(args: Namespace) -> int:
    store = _open_store()
    plan = store.current_plan() if store else None
    if store is None or plan is None:
        raise BatonError("no plan yet")
    attempts = store.attempts(plan.id, args.id)
    if not attempts:
        raise BatonError(f"task {args.id} has not run yet")
    for attempt in attempts[:-1]:
        _print_file(attempt.log_path, f"── attempt {attempt.id} ──")
    last = attempts[-1]
    offset = _print_file(last.log_path, f"── attempt {last.id} ──" if len(attempts) > 1 else None)
    if not args.follow:
        return 0
    from baton_tui import procs

    while True:
        offset = _print_file(last.log_path, None, offset)
        row = store.attempt(last.id)
        newer = store.latest_attempt(plan.id, args.id)
        if newer and newer.id != last.id:
            last, offset = newer, 0
            print(f"── attempt {last.id} ──")
            continue
        if row and row.ended and not procs.alive(row.shim_pid):
            _print_file(last.log_path, None, offset)
            return 0
        time.sleep(0.3)


def _print_file(path: str | None, header: str | None, offset: int = 0) -> int:
    if header:
        print(header)
    if not path or not os.path.exists(path):
        return offset
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read()
    sys.stdout.write(data.decode("utf-8", "replace"))
    sys.stdout.flush()
    return offset + len(data)


def cmd_trust(args: Namespace) -> int:
    from baton_tui.config import file_hash
    from baton_tui.workspace import Workspace

    ws = Workspace()
    digest = file_hash(ws.paths.project_config)
    if digest is None:
        raise BatonError(f"{ws.paths.project_config}: no baton.toml to trust here")
    ws.loaded  # a broken file is refused before it is trusted
    ws.store.set_trust(str(ws.paths.project_config), digest)
    ws.store.append(None, None, "trust.recorded", {"sha256": digest})
    commands = ws.loaded.project_commands()
    print(f"trusted {ws.paths.project_config} (sha256 {digest[:12]}…)"
          + (f": its commands may run ({', '.join(commands)})" if commands else ""))
    return 0


def cmd_players(args: Namespace) -> int:
    from baton_tui.workspace import Workspace

    ws = Workspace()
    found = [p.detect() for p in ws.catalog.players.values()]
    if args.json:
        print(json.dumps([d.as_json() for d in found], indent=2))
        return 0
    for d in found:
        mark = "ready" if d.ready else "—"
        version = f" {d.version}" if d.version else ""
        print(f"  {d.name:<14}{mark:<7}{version}{'' if d.ready else '  ' + d.reason}")
    return 0


def cmd_doctor(args: Namespace) -> int:
    from baton_tui.gitops import git
    from baton_tui.workspace import Workspace

    ws = Workspace()
    ok = True
    version = git.git_version()
    if version is None:
        print("✗ git not found — tasks run in the folder one at a time; install git ≥ 2.38")
    elif not git.supports_worktrees():
        print(f"✗ git {'.'.join(map(str, version))} is older than 2.38 — folder mode; upgrade git")
    else:
        print(f"✓ git {'.'.join(map(str, version))}")
    if version is not None:
        from baton_tui.repo_check import repository_lines

        print("\n".join(repository_lines(ws.root)))
    try:
        ws.loaded
        print("✓ configuration reads cleanly")
        commands = ws.loaded.project_commands()
        trusted = ws.store.trusted_hash(str(ws.paths.project_config))
        if commands and trusted != ws.loaded.project_hash():
            print(f"✗ baton.toml has commands ({', '.join(commands)}) and is not trusted — "
                  f"review it, then run `baton trust`")
    except BatonError as exc:
        ok = False
        print(f"✗ {exc.message}")
        return 2
    for player in ws.catalog.players.values():
        d = player.detect()
        if d.ready:
            print(f"✓ {d.name}{' ' + d.version if d.version else ''}")
        else:
            print(f"· {d.name}: {d.reason}" + (f" — {d.fix}" if d.fix else ""))
    return 0 if ok else 1
