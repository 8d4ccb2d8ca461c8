"""Publishing landed work to a remote: the stacked commits, what the remote holds, the push.

The commits a pull request shows are made in the object store only (`merge-tree`,
`commit-tree`: nothing is checked out): the base, then each landed task merged on top in
plan order. They are made with the date of the task commit they merge, so the same landed
work always makes the same commits — publishing again without a change pushes nothing new,
and a pull request is updated only when its work moved.

Pushes are atomic (all branches or none) and each branch is leased: it must be where Baton
last left it (or absent, the first time), so a branch someone else pushed to is never
overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from baton_tui.core.errors import BatonError

from .git import NO_HOOKS, GitError, git, identity_env, run_git
from .landing import merge_tree

__all__ = ["Step", "stacked", "remote_url", "remote_heads", "Push", "push_argv", "push"]


@dataclass
class Step:
    """One task to merge on top of the stack: its id, its landed commit and a message."""

    id: int
    commit: str
    message: str


def stacked(repo: Path, base: str, steps: list[Step]) -> list[str]:
    """The stack's commits, one per step: `base` with each step merged on top in order.
    A step that conflicts stops it (BatonError, code 1, naming the task and files)."""
    tip, made = base, []
    for step in steps:
        tree, conflicts = merge_tree(repo, tip, step.commit)
        if tree is None or conflicts:
            raise BatonError(f"task {step.id} conflicts with the tasks before it in plan order "
                             f"({', '.join(conflicts) or 'its merge failed'}): nothing was "
                             "pushed — `baton handoff merge` names the command to resolve it",
                             code=1)
        date = git(repo, "show", "-s", "--format=%ct +0000", step.commit)
        env = {**identity_env(repo), "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        tip = git(repo, *NO_HOOKS, "commit-tree", "--no-gpg-sign", tree, "-p", tip,
                  "-p", step.commit, "-F", "-", input=step.message.rstrip("\n") + "\n", env=env)
        made.append(tip)
    return made


def remote_url(repo: Path, remote: str) -> str:
    """The remote's URL as configured (before any `insteadOf` rewriting: it names the
    forge), or BatonError (code 2) when there is no such remote."""
    proc = run_git(repo, "config", "--get", f"remote.{remote}.url")
    if proc.returncode != 0 or not proc.stdout.strip():
        raise BatonError(f"there is no git remote {remote!r}: add one (`git remote add "
                         f"{remote} URL`) or name another with --remote", code=2)
    return proc.stdout.strip()


def remote_heads(repo: Path, remote: str) -> dict[str, str]:
    """Every branch the remote holds, with its commit (one `git ls-remote`)."""
    try:
        out = git(repo, "ls-remote", "--heads", remote)
    except GitError as exc:
        raise BatonError(f"cannot read remote {remote!r}: {exc}", code=2) from None
    heads = {}
    for line in out.splitlines():
        commit, _, ref = line.partition("\t")
        if ref.startswith("refs/heads/"):
            heads[ref[len("refs/heads/"):]] = commit
    return heads


@dataclass
class Push:
    """One branch to push: the commit, the branch, and where it must be now (None: absent)."""

    commit: str
    branch: str
    expect: str | None


def push_argv(remote: str, pushes: list[Push]) -> list[str]:
    """`git push` for these branches at once: atomic, each leased to where it must be."""
    argv = ["push", "--atomic", "--porcelain"]
    argv += [f"--force-with-lease=refs/heads/{p.branch}:{p.expect or ''}" for p in pushes]
    return [*argv, remote, *(f"{p.commit}:refs/heads/{p.branch}" for p in pushes)]


def push(repo: Path, remote: str, pushes: list[Push]) -> None:
    """Push them all or none; a lease that does not hold is one line (code 1)."""
    if not pushes:
        return
    proc = run_git(repo, *push_argv(remote, pushes))
    if proc.returncode != 0:
        said = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines()
                or ["(no output)"])
        rejected = [line for line in proc.stdout.splitlines() if line.startswith("!")]
        raise BatonError(f"push to {remote} refused, nothing was pushed: "
                         f"{(rejected or said)[-1].strip()}", code=1)
