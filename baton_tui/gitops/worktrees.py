"""Task worktrees: creating them, committing what an agent left, snapshotting, removing.

Every build task works in its own ``git worktree`` outside the person's checkout, on its own
branch, so agents never touch the person's files. Commits made here go through a temporary
index with every hook off (the person's pre-commit hook is theirs, not a gate on an agent's
work), and nothing depends on the person having a git identity.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import threading
import uuid
from pathlib import Path, PurePosixPath
from typing import Protocol

from baton_tui import killpoints
from baton_tui import procs
from baton_tui.core.errors import BatonError

from . import fresh_index, index_file
from .files import copy_into, dir_size  # noqa: F401 (re-exported)
from .git import (
    NO_HOOKS, GitError, common_dir, git, git_dirs, identity_env, repo_root, rev_parse,
    run_git, status_paths,
)
from .refs import (
    EMPTY_TREES, loose_commit, read_ref, remember_changes, remember_tree, tree_of,
    valid_branch_name,
)


class MakingSteps(Protocol):
    """What runs the git steps of a worktree's making, recorded so a kill can be undone
    (`making.Making`, which builds on this module): one step's exit status and output."""

    def run(self, argv: list[str], cwd: str | os.PathLike, point: str) -> tuple[int, str]: ...


__all__ = [
    "DROPPINGS",
    "is_dropping",
    "ensure_branch",
    "add_worktree",
    "move_ahead",
    "add_detached_worktree",
    "commit_all",
    "changed_paths",
    "snapshot",
    "remove_worktree",
    "admin_dirs",
    "MakingSteps",
    "copy_into",
    "dir_size",
]

#: File-name patterns of what agents leave behind and must never be committed: aider's chat
#: history and caches, Baton's own prompt and report files. Matched against every path component
#: (so ``sub/.aider.x`` and ``.aider.tags.cache/…`` are droppings too).
DROPPINGS: tuple[str, ...] = (
    ".aider*",
    ".baton-prompt*",
    ".baton-report*",
)


def is_dropping(path: str) -> bool:
    """True when any component of the repo-relative ``path`` matches a DROPPINGS pattern."""
    parts = PurePosixPath(path.replace(os.sep, "/")).parts
    return any(fnmatch.fnmatchcase(part, pat) for part in parts for pat in DROPPINGS)


def _dropping_excludes() -> list[str]:
    # ``**/x`` alone does not exclude files inside a directory named x, hence the ``/**`` twin.
    out: list[str] = []
    for pat in DROPPINGS:
        out.append(f":(top,exclude,glob)**/{pat}")
        out.append(f":(top,exclude,glob)**/{pat}/**")
    return out


def _dropping_pathspecs() -> list[str]:
    out: list[str] = []
    for pat in DROPPINGS:
        out.append(f":(top,glob)**/{pat}")
        out.append(f":(top,glob)**/{pat}/**")
    return out


def _full_branch_ref(branch: str) -> str:
    """``refs/heads/<branch>``, after checking the name by ``git check-ref-format --branch``'s
    rules (in Python: no process per check)."""
    if branch.startswith("refs/"):
        return branch
    if not valid_branch_name(branch):
        raise GitError(["check-ref-format", "--branch", branch], "", 1,
                       f"invalid branch name: {branch!r}")
    return f"refs/heads/{branch}"


_FULL_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def ensure_branch(repo: str | os.PathLike, branch: str, start_commit: str) -> str:
    """Create ``branch`` at ``start_commit`` unless it exists; never checks anything out.

    ``update-ref`` with an empty old value only creates, so a branch made concurrently (or by a
    previous run) is kept as it is, not reset. Returns the branch's commit. A full object id
    is handed to ``update-ref`` as it is (git refuses a missing object, or one that is not a
    commit, on a branch); anything else is resolved first.
    """
    ref = _full_branch_ref(branch)
    existing = read_ref(repo, ref)
    if existing:
        return existing
    if _FULL_ID.fullmatch(start_commit):
        # The all-zero id would make update-ref delete instead of create.
        commit = start_commit if start_commit.strip("0") else None
    else:
        commit = rev_parse(repo, start_commit)
    if commit is None:
        raise GitError(["rev-parse", start_commit], "", 128, f"no such commit: {start_commit}")
    proc = run_git(repo, *NO_HOOKS, "update-ref", "-m", "baton: create branch", ref, commit, "")
    if proc.returncode != 0:
        existing = read_ref(repo, ref)
        if existing:  # lost a race to someone creating it: that is fine
            return existing
        raise GitError(["update-ref", ref, commit, ""], proc.stderr, proc.returncode)
    return commit


def _check_outside(repo, path: Path) -> Path:
    path = Path(path).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    path = Path(os.path.abspath(path))
    root = repo_root(repo)
    if root is not None:
        resolved = path.resolve()
        if resolved == root or resolved.is_relative_to(root):
            raise BatonError(
                f"worktree path {path} is inside the repository {root}; "
                "set BATON_HOME to a folder outside it"
            )
    return path


# git 2.39's `worktree add`/`remove`/`prune` read every worktree's admin folder, and fail
# ("failed to read .git/worktrees/X/commondir") while another is half-created: one at a time.
# Only git's record of a new worktree is made under it (`worktree add --no-checkout`); its
# files are checked out beside the others' (in a big repository that is the slow part, and
# 32 tasks starting together waited for each other's checkouts).
_WORKTREE_LOCK = threading.Lock()


def admin_dirs(repo: str | os.PathLike, path: str | os.PathLike) -> list[Path]:
    """git's admin folders (`<common>/worktrees/X`) recorded for the worktree at `path`."""
    home = common_dir(repo) / "worktrees"
    want = os.path.abspath(os.path.join(path, ".git"))
    found = []
    try:
        entries = list(home.iterdir())
    except OSError:
        return []
    for entry in entries:
        try:
            pointer = (entry / "gitdir").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if os.path.abspath(pointer) == want:
            found.append(entry)
    return found


def add_worktree(repo: str | os.PathLike, path: str | os.PathLike, branch: str,
                 start_ref: str, making: MakingSteps | None = None, whole: bool = False) -> Path:
    """Check ``branch`` out in a new worktree at ``path`` (outside the repo).

    Creates the branch at ``start_ref`` when it does not exist yet; attaches to it when it does
    (a resumed task keeps its work). With ``making`` (see ``making.py``) git runs as a recorded
    step of that worktree's making, its output to a file: a kill meanwhile can be undone.
    ``whole``: one `worktree add` checks the files out too, under the lock (a worktree made
    ahead of its task, in the background: one git process fewer, nobody waiting on it).
    """
    wt = _check_outside(repo, Path(path))
    wt.parent.mkdir(parents=True, exist_ok=True)
    ref = _full_branch_ref(branch)
    how = NO_HOOKS if whole else ()  # no post-checkout hook, as for the checkout below
    files = () if whole else ("--no-checkout",)
    with _WORKTREE_LOCK:
        if read_ref(repo, ref):
            _add(repo, making, *files, "--", str(wt), branch, how=how)
        else:
            _add(repo, making, *files, "-b", branch, "--", str(wt), start_ref, how=how)
    if not whole:
        _check_out(wt, making)
    note_checked_out(wt)
    return wt


def note_checked_out(worktree: Path) -> None:
    """A step of Baton's just checked HEAD out in `worktree`: its index holds HEAD alone."""
    index_file.note_holds(fresh_index.index_of(worktree), read_ref(worktree, "HEAD"))


def move_ahead(worktree: Path, made_at: str, onto: str | None, making: MakingSteps) -> str:
    """Bring a worktree made ahead at ``made_at`` (its branch cut there, no agent ever in it)
    to ``onto``, the integration tip now; returns the integration commit its branch carries.

    `git reset --keep` rewrites only the files that differ, and refuses rather than overwrite
    an edit someone made in the folder meanwhile: that edit and the branch then stay as they
    are (the landing merges what came since). A branch someone moved is left alone too."""
    index = fresh_index.index_of(worktree)
    held = index_file.holds(index, made_at)  # as its checkout left it
    fresh_index.install(worktree)  # no agent has been in it: the refreshed copy is its index
    if held:  # the copy holds what the index it was made from held
        index_file.note_holds(index, made_at)
    if not onto or onto == made_at or read_ref(worktree, "HEAD") != made_at:
        return made_at
    code, _output = making.run(["git", *NO_HOOKS, "reset", "--keep", "--quiet", onto],
                               worktree, "worktree-add")
    if code == 0 and held:
        index_file.note_holds(index, onto)
    return onto if code == 0 else made_at


def add_detached_worktree(repo: str | os.PathLike, path: str | os.PathLike, ref: str,
                          making: MakingSteps | None = None) -> Path:
    """A worktree at ``ref`` with a detached HEAD: for research tasks, which own no branch."""
    wt = _check_outside(repo, Path(path))
    wt.parent.mkdir(parents=True, exist_ok=True)
    with _WORKTREE_LOCK:
        _add(repo, making, "--no-checkout", "--detach", "--", str(wt), ref)
    _check_out(wt, making)
    return wt


def _add(repo, making: MakingSteps | None, *args: str, how: tuple[str, ...] = ()) -> None:
    _step(repo, making, *how, "worktree", "add", *args)


def _check_out(worktree: Path, making: MakingSteps | None) -> None:
    """The files of a worktree added without them: what `worktree add` itself runs."""
    _step(worktree, making, "reset", "--hard", "--no-recurse-submodules", "--quiet")


def _step(cwd, making: MakingSteps | None, *args: str) -> None:
    if making is None:
        git(cwd, *args)
        return
    code, output = making.run(["git", *args], cwd, "worktree-add")
    if code != 0:
        raise GitError(list(args), output, code)


def _temp_index(worktree, tag: str) -> tuple[Path, Path]:
    """A private copy of the worktree's index (stat info included, so ``add -A`` only hashes
    files that really changed). Returns (real_index, temp_index). A commit starts from the
    copy `fresh_index.refresh` made, when it was made from the index as it still is.

    The copy keeps the index file's own time: git re-reads a "racily clean" entry (a file
    changed in the clock tick its entry was recorded in, size and times unchanged) only when
    the index is no older than it, and a copy stamped now would hide such an edit."""
    real = fresh_index.index_of(worktree)
    tmp = real.with_name(f"index.baton-{tag}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    if tag == "commit" and fresh_index.claim(real, tmp):
        return real, tmp
    if real.exists():
        shutil.copyfile(real, tmp)
        shutil.copystat(real, tmp)
    # A missing GIT_INDEX_FILE is read as an empty index (an empty *file* is not).
    return real, tmp


#: What a merge, cherry-pick, revert or rebase stopped half done leaves in a worktree's git
#: directory: `git commit` would make a merge commit of it, or take its author.
_HALF_DONE = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply",
              "sequencer")


def _half_done(worktree: Path) -> bool:
    dirs = git_dirs(worktree)
    return dirs is None or any(os.path.lexists(dirs[0] / name) for name in _HALF_DONE)


def _commit_index(worktree: Path, head: str, changes: list[str], message: str,
                  env: dict[str, str]) -> str:
    """`git commit` of the index at ``env``'s GIT_INDEX_FILE on HEAD (at ``head`` as read,
    the index holding HEAD's tree plus ``changes``): no hook, no signing, no auto-gc or
    maintenance, the message verbatim. git moves HEAD with the value it read as the old one,
    so a concurrent move is never overwritten (the commit is then made on top of it, and
    nothing is remembered of it). Its tree and parents are read from the new object."""
    git(worktree, *NO_HOOKS, "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c",
        "rerere.enabled=false", "commit", "--quiet", "--no-verify", "--no-gpg-sign",
        "--cleanup=verbatim", "--allow-empty-message", "-F", "-",
        input=message if message.endswith("\n") else message + "\n",
        env={**env, **identity_env(worktree)})
    commit = read_ref(worktree, "HEAD")
    if commit is None:
        raise GitError(["commit"], "", 1, "git commit left no HEAD")
    made = loose_commit(worktree, commit)
    if made is not None and made[1] == (head,):
        remember_tree(commit, made[0], [head])
        remember_changes(commit, head, changes)
        record_droppings(commit, holds_droppings(head))
    return commit


def _commit_tree(worktree, tree: str, parents: list[str], message: str) -> str:
    args = [*NO_HOOKS, "commit-tree", "--no-gpg-sign", tree]
    for p in parents:
        args += ["-p", p]
    args += ["-F", "-"]
    # --no-gpg-sign: a background conductor must never wait on a pinentry prompt.
    commit = git(worktree, *args, input=message if message.endswith("\n") else message + "\n",
                 env=identity_env(worktree))
    remember_tree(commit, tree, parents)
    return commit


# ---- which commits hold droppings ---------------------------------------------------------
#
# commit_all must put back any dropping the agent staged or unstaged (its tracked version stays
# as in HEAD), which costs a `git reset` over the dropping pathspecs. It is skipped when that
# cannot change anything: the index names no dropping at all and HEAD's tree holds none. What
# HEAD's tree holds is learned once per commit (a tree never changes) and carried forward:
# a commit made from such a HEAD and index holds none either, nor does a merge of two such.

_HOLDS_DROPPINGS: dict[str, bool] = {}


def _literal_prefix(pattern: str) -> bytes:
    for i, ch in enumerate(pattern):
        if ch in "*?[\\":
            return pattern[:i].encode()
    return pattern.encode()


_DROPPING_BYTES = tuple(_literal_prefix(p) for p in DROPPINGS)


def holds_droppings(commit: str) -> bool | None:
    """Whether ``commit``'s tree holds a dropping, when known in this process."""
    return _HOLDS_DROPPINGS.get(commit)


def record_droppings(commit: str, holds: bool | None) -> None:
    """Note what ``commit``'s tree holds (None: unknown, nothing is noted)."""
    if holds is None:
        return
    if len(_HOLDS_DROPPINGS) > 50_000:
        _HOLDS_DROPPINGS.clear()
    _HOLDS_DROPPINGS[commit] = holds


def _learn_droppings(repo, commit: str) -> bool:
    known = _HOLDS_DROPPINGS.get(commit)
    if known is None:
        empty = next(t for t in EMPTY_TREES if len(t) == len(commit))
        out = git(repo, "diff-tree", "-r", "--name-only", "-z", empty, commit, "--",
                  *_dropping_pathspecs())
        known = bool(out.strip("\0"))
        record_droppings(commit, known)
    return known


def _index_may_name_droppings(index: Path) -> bool:
    """False only when the index file certainly names no dropping: a version 2 or 3 index
    (whose entries spell each path in full) holding none of the droppings' literal prefixes,
    not split (a split index keeps entries in a ``sharedindex.*`` file beside it) and not
    sparse (a sparse index folds whole directories into one entry)."""
    try:
        data = index.read_bytes()
    except FileNotFoundError:
        return False  # no index yet: an empty one
    except OSError:
        return True
    if len(data) < 12 or data[:4] != b"DIRC" or data[4:8] not in (b"\0\0\0\x02", b"\0\0\0\x03"):
        return True
    if not all(_DROPPING_BYTES) or any(p in data for p in _DROPPING_BYTES):
        return True
    if b"sdir" in data:  # the sparse-index extension (or a path that spells it: no matter)
        return True
    try:
        return any(index.parent.glob("sharedindex.*"))
    except OSError:
        return True


_BATON_LOCK = re.compile(rb"baton (\d+) (\S+)\n")


def _take_lock(lock: Path) -> None:
    """Create ``index.lock`` as Baton's own: this process's pid and start token inside. One
    a Baton process left when it was killed mid-commit is stale, and taken over (with the
    temporary indexes it left); any other lock is respected — git may be running there."""
    mine = f"baton {os.getpid()} {procs.start_token(os.getpid())}\n".encode()
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                owner = _BATON_LOCK.fullmatch(lock.read_bytes())
            except OSError:
                owner = None
            if owner is None or procs.alive(int(owner[1]), _token(owner[2])):
                raise GitError(["commit"], f"{lock} exists: another git process is running "
                               "here (remove it if none is)", 128) from None
            for left in lock.parent.glob(f"index.baton-*-{int(owner[1])}-*"):
                left.unlink(missing_ok=True)
            lock.unlink(missing_ok=True)
            continue
        os.write(fd, mine)
        os.close(fd)
        return
    raise GitError(["commit"], f"{lock} keeps coming back", 128)


def _token(raw: bytes) -> float | None:
    try:
        return float(raw)
    except ValueError:
        return None


def commit_all(worktree: str | os.PathLike, message: str) -> str | None:
    """Commit everything the agent left in ``worktree`` and return the commit (None: no change).

    Stages tracked changes, new files and deletions, honouring .gitignore and leaving DROPPINGS
    out (their tracked versions stay as they are in HEAD). Works on a temporary index with no
    hook run, and never overwrites a concurrent move of HEAD. Holds ``index.lock`` throughout
    and installs the new index at the end, so ``git status`` is clean afterwards.

    HEAD is read from the ref files and the tree of a commit Baton made or met is remembered.
    When the index held HEAD's tree and nothing more (as Baton's own step left it), the paths
    the commit changes are read from the index before and after ``add -A`` — so whether there
    is anything to commit is known without ``write-tree``, and ``git commit`` itself (hooks,
    signing, auto-gc and message clean-up off) writes the tree, the commit and HEAD with its
    old value in one process (`_commit_index`): two git processes in the usual case. Otherwise,
    or when the worktree holds a merge, cherry-pick, revert or rebase left half done (which
    ``git commit`` would finish), the plumbing — ``add -A``, ``write-tree``, ``commit-tree``,
    ``update-ref HEAD new old`` (which fails on a concurrent move): four processes, five when
    droppings must be put back.
    """
    worktree = Path(worktree)
    real, tmp = _temp_index(worktree, "commit")
    lock = real.with_name(real.name + ".lock")
    try:
        _take_lock(lock)
    except GitError:
        tmp.unlink(missing_ok=True)
        raise
    killpoints.reached("commit")
    installed = False

    def install(holds: str | None) -> None:
        """The private index becomes the worktree's, holding `holds` alone."""
        nonlocal installed
        if tmp.exists():
            os.replace(tmp, real)
            installed = True
            index_file.note_holds(real, holds)

    try:
        env = {"GIT_INDEX_FILE": str(tmp)}
        head = read_ref(worktree, "HEAD")
        index_clean = not _index_may_name_droppings(tmp)
        if head is None:
            put_back = not index_clean
        else:
            put_back = not (index_clean and not _learn_droppings(worktree, head))
        # The index as a step of Baton's left it, holding HEAD alone (and the private copy
        # the same): then what `add -A` changes in it is what the commit changes.
        before = index_file.holding(real, head) if head else None
        if before is not None and not before.same(tmp):
            before = None
        git(worktree, "add", "-A", "--", ":/", *_dropping_excludes(), env=env)
        # Droppings the agent staged (or unstaged) itself go back to their HEAD state.
        if put_back and head:
            git(worktree, "reset", "-q", head, "--", *_dropping_pathspecs(), env=env)
        elif put_back:
            git(worktree, "rm", "--cached", "-r", "-q", "--ignore-unmatch", "--",
                *_dropping_pathspecs(), env=env)
        after = index_file.read(tmp) if before is not None else None
        if head and before is not None and after is not None and not put_back \
                and not _half_done(worktree):
            changes = index_file.changed_paths(before, after)
            commit = _commit_index(worktree, head, changes, message, env) if changes else None
            install(commit or head)
            return commit
        tree = git(worktree, "write-tree", env=env)
        unchanged = tree == tree_of(worktree, head) if head else tree in EMPTY_TREES
        if unchanged:
            install(head)
            return None
        commit = _commit_tree(worktree, tree, [head] if head else [], message)
        git(worktree, *NO_HOOKS, "update-ref", "-m", "baton: commit agent's work", "HEAD",
            commit, head or "")
        if head and before is not None and after is not None:
            remember_changes(commit, head, index_file.changed_paths(before, after))
        # The new tree's droppings are HEAD's (put back, or there were none anywhere).
        record_droppings(commit, holds_droppings(head) if head else False)
        install(commit)
        return commit
    finally:
        if not installed:
            tmp.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)


def changed_paths(worktree: str | os.PathLike) -> list[str]:
    """Repo-relative paths with tracked changes, plus untracked files that are not ignored.

    Used to prove a read-only (research) worktree stayed read-only; DROPPINGS are left out, since
    a read-only agent's chat history is not a write to the project.
    """
    paths = set(status_paths(worktree, untracked=True))
    return sorted(p for p in paths if not is_dropping(p))


def snapshot(worktree: str | os.PathLike, ref: str, message: str) -> str | None:
    """Commit the worktree's full state (tracked changes + untracked files) to ``ref``.

    HEAD, the branch and the real index do not move: this is the safety copy taken before any
    cleanup, and a stray write that "lands nowhere" is kept here for inspection. The commit's
    parent is HEAD. Returns the commit, or None when the worktree has no HEAD commit.
    """
    if not ref.startswith("refs/"):
        raise ValueError(f"snapshot ref must be a full ref under refs/: {ref!r}")
    head = read_ref(worktree, "HEAD")
    if head is None:
        return None
    _real, tmp = _temp_index(worktree, "snapshot")
    try:
        env = {"GIT_INDEX_FILE": str(tmp)}
        git(worktree, "add", "-A", "--", ":/", env=env)
        tree = git(worktree, "write-tree", env=env)
    finally:
        tmp.unlink(missing_ok=True)
    commit = _commit_tree(worktree, tree, [head], message)
    git(worktree, *NO_HOOKS, "update-ref", "-m", "baton: snapshot", ref, commit)
    return commit


def remove_worktree(repo: str | os.PathLike, path: str | os.PathLike) -> None:
    """Remove a worktree (even dirty, even locked) and prune git's record of it.

    Only called after ``snapshot``: ``--force`` discards whatever was not committed. A worktree
    whose folder is already gone, or that git no longer knows, is removed and pruned without
    error.
    """
    with _WORKTREE_LOCK:
        proc = run_git(repo, "worktree", "remove", "--force", "--force", "--", os.fspath(path))
        if proc.returncode != 0 and Path(path).exists() and Path(path, ".git").is_file():
            admins = admin_dirs(repo, path)  # git refused (a half-made record): by hand
            for admin in admins:
                shutil.rmtree(admin, ignore_errors=True)
            if admins:  # only a folder that is this repository's worktree
                shutil.rmtree(path, ignore_errors=True)
        git(repo, "worktree", "prune")
    if Path(path).exists():
        raise GitError(["worktree", "remove", "--force", os.fspath(path)], proc.stderr,
                       proc.returncode)
