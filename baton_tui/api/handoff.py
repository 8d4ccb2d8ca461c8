"""Bringing the work home: review, merge (and resolving a conflict), discard, gc."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from baton_tui.core import rules
from baton_tui.core.events import State
from baton_tui.gitops import git
from baton_tui.handoff import actions as handoff, resolve, view as handoff_view
from baton_tui.plan.current import current

if TYPE_CHECKING:
    from baton_tui.handoff.actions import Collected, Merged
    from baton_tui.handoff.pr import Published
    from baton_tui.handoff.resolve import Resolution
    from baton_tui.handoff.view import HandoffReview
    from baton_tui.workspace import Workspace


def git_supports_worktrees() -> bool:
    """git is installed and new enough (2.38) for worktrees and merge-tree."""
    return git.supports_worktrees()


def git_handoff(ws: "Workspace") -> bool:
    return handoff.git_handoff(ws)


def review(ws: "Workspace", task_id: int | None = None) -> dict[str, Any]:
    return handoff.review(ws, task_id)


def merge(ws: "Workspace", upto: int | None = None,
          progress: Callable[[int, str], None] | None = None) -> "Merged":
    """Merge landed work onto the person's branch in plan order (all, or up to task `upto`)."""
    return handoff.merge(ws, upto, progress)


def publish(ws: "Workspace", remote: str | None = None, base: str | None = None,
            stack: bool = False, draft: bool = False, dry_run: bool = False) -> "Published":
    """Push Baton's branches of the landed work and open or update their pull requests
    through the forge's CLI (`--stack`: one per task); `dry_run` only says what it would do."""
    from baton_tui.handoff import pr  # lazy: only `handoff pr` needs it

    return pr.publish(ws, remote, base, stack, draft, dry_run)


def comment(ws: "Workspace", task_id: int, location: str, text: str) -> dict[str, Any]:
    """A review comment on FILE:LINE, recorded on the task that wrote the line (by blame on
    the landed work); `retry` sends it."""
    from baton_tui.handoff import comments

    return comments.comment(ws, task_id, location, text)


def shown_call(argv: list[str]) -> str:
    from baton_tui.handoff import pr

    return pr.shown_call(argv)


def handoff_review(ws: "Workspace") -> "HandoffReview":
    """The handoff screen's data: the combined diff per file, each task's report, check, flags
    and the checkpoints decided for it (runs git: call it off the UI loop)."""
    return handoff_view.load(ws)


def discard_victims(ws: "Workspace", task_id: int) -> list[int]:
    """What discarding `task_id` takes with it (its dependents and carriers), for a question."""
    cur = current(ws)
    assert cur is not None  # (required: no plan raises)
    snap = cur.snapshot(ws)
    task = snap.task(task_id)
    if task is None or task.state != State.LANDED:
        return []
    return rules.built_on(snap, task, handoff._carriers(ws, cur, task_id))


def resolve_begin(ws: "Workspace", task_id: int) -> "Resolution":
    """Start the conflicting merge of a task by hand (conflict markers left to edit)."""
    return resolve.begin(ws, task_id)


def resolve_status(ws: "Workspace", task_id: int) -> "Resolution":
    return resolve.status(ws, task_id)


def resolve_abort(ws: "Workspace") -> None:
    """Give up a hand merge: the tree goes back to how it was before it began."""
    resolve.abort(ws)


def open_shell(root: Path, banner: str) -> int:
    """The person's shell in `root` (a front end suspends itself around this)."""
    return resolve.shell(root, banner)


def discard(ws: "Workspace", task_id: int, with_dependents: bool = False
            ) -> list[tuple[int, str | None]]:
    """Each task discarded, with the ref its last state is kept under."""
    return handoff.discard(ws, task_id, with_dependents)


def gc(ws: "Workspace", dry_run: bool = False) -> "list[Collected]":
    return handoff.gc(ws, dry_run)
