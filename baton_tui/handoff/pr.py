"""`baton handoff pr`: the landed work published as pull requests, never automatically.

`--single` (the default): one branch, `baton/<plan>/pr/all` — the person's base with every
landed task merged on top in plan order — and one pull request onto the base. `--stack`: a
branch and a pull request per landed task in plan order, each based on the one before (the
first on the base). Running it again pushes the same branches (leased: only where Baton left
them, so a branch of anyone else's is never overwritten) and updates the same pull requests;
nothing is opened twice. The forge's own CLI opens them (`forge.py`); each one opened or
updated is recorded (`handoff.pr`, `task.pr`): `status --json` and `handoff review --json`
show it.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.core.slug import pr_branch
from baton_tui.gitops import git
from baton_tui.gitops.handoff import moved
from baton_tui.gitops.publish import Push, Step, push, push_argv, remote_heads, remote_url
from baton_tui.gitops.publish import stacked as stacked_commits
from baton_tui.handoff import pr_body
from baton_tui.handoff.actions import git_handoff, landed_branches
from baton_tui.handoff.forge import Forge, choose
from baton_tui.plan import current as plans
from baton_tui.store import snapshot as snapshots
from baton_tui.workspace import Workspace

K = EventKind


@dataclass
class Entry:
    """One pull request to open or update: its task (None: the plan's one), branch, commit,
    base, title, body, and what was recorded of it before."""

    task: int | None
    branch: str
    commit: str
    base: str
    title: str
    body: str = ""
    before: dict[str, Any] | None = None
    number: int | None = None
    url: str | None = None
    action: str = ""


@dataclass
class Published:
    """What `handoff pr` did (or, dry, would do): pushes, forge calls, pull requests."""

    mode: str
    remote: str
    base: str
    forge: str
    dry_run: bool
    pushes: list[dict[str, Any]] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)
    prs: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "remote": self.remote, "base": self.base,
                "forge": self.forge, "dry_run": self.dry_run, "pushes": self.pushes,
                "calls": self.calls, "prs": self.prs}


def publish(ws: Workspace, remote: str | None = None, base: str | None = None,
            stack: bool = False, draft: bool = False, dry_run: bool = False) -> Published:
    """Push Baton's branches and open or update their pull requests (see the module)."""
    cur = plans.current(ws)
    assert cur is not None
    if not git_handoff(ws):
        raise BatonError("folder mode: the tasks worked in this folder directly — there is "
                         "no branch to publish", code=2)
    if not cur.row.base_commit or not cur.row.base_branch:
        raise BatonError("the plan has not run yet: there is nothing to publish", code=2)
    tasks = landed_branches(ws, cur)
    if not tasks:
        raise BatonError("no task has landed yet: there is nothing to publish (`baton status` "
                         "says where the run is)", code=2)
    root = ws.root
    steps = []
    for t in tasks:
        now = git.rev_parse(root, t.ref)
        shift = moved(root, t, now)
        if now is None or (shift and not shift["descends"]):
            raise BatonError(f"task {t.id}'s branch {t.branch} is "
                             + ("gone (deleted?)" if now is None else "moved off the commit "
                                f"that landed ({shift['command']} puts it back)" if shift
                                else "") + ": nothing was pushed", code=1)
        summary = cur.view(t.id).summary or ""
        steps.append(Step(t.id, now, f"Task {t.id}: {t.title}\n\n{summary}".strip()))
    commits = stacked_commits(root, cur.row.base_commit, steps)

    remote = remote or _upstream(root, cur.row.base_branch) or "origin"
    onto = base or cur.row.base_branch
    forge = choose(remote_url(root, remote), ws.config.handoff.forge, root)
    if not dry_run:
        forge.check()  # missing or not signed in: one line, nothing pushed
    heads = remote_heads(root, remote)
    if onto not in heads:
        raise BatonError(f"the base branch {onto} is not on {remote}: push it first (`git push "
                         f"{remote} {onto}`) or name another with --base — nothing was pushed",
                         code=2)

    snap = snapshots.read(ws.store)
    checks = {t.id: cur.view(t.id).check for t in tasks}
    if stack:
        entries = [Entry(t.id, pr_branch(cur.row.slug, t.id, t.title), commit, "",
                         f"[{i + 1}/{len(tasks)}] Task {t.id}: {t.title}",
                         before=cur.view(t.id).pr)
                   for i, (t, commit) in enumerate(zip(tasks, commits))]
        for i, entry in enumerate(entries):
            entry.base = onto if i == 0 else entries[i - 1].branch
    else:
        entries = [Entry(None, pr_branch(cur.row.slug), commits[-1], onto,
                         _title(cur.doc.goal), before=cur.folder.plan.pr)]
    for entry in entries:
        if entry.before and entry.before.get("remote") == remote \
                and entry.before.get("branch") == entry.branch:
            entry.number, entry.url = entry.before.get("number"), entry.before.get("url")

    result = Published("stack" if stack else "single", remote, onto, forge.name, dry_run)
    pushes = _pushes(entries, heads, remote)
    result.pushes = [{"branch": p.branch, "commit": p.commit, "expect": p.expect}
                     for p in pushes]
    if pushes:
        result.calls.append(["git", *push_argv(remote, pushes)])
    if not dry_run:
        push(root, remote, pushes)

    with tempfile.TemporaryDirectory(prefix="baton-pr-") as tmp:
        for at, entry in enumerate(entries):
            entry.body = (pr_body.stacked(snap, _parts(entries), at, onto, checks) if stack
                          else pr_body.single(snap, [t.id for t in tasks], checks))
            body = Path(tmp) / f"body-{at + 1}.md"
            body.write_text(entry.body)
            _open(ws, cur, forge, entry, body, draft, dry_run, result)
        if stack and not dry_run:
            _name_the_later_ones(forge, entries, snap, onto, checks, Path(tmp), result)
    result.prs = [{"task": e.task, "number": e.number, "url": e.url, "branch": e.branch,
                   "base": e.base, "commit": e.commit, "action": e.action, "title": e.title,
                   "body": e.body} for e in entries]
    return result


def _name_the_later_ones(forge: Forge, entries: list[Entry], snap: Any, onto: str,
                         checks: dict[int, Any], tmp: Path, result: Published) -> None:
    """A pull request opened before the ones above it named them by branch: now that each
    has its number, its body names them by number (one more update, for those only)."""
    for at, entry in enumerate(entries):
        body = pr_body.stacked(snap, _parts(entries), at, onto, checks)
        if body == entry.body or entry.number is None:
            continue
        entry.body = body
        path = tmp / f"body-{at + 1}-whole.md"
        path.write_text(body)
        argv = forge.update_argv(entry.number, entry.base, entry.title, path, body)
        result.calls.append(argv)
        forge.open(argv)


def _title(goal: str) -> str:
    line = (goal.strip().splitlines() or ["Baton's work"])[0]
    return line if len(line) <= 100 else line[:99] + "…"


def _upstream(root: Path, branch: str) -> str | None:
    """The remote the person's branch tracks, if it tracks one."""
    proc = git.run_git(root, "config", "--get", f"branch.{branch}.remote")
    name = proc.stdout.strip()
    return name if proc.returncode == 0 and name and name != "." else None


def _pushes(entries: list[Entry], heads: dict[str, str], remote: str) -> list[Push]:
    """What must be pushed: a branch absent, or where Baton last pushed it. A branch on the
    remote that Baton did not leave there is someone else's: refused, nothing pushed."""
    pushes = []
    for entry in entries:
        there = heads.get(entry.branch)
        if there == entry.commit:
            continue
        ours = entry.before if entry.before and entry.before.get("remote") == remote else None
        if there is not None and (ours is None or ours.get("commit") != there):
            raise BatonError(f"{entry.branch} on {remote} holds {there[:12]}, which Baton did "
                             "not push: it pushes only over its own work — look at that branch "
                             "(someone pushed to it?) and delete it on the remote to publish "
                             "again; nothing was pushed", code=2)
        pushes.append(Push(entry.commit, entry.branch, there))
    return pushes


def _parts(entries: list[Entry]) -> list[pr_body.Part]:
    return [pr_body.Part(e.task or 0, e.title.split(": ", 1)[-1], e.branch, e.number)
            for e in entries]


def _open(ws: Workspace, cur: plans.Current, forge: Forge, entry: Entry, body: Path,
          draft: bool, dry_run: bool, result: Published) -> None:
    """Update the entry's pull request when one is known (recorded, or found open from its
    branch), else open it; then record it."""
    if entry.number is None and not dry_run:
        result.calls.append(forge.find_argv(entry.branch))
        found = forge.find(entry.branch)
        if found is not None:
            entry.number, entry.url = found.number, found.url
    if entry.number is not None:
        argv = forge.update_argv(entry.number, entry.base, entry.title, body, entry.body)
        entry.action = "would update" if dry_run else "updated"
    else:
        argv = forge.create_argv(entry.branch, entry.base, entry.title, body, entry.body, draft)
        entry.action = "would open" if dry_run else "opened"
    result.calls.append(argv)
    if dry_run:
        return
    opened = forge.open(argv)
    entry.number, entry.url = opened.number, opened.url
    record = {"number": entry.number, "url": entry.url, "branch": entry.branch,
              "base": entry.base, "commit": entry.commit, "remote": result.remote,
              "forge": forge.name}
    ws.store.append(cur.row.id, entry.task, K.TASK_PR if entry.task else K.HANDOFF_PR, record)


def shown_call(argv: list[str]) -> str:
    """A call as a person could type it (a body file named by its role, not its tmp path)."""
    return shlex.join(["<body>" if os.path.basename(a).startswith("body-") else a
                       for a in argv])
