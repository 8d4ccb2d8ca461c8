"""`baton attempt ID`: the small supervisor that runs one agent (stdlib only).

Started by the conductor in a session of its own, it starts the agent in its own
process group, sends the agent's output to the attempt's log file and records
pid, start token and exit status in the store — so when the conductor dies the
agent goes on and `baton resume` can find it again. The agent's environment is the
shim's own (the nonce and the person's configured values never pass through the store).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from baton_tui import procs
from baton_tui.run import readonly
from baton_tui.store.db import Store

GRACE_SECONDS = 3.0
# Variables that send git to another repository (set in a git hook, or by a person who works
# with GIT_DIR): an agent's git must see its own worktree, so they never reach the agent. The
# same names Baton's own git calls drop (gitops/git.py).
GIT_REDIRECTS = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                           "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
                           "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"})


def run_attempt(attempt_id: int, state_path: str) -> int:
    """Run the attempt recorded under `attempt_id`; returns the agent's exit status."""
    store = Store(state_path, create=False)
    attempt = store.attempt(attempt_id)
    if attempt is None:
        return 2
    spec = attempt.spec
    # The launcher put the agent's variables here (the store has their names only).
    env = {k: v for k, v in os.environ.items() if k not in GIT_REDIRECTS}
    log = open(attempt.log_path, "ab", buffering=0)
    stdin = open(spec["prompt_path"], "rb") if spec.get("stdin_prompt") else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(spec["argv"], cwd=spec["cwd"], env=env, stdin=stdin, stdout=log,
                                stderr=subprocess.STDOUT, process_group=0,
                                preexec_fn=readonly.preexec(spec.get("readonly")))
    except OSError as exc:
        log.write(f"baton: cannot start {spec['argv'][0]}: {exc}\n".encode())
        store.update_attempt(attempt_id, shim_pid=os.getpid(), started=time.time(),
                             ended=time.time(), exit_status=127)
        return 127
    store.update_attempt(attempt_id, pid=proc.pid, pgid=proc.pid, shim_pid=os.getpid(),
                         create_time=procs.start_token(proc.pid), started=time.time())

    def forward(signum: int, _frame: object) -> None:
        procs.signal_group(proc.pid, signal.SIGTERM)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    status = proc.wait()
    # Some CLIs leave helpers in their group after exiting: end them, gently first.
    if procs.signal_group(proc.pid, signal.SIGTERM):
        deadline = time.monotonic() + GRACE_SECONDS
        while procs.group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        procs.signal_group(proc.pid, signal.SIGKILL)
    store.update_attempt(attempt_id, exit_status=status, ended=time.time())
    store.close()
    return status


if __name__ == "__main__":  # `python -m baton_tui.run.attempt ID STORE`: no CLI start-up cost
    import sys

    sys.exit(run_attempt(int(sys.argv[1]), sys.argv[2]))
