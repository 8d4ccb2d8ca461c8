"""The run's integration branch: made at the approved commit, rebuilt if it was deleted.

Anyone can move or delete `baton/<plan>/integration` mid-run — the person, or an agent
running git in its worktree (refs are shared by every worktree); a move is put back by
`refguard`. Made again at the approved commit it would silently drop every landing, and the
next task would be cut from a branch without them. The store records the integration commit
of every landing (`task.landed` carries it), and the last one holds all of them: the branch
is put back there, and the repair recorded. When that commit is gone too (git gc), Baton
stops with one line instead of guessing.
"""

from __future__ import annotations

from baton_tui.core.errors import BatonError
from baton_tui.core.slug import integration_branch
from baton_tui.core.views import Folder
from baton_tui.gitops import git, refs, worktrees
from baton_tui.run import refguard
from baton_tui.store.db import PlanRow
from baton_tui.core.events import EventKind
from baton_tui.workspace import Workspace


def tip(ws: Workspace, plan: PlanRow) -> tuple[str, str | None]:
    """The integration branch's name and commit: created at the approved commit the first
    time, rebuilt from the last landing when it was deleted; (name, None) before approval,
    when it may not exist yet. Read from the ref files: no git process in the usual case."""
    branch = integration_branch(plan.slug)
    found = refs.read_ref(ws.root, f"refs/heads/{branch}")
    if not plan.base_commit:
        return branch, found
    held = refguard.check_integration(ws, plan)  # put back if something moved it
    if held:
        return branch, held
    landed = Folder().feed(ws.store.events(plan.id)).plan.landed_tip
    if landed is None:  # nothing landed yet: the branch starts at the approved commit
        return branch, worktrees.ensure_branch(ws.root, branch, plan.base_commit)
    if git.rev_parse(ws.root, landed) != landed:
        raise BatonError(
            f"the integration branch {branch} was deleted, and the commit of its last landing "
            f"({landed[:12]}) is gone too: restore the branch (git branch {branch} <commit>), "
            "then `baton resume`")
    with refguard.LOCK:
        commit = worktrees.ensure_branch(ws.root, branch, landed)
        refguard.landed(ws, plan, commit)
    if commit == landed:
        ws.store.append(plan.id, None, EventKind.RUN_REPAIRED, {
            "what": "integration", "commit": landed,
            "detail": f"{branch} was deleted: rebuilt at {landed[:12]}, its last landing"})
    return branch, commit
