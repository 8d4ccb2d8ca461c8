"""Finishing a handoff merge that conflicts, by hand, from the app.

`baton handoff merge` stops at a conflict with the person's tree untouched and names the
one command to finish by hand. The app offers that as a step: start exactly that merge in
the repository (so the conflict markers are there to edit), hand the person a shell, and
afterwards say whether the merge was committed, is still open, or was given up. Nothing
here commits for the person or throws their resolution away unless they ask to abort.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from baton_tui.core.errors import BatonError
from baton_tui.core.events import State
from baton_tui.core.slug import task_branch
from baton_tui.gitops import git
from baton_tui.gitops.landing import is_ancestor
from baton_tui.plan import current as plans
from baton_tui.workspace import Workspace

OPEN, NOT_STARTED = "open", "not started"  # besides State.MERGED: where a hand merge is


@dataclass(frozen=True)
class Resolution:
    """Where a hand merge stands: `open` (MERGE_HEAD is there), `merged`, or `not started`."""

    task_id: int
    branch: str
    state: str
    files: list[str]

    @property
    def merged(self) -> bool:
        return self.state == State.MERGED

    @property
    def open(self) -> bool:
        return self.state == OPEN


def _merge_head(root: Path) -> Path:
    return Path(git.git_dir(root)) / "MERGE_HEAD"


def _branch_of(ws: Workspace, task_id: int) -> tuple[str, str, str]:
    cur = plans.current(ws)
    assert cur is not None
    task = cur.doc.task(task_id)
    return task_branch(cur.row.slug, task_id, task.title), task.title, cur.row.base_branch or ""


def unmerged_files(root: Path) -> list[str]:
    out = git.git(root, "diff", "--name-only", "--diff-filter=U")
    return [line for line in out.splitlines() if line]


def begin(ws: Workspace, task_id: int) -> Resolution:
    """Start `git merge --no-ff` of the task's branch in the person's checkout, leaving the
    conflicts to edit. Refused on the wrong branch or with uncommitted tracked changes."""
    branch, title, onto = _branch_of(ws, task_id)
    root = ws.root
    if _merge_head(root).exists():
        return Resolution(task_id, branch, OPEN, unmerged_files(root))
    here = git.current_branch(root)
    if here != onto:
        raise BatonError(f"wrong branch: {here or 'a detached HEAD'} is checked out; the handoff "
                         f"merges onto {onto} — switch to it first", code=2)
    if git.dirty_files(root):
        raise BatonError("uncommitted changes to tracked files: commit or stash them first",
                         code=2)
    env = {**git.identity_env(root), "GIT_MERGE_AUTOEDIT": "no"}
    proc = git.run_git(root, "merge", "--no-ff", "--no-edit", "-m",
                       f"Merge task {task_id}: {title}", f"refs/heads/{branch}", env=env)
    if proc.returncode == 0:
        return Resolution(task_id, branch, State.MERGED, [])
    if not _merge_head(root).exists():
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise BatonError(f"git merge of {branch} did not start: "
                         + (detail[-1] if detail else f"exit {proc.returncode}"), code=1)
    return Resolution(task_id, branch, OPEN, unmerged_files(root))


def status(ws: Workspace, task_id: int) -> Resolution:
    """After the shell: is the task's branch merged, or is the merge still open?"""
    branch, _title, _onto = _branch_of(ws, task_id)
    if _merge_head(ws.root).exists():
        return Resolution(task_id, branch, OPEN, unmerged_files(ws.root))
    merged = is_ancestor(ws.root, f"refs/heads/{branch}", "HEAD")
    return Resolution(task_id, branch, State.MERGED if merged else NOT_STARTED, [])


def abort(ws: Workspace) -> None:
    """`git merge --abort`: the tree goes back to how it was before the hand merge began."""
    if _merge_head(ws.root).exists():
        git.run_git(ws.root, "merge", "--abort")


def shell(root: Path, banner: str) -> int:
    """The person's own shell in the repository (the app is suspended around this)."""
    print(banner, flush=True)
    program = os.environ.get("SHELL") or "/bin/sh"
    try:
        return subprocess.run([program], cwd=root).returncode
    except OSError as exc:
        print(f"baton: cannot start {program}: {exc.strerror}", flush=True)
        return 127
