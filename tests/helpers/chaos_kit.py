"""The crash tests' tools: kill the conductor at a named point, resume, and check what must hold.

A run is started detached with `BATON_KILL_AT` naming a kill point (baton_tui/killpoints.py):
the conductor SIGKILLs itself (or its process group) exactly there, every time. Then the
test resumes and `check_after_crash` asserts the promises of README's "What Baton guarantees
after a crash": every task's work on the integration branch exactly once, no worktree lost,
no task run again after its report, no stale lock left anywhere.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from helpers.run_kit import alive, events, git, status, wait_for


def start_killed(baton, point: str, *, approve: bool = True, timeout: float = 90.0,
                 extra_env: dict | None = None) -> dict:
    """`baton run --detach` with the conductor armed to die at `point`; waits until it did.
    Returns the status after the death."""
    env = {"BATON_KILL_AT": point, **(extra_env or {})}
    args = ["run", "--detach"] + (["--approve"] if approve else [])
    result = baton(*args, env=env)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    pid_seen: list[int] = []

    def dead() -> dict | None:
        st = status(baton)
        if st["conductor"] is not None:
            pid_seen[:] = [st["conductor"]["pid"]]
            return None
        return st if not pid_seen or not alive(pid_seen[0]) else None

    return wait_for(dead, timeout, what=f"the conductor to die at {point}")


def killed_at(baton, point: str) -> bool:
    """Whether the last conductor died without finishing (no run.finished after it started)."""
    kinds = [e["kind"] for e in events(baton)]
    last_start = max(i for i, k in enumerate(kinds) if k == "conductor.started")
    return "run.finished" not in kinds[last_start:]


def git_wrapper(folder: Path, script: str) -> dict[str, str]:
    """A `git` first on PATH that runs `script` (sh, with $REAL the real git) for
    `git worktree add …` and execs the real git for everything else; returns the env."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True,
                          check=True).stdout.strip()
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\nREAL="{real}"\n'
                       'if [ "$1" = worktree ] && [ "$2" = add ]; then\n'
                       f'{script}\nfi\nexec "$REAL" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def worktrees_dir() -> Path:
    return Path(os.environ["BATON_HOME"]) / "worktrees"


def check_after_crash(repo: Path, baton, files: dict[int, str]) -> dict:
    """What a crash must never break, once the run was resumed to its end. `files`: task id
    -> a file its agent writes (with the task id as its content). Returns the status."""
    st = status(baton)
    evs = events(baton)
    states = {t["id"]: t["state"] for t in st["tasks"]}
    assert set(states.values()) == {"landed"}, states
    integration = st["plan"]["integration_branch"]
    subjects = git(repo, "log", "--format=%s", integration).splitlines()
    for task_id, name in files.items():
        # Its work on the integration branch, committed once and landed once.
        assert git(repo, "show", f"{integration}:{name}") == str(task_id), name
        assert sum(s.startswith(f"Task {task_id}:") for s in subjects) == 1, (task_id, subjects)
        assert sum(s.startswith(f"Land task {task_id}:") for s in subjects) == 1, \
            (task_id, subjects)
        # Never run again once it reported (a start recorded later for the very attempt that
        # reported is its adoption by a new conductor, not a second run).
        mine = [e for e in evs if e.get("task") == task_id]
        trail = [e["kind"] for e in mine]
        reported = trail.index("task.reported")
        done_by = mine[reported]["data"].get("attempt")
        again = [e for e in mine[reported:] if e["kind"] in ("task.started", "task.resumed")
                 and e["data"].get("attempt") != done_by]
        assert again == [], (task_id, trail)
        assert trail.count("task.landed") == 1, (task_id, trail)
    # No worktree lost: each is whole, on its own branch — or handed on to a later task
    # (recycled), its branch kept.
    for t in st["tasks"]:
        if t["worktree"] is None:
            assert "recycled" in (t.get("worktree_reason") or ""), t
            continue
        path = Path(t["worktree"])
        assert (path / ".git").is_file(), path
        head = git(path, "symbolic-ref", "HEAD")
        assert head == f"refs/heads/{t['branch']}", (head, t["branch"])
        assert git(path, "status", "--porcelain", "--untracked-files=no") == "", path
    assert_no_leftovers(repo)
    return st


def assert_no_leftovers(repo: Path) -> None:
    """No stale lock or half-made worktree anywhere: no index.lock or `locked` file in git's
    worktree records, no `.preparing` marker, nothing git would call prunable."""
    common = Path(git(repo, "rev-parse", "--git-common-dir"))
    common = common if common.is_absolute() else repo / common
    stale = [str(p) for p in (common / "worktrees").glob("*/index.lock")]
    stale += [str(p) for p in (common / "worktrees").glob("*/locked")]
    stale += [str(p) for p in worktrees_dir().rglob("*.preparing")]
    stale += [str(p) for p in (common / "worktrees").glob("*/index.baton-*")]
    assert stale == [], stale
    listing = git(repo, "worktree", "list", "--porcelain")
    assert not re.search(r"^(prunable|locked)", listing, re.M), listing
