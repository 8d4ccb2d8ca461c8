"""What the app's handoff screen shows: the combined diff cut per file, and per task what it
did — its report, check output, supervisor flags and the checkpoints Baton decided for it.

`baton handoff review` prints the same review (`run/handoff.review`); this module only
reshapes it for a screen and adds what the folded events say, so both read one source.
Runs git: call it off the UI loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from baton_tui.core.errors import BatonError
from baton_tui.core.events import LANDED, State
from baton_tui.core.slug import integration_branch
from baton_tui.core.visible import shown
from baton_tui.core.words import Mode
from baton_tui.gitops import git
from baton_tui.gitops.handoff import branch_ref, combine, moved
from baton_tui.gitops.landing import diff_text
from baton_tui.handoff import actions as handoff
from baton_tui.plan import current as plans
from baton_tui.workspace import Workspace


@dataclass(frozen=True)
class FileDiff:
    """One file of a diff: its path, lines added and deleted, and its own patch text."""

    path: str
    added: int
    deleted: int
    diff: str


@dataclass
class TaskReview:
    """One task as the handoff shows it."""

    id: int
    title: str
    state: str
    branch: str | None = None
    files: list[FileDiff] = field(default_factory=list)
    added: int = 0
    deleted: int = 0
    summary: str | None = None
    check: dict[str, Any] | None = None
    flags: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    reason: str | None = None
    moved: dict[str, Any] | None = None  # its branch moved since it landed (`handoff.moved`)


@dataclass
class HandoffReview:
    """The whole handoff: onto which branch, the combined files, each task in merge order,
    and the build tasks that have not landed (with why)."""

    onto: str | None
    files: list[FileDiff]
    added: int
    deleted: int
    tasks: list[TaskReview]
    waiting: list[TaskReview]
    diff: str = ""


def split_diff(text: str) -> list[FileDiff]:
    """Cut a `git diff` patch into one FileDiff per file (pure string work, linear)."""
    files: list[FileDiff] = []
    chunk: list[str] = []

    def close() -> None:
        if not chunk:
            return
        path, added, deleted = _path_of(chunk[0]), 0, 0
        in_hunk = False
        for line in chunk[1:]:
            if line.startswith("@@"):
                in_hunk = True
            elif not in_hunk:
                if line.startswith("+++ ") and line[4:] != "/dev/null":
                    path = line[6:] if line.startswith("+++ b/") else line[4:]
                elif line.startswith("--- ") and line[4:] != "/dev/null" and path is None:
                    path = line[6:] if line.startswith("--- a/") else line[4:]
            elif line.startswith("+"):
                added += 1
            elif line.startswith("-"):
                deleted += 1
        files.append(FileDiff(path or "?", added, deleted, "\n".join(chunk)))

    for line in text.splitlines():
        if line.startswith("diff --git "):
            close()
            chunk = [line]
        elif chunk:
            chunk.append(line)
    close()
    return files


def _path_of(header: str) -> str | None:
    """`diff --git a/x b/x` -> x (the `+++` line wins when there is one)."""
    rest = header[len("diff --git "):]
    half = rest.find(" b/")
    return rest[half + 3:] if rest.startswith("a/") and half > 0 else None


def _task_review(cur: Any, task_id: int, section: dict | None) -> TaskReview:
    spec = cur.doc.task(task_id)
    view = cur.view(task_id)
    files = split_diff(section["diff"]) if section else []
    return TaskReview(
        id=task_id, title=spec.title, state=str(view.state),
        branch=section["branch"] if section else None, files=files,
        added=sum(f.added for f in files), deleted=sum(f.deleted for f in files),
        summary=view.summary, check=view.check, flags=list(view.flags),
        decisions=list(getattr(view, "decisions", []) or []),
        conflicts=list(view.conflicts), reason=view.reason,
        moved=section.get("moved") if section else None)


def load(ws: Workspace) -> HandoffReview:
    """The review of landed work plus the per-task facts from the event log.

    The same ranges as `baton handoff review` (run/handoff.review), read with one `git diff`
    per range — the per-file counts come from the patch — so a big handoff opens quickly."""
    cur = plans.current(ws)
    assert cur is not None
    base = cur.row.base_commit
    if not base:
        raise BatonError("the plan has not run yet: there is nothing to review")
    landed = handoff.landed_branches(ws, cur)
    combined = integration_branch(cur.row.slug)
    if any(v.ever_landed and v.state == State.DISCARDED for v in cur.folder.tasks.values()):
        # The integration branch still holds discarded work: review only what merge brings.
        combined = combine(ws.root, base, [t.ref for t in landed]) or combined
    diff = shown(diff_text(ws.root, base, branch_ref(combined)))  # nothing hidden in it
    sections = {t.id: {"branch": t.branch, "moved": moved(ws.root, t), "diff": shown(diff_text(
        ws.root, t.base or git.git(ws.root, "merge-base", base, t.ref), t.ref))}
        for t in landed}
    files = split_diff(diff)
    tasks = [_task_review(cur, task_id, sections.get(task_id))
             for task_id in handoff.merge_order(cur)
             if cur.doc.task(task_id).mode == Mode.BUILD and cur.view(task_id).state in LANDED]
    waiting = [_task_review(cur, t.id, None) for t in cur.doc.tasks
               if t.mode == Mode.BUILD and cur.view(t.id).state not in (*LANDED, State.DISCARDED)]
    return HandoffReview(onto=cur.row.base_branch, files=files,
                         added=sum(f.added for f in files), deleted=sum(f.deleted for f in files),
                         tasks=tasks, waiting=waiting, diff=diff)
