"""Moving the person's checked-out branch to a commit made in the object store, without ever
changing a file of theirs.

`git merge` in the person's checkout checks the tree once and then writes; a commit the person
makes meanwhile can lose a line from their working tree. Instead the handoff makes each merge
commit with `merge-tree` and `commit-tree` (no file touched), and this module brings the
branch and the checkout to it while holding git's own lock on the checkout (`index.lock`, the
one every `git commit`, `add` or `switch` takes): the checkout must still be at the commit the
merge was made on, and clean; the files the merge changes are written from that commit's tree
to the merge's (`read-tree -m -u`, which refuses to overwrite anything not at that commit);
the branch moves by compare-and-swap; only then does the new index take the lock's place. Any
failure on the way puts the files back and drops the lock: nothing changed.
"""

from __future__ import annotations

import os
from pathlib import Path

from baton_tui.core.errors import BatonError

from .git import NO_HOOKS, _gist, git_dirs, run_git
from .refs import read_ref

__all__ = ["advance"]


def advance(repo: str | os.PathLike, ref: str, old: str, new: str, message: str) -> None:
    """Move `ref`, checked out in `repo`, from `old` to `new`, the checkout with it; or raise
    BatonError (code 1: something moved meanwhile, code 2: uncommitted changes) with the
    branch, the index and every file as they were."""
    dirs = git_dirs(repo)
    if dirs is None:
        raise BatonError(f"{repo} is not a git checkout", code=2)
    lock, index = dirs[0] / "index.lock", dirs[0] / "index"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise BatonError(f"another git command is working in your checkout ({lock} exists): "
                         "nothing was changed; run it again once it is done", code=1) from None
    written, kept = False, False
    env = {"GIT_INDEX_FILE": str(lock)}
    try:
        with os.fdopen(fd, "wb") as fh:
            if index.exists():
                fh.write(index.read_bytes())
        _still_there(repo, dirs[0], ref, old)
        run_git(repo, "update-index", "-q", "--refresh", env=env)
        if run_git(repo, "diff-index", "--quiet", old, "--", env=env).returncode != 0:
            raise BatonError("uncommitted changes to tracked files appeared while merging: "
                             "nothing was changed; commit or stash them first", code=2)
        proc = run_git(repo, "read-tree", "-m", "-u", old, new, env=env)
        if proc.returncode != 0:
            raise BatonError(f"the checkout cannot take the merge: {_gist(proc.stderr)}; "
                             "nothing was changed", code=1)
        written = True
        proc = run_git(repo, *NO_HOOKS, "update-ref", "-m", message, ref, new, old)
        if proc.returncode != 0:
            raise BatonError(f"{ref.removeprefix('refs/heads/')} moved while merging (a commit "
                             "of yours?): nothing was changed; run it again", code=1)
        os.replace(lock, index)
        kept = True
    finally:
        if not kept:
            if written:  # the files back to `old`, from the lock's own index
                run_git(repo, "read-tree", "-m", "-u", new, old, env=env)
            Path(lock).unlink(missing_ok=True)


def _still_there(repo: str | os.PathLike, gitdir: Path, ref: str, old: str) -> None:
    try:
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        head = ""
    if head != f"ref: {ref}" or read_ref(repo, ref) != old:
        raise BatonError(f"{ref.removeprefix('refs/heads/')} moved while merging (a commit of "
                         "yours?): nothing was changed; run it again", code=1)
