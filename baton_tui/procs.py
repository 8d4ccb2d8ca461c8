"""Process identity and liveness with the standard library (Linux /proc, else os.kill).

A pid alone can be reused; the pair (pid, start token) cannot, so Baton records
both for every process it must find again after a restart.
"""

from __future__ import annotations

import os
import signal


def start_token(pid: int) -> float | None:
    """The process's start time in clock ticks since boot, or None if unknown/gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after the last ')'.
    fields = raw[raw.rfind(")") + 2:].split()
    try:
        if fields[0] == "Z":  # a zombie has finished
            return None
        return float(fields[19])
    except (IndexError, ValueError):
        return None


def alive(pid: int | None, token: float | None = None) -> bool:
    """True when `pid` runs and, if a token was recorded, is the same process."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    current = start_token(pid)
    if current is None:
        return os.path.exists("/proc") is False
    return token is None or current == token


def group_alive(pgid: int | None) -> bool:
    """True while any process of the group is left."""
    if not pgid or pgid <= 1:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int | None, sig: int = signal.SIGTERM) -> bool:
    """Signal a whole process group; False when it is already gone."""
    if not pgid or pgid <= 1:
        return False
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
