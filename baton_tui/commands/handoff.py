"""`baton handoff review|merge`, `baton discard`, `baton gc`: bringing the work home."""

from __future__ import annotations

import json
import time
from argparse import Namespace

from baton_tui.errors import BatonError
from baton_tui.plan import current as plans
from baton_tui.plan.dag import dependents, topo_order
from baton_tui.plan.slug import integration_branch, task_branch
from baton_tui.workspace import Workspace

LANDED = ("landed", "merged")


def _git_required(ws: Workspace) -> bool:
    from baton_tui.gitops import git

    return ws.paths.is_git and git.supports_worktrees()


def _carried(ws: Workspace, cur: plans.Current) -> dict[int, list[int]]:
    """For each task, the tasks its branch carries: those that landed before it was cut."""
    landed_at: dict[int, int] = {}
    cut_at: dict[int, int] = {}
    for event in ws.store.events(cur.row.id):
        if event.task_id is None:
            continue
        if event.kind == "task.landed":
            landed_at[event.task_id] = event.id
        elif event.kind == "task.started" and event.data.get("base"):
            cut_at[event.task_id] = event.id
    return {task: [other for other, landed in landed_at.items()
                   if other != task and landed < cut_at.get(task, 0)] for task in landed_at}


def landed_branches(ws: Workspace, cur: plans.Current, only: int | None = None) -> list:
    """Landed build tasks in plan order (dependencies first), as handoff TaskBranches.

    A task's branch was cut from the integration branch, so it carries every task that
    landed before it started; those come first, so each merge brings only its own task
    and a conflict is named after the task that causes it.
    """
    from baton_tui.gitops.handoff import TaskBranch

    plan_order = [t.id for t in cur.doc.tasks]
    seen: set[int] = set()
    in_order = all(seen.add(t.id) or set(t.depends_on) <= seen for t in cur.doc.tasks)
    base_order = plan_order if in_order else topo_order(cur.doc.deps(), plan_order)
    position = {task_id: i for i, task_id in enumerate(base_order)}
    carried = _carried(ws, cur)
    order: list[int] = []

    def visit(task_id: int) -> None:
        if task_id in order:
            return
        for inner in sorted(carried.get(task_id, []), key=lambda t: position.get(t, t)):
            visit(inner)
        order.append(task_id)

    for task_id in base_order:
        visit(task_id)
    found = []
    for task_id in order:
        task = cur.doc.task(task_id)
        if task.mode != "build" or cur.view(task_id).state not in LANDED:
            continue
        if only is not None and task_id != only:
            continue
        found.append(TaskBranch(task_id, task.title, task_branch(cur.row.slug, task_id, task.title),
                                ws.store.task_base(cur.row.id, task_id)))
    return found


def cmd_handoff(args: Namespace) -> int:
    ws = Workspace()
    cur = plans.current(ws)
    assert cur is not None
    if not _git_required(ws):
        print("folder mode: the tasks worked in this folder directly — there is nothing to merge")
        return 0
    if args.action == "review":
        return _review(ws, cur, args)
    return _merge(ws, cur)


def _review(ws: Workspace, cur: plans.Current, args: Namespace) -> int:
    from baton_tui.gitops.handoff import review

    if args.task is not None:
        cur.doc.task(args.task)
    tasks = landed_branches(ws, cur, args.task)
    if not cur.row.base_commit:
        raise BatonError("the plan has not run yet: there is nothing to review")
    combined = integration_branch(cur.row.slug)
    ever_landed = {e.task_id for e in ws.store.events(cur.row.id) if e.kind == "task.landed"}
    discarded_landed = any(cur.view(t).state == "discarded" for t in ever_landed if t)
    if discarded_landed and args.task is None:
        from baton_tui.gitops.handoff import combine

        # The integration branch still holds discarded work: review only what merge brings.
        combined = combine(ws.root, cur.row.base_commit, [t.branch for t in tasks]) or combined
    data = review(ws.root, cur.row.base_commit, combined, tasks)
    if args.task is not None and not tasks:
        raise BatonError(f"task {args.task} has not landed: nothing to review")
    if args.json:
        if args.task is not None:
            data = {**data, **{k: v for k, v in data["tasks"][0].items()}}
        print(json.dumps(data, indent=2))
        return 0
    sections = data["tasks"]
    if args.task is None:
        stats = data["stats"]
        print(f"{len(sections)} landed task(s) · {stats['files']} file(s) · "
              f"+{stats['added']} −{stats['deleted']} · onto {cur.row.base_branch}")
    for section in sections:
        print(f"\n── task {section['id']}: {section['title']}  ({section['branch']})")
        print(f"   {len(section['files'])} file(s), +{section['added']} −{section['deleted']}: "
              + ", ".join(section["files"][:12]))
    if not args.stat:
        print()
        print(sections[0]["diff"] if args.task is not None else data["diff"])
    return 0


def _merge(ws: Workspace, cur: plans.Current) -> int:
    from baton_tui.gitops.handoff import merge

    if not cur.row.base_branch:
        raise BatonError("the plan has not run yet: there is nothing to merge")
    tasks = landed_branches(ws, cur)
    not_landed = [t.id for t in cur.doc.tasks if t.mode == "build"
                  and cur.view(t.id).state not in (*LANDED, "discarded")]
    if not tasks:
        raise BatonError("no landed task to merge" + (
            f" (tasks {', '.join(map(str, not_landed))} have not landed)" if not_landed else ""),
            code=1 if not_landed else 2)
    outcome = merge(ws.root, cur.row.base_branch, tasks)
    for task_id in outcome.merged + outcome.skipped:
        if cur.view(task_id).state != "merged":
            ws.store.append(cur.row.id, task_id, "task.merged", {"onto": cur.row.base_branch})
    for task_id in outcome.merged:
        print(f"merged task {task_id} onto {cur.row.base_branch}")
    for task_id in outcome.skipped:
        print(f"task {task_id} was already merged")
    if outcome.conflict:
        c = outcome.conflict
        print(f"stopped at task {c['id']}: merging {c['branch']} conflicts in "
              f"{', '.join(c['files'])}. Your tree is untouched; the remaining branches are as "
              f"they were. To finish by hand: {c['command']} — then run `baton handoff merge` "
              f"again to go on.")
        return 1
    ws.store.append(cur.row.id, None, "handoff.merged", {"merged": outcome.merged})
    if not_landed:
        print(f"note: tasks {', '.join(map(str, not_landed))} have not landed and were not merged")
    print(f"all landed work is on {cur.row.base_branch}")
    return 0


def cmd_discard(args: Namespace) -> int:
    ws = Workspace()
    cur = plans.current(ws)
    assert cur is not None
    task = cur.doc.task(args.id)
    state = cur.view(args.id).state
    if state in ("running", "checkpoint"):
        raise BatonError(f"task {args.id} is {state}: stop it first (`baton stop {args.id}`)")
    if state in ("merged", "discarded"):
        raise BatonError(f"task {args.id} is already {state}")
    victims = [args.id]
    if state == "landed":
        deps = set(dependents(cur.doc.deps(), args.id)) | _carriers(ws, cur, args.id)
        open_deps = sorted(d for d in deps if cur.view(d).state != "discarded")
        merged = [d for d in open_deps if cur.view(d).state == "merged"]
        if merged:
            raise BatonError(f"task {args.id} cannot be discarded: tasks "
                             f"{', '.join(map(str, merged))} built on it are already merged")
        if open_deps and not args.with_dependents:
            raise BatonError(f"task {args.id} has landed and tasks {', '.join(map(str, open_deps))}"
                             f" depend on it (or were cut after it landed): discard them too with "
                             f"`baton discard {args.id} --with-dependents`")
        live = [d for d in open_deps if cur.view(d).state in ("running", "checkpoint")]
        if live:
            raise BatonError(f"task {live[0]} is {cur.view(live[0]).state} and depends on task "
                             f"{args.id}: stop it first (`baton stop {live[0]}`)")
        victims += open_deps
    for victim in victims:
        ref = _keep_worktree(ws, cur, victim, "discarded")
        ws.store.append(cur.row.id, victim, "task.discarded",
                        {"kept": ref, "with": args.id if victim != args.id else None})
        print(f"task {victim} ({cur.doc.task(victim).title}) discarded"
              + (f"; its last state is kept under {ref}" if ref else ""))
    del task
    return 0


def _carriers(ws: Workspace, cur: plans.Current, task_id: int) -> set[int]:
    """Tasks whose branch holds this task's landed work without depending on it: they were cut
    from the integration branch after it landed, so merging them would bring it home too."""
    if not _git_required(ws):
        return set()
    from baton_tui.gitops import git
    from baton_tui.gitops.landing import is_ancestor

    task = cur.doc.task(task_id)
    tip = git.rev_parse(ws.root, f"refs/heads/{task_branch(cur.row.slug, task_id, task.title)}")
    if tip is None or (cur.row.base_commit and is_ancestor(ws.root, tip, cur.row.base_commit)):
        return set()  # the task committed nothing of its own
    found = set()
    for other in cur.doc.tasks:
        if other.id == task_id or other.mode != "build":
            continue
        branch = f"refs/heads/{task_branch(cur.row.slug, other.id, other.title)}"
        if git.rev_parse(ws.root, branch) and is_ancestor(ws.root, tip, branch):
            found.add(other.id)
    return found


def _keep_worktree(ws: Workspace, cur: plans.Current, task_id: int, why: str) -> str | None:
    """Commit a task worktree's state to a ref of its own (before any cleanup)."""
    if not _git_required(ws):
        return None
    from baton_tui.gitops import worktrees
    from baton_tui.run import layout

    task = cur.doc.task(task_id)
    path = layout.worktree_path(ws.paths, cur.row.slug, task_id, task.title)
    if not (path / ".git").exists():
        return None
    ref = f"refs/baton/{cur.row.slug}/{why}/{task_id}-{int(time.time())}"
    return ref if worktrees.snapshot(path, ref, f"Baton keeps task {task_id} ({why})") else None


def cmd_gc(args: Namespace) -> int:
    """Remove worktrees of merged or discarded work only, each committed to a ref first."""
    ws = Workspace()
    if not _git_required(ws):
        print("folder mode: nothing to collect")
        return 0
    from baton_tui.gitops import worktrees
    from baton_tui.run import layout
    from baton_tui.store.events import fold

    plans_rows = [r for r in (ws.store.plan(i) for i in _plan_ids(ws)) if r is not None]
    total, count = 0, 0
    for row in plans_rows:
        views = fold(ws.store.events(row.id))
        for task in row.doc["tasks"]:
            state = views.get(task["id"]).state if task["id"] in views else "draft"
            if state not in ("merged", "discarded"):
                continue
            path = layout.worktree_path(ws.paths, row.slug, task["id"], task["title"])
            if not (path / ".git").exists():
                continue
            size = worktrees.dir_size(path)
            total += size
            count += 1
            verb = "would remove" if args.dry_run else "removed"
            if not args.dry_run:
                ref = f"refs/baton/{row.slug}/gc/{task['id']}-{int(time.time())}"
                worktrees.snapshot(path, ref, f"Baton gc keeps task {task['id']}")
                worktrees.remove_worktree(ws.root, path)
            print(f"{verb} {path} ({state}, {_size(size)})")
    print(f"{'would free' if args.dry_run else 'freed'} {_size(total)} in {count} worktree(s)"
          + ("" if count else " — only merged or discarded work is collected"))
    return 0


def _plan_ids(ws: Workspace) -> list[int]:
    return [r[0] for r in ws.store.conn.execute("SELECT id FROM plans ORDER BY id")]


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
