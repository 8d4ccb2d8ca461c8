"""Lock files a killed conductor's git left on the run's own refs, found and removed.

git moves a ref by creating `<ref>.lock` and renaming it over the ref (and writes a
worktree's index through `index.lock` the same way); a git SIGKILLed in between (the
conductor's whole process group killed — bringing a remote task's result home, say) leaves
the lock behind, and every later move of that ref (write of that index) fails with "Unable
to create '….lock': File exists … remove the file manually". A resumed run could then never
make that task's worktree, commit its work or land anything on the integration branch. The
next conductor removes such a lock only when it is surely stale:

- the dead conductor's group runs no git any more (an orphaned git still finishing is
  waited for, a few seconds at most; if it goes on, nothing is touched);
- the lock is older than the conductor now running, so no git of its own made it;
- no process works in the task's worktree (an agent that outlived the conductor may be
  committing there: its lock is left alone).

Only locks on the plan's own branches (`refs/heads/baton/<slug>/…`) and on its worktrees'
HEADs and indexes are looked at; the person's refs and worktrees never are.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .git import common_dir

__all__ = ["clear"]


def clear(repo: str | os.PathLike, slug: str, worktrees: Path, *, group: int,
          before: float, wait: float = 10.0) -> list[Path]:
    """Remove the stale locks of plan `slug` (its task worktrees live in `worktrees`) left by
    the dead conductor whose process group was `group`; returns the locks removed."""
    common = common_dir(repo)
    found = _ref_locks(common / "refs" / "heads" / "baton" / slug, worktrees)
    found += _head_locks(common / "worktrees", worktrees)
    found = [(lock, wt) for lock, wt in found if _older(lock, before) and not _batons(lock)]
    if not found or not _gits_ended(group, wait):
        return []
    busy = _worked_in({wt for _lock, wt in found if wt is not None})
    removed = []
    for lock, wt in found:
        if wt is not None and wt in busy:
            continue
        try:
            lock.unlink()
        except FileNotFoundError:
            continue
        removed.append(lock)
    return removed


def _ref_locks(folder: Path, worktrees: Path) -> list[tuple[Path, Path | None]]:
    """`<branch>.lock` files of the plan's branches, each with its task's worktree (a task
    branch's last part names its worktree's folder; the integration branch has none)."""
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".lock")]
    except OSError:
        return []
    out: list[tuple[Path, Path | None]] = []
    for entry in entries:
        name = entry.name[:-len(".lock")]
        out.append((Path(entry.path), None if name == "integration" else worktrees / name))
    return out


def _head_locks(admin_home: Path, worktrees: Path) -> list[tuple[Path, Path | None]]:
    """`HEAD.lock` and `index.lock` in git's records of the plan's worktrees, each with its
    worktree."""
    out: list[tuple[Path, Path | None]] = []
    inside = os.path.join(os.path.abspath(worktrees), "")
    for lock in [*admin_home.glob("*/HEAD.lock"), *admin_home.glob("*/index.lock")]:
        try:
            pointer = (lock.parent / "gitdir").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        worktree = os.path.dirname(os.path.abspath(pointer))
        if worktree.startswith(inside):
            out.append((lock, Path(worktree)))
    return out


def _batons(lock: Path) -> bool:
    """An `index.lock` Baton's own commit took (`worktrees._take_lock`): that commit takes it
    over itself, with the temporary indexes it left."""
    try:
        with open(lock, "rb") as fh:
            return fh.read(6) == b"baton "
    except OSError:
        return False


def _older(lock: Path, before: float) -> bool:
    try:
        return lock.stat().st_mtime < before
    except OSError:
        return False


def _gits_ended(group: int, wait: float) -> bool:
    """True once no git of process group `group` runs (waiting up to `wait` seconds)."""
    import psutil  # lazy: psutil, only when a crashed run left a lock

    deadline = time.monotonic() + wait
    while True:
        running = False
        for proc in psutil.process_iter(["pid", "name"]):
            try:
                if proc.info["name"] == "git" and os.getpgid(proc.info["pid"]) == group:
                    running = True
                    break
            except OSError:
                continue
        if not running:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _worked_in(worktrees: set[Path]) -> set[Path]:
    """The worktrees among `worktrees` some live process has its working directory in."""
    import psutil  # lazy: psutil, only when a crashed run left a lock

    if not worktrees:
        return set()
    roots = {os.path.abspath(wt): wt for wt in worktrees}
    busy: set[Path] = set()
    for proc in psutil.process_iter(["pid", "cwd"]):
        cwd = proc.info.get("cwd") or ""
        if proc.info["pid"] == os.getpid() or not cwd:
            continue
        for root, wt in roots.items():
            if cwd == root or cwd.startswith(root + os.sep):
                busy.add(wt)
    return busy
