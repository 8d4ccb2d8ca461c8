"""Watch-mode supervision: notice stalls, loops and off-plan edits while an agent runs.

Pure observations over what the conductor already reads (output lines, the worktree);
the conductor turns them into `task.flagged` events. Each kind of flag is raised once
per attempt, so a person sees a signal, not a stream.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

LOOP_REPEATS = 5
SCOPE_EVERY = 5.0


@dataclass
class Watch:
    """What the supervisor remembers about one attempt."""

    recent: deque = field(default_factory=lambda: deque(maxlen=LOOP_REPEATS))
    raised: set[str] = field(default_factory=set)
    outside: set[str] = field(default_factory=set)
    next_scope_check: float = 0.0

    def once(self, key: str) -> bool:
        """True the first time `key` is raised for this attempt."""
        if key in self.raised:
            return False
        self.raised.add(key)
        return True


def loop_line(watch: Watch, line: str) -> str | None:
    """The line, when the agent has printed it LOOP_REPEATS times in a row."""
    text = line.strip()
    if not text:
        return None
    watch.recent.append(text)
    if len(watch.recent) == LOOP_REPEATS and len(set(watch.recent)) == 1:
        return text
    return None


def quiet_for(last_activity: float, stall: float, now: float | None = None) -> float | None:
    """Seconds of silence once past half the stall limit (a warning before the stop)."""
    quiet = (now if now is not None else time.monotonic()) - last_activity
    return quiet if stall and quiet > stall / 2 else None


def off_plan(watch: Watch, worktree: Path, scope: list[str], now: float | None = None) -> list[str]:
    """Newly changed files outside the task's scope (checked every SCOPE_EVERY seconds)."""
    now = now if now is not None else time.monotonic()
    if not scope or now < watch.next_scope_check:
        return []
    watch.next_scope_check = now + SCOPE_EVERY
    from baton_tui.gitops import landing, worktrees

    outside = set(landing.files_outside(worktrees.changed_paths(worktree), scope))
    new = sorted(outside - watch.outside)
    watch.outside |= outside
    return new
