"""Busy CPU loops beside a benchmark (`--hogs N`), each a program in a session of its own.

As another terminal's programs are: where Linux groups tasks by session for its scheduler
(`sched_autogroup`), hogs started in the benchmark's own session would share a group with
the processes it times, and the ratios would say more about that than about Baton.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def running(n: int) -> Iterator[None]:
    """`n` hogs for as long as the block runs; killed after it, whatever happened."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(n)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def said(n: int, beside: str) -> str:
    """The line a benchmark ends with when hogs ran: `with 2 CPU hogs running beside …`."""
    return f"with {n} CPU hog{'s' * (n != 1)} running beside {beside}"
