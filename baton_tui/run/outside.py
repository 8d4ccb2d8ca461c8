"""Writes outside the worktree: what an attempt changed in the person's checkout or Baton's files.

An agent runs as the person, so nothing in the operating system stops it writing
`$REPO/evil.txt` or appending to the person's README by absolute path (unless the
attempt runs in a read-only view of the checkout, see `sandbox`). Baton fingerprints
the places an agent has no business writing before each attempt — the person's checkout
(every changed or untracked file, by size and change time, through `git status`, which
catches edits to clean tracked files), the repository's git config and hooks, the repo's
and the person's Baton config, Baton's `baton` shim — and compares after it. A difference
flags the task (`task.flagged`, flag `outside`, naming the files) on its card, in
`status` and at handoff; in guarded mode the finished task is held at a checkpoint that
names the files, so the person decides before it lands. Change times cannot be set back
by a process, so a restored mtime does not hide a write. Writes by several tasks running
at once cannot be told apart: each of them is flagged.

It also pins git to the task's repository: a worktree whose `.git` was removed or now
points elsewhere is refused before Baton commits anything in it (git would otherwise
walk up and commit into whatever repository encloses the folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton_tui.gitops import fresh_index
from baton_tui.gitops.git import GitError, run_git, supports_worktrees
from baton_tui.gitops.onbranch import head_ref
from baton_tui.paths import baton_home, common_dir_of, personal_config_path
from baton_tui.paths import write_private

if TYPE_CHECKING:
    from baton_tui.store.db import AttemptRow
    from baton_tui.workspace import Workspace

FINGERPRINT = "outside.json"
Fingerprint = dict[str, Any]  # what the watched places looked like (`fingerprint`)
SHOWN = 10  # files named in a flag's message (all of them are in its `files`)
REUSED_FOR = 2.0  # seconds a look at the checkout may serve the next start (see `_since`)


def _stat(path: Path) -> list[int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _checkout(ws: "Workspace") -> dict[str, Any]:
    """Changed and untracked files of the person's checkout, with their stats — none where
    the tasks run in the checkout itself (folder mode: no git, or git older than 2.38, which
    has no `merge-tree --write-tree` for worktrees to land by): there it is their own folder."""
    root = ws.root
    if not ws.paths.is_git or not supports_worktrees():
        return {}
    spec = ["--", "."]
    home = baton_home().resolve()
    if _inside(home, root.resolve()):  # Baton's worktrees live there: never the person's files
        spec.append(f":(exclude){home.relative_to(root.resolve()).as_posix()}")
    env = {"GIT_OPTIONAL_LOCKS": "0"}  # the person's index is never written
    copy = fresh_index.current(root)
    if copy is not None:  # the same entries, their files' times checked once
        env["GIT_INDEX_FILE"] = str(copy)
    try:
        proc = run_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all",
                       "--no-renames", *spec, env=env)
    except GitError:
        return {}
    if proc.returncode != 0:
        return {}
    if copy is None and fresh_index.big_enough(root):
        # A checkout just committed in is racily clean, and each look (which never writes
        # the index back) hashed every file of it again: refresh a copy for the next
        # looks, a second later — the looks of a run's start come with its first
        # checkouts, and the refresh would take the cores from them.
        fresh_index.refresh_later(root)
    found: dict[str, Any] = {}
    for entry in proc.stdout.split("\0"):
        if len(entry) > 3:
            found[entry[3:]] = [entry[:2], _stat(root / entry[3:])]
    return found


_BRANCH_SECTION = re.compile(rb'^\s*\[branch\s+"[^\n]*$\n?(?:^(?!\s*\[).*$\n?)*', re.M)


def _git_config(path: Path) -> str | None:
    """The repository's git config, by what it says but its `[branch "…"]` sections: git
    rewrites the file whenever the person deletes a branch (`git branch -D`), and drops that
    branch's section — the person's doing, not an agent's."""
    try:
        text = path.read_bytes()
    except OSError:
        return None
    return hashlib.sha256(_BRANCH_SECTION.sub(b"", text)).hexdigest()


def _own_files(ws: "Workspace") -> dict[str, Any]:
    """Baton's own and git's control files, by absolute path."""
    files = [ws.paths.project_config, personal_config_path(), baton_home() / "bin" / "baton"]
    common = ws.paths.git_common_dir
    found: dict[str, Any] = {}
    if common is not None:
        found[str(common / "config")] = _git_config(common / "config")
        hooks = common / "hooks"
        try:
            files += sorted(p for p in hooks.iterdir() if p.is_file())
        except OSError:
            pass
    return {**{str(p): _stat(p) for p in files}, **found}


_looks = threading.Lock()
_next: dict[str, Future[Fingerprint]] = {}     # per checkout: the look not begun yet
_current: dict[str, Future[Fingerprint]] = {}  # per checkout: the look under way
_one_at_a_time: dict[str, threading.Lock] = {}
_latest: dict[str, tuple[float, dict[str, Any]]] = {}  # per checkout: the last look, its start


def _run_into(future: Future[Fingerprint], fn: Any, *args: Any) -> None:
    """`fn(*args)`'s result, or what it raised, into `future` (for every caller of it)."""
    try:
        future.set_result(fn(*args))
    except BaseException as exc:  # noqa: BLE001 — raised again by future.result()
        future.set_exception(exc)


def _shared_checkout(ws: "Workspace", join: bool = False) -> dict[str, Any]:
    """`_checkout`, shared: tasks that start and end together (32 at once, say) each need
    the checkout as it is now, and one look begun after they asked serves them all — a
    `git status` of a big checkout is the costliest part of a start. `join`: nothing can
    have written the checkout since the caller's last look but the person (no agent has
    run yet: the first starts of a run), so a look already under way serves it too.
    (Read-only: callers never change what they get.)"""
    key = str(ws.root)
    with _looks:
        look = _current.get(key) if join else None
        leads = False
        if look is None:
            look = _next.get(key)
            leads = look is None
            if look is None:
                look = _next[key] = Future()
        turn = _one_at_a_time.setdefault(key, threading.Lock())
    if leads:
        with turn:  # a look under way may have begun before we asked: the next one is ours
            with _looks:
                del _next[key]  # who asks from now on waits for the look after this one
                _current[key] = look
            began = time.monotonic()
            _run_into(look, _checkout, ws)
            with _looks:
                if _current.get(key) is look:
                    del _current[key]
            if look.exception() is None:
                _latest[key] = (began, look.result())
    return look.result()


def _since(ws: "Workspace", quiet_since: float) -> dict[str, Any] | None:
    """The last look at the checkout, if it began once no agent ran any more (at
    `quiet_since`, monotonic) and no longer than REUSED_FOR ago — nothing has written the
    checkout since but, perhaps, the person, and an edit of theirs in that window would be
    taken for the next agent's. Never while the checkout has one of Baton's branches checked
    out: a landing moves it."""
    began, found = _latest.get(str(ws.root), (-1.0, {}))
    if began < quiet_since or time.monotonic() - began > REUSED_FOR:
        return None
    branch = head_ref(ws.root)
    return None if branch and branch.startswith("refs/heads/baton/") else found


def fingerprint(ws: "Workspace", quiet_since: float | None = None,
                join: bool = False) -> dict[str, Any]:
    """What the watched places look like now. `quiet_since`: no agent has run since then
    (monotonic), so a look at the checkout begun after it still holds (a task that starts
    when the one before it ended, in a chain, needs no second `git status`). `join`: no
    agent has run at all yet, so a look under way holds too (`_shared_checkout`)."""
    checkout = _since(ws, quiet_since) if quiet_since is not None else None
    return {"checkout": checkout if checkout is not None else _shared_checkout(ws, join),
            "own": _own_files(ws)}


def ahead(ws: "Workspace", quiet_since: float | None = None, join: bool = False
          ) -> Future[Fingerprint]:
    """The fingerprint as it is now, taken on a thread of its own: the one an attempt starts
    from, while the task's worktree is made, and the one it ended with, while its work is
    committed (so neither adds up with the other step)."""
    future: Future[Fingerprint] = Future()
    threading.Thread(target=_run_into, args=(future, fingerprint, ws, quiet_since, join),
                     daemon=True, name="baton-fingerprint").start()
    return future


def before(ws: "Workspace", attempt_dir: Path, taken: Future[Fingerprint] | None = None
           ) -> None:
    """Record the fingerprint an attempt starts from, in its own (0700) folder (`taken`:
    one taken meanwhile by `ahead`, before the agent starts)."""
    found = taken.result() if taken is not None else fingerprint(ws)
    write_private(attempt_dir / FINGERPRINT, json.dumps(found))


def changed(ws: "Workspace", attempt: "AttemptRow", taken: Future[Fingerprint] | None = None
            ) -> list[str]:
    """Files written outside the worktree while `attempt` ran (checkout files repo-relative,
    others absolute); [] when nothing changed or the attempt has no fingerprint. `taken`:
    the fingerprint since it ended, from `ahead`."""
    if not attempt.log_path:
        return []
    try:
        start = json.loads((Path(attempt.log_path).parent / FINGERPRINT).read_text())
    except (OSError, ValueError):
        return []
    now = taken.result() if taken is not None else fingerprint(ws)
    found: list[str] = []
    for part in ("checkout", "own"):
        old, new = start.get(part, {}), now[part]
        found += sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    return found


def pinned(ws: "Workspace", workdir: Path) -> str | None:
    """Why git must not run in `workdir` for this task (None: it is this repository's
    worktree). Folder mode and the checkout itself need no pin."""
    common = ws.paths.git_common_dir
    if common is None or workdir == ws.root:
        return None
    dot = workdir / ".git"
    if not dot.is_file():
        return f"its worktree's .git is gone from {workdir}"
    if common_dir_of(dot) != common.resolve():
        return f"its worktree's .git at {workdir} no longer points into this repository"
    return None


def named(files: list[str]) -> str:
    """The first SHOWN of `files` for a flag's message, and how many more there are."""
    return ", ".join(files[:SHOWN]) + (f" (+{len(files) - SHOWN} more)"
                                      if len(files) > SHOWN else "")
