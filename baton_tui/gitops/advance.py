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

A Baton killed on the way (SIGKILL, a power cut) cannot do that. So before it takes the lock
it writes what it is about to do — its pid, the ref, `old` and `new` — to `baton-advance`
beside it, and removes that record only once done. The next `advance` (every `handoff
merge`) finishes or undoes such a dead one's move first (`recover`): the branch already at
`new`: its index is brought to `new` too (the files are there already); else the files it
may have written go back to `old` — only those still exactly as it wrote them. Its lock goes
either way. Without this, git refuses every command for the leftover lock, and once the
person removes it as git says, an index still at `old` under a branch at `new` shows the
merge's files as uncommitted changes: committing them would undo the merge.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from baton_tui import killpoints, procs
from baton_tui.core.errors import BatonError

from .git import NO_HOOKS, _gist, git_dirs, run_git
from .refs import read_ref

__all__ = ["advance", "recover"]

RECORD = "baton-advance"


def advance(repo: str | os.PathLike, ref: str, old: str, new: str, message: str) -> None:
    """Move `ref`, checked out in `repo`, from `old` to `new`, the checkout with it; or raise
    BatonError (code 1: something moved meanwhile, code 2: uncommitted changes) with the
    branch, the index and every file as they were."""
    dirs = git_dirs(repo)
    if dirs is None:
        raise BatonError(f"{repo} is not a git checkout", code=2)
    lock, index = dirs[0] / "index.lock", dirs[0] / "index"
    recover(repo)
    record = dirs[0] / RECORD
    mine = {"pid": os.getpid(), "token": procs.start_token(os.getpid()), "ref": ref,
            "old": old, "new": new}
    _write_record(record, mine)
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        record.unlink(missing_ok=True)
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
        killpoints.reached("merge-files")
        proc = run_git(repo, *NO_HOOKS, "update-ref", "-m", message, ref, new, old)
        if proc.returncode != 0:
            raise BatonError(f"{ref.removeprefix('refs/heads/')} moved while merging (a commit "
                             "of yours?): nothing was changed; run it again", code=1)
        killpoints.reached("merge-moved")
        os.replace(lock, index)
        kept = True
    finally:
        if not kept:
            if written:  # the files back to `old`, from the lock's own index
                run_git(repo, "read-tree", "-m", "-u", new, old, env=env)
            Path(lock).unlink(missing_ok=True)
        record.unlink(missing_ok=True)


def _write_record(record: Path, what: dict) -> None:
    tmp = record.with_name(f"{RECORD}.{os.getpid()}")
    tmp.write_text(json.dumps(what), encoding="utf-8")
    os.replace(tmp, record)


def recover(repo: str | os.PathLike) -> str | None:
    """Finish or undo the move of a Baton killed inside `advance` in this checkout (see the
    module docstring); what was done, or None when there was nothing to do."""
    dirs = git_dirs(repo)
    if dirs is None:
        return None
    record, lock, index = dirs[0] / RECORD, dirs[0] / "index.lock", dirs[0] / "index"
    try:
        left = json.loads(record.read_text(encoding="utf-8"))
        ref, old, new = str(left["ref"]), str(left["old"]), str(left["new"])
        pid, token = int(left["pid"]), left.get("token")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        record.unlink(missing_ok=True)  # not a record this code wrote: nothing to act on
        return None
    if procs.alive(pid, float(token) if isinstance(token, (int, float)) else None):
        return None  # still on its way
    try:  # its own lock: made just after the record (a git's of later is not touched)
        ours = abs(lock.stat().st_mtime - record.stat().st_mtime) < 120
    except OSError:
        ours = False
    at = read_ref(repo, ref)
    if at not in (old, new):  # moved on since (a commit of the person's): theirs to keep
        if ours:
            lock.unlink(missing_ok=True)
        record.unlink(missing_ok=True)
        return None
    if at == new:
        if ours:  # its lock holds `new`'s index (`read-tree -m -u` finished before the move)
            os.replace(lock, index)
        else:  # the lock went (removed by hand): entries still at `old` go to `new`
            _index_back(repo, old, new)
        done = f"finished an interrupted merge: {ref.removeprefix('refs/heads/')} is at " \
               f"{new[:12]}, and so are its index and files"
    else:
        if ours:  # (first: putting the files back takes the lock)
            lock.unlink(missing_ok=True)
        _files_back(repo, old, new)
        done = f"undid an interrupted merge: {ref.removeprefix('refs/heads/')} stayed at " \
               f"{old[:12]}, and so did the files it had written"
    Path(f"{lock}.lock").unlink(missing_ok=True)  # a killed `read-tree`'s own
    record.unlink(missing_ok=True)
    run_git(repo, "update-index", "-q", "--refresh")
    return done


def _blobs(repo: str | os.PathLike, commit: str, paths: list[str]) -> dict[str, str]:
    """path -> blob id at `commit`, for those of `paths` it holds."""
    out = run_git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths).stdout
    found = {}
    for entry in filter(None, out.split("\0")):
        meta, _, path = entry.partition("\t")
        found[path] = meta.split()[2]
    return found


def _changed(repo: str | os.PathLike, old: str, new: str) -> list[str]:
    out = run_git(repo, "diff", "--name-only", "-z", "--no-renames", old, new).stdout
    return [path for path in out.split("\0") if path]


def _index_back(repo: str | os.PathLike, old: str, new: str) -> None:
    """Index entries the merge changes that still hold `old`'s version take `new`'s (the files
    are not touched); an entry the person staged since is left as it is."""
    paths = _changed(repo, old, new)
    if not paths:
        return
    was = _blobs(repo, old, paths)
    staged: dict[str, str] = {}
    for line in filter(None, run_git(repo, "ls-files", "-s", "-z", "--", *paths).stdout
                       .split("\0")):
        meta, _, path = line.partition("\t")
        staged[path] = meta.split()[1]
    ours = [p for p in paths if staged.get(p) == was.get(p)]
    if ours:
        run_git(repo, "reset", "-q", new, "--", *ours)


def _files_back(repo: str | os.PathLike, old: str, new: str) -> None:
    """Files the merge changes that are exactly as `new` has them go back to `old`'s version
    (index and file); any other state of a file — the person's edit — is left alone."""
    paths = _changed(repo, old, new)
    if not paths:
        return
    top = Path(repo)
    was, now = _blobs(repo, old, paths), _blobs(repo, new, paths)
    present = [p for p in paths if (top / p).is_file() and not (top / p).is_symlink()]
    hashed = dict(zip(present, run_git(repo, "hash-object", "--",
                                       *present).stdout.split())) if present else {}
    restore, remove = [], []
    for path in paths:
        if hashed.get(path) != now.get(path):
            continue  # not as the merge wrote it (absent on both sides counts as written)
        if path in was:
            restore.append(path)
        else:
            remove.append(path)
    if restore:
        run_git(repo, "checkout", "-q", old, "--", *restore)
    for path in remove:
        (top / path).unlink(missing_ok=True)
    if remove:
        run_git(repo, "rm", "-q", "--cached", "--ignore-unmatch", "--", *remove)


def _still_there(repo: str | os.PathLike, gitdir: Path, ref: str, old: str) -> None:
    try:
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        head = ""
    if head != f"ref: {ref}" or read_ref(repo, ref) != old:
        raise BatonError(f"{ref.removeprefix('refs/heads/')} moved while merging (a commit of "
                         "yours?): nothing was changed; run it again", code=1)
