"""The repository's current plan: load, replace, edit, approve — the rules of DESIGN.md.

One current plan per repository. A new plan replaces one that has not started;
while the current plan has work neither merged nor discarded, a new one is
refused unless `new=True` archives the current plan first. Every edit is
validated whole, refused on a started task (reassigning a paused or failed one
excepted) and voids the approval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

from baton_tui.core.errors import BatonError
from baton_tui.gitops import git
from baton_tui.plan import edits
from baton_tui.plan.model import PlanDocument, Task, parse_document
from baton_tui.core.slug import slugify, unique_slug
from baton_tui.plan.validate import ensure_valid
from baton_tui import readiness
from baton_tui.core import rules
from baton_tui.core.rules import Action
from baton_tui.core.snapshot import NO_PLAN, Snapshot
from baton_tui.store import foldcache, snapshot
from baton_tui.store.db import PlanRow
from baton_tui.core.events import PENDING, EventKind
from baton_tui.core.words import LOCAL_RUNNER, Mode
from baton_tui.core.views import Folder, TaskView
from baton_tui.workspace import Workspace

K = EventKind


@dataclass
class Current:
    """The current plan row, its parsed document and its folded events."""

    row: PlanRow
    doc: PlanDocument
    folder: Folder

    @property
    def views(self) -> dict[int, TaskView]:
        return self.folder.tasks

    def view(self, task_id: int) -> TaskView:
        return self.folder.view(task_id)

    def _editable(self, task_id: int) -> "_Editable":
        task, view = self.doc.task(task_id), self.view(task_id)  # an unknown id: one clear line
        return _Editable(task_id, str(view.state), self.started(task_id),
                         bool(view.reassigned), task.player)

    def started(self, task_id: int) -> bool:
        view = self.view(task_id)
        return view.started or view.state not in PENDING

    def snapshot(self, ws: Workspace) -> Snapshot:
        """The status snapshot of this plan (what the rule book judges)."""
        return snapshot.build(self.row, self.folder, snapshot.conductor_info(ws.store),
                              snapshot.folder_mode(ws.store, self.folder), time.time(),
                              snapshot.unready_players(ws.store))

    def refuse(self, ws: Workspace, action: Action, task_id: int | None = None) -> None:
        """Raise the rule book's sentence when `action` is not allowed now. An edit is judged
        by its task alone, without the plan's whole snapshot (most of an edit's cost)."""
        if action in rules.FIELDS and task_id is not None:
            reason = rules.why_not_edit(rules.FIELDS[action], self._editable(task_id),
                                        player_facts(ws))
            if reason:
                raise BatonError(reason)
            return
        snap = self.snapshot(ws)
        task = None
        if task_id is not None:
            self.doc.task(task_id)  # an unknown id is one clear line
            task = snap.task(task_id)
        reason = rules.why_not(action, snap, task, player_facts(ws))
        if reason:
            raise BatonError(reason)


def player_facts(ws: Workspace) -> rules.PlayerFacts:
    """The catalog facts the edit rules use, from this workspace's players."""
    players = ws.catalog.players
    return rules.PlayerFacts(
        catalog=lambda p: players[p].catalog() if p in players else None,
        efforts=lambda p: tuple(players[p].efforts) if p in players else (),
        check_is_task=ws.catalog.check_is_task)


def known_player_facts(ws: Workspace, names: Iterable[str]) -> rules.PlayerFacts:
    """`player_facts` worked out now for the players `names`, as plain data: a front end
    consults it while drawing, never waiting on a player's CLI or endpoint (a catalog may
    ask either). A player not named takes any model until it is."""
    players = ws.catalog.players
    catalogs = {name: players[name].catalog() for name in dict.fromkeys(names)
                if name in players}
    efforts = {name: tuple(player.efforts) for name, player in players.items()}
    agentless = frozenset(name for name, player in players.items() if player.check_is_task)
    return rules.PlayerFacts(catalog=catalogs.get, efforts=lambda p: efforts.get(p, ()),
                             check_is_task=agentless.__contains__)


@dataclass(frozen=True)
class _Editable:
    """A task as the edit rules judge it (`rules.Editable`)."""

    id: int
    state: str
    started: bool
    reassigned: bool
    player: str


def current(ws: Workspace, required: bool = True) -> Current | None:
    """The current plan, or a clear error (exit 2) when there is none."""
    row = ws.store.current_plan()
    if row is None:
        if required:
            raise BatonError(NO_PLAN)
        return None
    return Current(row, _document(ws, row), foldcache.folded(ws.store, row.id))


_PARSED: dict[tuple, PlanDocument] = {}  # the last plan document parsed, by its revision


def _document(ws: Workspace, row: PlanRow) -> PlanDocument:
    """The row's plan document, parsed and validated once per revision: every edit stores a
    new revision (`save_edit`), and a command or the app asks for the current plan several
    times per action — at 10,000 tasks each parse decodes 2 MB and validates it (~0.15 s)."""
    doc = _PARSED.get(_revision_key(ws, row, row.revision))
    if doc is None:
        doc = parse_document(row.doc, "stored plan", stored=True)
        _remember(ws, row, row.revision, doc)
    return doc


def _revision_key(ws: Workspace, row: PlanRow, revision: int) -> tuple:
    return (str(ws.paths.store_path), row.id, row.created, revision)


def _remember(ws: Workspace, row: PlanRow, revision: int, doc: PlanDocument) -> None:
    _PARSED.clear()
    _PARSED[_revision_key(ws, row, revision)] = doc


def validate(ws: Workspace, doc: PlanDocument, source: str) -> PlanDocument:
    return ensure_valid(doc, ws.catalog, set(ws.skills), source,
                        runners=ws.config.runners.names())


def store_new_plan(ws: Workspace, doc: PlanDocument, *, new: bool = False,
                   transcript: list[Any] | None = None, source: str = "plan") -> PlanRow:
    """Make `doc` the current plan, following the replacement rules. A plan without its own
    `autonomy` takes the configured one."""
    validate(ws, doc, source)
    if "autonomy" not in doc.model_fields_set:
        doc = doc.model_copy(update={"autonomy": ws.config.autonomy})
    doc = _default_runner(ws, doc)
    with ws.store.tx():
        existing = current(ws, required=False)
        if existing is not None:
            _archive(ws, existing, Action.ARCHIVE_PLAN if new else Action.NEW_PLAN)
        slug = unique_slug(slugify(doc.goal), ws.store.slugs())
        plan_id = ws.store.insert_plan(slug, doc.dump(), transcript)
        ws.store.append(plan_id, None, K.PLAN_CREATED, {"source": source, "tasks": len(doc.tasks)})
    # A plan may name players this machine lacks (it came from another one): it loads, and
    # the detection recorded here marks those tasks in `status` and on the cards.
    readiness.detect(ws, {t.player for t in doc.tasks})
    row = ws.store.plan(plan_id)
    assert row is not None
    return row


def _archive(ws: Workspace, existing: Current, action: Action) -> None:
    """Archive `existing` if the rule book allows `action` (its branches and worktrees stay)."""
    existing.refuse(ws, action)
    open_work = rules.open_work(existing.snapshot(ws))
    ws.store.update_plan(existing.row.id, archived=True)
    ws.store.append(existing.row.id, None, K.PLAN_ARCHIVED,
                    {"reason": "new plan" if open_work else "replaced before it started"})


def archive_current(ws: Workspace) -> bool:
    """Archive the current plan, by the rules of `plan --new` (refused while it runs), so the
    next goal starts a new one; False when there is none."""
    with ws.store.tx():
        existing = current(ws, required=False)
        if existing is None:
            return False
        _archive(ws, existing, Action.ARCHIVE_PLAN)
    return True


def _default_runner(ws: Workspace, doc: PlanDocument) -> PlanDocument:
    """Tasks that name no runner of their own take the configured default (`[runners]
    default`), as a plan without its own autonomy takes the configured one."""
    default = ws.config.runners.default
    if default == LOCAL_RUNNER or all("runner" in t.model_fields_set for t in doc.tasks):
        return doc
    tasks = [t if "runner" in t.model_fields_set else t.model_copy(update={"runner": default})
             for t in doc.tasks]
    return doc.model_copy(update={"tasks": tasks})


def _refuse_edit(ws: Workspace, cur: Current, task_id: int, fields: set[str]) -> bool:
    """Raise the rule book's refusal; True when the edit reassigns a started task."""
    for name in sorted(fields):
        cur.refuse(ws, rules.EDIT_OF[name], task_id)
    return cur.started(task_id)


def save_edit(ws: Workspace, cur: Current, new_doc: PlanDocument, what: str,
              task_id: int | None, void: bool = True, extra: dict[str, Any] | None = None) -> None:
    """Store an edited document (validated), recording the edit and voiding approval.

    Before the run has started anything, an edit voids the whole plan's approval. Mid-run
    it voids only the edited task's: that task waits for `baton approve`, the rest goes on.
    """
    validate(ws, new_doc, what)
    mid_run = void and task_id is not None and any(v.started for v in cur.views.values())
    with ws.store.tx():
        row = ws.store.current_plan()
        if row is None or row.id != cur.row.id or row.revision != cur.row.revision:
            raise BatonError("the plan changed while this edit was being made; try again")
        fields: dict[str, Any] = {"doc": new_doc.dump(), "revision": row.revision + 1}
        if void and row.approved and not mid_run:
            fields["approved"] = False
        ws.store.update_plan(row.id, **fields)
        ws.store.append(row.id, task_id, K.PLAN_EDITED, {"edit": what, **(extra or {})})
        if void and row.approved and mid_run:
            ws.store.append(row.id, task_id, K.TASK_APPROVAL_VOIDED, {"edit": what})
        elif void and row.approved:
            ws.store.append(row.id, None, K.PLAN_APPROVAL_VOIDED, {"edit": what})
    _remember(ws, row, row.revision + 1, new_doc)  # the next look parses nothing


def edit_task(ws: Workspace, task_id: int, field: str, value: Any) -> PlanDocument:
    """Set one field of one task, by the rules above. Returns the new document."""
    cur = current(ws)
    assert cur is not None
    cur.doc.task(task_id)
    if field not in rules.EDIT_OF:
        raise BatonError(f"tasks have no editable field {field!r}")
    reassign = _refuse_edit(ws, cur, task_id, {field})
    if field == "player":
        readiness.refuse_unready(ws, value)   # a task is never given to a player that cannot start
    new_doc = edits.set_field(cur.doc, task_id, field, value, ws.catalog)
    shown = value if not isinstance(value, str) or len(value) < 200 else value[:200] + "…"
    command = "task-" + {"depends_on": "deps"}.get(field, field)
    save_edit(ws, cur, new_doc, command, task_id, void=not reassign, extra={"value": shown})
    old = cur.doc.task(task_id)
    if reassign and field == "player" and value != old.player:
        # It keeps its worktree; the next run or resume starts it at once on the new player,
        # briefed on the work so far (the old player's reset no longer matters).
        moved = new_doc.task(task_id)
        ws.store.append(cur.row.id, task_id, K.TASK_REASSIGNED, {
            "from": old.player, "to": moved.player, "model": moved.model, "effort": moved.effort})
    return new_doc


def fall_back(ws: Workspace, task_id: int, limited: dict[str, float], now: float,
              why: str) -> str | None:
    """Move a task paused at a far-off usage limit to the next of its `fallback` players
    that can start now (not at a limit of its own, ready here), as a reassignment: it keeps
    its worktree and starts there at once, briefed on its progress. Returns the entry it
    moved to (`player` or `player:model`), or None when none can take it."""
    cur = current(ws)
    assert cur is not None
    task = cur.doc.task(task_id)
    for entry in task.fallback:
        player, _, model = entry.partition(":")
        if (player == task.player and (model or None) == task.model) \
                or limited.get(player, 0.0) > now or player not in ws.catalog.players:
            continue
        try:
            readiness.refuse_unready(ws, player)
        except BatonError:
            continue
        new_doc = edits.set_field(cur.doc, task_id, "player", player, ws.catalog)
        if model:
            new_doc = edits.set_field(new_doc, task_id, "model", model)
        save_edit(ws, cur, new_doc, "fallback", task_id, void=False, extra={"value": entry})
        moved = new_doc.task(task_id)
        ws.store.append(cur.row.id, task_id, K.TASK_REASSIGNED, {
            "from": task.player, "to": moved.player, "model": moved.model,
            "effort": moved.effort, "by": "fallback", "why": why})
        return entry
    return None


def add_task(ws: Workspace, title: str, player: str, mode: str = Mode.BUILD,
             deps: list[int] | None = None, prompt: str = "", check: str | None = None) -> int:
    cur = current(ws)
    assert cur is not None
    removed = cur.row.options.get("removed_ids", [])
    next_id = max([t.id for t in cur.doc.tasks] + removed) + 1
    readiness.refuse_unready(ws, player)
    new_doc, new_id = edits.add_task(cur.doc, title, player, mode, deps, prompt, next_id,
                                     ws.catalog, check)
    if ws.config.runners.default != LOCAL_RUNNER:  # new tasks run where the config says
        new_doc = edits.set_field(new_doc, new_id, "runner", ws.config.runners.default)
    save_edit(ws, cur, new_doc, "task-add", new_id)
    return new_id


def remove_task(ws: Workspace, task_id: int) -> None:
    cur = current(ws)
    assert cur is not None
    cur.refuse(ws, Action.REMOVE_TASK, task_id)
    new_doc = edits.remove_task(cur.doc, task_id)
    save_edit(ws, cur, new_doc, "task-remove", task_id)
    options = dict(cur.row.options)
    options["removed_ids"] = sorted(set(options.get("removed_ids", [])) | {task_id})
    ws.store.update_plan(cur.row.id, options=options)


def set_autonomy(ws: Workspace, level: str) -> None:
    """Change the plan's autonomy — at any time, mid-run included. It never voids approval:
    it changes who decides, not what runs; it applies from the next decision on."""
    cur = current(ws)
    assert cur is not None
    cur.refuse(ws, Action.SET_AUTONOMY)
    raw = cur.doc.dump()
    previous = raw.get("autonomy")
    raw["autonomy"] = level
    save_edit(ws, cur, parse_document(raw, "autonomy"), "autonomy", None, void=False)
    ws.store.append(cur.row.id, None, K.PLAN_AUTONOMY, {"from": previous, "to": level})


def unchecked_models(ws: Workspace, tasks: Iterable[Task]) -> list[str]:
    """Why a task's model could not be judged (its player cannot list its models here)."""
    players = ws.catalog.players
    by_note: dict[str, list[int]] = {}
    for task in tasks:
        if task.model and task.player in players:
            note = players[task.player].model_unchecked(task.model)
            if note:
                by_note.setdefault(note, []).append(task.id)
    # Tasks on the same player and model share one line: the same note is said once.
    return [f"task{'s' * (len(ids) > 1)} {', '.join(map(str, ids))}: {note}"
            for note, ids in by_note.items()]


def approve(ws: Workspace) -> tuple[PlanRow, list[str]]:
    """Approve the whole plan; record the person's branch and commit. Returns warnings."""
    cur = current(ws)
    assert cur is not None
    validate(ws, cur.doc, "plan")
    readiness.detect(ws, {t.player for t in cur.doc.tasks if not cur.started(t.id)})
    cur.refuse(ws, Action.APPROVE)   # names each task on a player that cannot start here
    warnings = unchecked_models(ws, [t for t in cur.doc.tasks if not cur.started(t.id)])
    branch = commit = None
    if ws.paths.is_git:
        try:
            branch = git.current_branch(ws.root)
            commit = git.head_commit(ws.root)
        except git.GitError:
            raise BatonError("the repository has no commit yet: commit something first, so "
                             "tasks have a base to start from") from None
        if branch is None:
            raise BatonError("HEAD is detached: switch to the branch the work should land on "
                             "before approving")
        if git.is_dirty(ws.root):
            warnings.append("your tree has uncommitted changes to tracked files: agents will not "
                            "see them (they start from the last commit)")
    with ws.store.tx():
        row = ws.store.current_plan()
        assert row is not None
        if row.base_commit and rules.open_work(cur.snapshot(ws)):
            # A running plan keeps the base it started from.
            branch, commit = row.base_branch, row.base_commit
        ws.store.update_plan(row.id, approved=True, approved_at=time.time(),
                             base_branch=branch, base_commit=commit)
        ws.store.append(row.id, None, K.PLAN_APPROVED, {"branch": branch, "commit": commit,
                                                        "warnings": warnings})
    row = ws.store.current_plan()
    assert row is not None
    return row, warnings
