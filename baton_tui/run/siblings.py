"""Writes into a sibling task's places: its worktree, or its attempts' prompts.

Where the operating system lets Baton, an agent sees every other task's worktree and attempt
folder read-only (`readonly`). Where it does not (or the read-only view is off), what gets
through is detected after each attempt, from change times (which no process can set back):

- An attempt's `prompt.md` is written once, before its agent starts: one changed after its
  attempt began was written by someone else (looked at while its attempt may still read it).
- A sibling's worktree changes while its own agent runs, and while Baton checks and commits
  its work. A changed file there whose change time is after all that (the sibling's last
  attempt ended and its last event was written: it failed, or waits on the person) is not
  its agent's work; Baton would commit it under the sibling's name at a retry.

Each such write made while an attempt ran flags that attempt's task, naming the sibling and
the files, and flags the sibling too, naming the writer. Not detected: a write into a
sibling's worktree while the sibling's own agent runs (it cannot be told from the sibling's
own), and a write into the worktree of a task that has landed (never committed again). Several
attempts running at once cannot be told apart: each of them is flagged. An edit the person
makes by hand in a failed task's worktree while agents run is flagged as theirs too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from baton_tui.core.events import EventKind, State
from baton_tui.gitops.git import GitError, status_paths
from baton_tui.store import foldcache

if TYPE_CHECKING:
    from baton_tui.store.db import AttemptRow, PlanRow
    from baton_tui.workspace import Workspace

# Tasks whose agent has ended and whose worktree may still be committed under their name.
QUIET = frozenset({State.FAILED, State.PARKED, State.PAUSED, State.CHECKPOINT})
SHOWN = 10


def _changed_at(path: Path) -> float | None:
    try:
        return os.lstat(path).st_ctime
    except OSError:
        return None


def _worktree_files(workdir: Path) -> list[str]:
    """The changed and untracked files of a task's worktree, repo-relative."""
    try:
        return status_paths(workdir, untracked=True)
    except GitError:
        return []


def found(ws: "Workspace", plan: "PlanRow", attempt: "AttemptRow",
          now: float) -> dict[int, list[str]]:
    """Sibling task id → what of its places was written while `attempt` ran (from its
    start to `now`, or its end) and its own agent did not: worktree files, repo-relative,
    and `prompt.md of attempt N`."""
    began, ended = attempt.started, attempt.ended or now
    if began is None:
        return {}

    def during(t: float | None) -> bool:
        return t is not None and began <= t <= ended

    hits: dict[int, list[str]] = {}
    # The prompts it could have reached: those of the attempts that ran meanwhile.
    for row_id, task_id, started, log_path in ws.store.prompts_live_since(plan.id, began):
        if task_id == attempt.task_id or not log_path:
            continue
        changed = _changed_at(Path(log_path).parent / "prompt.md")
        if changed is not None and changed > started and during(changed):
            hits.setdefault(task_id, []).append(f"prompt.md of attempt {row_id}")
    quiet = foldcache.reading(ws.store, plan.id, lambda folder: [
        (task_id, view.workdir) for task_id, view in folder.placed_views()
        if task_id != attempt.task_id and view.state in QUIET and view.workdir])
    for task_id, workdir_text in quiet:
        rows = [row for row in ws.store.attempts(plan.id, task_id) if row.started is not None]
        if not rows or any(row.ended is None for row in rows):
            continue  # its own agent may be writing: its files cannot be told from ours
        # Baton's own doings after its agent ended (its check, its commit) come before the
        # task's last event: only what changed after that is someone else's.
        last_end = max([row.ended for row in rows if row.ended is not None] + [
            ws.store.last_event_at(plan.id, task_id, EventKind.TASK_FLAGGED) or 0.0])
        workdir = Path(workdir_text)
        if workdir.resolve() == ws.root.resolve() or not (workdir / ".git").exists():
            continue
        for name in _worktree_files(workdir):
            changed = _changed_at(workdir / name)
            if changed is not None and changed > last_end and during(changed):
                hits.setdefault(task_id, []).append(name)
    return hits


def _named(items: list[str]) -> str:
    return ", ".join(items[:SHOWN]) + (f" (+{len(items) - SHOWN} more)"
                                       if len(items) > SHOWN else "")


def flag(ws: "Workspace", plan: "PlanRow", attempt: "AttemptRow", now: float) -> None:
    """Flag `attempt`'s task for each sibling it wrote into, and each such sibling."""
    for sibling, items in sorted(found(ws, plan, attempt, now).items()):
        ws.store.append(plan.id, attempt.task_id, EventKind.TASK_FLAGGED, {
            "flag": "sibling", "attempt": attempt.id, "task": sibling, "files": items,
            "message": f"wrote into task {sibling}'s places: {_named(items)}"})
        ws.store.append(plan.id, sibling, EventKind.TASK_FLAGGED, {
            "flag": "sibling", "by": attempt.task_id, "files": items,
            "message": f"written by task {attempt.task_id}'s agent, not its own: "
                       f"{_named(items)}"})
