"""Committing a task's work onto the task's own branch, whatever the agent checked out.

An agent runs git in its worktree: it may `git checkout -b other`, detach HEAD, or check out
another branch. Committed where HEAD points, its work would land nowhere — the task's branch
would not move and its landing would be an empty "already there". So the worktree's state is
committed where HEAD is, then put on the task's branch: a fast-forward when the branch is
behind that commit, else one commit on the branch holding the worktree's tree. HEAD goes
back to the task's branch (the index already matches), and the caller learns what the agent
had checked out, to say so.
"""

from __future__ import annotations

import os
from pathlib import Path

from .git import NO_HOOKS, GitError, git, git_dirs, run_git
from .refs import read_ref, tree_of
from .worktrees import _commit_tree, _full_branch_ref, commit_all

__all__ = ["commit_on_branch", "head_ref"]


def head_ref(worktree: str | os.PathLike) -> str | None:
    """The branch ref the worktree's HEAD names (``refs/heads/…``), None when detached.
    Read from its HEAD file: no git process."""
    dirs = git_dirs(worktree)
    if dirs is not None:
        try:
            text = (dirs[0] / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            text = ""
        if text.startswith("ref:"):
            return text[4:].strip()
        if text:
            return None
    proc = run_git(worktree, "symbolic-ref", "-q", "HEAD")
    return proc.stdout.strip() if proc.returncode == 0 else None


def commit_on_branch(worktree: str | os.PathLike, branch: str,
                     message: str) -> tuple[str | None, str | None]:
    """Commit what the agent left onto ``branch``. Returns (the new commit or None when
    nothing changed, what HEAD named instead of the branch — None when it was on it)."""
    worktree = Path(worktree)
    ref = _full_branch_ref(branch)
    moved = head_ref(worktree)
    if moved == ref:
        return commit_all(worktree, message), None
    where = moved.removeprefix("refs/heads/") if moved else "a detached HEAD"
    at = commit_all(worktree, message) or read_ref(worktree, "HEAD")
    tip = read_ref(worktree, ref)
    if tip is None:
        raise GitError(["rev-parse", ref], "", 128, f"no such branch: {branch}")
    new = None
    if at and at != tip and tree_of(worktree, at) != tree_of(worktree, tip):
        ahead = run_git(worktree, "merge-base", "--is-ancestor", tip, at).returncode == 0
        new = at if ahead else _commit_tree(
            worktree, tree_of(worktree, at), [tip],
            f"{message}\n\nThe agent had checked out {where}: its worktree as it left it.")
        git(worktree, *NO_HOOKS, "update-ref", "-m", f"baton: the agent's work from {where}",
            ref, new, tip)
    git(worktree, *NO_HOOKS, "symbolic-ref", "-m", "baton: back on the task's branch", "HEAD", ref)
    return new, where
