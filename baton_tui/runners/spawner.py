"""Attempt shims forked from one warm process instead of a new interpreter each.

A shim (`runners/shim.py`) is a Python process; started afresh it spends about 40 ms on the
interpreter and its imports before its agent runs — on every task, in the path from one
landing to the next task's start. So the conductor keeps one spawner, started once with the
shim's modules imported. Asked over a pipe, it forks, and the child becomes the shim exactly
as a fresh one would be: a session of its own, the worktree as its working directory, the
environment it was sent (never the store: the nonce and the person's values travel in memory
only), its output to the attempt's `shim.log`, every other descriptor closed. The spawner
only reaps its children; a shim outlives it and the conductor as before. (`ps` shows a shim
under the spawner's command line.)

Linux only (the conductor waits on a forked shim through a pidfd); elsewhere, or when the
spawner fails, `spawn` answers None and the launcher starts the shim as a fresh process.

Protocol: one JSON line per request on stdin — {"attempt": id, "store": path, "cwd": dir,
"env": {…}, "log": path} — and one line back: the child's pid, or `error: …`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from baton_tui.paths import own_module
from baton_tui.runners import readonly

__all__ = ["Forked", "spawn", "warm", "stop"]

_lock = threading.Lock()
_proc: subprocess.Popen[bytes] | None = None
_broken = False


class Forked:
    """A shim the spawner forked: the conductor's handle on it (the spawner reaps it)."""

    def __init__(self, pid: int):
        self.pid = pid


def usable() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and not _broken


def warm() -> None:
    """Start the spawner now (its imports overlap the conductor's own start-up)."""
    if usable():
        with _lock:
            _ensure()


def _ensure() -> subprocess.Popen[bytes] | None:
    global _proc, _broken
    if _proc is not None and _proc.poll() is None:
        return _proc
    try:
        _proc = subprocess.Popen(own_module("baton_tui.runners.spawner"),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd="/")
    except OSError:
        _broken, _proc = True, None
    return _proc


def spawn(attempt_id: int, store: str, cwd: str, env: dict[str, str],
          log: str) -> Forked | None:
    """Fork a shim for `attempt_id`; None when the spawner cannot (start one afresh then)."""
    global _broken
    if not usable():
        return None
    request = json.dumps({"attempt": attempt_id, "store": store, "cwd": cwd, "env": env,
                          "log": log}) + "\n"
    with _lock:
        proc = _ensure()
        if proc is None:
            return None
        assert proc.stdin is not None and proc.stdout is not None  # started with pipes
        try:
            proc.stdin.write(request.encode())
            proc.stdin.flush()
            answer = proc.stdout.readline().decode().strip()
        except (OSError, ValueError):
            answer = ""
        if not answer.isdigit():
            _broken = True  # one failure is enough: every later shim starts afresh
            return None
        return Forked(int(answer))


def stop() -> None:
    """End the spawner (its shims go on): it leaves when its pipe closes. Not waited for —
    the conductor's last step, which a foreground run waits for; once the conductor is gone,
    whoever adopts the spawner reaps it."""
    global _proc
    with _lock:
        if _proc is not None and _proc.stdin is not None:
            try:
                _proc.stdin.close()
            except OSError:
                pass
            _proc = None


# -- the spawner process ------------------------------------------------------------------

def _become_shim(request: dict[str, Any]) -> None:
    """In the forked child: set up as a fresh shim would be, run the attempt, exit."""
    code = 1
    try:
        os.setsid()
        # As a fresh interpreter has them (an ignored signal would reach the agent ignored).
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        for name in os.listdir("/proc/self/fd"):
            if int(name) > 2:
                try:
                    os.close(int(name))
                except OSError:
                    pass
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # lazy: the conductor imports this module; only the spawner runs shims
        from baton_tui.runners.shim import run_attempt

        code = run_attempt(int(request["attempt"]), request["store"])
    except BaseException:  # noqa: BLE001 — said in the shim's log, never to the spawner
        import traceback  # lazy: the spawner is warm for every shim; only a crash needs it

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def main() -> int:
    # lazy: the conductor imports this module; imported once here, inherited by every fork
    from baton_tui.runners.shim import reap

    # Asked once, before the handler below reaps children (its probe waits for its own): a
    # shim would import ctypes and fork a probe of its own before every agent (~10 ms).
    readonly.available()

    signal.signal(signal.SIGCHLD, lambda _signum, _frame: reap())
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # the conductor's, not ours:
        signal.signal(sig, signal.SIG_IGN)                      # it ends when its pipe does
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            pid = os.fork()
        except (ValueError, OSError) as exc:
            out.write(f"error: {exc}\n".encode())
            out.flush()
            continue
        if pid == 0:
            _become_shim(request)
        out.write(f"{pid}\n".encode())
        out.flush()
    reap()
    return 0


if __name__ == "__main__":
    sys.exit(main())
