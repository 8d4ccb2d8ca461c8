"""`baton handoff review|merge|pr`, `baton discard`, `baton gc`: printing what the engine did."""

from __future__ import annotations

from argparse import Namespace

from baton_tui import api
from baton_tui.core.jsontext import dumps
from baton_tui.core.words import counted

FOLDER_MODE = "folder mode: the tasks worked in this folder directly — there is nothing to merge"


def cmd_handoff(args: Namespace) -> int:
    ws = api.open_workspace()
    api.current_plan(ws)  # no plan: one clear line
    if not api.git_handoff(ws):
        print(FOLDER_MODE)
        return 0
    if args.action == "review":
        return _review(ws, args)
    if args.action == "pr":
        return _pr(ws, args)
    return _merge(ws)


def _pr(ws: api.Workspace, args: Namespace) -> int:
    done = api.publish(ws, args.remote, args.base, args.stack, args.draft, args.dry_run)
    if args.json:
        print(dumps(done.as_json(), indent=2))
        return 0
    if done.dry_run:
        print("dry run: nothing is pushed, no pull request is opened or changed")
        for call in done.calls:
            print(f"would run: {api.shown_call(call)}")
        return 0
    for pushed in done.pushes:
        print(f"pushed {pushed['branch']} to {done.remote} ({pushed['commit'][:12]})")
    if not done.pushes:
        print(f"{done.remote} already holds the landed work: nothing to push")
    for pr in done.prs:
        print(f"{pr['action']} #{pr['number']} {pr['url']}  ({pr['branch']} → {pr['base']})")
    return 0


def _review(ws: api.Workspace, args: Namespace) -> int:
    data = api.review(ws, args.task)
    if args.json:
        print(dumps({k: v for k, v in data.items() if k != "onto"}, indent=2))
        return 0
    _decided(data.get("decided") or [])
    sections = data["tasks"]
    if args.task is None:
        stats = data["stats"]
        print(f"{counted(len(sections), 'landed task', start=True)} · "
              f"{counted(stats['files'], 'file')} · "
              f"+{stats['added']} −{stats['deleted']} · onto {data['onto']}")
    for section in sections:
        print(f"\n── task {section['id']}: {section['title']}  ({section['branch']})")
        print(f"   {counted(len(section['files']), 'file')}, +{section['added']} "
              f"−{section['deleted']}: "
              + ", ".join(section["files"][:12]))
        for flag in section.get("flags", []):
            print(api.terminal_text(f"   ⚑ {flag['kind']}: {flag['detail']}"))
        if section.get("moved"):
            print(f"   ⚠ {section['moved']['said']}")
    if data.get("comments"):
        print("\nopen review comments (`baton retry N` sends them to the task):")
        for c in data["comments"]:
            print(api.terminal_text(f"  task {c['task']} · {c['file']}:{c['line']}: {c['text']}"))
    if not args.stat:
        print()
        print(sections[0]["diff"] if args.task is not None else data["diff"])
    return 0


def _decided(tasks: list[dict]) -> None:
    """First, what was decided for the person: checkpoints Baton answered, supervisor flags."""
    if not tasks:
        return
    print("decided for you (review these first):")
    for task in tasks:
        print(f"  task {task['id']}: {task['title']}")
        for d in task["decisions"]:
            print(f"    ✓ checkpoint “{d['what']}” answered {d['answer']} by {d['by']}")
            for line in (d.get("evidence") or "").splitlines()[:12]:
                print(f"        {line}")
        for f in task["flags"]:
            print(f"    ⚑ {f['kind']}: {f['detail']}")
    print()


def _merge(ws: api.Workspace) -> int:
    cur = api.current_plan(ws)
    assert cur is not None  # required: no plan is refused
    onto = cur.row.base_branch

    def said(task_id: int, what: str) -> None:  # as it goes: a stop further on keeps these
        print(f"merged task {task_id} onto {onto}" if what == "merged"
              else f"task {task_id} was already merged", flush=True)

    outcome = api.merge(ws, progress=said)
    for note in [outcome.recovered, *outcome.notes]:
        if note:
            print(f"note: {note}")
    if outcome.conflict:
        c = outcome.conflict
        print(f"stopped at task {c['id']}: merging {c['branch']} conflicts in "
              f"{', '.join(c['files'])}. Your tree is untouched; the remaining branches are as "
              f"they were. To finish by hand: {c['command']} — then run `baton handoff merge` "
              f"again to go on.")
        return 1
    for task_id, shift in outcome.moved.items():
        print(f"note: task {task_id}: {shift['said']}")
    if outcome.not_landed:
        one = len(outcome.not_landed) == 1
        print(f"note: {'task' if one else 'tasks'} {', '.join(map(str, outcome.not_landed))} "
              f"{'has' if one else 'have'} not landed and {'was' if one else 'were'} not merged")
    if outcome.missing:
        for task_id, paths in outcome.missing.items():
            shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5
                                            else "")
            print(f"task {task_id}'s change is not in {outcome.onto}'s tree: {shown} "
                  f"{'is' if len(paths) == 1 else 'are'} back as before it (undone by a "
                  f"commit since? `git log {outcome.onto} -- {paths[0]}` shows which)")
        print(f"{outcome.onto} does not hold all the landed work: put those files back if "
              "that was not meant (the task branches still hold them)")
        return 1
    print(f"all landed work is on {outcome.onto}")
    return 0


def cmd_discard(args: Namespace) -> int:
    ws = api.open_workspace()
    titles = {t.id: t.title for t in api.current_doc(ws).tasks}
    for victim, ref in api.discard(ws, args.id, args.with_dependents):
        print(f"task {victim} ({titles[victim]}) discarded"
              + (f"; its last state is kept under {ref}" if ref else ""))
    return 0


def cmd_gc(args: Namespace) -> int:
    """Remove worktrees of merged or discarded work only, each committed to a ref first."""
    ws = api.open_workspace()
    if not api.git_handoff(ws):
        print("folder mode: nothing to collect")
        return 0
    found = api.gc(ws, args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    for item in found:
        print(f"{verb} {item.path} ({item.state}, {_size(item.size)})")
    total = sum(item.size for item in found)
    print(f"{'would free' if args.dry_run else 'freed'} {_size(total)} in "
          f"{counted(len(found), 'worktree')}"
          + ("" if found else " — only merged or discarded work is collected"))
    return 0


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def cmd_comment(args: Namespace) -> int:
    ws = api.open_workspace()
    done = api.comment(ws, args.id, args.location, args.text)
    whose = "" if done["task"] == args.id else f" (task {done['task']} wrote that line)"
    print(f"comment {done['id']} on task {done['task']}{whose}, {done['file']}:{done['line']} — "
          f"`baton retry {done['task']}` sends it")
    return 0
