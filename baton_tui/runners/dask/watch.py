"""A Dask worker's watchdog: the agents of a worker that dies are ended, never orphaned.

An agent's shim runs in a session of its own (a local agent outlives its conductor), so when
a Dask worker is killed nothing of it reaches the agents it started: they would run on,
unseen, writing into a scratch folder nobody collects. So a worker starts this process once,
in a session of its own too (a signal to the worker's process group does not reach it), and
tells it over a pipe which process groups hold its running attempts: ``+PGID`` when one
starts, ``-PGID`` when it ended. When the pipe closes — the worker ended, however it ended —
every group still listed gets SIGTERM (a shim forwards it to its agent), a grace period, then
SIGKILL.
"""

from __future__ import annotations

import signal
import sys
import time

from baton_tui import procs

GRACE_SECONDS = 5.0


def end_groups(groups: set[int], grace: float = GRACE_SECONDS) -> None:
    """SIGTERM every group, then SIGKILL whatever is left of them after `grace`."""
    for pgid in groups:
        procs.signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(procs.group_alive(g) for g in groups):
        time.sleep(0.1)
    for pgid in groups:
        if procs.group_alive(pgid):
            procs.signal_group(pgid, signal.SIGKILL)


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # the worker's, not ours:
        signal.signal(sig, signal.SIG_IGN)                      # it ends when its pipe does
    groups: set[int] = set()
    for line in sys.stdin:
        sign, number = line[:1], line[1:].strip()
        if not number.isdigit() or int(number) <= 1:
            continue
        if sign == "+":
            groups.add(int(number))
        elif sign == "-":
            groups.discard(int(number))
    if groups:
        end_groups(groups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
