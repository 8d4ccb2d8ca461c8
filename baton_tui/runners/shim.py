"""`baton attempt ID`: the small supervisor that runs one agent (stdlib only, but for psutil
at the very end).

Started by the conductor in a session of its own, it starts the agent in its own process
group, sends the agent's output to the attempt's log file and records pid, start token and
exit status in the store — so when the conductor dies the agent goes on and `baton resume`
can find it again. It also serves the attempt's report channel (`channel/relay.py`: a socket
in the attempt's folder, `BATON_SOCKET`), through which the agent's reports reach the store,
read-only to the agent inside its view. The agent's environment is the shim's own (the nonce and the person's
configured values never pass through the store).

It first *claims* the attempt in the store: a conductor that finds an attempt recorded but
never started (it was killed in between) gives it up with the same one-row update, so an
attempt runs at most once, whoever wins. The agent's output reaches the log through a pipe
and `logcap.CappedLog` (head and tail kept, whatever it prints). On Linux the shim is a
child subreaper: a descendant that left the agent's group (`setsid`) and lost its parent is
re-parented here, so when the agent exits the whole tree is ended — gently, then with
SIGKILL — and anything that still could not be ended is recorded (`spec.leftover`).
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys
import time
from typing import Any

from baton_tui import procs
from baton_tui.channel import relay
from baton_tui.runners import readonly
from baton_tui.runners.logcap import CappedLog
from baton_tui.store.db import Store

GRACE_SECONDS = 3.0
DRAIN_SECONDS = 2.0
# Variables that send git to another repository (set in a git hook, or by a person who works
# with GIT_DIR): an agent's git must see its own worktree, so they never reach the agent. The
# same names Baton's own git calls drop (gitops/git.py).
GIT_REDIRECTS = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                           "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
                           "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"})


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux prctl PR_SET_CHILD_SUBREAPER); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def run_attempt(attempt_id: int, state_path: str) -> int:
    """Run the attempt recorded under `attempt_id`; returns the agent's exit status."""
    store = Store(state_path, create=False)
    attempt = store.attempt(attempt_id)
    if attempt is None:
        return 2
    if not store.claim_attempt(attempt_id, os.getpid()):
        return 0  # given up before it started: a newer conductor runs the task instead
    spec = attempt.spec
    adopts = become_subreaper()
    # The launcher put the agent's variables here (the store has their names only).
    env = {k: v for k, v in os.environ.items() if k not in GIT_REDIRECTS}
    assert attempt.log_path is not None  # recorded before its shim was spawned
    log = CappedLog(attempt.log_path)
    stdin = open(spec["prompt_path"], "rb") if spec.get("stdin_prompt") else subprocess.DEVNULL
    view = spec.get("readonly")
    channel = _channel(attempt_id, state_path, os.path.dirname(attempt.log_path), log)
    if channel is not None:
        env[relay.ENV] = channel.path
    else:  # no channel: `baton report` writes the store itself, so it stays writable
        env.pop(relay.ENV, None)
        if view:
            view = {**view, "rw": [*view["rw"], os.path.dirname(os.path.realpath(state_path))]}
    protect = None
    if view:  # imported only then: every agent's start waits for the shim's
        protect = readonly.preexec(view)
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.Popen(spec["argv"], cwd=spec["cwd"], env=env, stdin=stdin,
                                stdout=write_end, stderr=subprocess.STDOUT, process_group=0,
                                preexec_fn=protect)
    except OSError as exc:
        log.write(f"baton: cannot start {spec['argv'][0]}: {exc}\n".encode())
        store.update_attempt(attempt_id, ended=time.time(), exit_status=127)
        if channel is not None:
            channel.close()
        return 127
    finally:
        os.close(write_end)
    store.update_attempt(attempt_id, pid=proc.pid, pgid=proc.pid,
                         create_time=procs.start_token(proc.pid))

    def forward(signum: int, _frame: object) -> None:
        procs.signal_group(proc.pid, signal.SIGTERM)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    status = pump(read_end, log, proc)
    leftover = end_tree(proc.pid, scan=not adopts)
    drain(read_end, log, time.monotonic() + DRAIN_SECONDS)
    os.close(read_end)
    if channel is not None:  # after the tree: a report made as it ended still counts
        channel.close()
    if log.cuts:
        store.note_attempt(attempt_id, "log_cut", log.cut)
    if leftover:
        store.note_attempt(attempt_id, "leftover", leftover)
    store.update_attempt(attempt_id, exit_status=status, ended=time.time())
    log.close()
    store.close()
    return status


def _channel(attempt_id: int, state_path: str, folder: str,
             log: CappedLog) -> "relay.Relay | None":
    """The attempt's report channel (`relay`), or None (said in its log) where a socket
    cannot be made there."""
    try:
        return relay.Relay(folder, attempt_id, state_path)
    except OSError as exc:
        log.write(f"baton: no report channel ({exc}): reports write the store directly\n"
                  .encode())
        return None


def pump(fd: int, log: CappedLog, proc: subprocess.Popen[bytes]) -> int:
    """Copy the agent's output to the log until the agent exits; returns its status."""
    while True:
        ready, _, _ = select.select([fd], [], [], 0.25)
        if ready:
            data = os.read(fd, 1 << 16)
            if data:
                log.write(data)
                continue
            return proc.wait()  # every writer closed the pipe: the agent is ending
        if proc.poll() is not None:
            return proc.returncode


def drain(fd: int, log: CappedLog, deadline: float) -> None:
    """What is left in the pipe once the tree was ended (a writer that could not be ended
    keeps it open: stop at `deadline`)."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        data = os.read(fd, 1 << 16)
        if not data:
            return
        log.write(data)


def reap() -> bool:
    """Collect finished children (re-parented orphans become ours to wait for); True when
    none is left at all — as a subreaper, every descendant still running would be one."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def _rest(pgid: int, scan: bool) -> list[Any]:
    """What is left of the agent's tree: every descendant of this shim (all of them, as a
    subreaper) and, when it is not one, whatever is still in the agent's group."""
    # lazy: psutil: the spawner (warm for every shim) and a shim's usual end need none
    import psutil  # type: ignore[import-untyped]  # (no stubs installed)

    found = {p.pid: p for p in procs._tree(os.getpid())[1:]}
    for proc in psutil.process_iter() if scan else ():
        try:
            if proc.pid not in found and os.getpgid(proc.pid) == pgid:
                found[proc.pid] = proc
        except (psutil.Error, OSError):
            continue
    return list(found.values())


def end_tree(pgid: int, scan: bool = True) -> list[dict[str, Any]]:
    """End what the agent left running: SIGTERM, a grace period, SIGKILL. The tree is swept
    again while it ends: a process started meanwhile (a child answering SIGTERM with a new
    `setsid` process) is signalled too. Returns what could not be ended (pid and command),
    for the task's flag."""
    if not scan and reap():
        return []  # the usual end, told without psutil (importing it alone takes 30 ms)
    # lazy: psutil: the spawner (warm for every shim) and a shim's usual end need none
    import psutil  # type: ignore[import-untyped]  # (no stubs installed)

    rest = _rest(pgid, scan)
    if not rest:
        return []
    sent: dict[int, int] = {}  # pid → the last signal it was sent
    for sig, wait in ((signal.SIGTERM, GRACE_SECONDS), (signal.SIGKILL, GRACE_SECONDS)):
        procs.signal_group(pgid, sig)
        deadline = time.monotonic() + wait
        while True:
            for proc in rest:
                if sent.get(proc.pid) != sig:
                    try:
                        proc.send_signal(sig)
                    except psutil.Error:
                        pass
                    sent[proc.pid] = sig
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
            reap()
            rest = [p for p in _rest(pgid, scan) if _running(p)]
            if not rest:
                return []
    left = []
    for proc in rest:
        try:
            left.append({"pid": proc.pid, "command": " ".join(proc.cmdline())[:200]})
        except psutil.Error:
            continue
    return left


def _running(proc: Any) -> bool:
    # lazy: psutil: the spawner (warm for every shim) and a shim's usual end need none
    import psutil  # type: ignore[import-untyped]  # (no stubs installed)

    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


if __name__ == "__main__":  # `python -m baton_tui.runners.shim ID STORE`: no CLI start-up cost
    sys.exit(run_attempt(int(sys.argv[1]), sys.argv[2]))
