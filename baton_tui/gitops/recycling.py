"""Recycling a landed task's worktree for the next task, instead of checking out a new one.

A fresh worktree is a whole checkout: in a repository of a few thousand files, seconds of
`reset --hard` under load, paid by every task. A landed task's worktree already holds nearly
the right files: moved to the new task's place (as `git worktree move` does) and switched to the new
task's branch cut at the integration tip (`git switch -c`, which rewrites only the files
that differ, as `reset --keep` would), it is ready in a fraction of that. The landed branch
keeps its work: the switch creates the new branch and leaves the old one where it is.

Never at the cost of work: only a worktree still on its own task's branch, that branch
where it landed (contained in the integration tip), and nothing changed in its files since
(`changed_paths`: tracked edits and untracked files that are not ignored) is recycled.
"""

from __future__ import annotations

import os
from pathlib import Path

from .git import NO_HOOKS, git_dirs
from .landing import is_ancestor
from .refs import known_parents, read_ref
from .worktrees import _WORKTREE_LOCK, MakingSteps, changed_paths, note_checked_out

__all__ = ["recyclable", "recycle"]


def _on_branch(worktree: Path, branch: str) -> bool:
    """Whether the worktree's HEAD names `branch` (read from its HEAD file: no git)."""
    dirs = git_dirs(worktree) if (worktree / ".git").is_file() else None
    if dirs is None:
        return False
    try:
        head = (dirs[0] / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return False
    return head == f"ref: refs/heads/{branch}"


def recyclable(repo: str | os.PathLike, worktree: Path, branch: str, landed: str | None,
               tip: str) -> bool:
    """Whether the worktree of a landed task may serve another: on its own `branch`, that
    branch contained in the integration `tip` (`landed`: the integration commit its landing
    made, whose parents tell without git in the process that landed it), and clean."""
    if not _on_branch(worktree, branch):
        return False
    head = read_ref(repo, f"refs/heads/{branch}")
    if head is None:
        return False
    parents = known_parents(landed) if landed else None
    if not (parents and head in parents) and not is_ancestor(repo, head, tip):
        return False
    return not changed_paths(worktree)


def recycle(repo: str | os.PathLike, old: Path, new: Path, branch: str, tip: str,
            making: MakingSteps) -> bool:
    """Move the worktree at `old` to `new` and switch it to a new `branch` at `tip`, the
    switch a recorded step of `new`'s making (a kill meanwhile is undone as any half-made
    worktree: its old branch holds all it had). False when it could not be moved or git
    refused the switch; after a refused switch the folder is at `new`, still on its old
    branch, for the caller to undo."""
    if read_ref(repo, f"refs/heads/{branch}") is not None or new.exists():
        return False  # the new task's branch or place is taken: made the usual way
    if not _move(repo, old, new, making):
        return False
    code, _output = making.run(["git", *NO_HOOKS, "switch", "--quiet", "--no-track", "-c",
                                branch, tip], new, "worktree-add")
    if code == 0:
        note_checked_out(new)
    return code == 0


def _move(repo: str | os.PathLike, old: Path, new: Path, making: MakingSteps) -> bool:
    """`git worktree move old new`, done as git does it — rename the folder, point git's
    record of it at the new place — without a process, when the worktree names its record
    by an absolute path and the record names it back (else git moves it)."""
    with _WORKTREE_LOCK:  # git's worktree records change one at a time (worktrees.py)
        try:
            pointer = (old / ".git").read_text(encoding="utf-8").strip()
            admin = Path(pointer[len("gitdir: "):]) if pointer.startswith("gitdir: ") else None
            back = (admin / "gitdir").read_text(encoding="utf-8").strip() if admin else ""
        except OSError:
            return False
        if admin is not None and admin.is_absolute() \
                and os.path.abspath(back) == os.path.abspath(old / ".git"):
            new.parent.mkdir(parents=True, exist_ok=True)
            os.rename(old, new)
            (admin / "gitdir").write_text(f"{new / '.git'}\n", encoding="utf-8")
            return True
        code, _output = making.run(["git", "worktree", "move", "--", str(old), str(new)],
                                   repo, "worktree-add")
    return code == 0
