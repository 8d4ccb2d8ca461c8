"""Read-only commands: status, log, logs, players, doctor — and trust.

`status` and `log` use the standard library only: they must answer at once from
a second terminal while a run is live. Whatever an agent wrote (output, titles,
summaries) is printed with secrets redacted and control characters escaped
(`api.terminal_text`), so it cannot drive the terminal.
"""

from __future__ import annotations

import sys
import time

from baton_tui import api
from baton_tui.core.errors import BatonError
from baton_tui.core.jsontext import dumps

TYPE_CHECKING = False  # argparse stays unimported on `baton status` (see `cli._quick`)
if TYPE_CHECKING:
    from argparse import Namespace


def cmd_status(args: Namespace) -> int:
    import gc  # lazy: `baton log` never needs it

    # A one-shot reader: everything it allocates lives until it prints and exits, so the
    # cyclic collector would only walk it again and again (a sixth of a 10,000-task status).
    gc.disable()
    store = api.open_store()
    if args.json:
        print(api.snapshot_json(store) if store else api.status_json(api.snapshot_empty()))
        return 0
    snap = api.snapshot(store) if store else api.snapshot_empty()
    print(api.terminal_text(api.status_text(snap.as_json())))
    return 0


def cmd_log(args: Namespace) -> int:
    store = api.open_store()
    if store is None:
        return 0
    for event in api.events(store):
        if args.json:
            print(dumps(event.as_json()))  # JSON lines: never NaN, whatever the store holds
        else:
            stamp = time.strftime("%H:%M:%S", time.localtime(event.ts))
            task = f" #{event.task_id}" if event.task_id else ""
            detail = " ".join(f"{k}={v}" for k, v in event.data.items()
                              if not isinstance(v, (dict, list)))
            print(api.terminal_text(f"{stamp} {event.kind}{task} {detail}".rstrip()))
    return 0


def cmd_logs(args: Namespace) -> int:
    store = api.open_store()
    plan = store.current_plan() if store else None
    if store is None or plan is None:
        raise BatonError("no plan yet")
    attempts = api.attempts(store, plan.id, args.id)
    if not attempts and args.follow:
        attempts = _wait_for_start(store, plan, args.id)
    if not attempts:
        raise BatonError(f"task {args.id} has not run yet")
    for attempt in attempts[:-1]:
        _print_file(attempt.log_path, f"── attempt {attempt.id} ──", final=True,
                    prints=_prints(attempt))
    last = attempts[-1]
    offset = _print_file(last.log_path, f"── attempt {last.id} ──" if len(attempts) > 1 else None,
                         final=not args.follow, prints=_prints(last))
    if not args.follow:
        return 0
    while True:
        # Read afresh: an attempt is recorded a moment before its log's path is.
        last = api.attempt(store, last.id) or last
        offset = _print_file(last.log_path, None, offset, prints=_prints(last))
        newer = api.attempts(store, plan.id, args.id)[-1]
        if newer.id != last.id:
            _print_file(last.log_path, None, offset, final=True, prints=_prints(last))
            last, offset = newer, 0
            print(f"── attempt {last.id} ──")
            continue
        if last.ended and not (last.shim_pid and api.conductor_alive(last.shim_pid, None)):
            _print_file(last.log_path, None, offset, final=True, prints=_prints(last))
            return 0
        time.sleep(0.3)


def _wait_for_start(store, plan, task_id: int) -> list:
    """`logs N -f` on a task of the live run that has not started yet waits for its first
    attempt, as `tail -f` waits for a file; [] when the run ends first (or has no task N)."""
    if not any(t.get("id") == task_id for t in plan.doc.get("tasks", ())):
        return []
    said = False
    while (live := api.live_conductor(store)) is not None and live["plan"] == plan.id:
        attempts = api.attempts(store, plan.id, task_id)
        if attempts:
            return attempts
        if not said:
            print(f"baton: task {task_id} has not started yet: waiting for it", file=sys.stderr)
            said = True
        time.sleep(0.3)
    return api.attempts(store, plan.id, task_id)


def _prints(attempt) -> dict | None:
    """The fingerprints of the secrets the attempt's agent had (its environment's)."""
    return (attempt.spec or {}).get("secret_prints")


def _print_file(path: str | None, header: str | None, offset: int = 0,
                final: bool = False, prints: dict | None = None) -> int:
    """Print a log from `offset` (bytes the agent printed), a chunk at a time: whole lines
    only unless `final` (a secret split across two reads would escape redaction), and a line
    where the log's middle was cut. Returns the offset printed up to."""
    if header:
        print(header)
    chunk = 1 << 20
    while path:
        data, after, cut = api.read_log(path, offset, chunk)
        if cut:
            print(f"[baton: {cut} bytes of output cut here]")
        offset = after - len(data)
        if not final and len(data) < chunk:
            data = data[: data.rfind(b"\n") + 1]
        if not data:
            break
        sys.stdout.write(api.terminal_text(data.decode("utf-8", "replace"), prints))
        offset += len(data)
    sys.stdout.flush()
    return offset


def cmd_trust(args: Namespace) -> int:
    path, digest, commands = api.trust(api.open_workspace())
    print(f"trusted {path} (sha256 {digest[:12]}…)"
          + (f": its commands may run ({', '.join(commands)})" if commands else ""))
    return 0


def cmd_players(args: Namespace) -> int:
    found = list(api.detect_players(api.open_workspace()).values())
    if args.json:
        print(dumps([d.as_json() for d in found], indent=2))
        return 0
    for d in found:
        mark = "ready" if d.ready else "—"
        version = f" {d.version}" if d.version else ""
        why = "" if d.ready else f"  {d.reason}" + (f" — {d.fix}" if d.fix else "")
        print(f"  {d.name:<14}{mark:<7}{version}{why}")
    return 0


def cmd_runners(args: Namespace) -> int:
    """`baton runners [--json]`: 0 when every runner is reachable and its workers match."""
    found = api.runners(api.open_workspace())
    if args.json:
        print(dumps(found, indent=2))
    else:
        print("\n".join(api.runner_lines(found)))
    fine = all(r["reachable"] and r["versions_match"] is not False for r in found)
    return 0 if fine else 1


def cmd_doctor(args: Namespace) -> int:
    lines, code = api.doctor(api.open_workspace())
    print("\n".join(lines))
    return code
