"""The handoff: reviewing landed work, and merging it into the person's own branch.

This is the one place Baton touches the person's checkout, so it refuses to start on the wrong
branch or with uncommitted tracked changes, checks every merge with ``git merge-tree`` before
doing it, and stops at the first conflict with the tree untouched — naming the files and the
one command that finishes the merge by hand. Running it again skips what is already merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from .worktrees import _commit_tree
from baton_tui.core.errors import BatonError

from .advance import advance, recover
from .git import GitError, current_branch, dirty_files, git, rev_parse, run_git
from .refs import read_ref
from .landing import changed_files, diff_stat, diff_text, is_ancestor, merge_tree

__all__ = ["TaskBranch", "MergeOutcome", "branch_ref", "moved", "review", "merge", "not_in_tree"]


@dataclass
class TaskBranch:
    """A landed task, as the handoff sees it."""

    id: int
    title: str
    branch: str
    base: str | None = None  # the integration commit the task was cut from, when known
    tip: str | None = None   # the commit of its branch that landed, when recorded

    @property
    def ref(self) -> str:
        """The branch's full ref: what git is given (a tag of the same name, which git's
        name lookup would take first, is never merged or reviewed in its place)."""
        return f"refs/heads/{self.branch}"


@dataclass
class MergeOutcome:
    """Which tasks were merged now, which were already merged, and the conflict that stopped
    the run (``{"id", "branch", "files", "command"}``) if any."""

    merged: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    conflict: dict | None = None
    moved: dict[int, dict] = field(default_factory=dict)  # merged with commits added since
    recovered: str | None = None  # an interrupted merge finished or undone first (`recover`)
    notes: list[str] = field(default_factory=list)  # what the person should know besides


def moved(repo, task: TaskBranch, now: str | None = None) -> dict | None:
    """How the task's branch moved since it landed — ``{"from", "to", "descends", "said"}``
    (and ``"command"``, the one that puts it back, when it does not descend from what
    landed) — or None: it holds the commit that landed, none was recorded (an older
    store), or it is gone. Commits added on top (by hand) are merged with it; a branch
    rewound, rewritten or replaced is not merged at all."""
    if not task.tip:
        return None
    now = now or rev_parse(repo, task.ref)  # as the review diffs it and merge merges it
    if now is None or now == task.tip:
        return None
    try:
        descends = is_ancestor(repo, task.tip, now)
    except GitError:  # the commit that landed is gone from the object store
        descends = False
    shift = {"from": task.tip, "to": now, "descends": descends}
    if descends:
        return {**shift, "said": f"its branch {task.branch} has commits added since it landed "
                f"({task.tip[:12]} → {now[:12]}): they are merged with it"}
    command = f"git update-ref refs/heads/{task.branch} {task.tip}"
    return {**shift, "command": command,
            "said": f"its branch {task.branch} was moved off the commit that landed "
                    f"({task.tip[:12]}, now {now[:12]}): handoff merge stops before it — put "
                    f"it back with `{command}` (or `baton discard {task.id}`)"}


def _section(repo, base: str, tip: str) -> dict:
    stats = diff_stat(repo, base, tip)
    return {
        "files": changed_files(repo, base, tip),
        "added": sum(a for _, a, _ in stats),
        "deleted": sum(d for _, _, d in stats),
        "diff": diff_text(repo, base, tip),
    }


def branch_ref(name: str) -> str:
    """`name` as git must be given it when it names a branch: its full ref (a commit id or a
    full ref as it is)."""
    if name.startswith("refs/") or re.fullmatch(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", name):
        return name
    return f"refs/heads/{name}"


def combine(repo, base: str, branches: list[str]) -> str | None:
    """A commit holding `base` plus exactly these branches, merged in the object store only
    (no ref moves, no checkout). None if they conflict. Used to review the landed work
    without the tasks that were discarded after landing."""
    tip = base
    for branch in branches:
        tree, conflicts = merge_tree(repo, tip, branch)
        if tree is None:
            return None
        tip = _commit_tree(repo, tree, [tip, branch], f"review: {branch}")
    return tip


def review(repo, base: str, integration: str, tasks: list[TaskBranch]) -> dict:
    """Everything ``baton handoff review`` shows, as plain data.

    The combined diff is ``base..integration``; each task's section is
    ``task.base..branch`` when the commit the task was cut from is known (only its own
    changes), else ``merge-base(base, branch)..branch``.
    """
    combined = _section(repo, base, branch_ref(integration))
    out = {
        "base": base,
        "integration": integration,
        "files": combined["files"],
        "stats": {
            "files": len(combined["files"]),
            "added": combined["added"],
            "deleted": combined["deleted"],
        },
        "diff": combined["diff"],
        "tasks": [],
    }
    for t in tasks:
        mb = t.base or git(repo, "merge-base", base, t.ref)
        shift = moved(repo, t)
        out["tasks"].append({"id": t.id, "title": t.title, "branch": t.branch,
                             **_section(repo, mb, t.ref),
                             **({"moved": shift} if shift else {})})
    return out


def _shorten(paths: list[str], limit: int = 5) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _undoing_a_merge(repo, dirty: list[str]) -> str | None:
    """Whether the uncommitted changes put back, file for file, what the handoff merge at
    HEAD changed (a merge interrupted before its index was written, its lock then removed by
    hand): that merge, named; else None."""
    try:
        subject = git(repo, "log", "-1", "--format=%s", "HEAD")
        first = rev_parse(repo, "HEAD^1")
    except GitError:
        return None
    if not subject.startswith("Merge task ") or first is None or len(dirty) > 200:
        return None
    staged = run_git(repo, "diff", "--cached", "--quiet", first, "--", *dirty).returncode
    files = run_git(repo, "diff", "--quiet", first, "--", *dirty).returncode
    return f"Baton's \"{subject}\"" if staged == 0 and files == 0 else None


def merge(repo, target_branch: str, tasks: list[TaskBranch],
          on_step: Callable[[int, str], None] | None = None) -> MergeOutcome:
    """Merge the task branches onto ``target_branch`` in the given (plan) order.

    Refuses (BatonError, code 2) when another branch is checked out or tracked files have
    uncommitted changes; untracked files do not block it. Per branch: skip when already merged,
    merge in the object store (``merge-tree``, ``commit-tree``: the person's tree is not
    touched), then move the branch and the checkout to it together (`advance`: a commit or an
    edit of the person's meanwhile stops it with nothing changed). A conflict stops the run
    before anything is written and names the command to do that merge by hand; the
    remaining branches stay as they are, and a second run picks up from there. A task branch
    deleted by hand stops it the same way (BatonError, code 1, naming the task and branch).
    A task branch moved off the commit that landed (`moved`: rewound, rewritten, replaced)
    stops it the same way; one with commits added on top is merged with them.
    `on_step(task_id, "merged" | "skipped")` hears each branch as it is done (a progress line).
    """
    branch = current_branch(repo)
    if branch != target_branch:
        shown = branch if branch else "a detached HEAD"
        raise BatonError(
            f"wrong branch: {shown} is checked out; handoff merges onto {target_branch} "
            f"— run `git switch {target_branch}`",
            code=2,
        )
    recovered = recover(repo)
    dirty = dirty_files(repo)
    if dirty:
        undone = _undoing_a_merge(repo, dirty)
        if undone:  # committing them, as the usual advice says, would revert landed work
            raise BatonError(
                f"uncommitted changes to tracked files: {_shorten(dirty)} — they are back as "
                f"they were before {undone}, so committing them would undo it: "
                f"`git restore --staged --worktree --source=HEAD -- {' '.join(dirty[:20])}` "
                "keeps the merge (then `baton handoff merge` again)", code=2)
        raise BatonError(
            f"uncommitted changes to tracked files: {_shorten(dirty)}; commit or stash them first",
            code=2,
        )
    ref = f"refs/heads/{target_branch}"
    outcome = MergeOutcome(recovered=recovered)
    if read_ref(repo, f"refs/tags/{target_branch}") is not None:  # Baton names refs in full
        outcome.notes.append(
            f"a tag is named {target_branch} too: git commands that say `{target_branch}` "
            f"take the tag, not the branch (Baton merged onto refs/heads/{target_branch}); "
            f"rename it with `git tag {target_branch}-tag {target_branch} && git tag -d "
            f"{target_branch}` if that was not meant")
    for t in tasks:
        now = rev_parse(repo, t.ref)
        if now is None:  # deleted by hand: stop here, as at a conflict
            raise BatonError(
                f"stopped at task {t.id} ({t.title}): its branch {t.branch} is gone (deleted?), "
                "so it and the tasks after it were not merged — restore the branch (`git "
                f"reflog` shows its last commit) or `baton discard {t.id}`, then `baton handoff "
                "merge` again", code=1)
        shift = moved(repo, t, now)
        if shift and not shift["descends"]:  # never merge what was not reviewed as landed
            raise BatonError(
                f"stopped at task {t.id} ({t.title}): its branch {t.branch} was moved off the "
                f"commit that landed ({t.tip}), so it and the tasks after it were not merged "
                f"— put it back with `{shift['command']}` (or `baton discard {t.id}`), then "
                "`baton handoff merge` again", code=1)
        if shift:
            outcome.moved[t.id] = shift
        try:
            if is_ancestor(repo, t.ref, "HEAD"):
                outcome.skipped.append(t.id)
                if on_step:
                    on_step(t.id, "skipped")
                continue
            tip, theirs = read_ref(repo, ref), rev_parse(repo, t.ref)
            tree, conflicts = merge_tree(repo, tip or "HEAD", t.ref)
        except GitError as exc:
            raise BatonError(f"task {t.id}: cannot merge {t.branch}: {exc}", code=2) from exc
        if tip is None or theirs is None:  # (read just now: gone meanwhile)
            raise BatonError(f"task {t.id}: cannot merge {t.branch} onto {target_branch}: "
                             f"{'the branch ' + t.branch if theirs is None else ref} names no "
                             "commit", code=2)
        if conflicts or tree is None:
            outcome.conflict = {
                "id": t.id,
                "branch": t.branch,
                "files": conflicts,
                "command": f"git merge --no-ff {t.branch}",
            }
            return outcome
        msg = f"Merge task {t.id}: {t.title}"
        # Made in the object store, then the branch and the checkout move to it together,
        # under git's lock on the checkout: a commit of the person's meanwhile stops it.
        advance(repo, ref, tip, _commit_tree(repo, tree, [tip, theirs], msg),
                f"baton: handoff merge of {t.branch}")
        outcome.merged.append(t.id)
        if on_step:
            on_step(t.id, "merged")
    return outcome


def not_in_tree(repo, target: str, tasks: list[TaskBranch]) -> dict[int, list[str]]:
    """Files each task changed that `target`'s tree has back as they were before it — its
    change undone since (a commit that reverted it, say): "all landed work is on the branch"
    is said of the tree, not of the merge records. Task id -> those files."""
    missing: dict[int, list[str]] = {}
    for t in tasks:
        tip = t.tip or rev_parse(repo, t.ref)
        try:
            base = t.base or (git(repo, "merge-base", target, tip) if tip else None)
        except GitError:
            base = None
        if not tip or not base:
            continue
        try:  # (two diffs: the files it changed, less those `target` has changed too)
            still = set(changed_files(repo, base, target))
            undone = [path for path in changed_files(repo, base, tip) if path not in still]
        except GitError:
            continue
        if undone:
            missing[t.id] = undone
    return missing
