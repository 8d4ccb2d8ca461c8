"""Process identity, liveness, process trees and their CPU time.

A pid alone can be reused; the pair (pid, start token) cannot, so Baton records
both for every process it must find again after a restart.

`start_token` and `alive` sit on the `baton status` path, so on Linux they read
`/proc` with the standard library: the token is the start time in clock ticks
since boot, the same monotonic start time psutil itself uses to tell a process
from a reused pid (its epoch `create_time` moves when the system clock is set).
Without `/proc` they ask psutil for `create_time`. Trees — every descendant,
including those that left the group with setsid — come from psutil, imported
only when a tree is asked for.
"""

from __future__ import annotations

import os
import signal
import time

_PROC = os.path.isdir("/proc/self")


def start_token(pid: int) -> float | None:
    """The process's start time (clock ticks since boot under /proc), or None if unknown/gone."""
    if not _PROC:
        return _psutil_token(pid)
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


def _psutil_token(pid: int) -> float | None:
    import psutil  # lazy: `baton status`, `run`, the conductor and the spawner do without it

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc.create_time()
    except psutil.Error:
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
        return False
    return token is None or current == token


def wait_exit(pid: int, seconds: float) -> None:
    """Wait up to `seconds`, returning early once `pid` exits (through a pidfd where the
    platform has one): a follower then sees the end at once, not at its next look."""
    import select  # lazy: `baton status` never needs it

    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here, or it is gone already
        time.sleep(seconds if alive(pid) else 0)
        return
    try:
        # poll, not select: select refuses a descriptor numbered past 1023, which a process
        # holding many files open (a test worker, a long-lived front end) hands out.
        waiter = select.poll()
        waiter.register(fd, select.POLLIN)
        waiter.poll(max(0.0, seconds) * 1000)
    finally:
        os.close(fd)


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


def _tree(pid: int | None) -> list:
    """`pid` and its living descendants as psutil processes, parents first; [] when gone."""
    if not pid or pid <= 1:
        return []
    import psutil  # lazy: `baton status`, `run`, the conductor and the spawner do without it

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def tree_cpu_time(pid: int | None) -> float:
    """CPU seconds (user + system) used by `pid` and all its descendants.

    Counts the living processes of the tree and the children each of them has already
    reaped, so a shell that runs many short commands keeps adding up. A process that ends
    drops out until its parent reaps it: the total can dip, and a stall check should look
    for no growth, not for a decrease. 0.0 when `pid` is gone.
    """
    import psutil  # lazy: `baton status`, `run`, the conductor and the spawner do without it

    total = 0.0
    for proc in _tree(pid):
        try:
            t = proc.cpu_times()
        except psutil.Error:  # ended (or became unreadable) since the tree was listed
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def tree_cpu_times(pids: list[int]) -> dict[int, float]:
    """`tree_cpu_time` of several roots at once. Finding a process's descendants reads every
    process's stat file, and psutil builds an object for each (~9 ms here); a conductor
    following 32 agents did that 32 times a second. Here the process table is read once, on
    Linux straight from /proc (~2 ms), for all of them."""
    roots = [pid for pid in pids if pid and pid > 1]
    table = _proc_table() if roots else None
    if table is None:
        return {pid: tree_cpu_time(pid) for pid in roots}
    below: dict[int, list[int]] = {}
    for pid, (ppid, _cpu) in table.items():
        below.setdefault(ppid, []).append(pid)
    totals: dict[int, float] = {}
    for root in roots:
        total, stack, seen = 0.0, [root], set()
        while stack:
            pid = stack.pop()
            if pid in seen or pid not in table:
                continue
            seen.add(pid)
            total += table[pid][1]
            stack.extend(below.get(pid, ()))
        totals[root] = total
    return totals


def _proc_table() -> dict[int, tuple[int, float]] | None:
    """pid -> (parent pid, CPU seconds: user + system + reaped children's), from /proc; None
    where there is no /proc to read (psutil then answers, one root at a time)."""
    try:
        names = os.listdir("/proc")
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return None
    table: dict[int, tuple[int, float]] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
            rest = data[data.rfind(b")") + 2:].split()  # after "pid (comm) "
            table[int(name)] = (int(rest[1]), sum(int(x) for x in rest[11:15]) / tick)
        except (OSError, ValueError, IndexError):  # gone meanwhile, or unreadable
            continue
    return table or None


def kill_tree(pid: int | None, sig: int = signal.SIGTERM) -> bool:
    """Signal `pid`'s process group and every descendant that left it (setsid, setpgid).

    `pid` is expected to lead its own group, as every agent Baton starts does; when it does
    not, `pid` itself is signalled. The tree is listed before anything is signalled, so
    descendants are found while their parents still live. psutil refuses to signal a pid
    that was reused meanwhile. A descendant whose parents all died before this call was
    re-parented away from the tree and can only be reached through its group. Returns
    False when there was nothing left to signal.
    """
    if not pid or pid <= 1:
        return False
    import psutil  # lazy: `baton status`, `run`, the conductor and the spawner do without it

    tree = _tree(pid)
    sent = signal_group(pid, sig)
    for proc in tree:
        try:
            if sent and os.getpgid(proc.pid) == pid:
                continue  # the group signal reached it
            proc.send_signal(sig)
            sent = True
        except (psutil.Error, ProcessLookupError):
            continue
    return sent


def holding(path: str | os.PathLike, pgid: int) -> list[int]:
    """Pids of group `pgid`'s processes working in `path`: their working directory is in
    it, or an argument names it (a `git worktree add -- PATH` still running). Used before a
    half-made worktree is undone, on the group of the conductor that was making it, so
    nothing of it keeps writing into the folder — and nobody else's shell is touched."""
    import psutil  # lazy: `baton status`, `run`, the conductor and the spawner do without it

    root = os.path.abspath(path)
    inside = root + os.sep
    found = []
    for proc in psutil.process_iter(["pid", "cwd", "cmdline"]):
        info = proc.info
        try:
            if info["pid"] == os.getpid() or os.getpgid(info["pid"]) != pgid:
                continue
        except OSError:
            continue
        cwd = info.get("cwd") or ""
        args = info.get("cmdline") or []
        if cwd == root or cwd.startswith(inside) or any(
                a == root or a.startswith(inside) for a in args):
            found.append(info["pid"])
    return found


def end(pids: list[int], token_of: dict[int, float | None] | None = None,
        wait: float = 5.0) -> list[int]:
    """SIGKILL each pid's whole tree (a pid whose start token no longer matches was reused:
    it is left alone) and wait for them to go; returns the pids still alive after `wait`."""
    token_of = token_of or {}
    targets = [p for p in pids if alive(p, token_of.get(p))]
    for pid in targets:
        kill_tree(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    left = targets
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = [p for p in left if alive(p, token_of.get(p))]
    return left
