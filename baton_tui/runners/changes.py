"""What an agent changed in a worktree on this machine, for `Runner.changed_files`.

A `git status` of the worktree and each changed file's size and time: run on a worker
thread (32 agents' worktrees looked at every few seconds held up the conductor's loop when
it ran there). A remote runner's node can take the same look at its own checkout.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from baton_tui.gitops import worktrees
from baton_tui.runners.base import Changes


def read(worktree: Path) -> Changes:
    """The worktree's changed files and their sizes and times (blocking: a `git status`)."""
    changed = worktrees.changed_paths(worktree)
    return changed, tuple(sorted((p, *_stat(worktree / p)) for p in changed))


def look(worktree: Path) -> asyncio.Future[Changes]:
    """`read` on a worker thread, as a future of the running loop."""
    return asyncio.ensure_future(asyncio.to_thread(read, worktree))


def _stat(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)
