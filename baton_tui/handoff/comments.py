"""`baton comment N FILE:LINE TEXT`: a review comment goes to the task that wrote the line.

The person reads the combined diff (the integration branch); `git blame` there names the
commit that wrote the line, and the landed task whose own commits (its branch since it was
cut) hold that commit is the one that hears about it — so a comment made while looking at
task 1, or at the whole, on a line task 3 wrote reaches task 3. The comment keeps the
lines around it as they were; `baton retry` sends a task its open comments
(`core/comments.py`), and they close when that retry lands.
"""

from __future__ import annotations

from typing import Any

from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.core.slug import integration_branch
from baton_tui.gitops import git
from baton_tui.gitops.blame import file_lines, line_commit, own_commits
from baton_tui.gitops.handoff import branch_ref
from baton_tui.handoff.actions import git_handoff, landed_branches
from baton_tui.plan import current as plans
from baton_tui.workspace import Workspace

K = EventKind
AROUND = 3  # lines kept on each side of the one commented on


def parse_location(text: str) -> tuple[str, int]:
    """`FILE:LINE` (a path may hold colons: the last one splits), LINE from 1."""
    path, _, number = text.rpartition(":")
    if not path or not number.isdigit() or int(number) < 1:
        raise BatonError(f"{text!r} is not FILE:LINE (a path and a line number from 1, such as "
                         "src/app.py:42)")
    return path.removeprefix("./"), int(number)


def comment(ws: Workspace, task_id: int, location: str, text: str) -> dict[str, Any]:
    """Record the comment on the task that wrote the line; returns it with that task's id."""
    cur = plans.current(ws)
    assert cur is not None
    cur.doc.task(task_id)  # an unknown id is one clear line
    path, line = parse_location(location)
    if not text.strip():
        raise BatonError("the comment is empty: say what should change")
    if not git_handoff(ws):
        raise BatonError("folder mode: the tasks worked in this folder directly, without "
                         "commits to tell who wrote a line")
    tasks = landed_branches(ws, cur)
    name = integration_branch(cur.row.slug)
    rev = git.rev_parse(ws.root, branch_ref(name))
    if not tasks or rev is None or not cur.row.base_commit:
        raise BatonError("no task has landed yet: there is no line to comment on")
    lines = file_lines(ws.root, rev, path)
    if lines is None:
        raise BatonError(f"{path} is not in the landed work (the integration branch {name})")
    if line > len(lines):
        raise BatonError(f"{path} has {len(lines)} lines in the landed work: there is no "
                         f"line {line}")
    commit = line_commit(ws.root, rev, path, line)
    writer = None
    for t in tasks:
        tip = git.rev_parse(ws.root, t.ref)
        base = t.base or cur.row.base_commit
        if tip and commit and commit in own_commits(ws.root, base, tip):
            writer = t.id
            break
    if writer is None:
        raise BatonError(f"line {line} of {path} was not written by a landed task (it comes "
                         f"from {cur.row.base_branch}): a comment goes to the task that wrote "
                         f"the line — to ask task {task_id} for a change, `baton retry "
                         f"{task_id} --feedback TEXT` once it can be retried")
    first, last = max(1, line - AROUND), min(len(lines), line + AROUND)
    context = "\n".join(f"{n:>5}{'>' if n == line else ' '} {lines[n - 1]}"
                        for n in range(first, last + 1))
    number = 1 + max((int(c.get("id", 0)) for v in cur.folder.tasks.values()
                      for c in v.comments), default=0)
    data = {"id": number, "file": path, "line": line, "text": text.strip(),
            "context": context, "commit": commit, "asked_on": task_id}
    ws.store.append(cur.row.id, writer, K.TASK_COMMENT, data)
    return {**data, "task": writer}


def open_comments(cur: plans.Current) -> dict[int, list[dict[str, Any]]]:
    """Each task's open comments (those no landed retry answered yet)."""
    return {task_id: [c for c in view.comments if c.get("open")]
            for task_id, view in sorted(cur.folder.tasks.items())
            if any(c.get("open") for c in view.comments)}
