"""Bringing the work home, for every front end: review, merge, discard, gc.

The rules of DESIGN.md's git model live here — merge order (plan order, carried work
first), what discarding a landed task takes with it, what gc may collect — and the
results come back as plain data; `commands/handoff.py` and the TUI only print them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from baton_tui import killpoints, layout
from baton_tui.core.errors import BatonError
from baton_tui.gitops import git, making, worktrees
from baton_tui.gitops.handoff import (
    TaskBranch, branch_ref, combine, merge as git_merge, not_in_tree, review as git_review,
)
from baton_tui.gitops.landing import is_ancestor
from baton_tui.handoff.order import carried_first
from baton_tui.plan import current as plans
from baton_tui.core.dag import topo_order
from baton_tui.core.slug import integration_branch, task_branch
from baton_tui.core import rules
from baton_tui.core.rules import Action
from baton_tui.core.events import LANDED, EventKind, State
from baton_tui.core.views import Folder
from baton_tui.core.visible import shown
from baton_tui.core.words import Mode
from baton_tui.workspace import Workspace

K = EventKind


def git_handoff(ws: Workspace) -> bool:
    """False in folder mode: the tasks worked in the folder itself, nothing to merge."""
    return ws.paths.is_git and git.supports_worktrees()


def _landings(folder: Folder) -> tuple[dict[int, int], dict[int, int]]:
    """Each landed task's landing event, and each task's cut event: a branch carries the
    tasks that landed before it was cut."""
    landed = {t: v.landed_event for t, v in folder.tasks.items() if v.landed_event is not None}
    cut = {t: v.cut_event or 0 for t, v in folder.tasks.items()}
    return landed, cut


def merge_order(cur: plans.Current) -> list[int]:
    """Plan order (dependencies first), with the work a branch carries merged before it, so
    each merge brings only its own task and a conflict is named after the task causing it."""
    plan_order = [t.id for t in cur.doc.tasks]
    seen: set[int] = set()
    in_order = True
    for t in cur.doc.tasks:
        seen.add(t.id)
        if not set(t.depends_on) <= seen:
            in_order = False
            break
    base_order = plan_order if in_order else topo_order(cur.doc.deps(), plan_order)
    position = {task_id: i for i, task_id in enumerate(base_order)}
    return carried_first(base_order, position, *_landings(cur.folder))


def landed_branches(ws: Workspace, cur: plans.Current, only: int | None = None) -> list:
    """Landed build tasks in merge order, as handoff TaskBranches."""
    found = []
    for task_id in merge_order(cur):
        task = cur.doc.task(task_id)
        if task.mode != Mode.BUILD or cur.view(task_id).state not in LANDED:
            continue
        if only is not None and task_id != only:
            continue
        view = cur.view(task_id)
        found.append(TaskBranch(task_id, task.title, task_branch(cur.row.slug, task_id, task.title),
                                view.base, view.landed_branch_tip))
    return found


def review(ws: Workspace, only: int | None = None) -> dict[str, Any]:
    """The combined diff of landed work (or one task's), with per-task sections."""
    cur = plans.current(ws)
    assert cur is not None
    if only is not None:
        cur.doc.task(only)
    if not cur.row.base_commit:
        raise BatonError("the plan has not run yet: there is nothing to review")
    tasks = landed_branches(ws, cur, only)
    if only is not None and not tasks:
        raise BatonError(f"task {only} has not landed: nothing to review")
    combined = integration_branch(cur.row.slug)
    if git.rev_parse(ws.root, branch_ref(combined)) is None:
        raise BatonError(
            f"the integration branch {combined} is gone (deleted?): the landed work is still "
            "on the task branches (`git branch --list 'baton/*'`)" if tasks else
            "no task has landed yet: there is nothing to review (`baton status` says where "
            "the run is)")
    missing = [t.branch for t in tasks if git.rev_parse(ws.root, t.ref) is None]
    if missing:
        raise BatonError(f"task branch {missing[0]} is gone (deleted?): its work cannot be "
                         f"reviewed; `baton discard` the task{'s' if len(missing) > 1 else ''} "
                         "whose branch is gone, or restore it from the reflog")
    discarded_landed = any(v.ever_landed and v.state == State.DISCARDED
                           for v in cur.folder.tasks.values())
    if discarded_landed and only is None:
        # The integration branch still holds discarded work: review only what merge brings.
        combined = combine(ws.root, cur.row.base_commit, [t.ref for t in tasks]) or combined
    data = seen_review(git_review(ws.root, cur.row.base_commit, combined, tasks))
    data["onto"] = cur.row.base_branch
    data["decided"] = decided_for_you(cur, only)
    for section in data["tasks"]:  # flags (writes outside the worktree …) are read at handoff
        section["flags"] = [dict(f) for f in cur.view(section["id"]).flags]
        section["pr"] = cur.view(section["id"]).pr  # its pull request of a stack, once opened
    data["pr"] = cur.folder.plan.pr  # the plan's one pull request, once opened
    data["comments"] = [  # review comments no landed retry has answered yet
        {"task": task_id, **{k: c.get(k) for k in ("id", "file", "line", "text")}}
        for task_id, view in sorted(cur.folder.tasks.items()) for c in view.comments
        if c.get("open") and (only is None or task_id == only)]
    if only is not None:
        data = {**data, **data["tasks"][0]}
    return data


def seen_review(data: dict[str, Any]) -> dict[str, Any]:
    """The review's diffs and file names as the person may see them (`shown`): an agent's
    code point that draws nothing is written out (`<U+200B>`), never printed raw."""
    for part in (data, *data["tasks"]):
        part["diff"] = shown(part["diff"])
        part["files"] = [shown(name) for name in part["files"]]
    return data


def decided_for_you(cur: plans.Current, only: int | None = None) -> list[dict[str, Any]]:
    """The one review at the end: per task, every checkpoint Baton answered itself (watch,
    autopilot, `run --approve`) with its evidence, and every supervisor flag."""
    found = []
    for task in cur.doc.tasks:
        view = cur.view(task.id)
        if (only is None or task.id == only) and (view.decisions or view.flags):
            found.append({"id": task.id, "title": task.title,
                          "decisions": [{**d, **{k: shown(d[k]) for k in ("what", "evidence")
                                                 if isinstance(d.get(k), str)}}
                                        for d in view.decisions],
                          "flags": [dict(f) for f in view.flags]})
    return found


@dataclass
class Merged:
    """What `merge` did: merged now, already merged, the conflict that stopped it, not landed."""

    onto: str
    merged: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    conflict: dict | None = None
    not_landed: list[int] = field(default_factory=list)
    moved: dict[int, dict] = field(default_factory=dict)  # merged with commits added by hand
    recovered: str | None = None  # an interrupted merge finished or undone first
    notes: list[str] = field(default_factory=list)  # what the person should know besides
    missing: dict[int, list[str]] = field(default_factory=dict)  # landed changes not in its tree


def merge(ws: Workspace, upto: int | None = None,
          progress: Callable[[int, str], None] | None = None) -> Merged:
    """Merge landed task branches onto the person's branch, in merge order — all of them, or
    those up to and including task `upto`. Each task's `task.merged` is recorded as soon as
    its branch is in (a view shows the progress); `progress(task_id, "merged"|"skipped")`."""
    killpoints.arm()  # (the crash tests' `merge-files`, `merge-moved`; nothing otherwise)
    cur = plans.current(ws)
    assert cur is not None
    snap = cur.snapshot(ws)
    reason = rules.why_not(Action.MERGE, snap)
    if reason:  # exit 1 while build work is still on its way, else 2 (nothing to do)
        waiting = snap.base_branch and any(t.mode == Mode.BUILD and t.state not in LANDED
                                           and t.state != State.DISCARDED for t in snap.tasks)
        raise BatonError(reason, code=1 if waiting else 2)
    tasks = landed_branches(ws, cur)
    if upto is not None:
        ids = [t.id for t in tasks]
        if upto not in ids:
            raise BatonError(f"task {upto} has not landed: there is nothing to merge up to it")
        tasks = tasks[: ids.index(upto) + 1]

    def step(task_id: int, what: str) -> None:
        if cur.view(task_id).state != State.MERGED:
            ws.store.append(cur.row.id, task_id, K.TASK_MERGED, {"onto": cur.row.base_branch})
        if progress:
            progress(task_id, what)

    onto = cur.row.base_branch
    assert onto is not None  # recorded when the plan was approved; checked above
    outcome = git_merge(ws.root, onto, tasks, on_step=step)
    result = Merged(onto, outcome.merged, outcome.skipped, outcome.conflict, moved=outcome.moved,
                    recovered=outcome.recovered, notes=outcome.notes)
    if not outcome.conflict:
        result.missing = not_in_tree(ws.root, f"refs/heads/{onto}", tasks)
    result.not_landed = [t.id for t in cur.doc.tasks if t.mode == Mode.BUILD
                         and cur.view(t.id).state not in (*LANDED, State.DISCARDED)]
    if not outcome.conflict:
        ws.store.append(cur.row.id, None, K.HANDOFF_MERGED, {"merged": outcome.merged})
    return result


def _carriers(ws: Workspace, cur: plans.Current, task_id: int) -> set[int]:
    """Tasks whose branch holds this task's landed work without depending on it: they were cut
    from the integration branch after it landed, so merging them would bring it home too."""
    if not git_handoff(ws):
        return set()
    task = cur.doc.task(task_id)
    tip = git.rev_parse(ws.root, f"refs/heads/{task_branch(cur.row.slug, task_id, task.title)}")
    if tip is None or (cur.row.base_commit and is_ancestor(ws.root, tip, cur.row.base_commit)):
        return set()  # the task committed nothing of its own
    found = set()
    for other in cur.doc.tasks:
        if other.id == task_id or other.mode != Mode.BUILD:
            continue
        branch = f"refs/heads/{task_branch(cur.row.slug, other.id, other.title)}"
        if git.rev_parse(ws.root, branch) and is_ancestor(ws.root, tip, branch):
            found.add(other.id)
    return found


def discard(ws: Workspace, task_id: int, with_dependents: bool = False) -> list[tuple[int, str | None]]:
    """Discard a task's work (and, when it landed, what was built on it). Returns each
    discarded task with the ref its last state is kept under."""
    cur = plans.current(ws)
    assert cur is not None
    cur.doc.task(task_id)
    snap = cur.snapshot(ws)
    task = snap.task(task_id)
    assert task is not None  # the plan has it (`cur.doc.task` above)
    carriers = _carriers(ws, cur, task_id) if task.state == State.LANDED else set()
    reason = rules.why_not(Action.DISCARD, snap, task, with_dependents=with_dependents,
                           carriers=carriers)
    if reason:
        raise BatonError(reason)
    victims = [task_id]
    if task.state == State.LANDED:
        victims += rules.built_on(snap, task, carriers)
    done = []
    for victim in victims:
        ref = keep_worktree(ws, cur, victim, "discarded")
        ws.store.append(cur.row.id, victim, K.TASK_DISCARDED,
                        {"kept": ref, "with": task_id if victim != task_id else None})
        done.append((victim, ref))
    return done


def keep_worktree(ws: Workspace, cur: plans.Current, task_id: int, why: str) -> str | None:
    """Commit a task worktree's state to a ref of its own (before any cleanup)."""
    if not git_handoff(ws):
        return None
    task = cur.doc.task(task_id)
    path = layout.worktree_path(ws.paths, cur.row.slug, task_id, task.title)
    if not (path / ".git").exists() or making.untouched(path):
        return None  # none, or one made ahead that no one ever wrote in
    ref = f"refs/baton/{cur.row.slug}/{why}/{task_id}-{int(time.time())}"
    return ref if worktrees.snapshot(path, ref, f"Baton keeps task {task_id} ({why})") else None


@dataclass
class Collected:
    """One worktree gc removed (or would remove)."""

    path: Path
    state: str
    size: int


def gc(ws: Workspace, dry_run: bool = False) -> list[Collected]:
    """Remove worktrees of merged or discarded work only, each committed to a ref first."""
    if not git_handoff(ws):
        return []
    found = []
    for plan_id in ws.store.plan_ids():
        row = ws.store.plan(plan_id)
        if row is None:
            continue
        folder = Folder().feed(ws.store.events(row.id))
        for task in row.doc["tasks"]:
            state = folder.view(task["id"]).state
            if state not in (State.MERGED, State.DISCARDED):
                continue
            path = layout.worktree_path(ws.paths, row.slug, task["id"], task["title"])
            if not (path / ".git").exists():
                continue
            found.append(Collected(path, str(state), worktrees.dir_size(path)))
            if not dry_run:
                _collect(ws, row.slug, task["id"], path)
    return found


def _collect(ws: Workspace, slug: str, task_id: int, path: Path) -> None:
    """Commit a worktree to a ref of its own, then remove it. One whose making was cut short
    holds no work: it is undone; so is one made ahead of its task, committed first if someone
    wrote in it. A git failure is one line, not a traceback."""
    try:
        ref = f"refs/baton/{slug}/gc/{task_id}-{int(time.time())}"
        if making.pending(path):  # cut short, or made ahead: undone, marker and all
            if making.held(path) is not None and worktrees.changed_paths(path):
                worktrees.snapshot(path, ref, f"Baton gc keeps task {task_id}")  # written in
            making.undo(ws.root, path)
            return
        worktrees.snapshot(path, ref, f"Baton gc keeps task {task_id}")
        worktrees.remove_worktree(ws.root, path)
    except git.GitError as exc:
        raise BatonError(f"gc: task {task_id}'s worktree {path} was kept: {exc}") from None
