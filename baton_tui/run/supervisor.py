"""The supervisor: notice stalls, loops and off-plan edits while an agent runs.

Pure observations over what the conductor already has (output lines, the worktree, the
agent's process tree); the conductor turns them into `task.flagged` events at every
level (watch makes them prominent in the front ends). Each kind of flag is raised once
per attempt, so a person sees a signal, not a stream. Thresholds: `[supervision]`.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from baton_tui import procs
from baton_tui.gitops import landing
from baton_tui.runners.base import Signature

SCOPE_EVERY = 5.0   # seconds between looks at a worktree's changed files
CPU_EVERY = 1.0     # seconds between looks at an agent's CPU time
CPU_LEAD = 5.0      # seconds before a silence would be flagged that those looks begin


@dataclass
class Watch:
    """What the supervisor remembers about one attempt."""

    repeats: int = 5
    recent: deque[str] = field(default_factory=deque)
    raised: set[str] = field(default_factory=set)
    outside: set[str] = field(default_factory=set)
    changed: frozenset[str] = frozenset()   # the task's changed files at the last look
    signature: Signature = ()               # those files' sizes and times: has anything moved?
    steps_since_change: int = 0
    # The first look one period in: a worktree just made has nothing changed, and a
    # `git status` then competes with the agent's own start for the CPU.
    next_files_check: float = field(default_factory=lambda: time.monotonic() + SCOPE_EVERY)
    cpu: float = -1.0
    next_cpu_check: float = 0.0
    last_cpu_check: float = float("-inf")

    def once(self, key: str) -> bool:
        """True the first time `key` is raised for this attempt."""
        if key in self.raised:
            return False
        self.raised.add(key)
        return True


def loop_line(watch: Watch, line: str) -> str | None:
    """The line (a tool call, a command and its result), once the agent has produced it
    `watch.repeats` times in a row."""
    text = line.strip()
    if not text:
        return None
    watch.recent.append(text)
    while len(watch.recent) > watch.repeats:
        watch.recent.popleft()
    if len(watch.recent) == watch.repeats and len(set(watch.recent)) == 1:
        return text
    return None


def step(watch: Watch, idle_turns: int) -> bool:
    """Count one agent step; True once `idle_turns` steps went by without a file changing."""
    watch.steps_since_change += 1
    return watch.steps_since_change >= idle_turns


def quiet_for(last_activity: float, stall: float, fraction: float = 0.5,
              now: float | None = None) -> float | None:
    """Seconds of silence once past `fraction` of the stall limit (a warning before the stop)."""
    quiet = (now if now is not None else time.monotonic()) - last_activity
    return quiet if stall and quiet > stall * fraction else None


def cpu_wanted(quiet: float, stall: float, flag: float) -> bool:
    """Whether an agent silent for `quiet` seconds needs its CPU time looked at: only once
    its silence nears the stall flag (`flag` × `stall`) or the stall limit — before that,
    busy or not changes nothing. (Reading every process's stat file once a second for each of
    32 agents was a twentieth of the conductor's CPU.)"""
    return quiet >= min(stall, stall * flag) - CPU_LEAD


def cpu_due(watch: Watch, now: float | None = None) -> bool:
    """Whether the agent's CPU time is due for a look now (once a second at most)."""
    now = now if now is not None else time.monotonic()
    return now >= watch.next_cpu_check


def cpu_busy(watch: Watch, pid: int | None, now: float | None = None,
             total: float | None = None) -> bool:
    """True when the agent's process tree used CPU time since the last look (checked at most
    once a second): an agent compiling or thinking in silence is not stalled. `total` is the
    tree's CPU time when the caller read it already (`procs.tree_cpu_times`, for many)."""
    now = now if now is not None else time.monotonic()
    if not pid or (total is None and now < watch.next_cpu_check):
        return False  # a `total` read for it counts as its look, due or not
    if total is None:
        total = procs.tree_cpu_time(pid)
    return cpu_grew(watch, total, now)


def cpu_grew(watch: Watch, total: float, now: float) -> bool:
    """Take `total` (the agent's CPU seconds so far, read by its runner) as this look;
    True when it grew since the last one. The first look after a pause (`cpu_wanted` was
    false) only takes the measure again: busy means busy in the last second or two, never
    long ago."""
    watch.next_cpu_check = now + CPU_EVERY
    recent = now - watch.last_cpu_check <= 2 * CPU_EVERY
    watch.last_cpu_check = now
    busy = recent and watch.cpu >= 0 and total > watch.cpu + 0.05
    watch.cpu = max(watch.cpu, total)  # the total dips when a child ends: only growth counts
    return busy


def files_due(watch: Watch, now: float | None = None) -> bool:
    """True (and the next look scheduled) when it is time to look at the changed files."""
    now = now if now is not None else time.monotonic()
    if now < watch.next_files_check:
        return False
    watch.next_files_check = now + SCOPE_EVERY
    return True


def take_files(watch: Watch, changed: list[str], signature: Signature,
               scope: list[str]) -> list[str]:
    """Remember a look at the changed files; the newly changed ones outside the scope."""
    if signature != watch.signature:
        watch.signature, watch.steps_since_change = signature, 0
    watch.changed = frozenset(changed)
    if not scope:
        return []
    outside = set(landing.files_outside(changed, scope))
    new = sorted(outside - watch.outside)
    watch.outside |= outside
    return new


def overlaps(changed: dict[int, frozenset[str]]) -> dict[int, tuple[int, list[str]]]:
    """Running tasks changing the same files: task -> (another task, the shared files)."""
    found: dict[int, tuple[int, list[str]]] = {}
    ids = sorted(changed)
    for i, one in enumerate(ids):
        for other in ids[i + 1:]:
            shared = sorted(changed[one] & changed[other])
            if shared:
                found.setdefault(one, (other, shared))
                found.setdefault(other, (one, shared))
    return found
