"""Building the status snapshot (`core.snapshot`'s records) from the store.

Built from the plan row and the folded events, read with the standard library only
(a second terminal must answer at once while a run is live), cached in the store for large
plans, and kept up to date from new events only by `Reader` (the TUI's poller).
"""

from __future__ import annotations

import json
import os
import sys
import time
from functools import partial

from baton_tui import procs
from baton_tui.core.dag import blocked_by, levels, topo_order
from baton_tui.core.slug import task_branch
from baton_tui.core import budget
from baton_tui.core import policy
from baton_tui.store import foldcache
from baton_tui.store.db import PlanRow, Store
from baton_tui.core.events import PENDING, EventKind, State
from baton_tui.core.words import LOCAL_RUNNER, Mode
from baton_tui.core.snapshot import _AT, Snapshot, TaskSnap, describe, empty, plan_word
from baton_tui.core.views import Folder, PlanView, TaskView
from baton_tui.core.visible import shown

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any, Callable

    Keep = Callable[[list[str] | None], bool]  # keeps the tasks built, given their lines

def conductor_info(store: Store) -> dict[str, Any] | None:
    """The live conductor (pid, since), or None when none runs."""
    row = store.conductor()
    if row is None or not procs.alive(row["pid"], row["create_time"]):
        return None
    return {"pid": row["pid"], "started": row["started"], "plan": row["plan_id"]}


def build(plan: PlanRow, folder: Folder, conductor: dict[str, Any] | None,
          folder_mode: bool, now: float, unready: dict[str, str] | None = None) -> Snapshot:
    """The snapshot of `plan`, from its folded events; `unready` names the players recorded as
    unable to start here (see `unready_players`), with why."""
    tasks, order = _tasks(plan, folder, folder_mode, now, unready)
    return _whole(plan, folder, conductor, folder_mode, now, tasks, order)


def _shape_of(plan: PlanRow) -> tuple[Any, ...]:
    """What the plan's document says of its graph — (dependencies, levels, dependency
    order) — the same for every snapshot of one revision."""
    specs = plan.doc["tasks"]
    deps = {t["id"]: list(t.get("depends_on", [])) for t in specs}
    level_of = levels(deps)
    return deps, level_of, topo_order(deps, [t["id"] for t in specs], level_of)


def _tasks(plan: PlanRow, folder: Folder, folder_mode: bool, now: float,
           unready: dict[str, str] | None,
           shape: tuple[Any, ...] | None = None) -> tuple[list[TaskSnap], list[int]]:
    """The tasks in plan order, and their ids in dependency order (the TUI's rows);
    `shape` is the plan's `_shape_of`, when the caller kept it."""
    deps, level_of, order = shape or _shape_of(plan)
    views = folder.tasks
    blank = TaskView()
    blocked = blocked_by(deps, {i: (views.get(i) or blank).state for i in deps})
    limits = {p: at for p, at in folder.plan.player_limits.items() if at > now}
    tasks = [_task(plan, spec, views.get(spec["id"]) or blank, blocked.get(spec["id"]),
                   level_of.get(spec["id"], 0), folder_mode, now, limits)
             for spec in plan.doc["tasks"]]
    tasks = [_unready(t, unready) for t in tasks] if unready else tasks
    return tasks, order


def _whole(plan: PlanRow, folder: Folder, conductor: dict[str, Any] | None, folder_mode: bool,
           now: float, tasks: list[TaskSnap], order: list[int],
           below: dict[int, list[int]] | None = None, about: list[Any] | None = None,
           columns: list[Any] | None = None) -> Snapshot:
    """The snapshot around its tasks: the plan's words, budget, summary and indexes (`below`:
    the dependents index, `about`: the document's `_about`, and `columns`: the tasks field
    by field, when the caller has them)."""
    if columns is None:
        # Field by field (one C call): reading 10,000 tasks' fields one property at a time
        # was a good part of the build.
        columns = list(zip(*tasks)) if tasks else [()] * len(TaskSnap._fields)
    ids = columns[_AT["id"]]
    by_id = dict(zip(ids, tasks))
    if below is None:
        below = {}
        for task_id, task_deps in zip(ids, columns[_AT["depends_on"]]):
            for dep in dict.fromkeys(task_deps):
                below.setdefault(dep, []).append(task_id)
    return Snapshot(**_head(plan, folder, conductor, folder_mode, now, columns, about),
                    tasks=tuple(tasks), rows=tuple(by_id[i] for i in order),
                    by_id=by_id, below=below)


def _head(plan: PlanRow, folder: Folder, conductor: dict[str, Any] | None, folder_mode: bool,
          now: float, columns: list[Any], about: list[Any] | None) -> dict[str, Any]:
    """The snapshot's fields but its tasks and their indexes, from the tasks' fields
    (`columns[i]`: field `i` of every task)."""
    goal, autonomy, questions = about or _about(plan)
    check = folder.plan.run_check
    states, costs = columns[_AT["state"]], [c for c in columns[_AT["cost"]] if c is not None]
    running = conductor is not None
    return dict(
        plan_id=plan.id, slug=plan.slug, goal=goal,
        autonomy=policy.level(autonomy), approved=plan.approved,
        stopped_by=folder.plan.stopped_by,
        conductor_died=None if running else folder.plan.conductor_died,
        budget=budget.usage(plan.options.get("budget"), sum(columns[_AT["tokens"]]),
                            sum(costs) if costs else None, State.RUNNING in states, folder, now),
        state=plan_word(plan.approved, states, columns[_AT["mode"]], running,
                        bool(check and check.get("exit") not in (0, None))),
        conductor=conductor, base_branch=plan.base_branch, base_commit=plan.base_commit,
        integration_branch=None if folder_mode else plan.integration_branch,
        folder_mode=folder_mode, questions=tuple(tuple(q) for q in questions),
        summary=_summary(folder, columns, running, now),
        pr=dict(folder.plan.pr) if folder.plan.pr else None)


def _about(plan: PlanRow) -> list[Any]:
    """What a snapshot shows of the plan's document besides its tasks: goal, autonomy and
    the planner's questions (question, recommendation, answer)."""
    doc = plan.doc
    return [shown(doc.get("goal", "")), doc.get("autonomy"),
            [[shown(q.get("question", "")), shown(q.get("recommendation", "")),
              _shown(q.get("answer"))] for q in doc.get("questions", [])]]


def _shown(text: str | None) -> str | None:
    return None if text is None else shown(text)


# States `describe` has more words for than the state's own (with no blocker, limit or edit).
_WORDY = frozenset({State.PAUSED, State.CHECKPOINT, State.FAILED, State.PARKED})


def _task(plan: PlanRow, spec: dict[str, Any], view: TaskView, blocked: int | None, level: int,
          folder_mode: bool, now: float, limits: dict[str, float]) -> TaskSnap:
    get = spec.get
    mode = get("mode", Mode.BUILD)
    started_at = view.started_at
    wall = view.wall + ((now - started_at) if started_at else 0.0)
    state = view.state
    build_task = mode == Mode.BUILD and not folder_mode
    player = spec["player"]
    until, reason = view.until, view.reason
    waits_for = (player, limits[player]) if player in limits else None
    # Most tasks' words are their state's: `describe` only when it may say more.
    words = (describe(state, blocked, until, reason, view, waits_for)
             if blocked or waits_for or view.needs_approval or state in _WORDY
             or (reason and state == State.QUEUED) else str(state))
    flags, decisions = view.flags, view.decisions
    # Positional, in `TaskSnap._fields` order (one tuple per task: see `_Frozen`).
    return tuple.__new__(TaskSnap, (
        spec["id"], shown(spec["title"]), shown(get("prompt", "")), player, get("model"),
        get("effort"), mode, tuple(get("depends_on", ())),
        tuple(get("skills", ())), tuple(get("scope", ())),
        bool(get("checkpoint")), _shown(get("check")),
        task_branch(plan.slug, spec["id"], spec["title"]) if build_task else None,  # branch
        view.workdir if build_task else None, level, str(state), words,            # worktree…
        None,                                                                        # unready
        reason, view.progress, until, started_at,
        round(max(0.0, wall), 2), view.tokens,                                       # wall, tokens
        round(view.cost, 6) if view.cost_known else None,                            # cost
        view.summary, view.last_report,
        tuple(dict(f) for f in flags) if flags else (),                              # flags
        view.attempts, view.started or state not in PENDING,                         # started
        blocked,
        ({"what": view.checkpoint, "evidence": view.checkpoint_evidence}             # question
         if state == State.CHECKPOINT else None),
        view.pending_checkpoint is not None and view.checkpoint_answer is None,      # answerable
        tuple(dict(d) for d in decisions) if decisions else (),                      # decisions
        view.needs_approval, view.limit, bool(view.reassigned),
        get("runner") or LOCAL_RUNNER, view.node, view.job,                             # runner…
        (f"recycled for task {view.recycled_for} (its work is on its branch)"
         if view.recycled_for is not None and build_task else None),                # reason
        dict(view.pr) if view.pr else None,                                          # pr
        sum(1 for c in view.comments if c.get("open")) if view.comments else 0,      # comments
        _told(view.messages) if view.messages else None,                             # told
        tuple(get("fallback", ())),                                                  # fallback
        view.last_started))                                                          # started


def _told(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What the card says of `baton tell`'s messages: how many, how many not yet read by
    the agent, and the last one."""
    return {"count": len(messages), "unread": sum(1 for m in messages if not m.get("read")),
            "last": shown(str(messages[-1].get("text", "")))}


def _summary(folder: Folder, columns: list[tuple[Any, ...]], running: bool, now: float) -> dict[str, Any]:
    """The run's totals, from the tasks' fields (`columns[i]`: field `i` of every task)."""
    first, last = folder.plan.first_start, folder.plan.last_end
    run_wall = ((now if running else (last or now)) - first) if first is not None else 0.0
    walls, tokens, costs_of, states = (columns[_AT[name]]
                                       for name in ("wall", "tokens", "cost", "state"))
    task_time = sum(walls)
    players: dict[str, dict[str, Any]] = {}
    for player, used, cost, attempts, wall in zip(columns[_AT["player"]], tokens, costs_of,
                                                  columns[_AT["attempts"]], walls):
        if not (used or cost is not None or attempts):
            continue
        use = players.get(player)
        if use is None:
            use = players[player] = {"tasks": 0, "tokens": 0, "cost": None, "task_time": 0.0}
        use["tasks"] += 1
        use["tokens"] += used
        use["task_time"] += wall
        if cost is not None:
            use["cost"] = (use["cost"] or 0.0) + cost
    for use in players.values():  # rounded once, as the totals below
        use["task_time"] = round(use["task_time"], 2)
        if use["cost"] is not None:
            use["cost"] = round(use["cost"], 6)
    costs = [c for c in costs_of if c is not None]
    return {
        "wall": round(run_wall, 2), "task_time": round(task_time, 2),
        "speedup": round(task_time / run_wall, 2) if run_wall > 0 else None,
        "tokens": sum(tokens),
        "cost": round(sum(costs), 6) if costs else None,  # None: no player reported a cost
        "counts": {s: states.count(s) for s in sorted(set(states))},
        "players": players,
    }


def unready_players(store: Store) -> dict[str, str]:
    """Players the last detection found unable to start here (`players.readiness` in the
    store's meta, written by whatever detected them), each with its reason and fix."""
    record = store.get_meta("players.readiness") or {}
    return {name: entry.get("reason", "") + (f" — {entry['fix']}" if entry.get("fix") else "")
            for name, entry in record.items() if isinstance(entry, dict) and not entry.get("ready")}


def _unready(task: TaskSnap, unready: dict[str, str]) -> TaskSnap:
    """Mark a task that has not started and whose player cannot start here."""
    if task.player not in unready or task.started:
        return task
    fields = task.fields()
    fields["unready"] = unready[task.player]
    if task.state in PENDING and not task.blocked_by:
        fields["words"] = f"{task.player} is not ready here: {unready[task.player]}"
    return TaskSnap(**fields)


def folder_mode(store: Store, folder: Folder) -> bool:
    """No git (the store is in `.baton/state`), or git too old: tasks ran in the folder itself
    (an attempt started with neither branch nor base), so no task has a branch."""
    return store.path.parent.parts[-2:] == (".baton", "state") or folder.plan.unbranched


def read(store: Store, now: float | None = None) -> Snapshot:
    """The current plan's snapshot, read from the store.

    A plan of `CACHE_TASKS` tasks or more keeps its built tasks in the store (see `_kept`):
    the next read starts from them, building again only the tasks that events came for since
    (a live run's), or none while nothing happened and the plan was not edited.
    """
    conductor, plan, now, unready = _inputs(store, now)
    if plan is None:
        return empty(conductor)
    kept = _kept(store, plan, now, unready, lines=False)
    if kept is None:
        snap, keep = _built(store, plan, conductor, now, unready)
        if keep is not None:
            keep(None)
        return snap
    snap = kept.snapshot(plan, conductor, now)
    if kept.due:
        kept.keep(store, plan, unready, list(snap.tasks), now, None)
    return snap


def read_json(store: Store, now: float | None = None) -> str:
    """`render.snapshot_json(read(store, now))` — the same text — from a big plan's kept
    tasks field by field: only the tasks whose line of it may have changed since they were
    kept (with their lines: see `_keep`) are built and written again. At 10,000 tasks,
    building and writing every task was most of `baton status --json`."""
    from baton_tui.store import render  # lazy: the TUI's reads never write JSON

    conductor, plan, now, unready = _inputs(store, now)
    if plan is None:
        return render.snapshot_json(empty(conductor))
    kept = _kept(store, plan, now, unready, lines=True)
    if kept is not None and kept.lines is not None:
        return _json_of_kept(store, plan, conductor, now, unready, kept)
    keep: Keep | None
    if kept is None:
        snap, keep = _built(store, plan, conductor, now, unready)
    else:  # kept by a reader that wrote no lines: every line written, and kept at once
        snap = kept.snapshot(plan, conductor, now)
        keep = partial(kept.keep, store, plan, unready, list(snap.tasks), now)
    text, lines = render.snapshot_json_lines(snap)
    if keep is not None:
        keep(lines)
    return text


def _inputs(store: Store, now: float | None) -> tuple[Any, ...]:
    """What a read starts from: the live conductor, the current plan, the time, the players
    found unready."""
    return (conductor_info(store), store.current_plan(), time.time() if now is None else now,
            unready_players(store))


def _json_of_kept(store: Store, plan: PlanRow, conductor: dict[str, Any] | None, now: float,
                  unready: dict[str, str], kept: Kept) -> str:
    """`read_json`'s text from the kept tasks and their lines: the stale lines written
    again, the head worked out from the tasks' fields."""
    from baton_tui.store import render  # lazy: the TUI's reads never write JSON

    known = kept.lines
    assert known is not None
    stale = [at for at, line in enumerate(known) if line is None]
    written = render.task_lines([kept.task(at) for at in stale])
    lines = [line or "" for line in known]
    for at, line in zip(stale, written):
        lines[at] = line
    head = Snapshot(**_head(plan, kept.folder, conductor, kept.mode, now, kept.columns,
                            kept.about), tasks=(), rows=(), by_id={}, below={})
    text, clean = render.head_and_lines(head, lines, written)
    if kept.due:
        kept.keep(store, plan, unready, kept.tasks(), now, clean)
    return text


def _built(store: Store, plan: PlanRow, conductor: dict[str, Any] | None, now: float,
           unready: dict[str, str]) -> tuple[Snapshot, Keep | None]:
    """The snapshot built from the plan's folded events; and, for a big plan, what keeps
    its tasks for the next reader (a call taking the tasks' lines, when written)."""
    folder = foldcache.folded(store, plan.id)
    mode = folder_mode(store, folder)
    tasks, order = _tasks(plan, folder, mode, now, unready)
    snap = _whole(plan, folder, conductor, mode, now, tasks, order)
    if len(tasks) < CACHE_TASKS:
        return snap, None
    walls = {at: folder.tasks[t.id].wall for at, t in enumerate(tasks) if t.started_at}
    return snap, lambda texts: _keep(store, plan, folder, mode, unready, tasks, order,
                                     snap.below, walls, now, texts)


# The built tasks of a big plan, kept in the store -------------------------------------------
# Folding is cached already (`foldcache`), but at 10,000 tasks reading the fold back and
# building every task from it was still most of `baton status`. So a reader with no live run
# to outdate it keeps the built tasks too, in the `meta` table as JSON (data, never code),
# under a key that holds everything they were built from: a hash of the code that builds
# them, the plan's id, revision, document (its CRC) and slug, folder mode, the players found
# unready and the time zone (`paused until 15:00`), with the last event folded. Events after
# that one (a live run's, a few per second) are caught up on: only the tasks they came for
# are folded again, from their own events, and built again with the ones whose blocker
# moved; up to `CATCH_UP` such events, beyond which building everything is as cheap. Only two
# things in a task depend on the clock, and they are worked out again on every read: the wall
# time of a running task (from its wall before this stretch, kept for it) and the words of a
# task whose player has a usage limit recorded (`waiting for codex's limit, resets 14:05`
# holds only until then). The rest of the snapshot — budget, summary, the plan's word, the
# indexes — is built around the tasks as ever. `baton status --json` keeps each task's line
# of its text too, and writes again only the lines of the tasks built again or whose clock's
# two may read otherwise (running when kept; a player's limit that moved across the clock).
CACHE_TASKS = 1000  # a smaller plan builds its tasks about as fast as it reads them back
CATCH_UP = 2000     # new events the kept tasks are brought up to date with (more: build all)
REBUILT_MAX = 500   # tasks built again from their events when catching up (more: build all)
KEEP_AFTER = 200    # new events caught up on before the caught-up tasks are kept instead
_PLAIN = (type(None), bool, int, float, str)
_TUPLES = tuple(_AT[name] for name in ("depends_on", "skills", "scope", "flags", "decisions",
                                        "fallback"))
_code: str | None = None


def _cache_key(plan: PlanRow, mode: bool, unready: dict[str, str]) -> list[Any]:
    import zlib  # lazy: a small plan's `baton status` never needs it (bench_status)

    global _code
    if _code is None:
        _code = foldcache.fingerprint([sys.modules[name].__file__ for name in (
            "baton_tui.store.snapshot", "baton_tui.core.snapshot", "baton_tui.core.views",
            "baton_tui.core.events", "baton_tui.core.dag", "baton_tui.core.slug",
            "baton_tui.core.budget", "baton_tui.core.policy")])
    text = plan.doc_text  # (every row read from the store has it)
    return [_code, plan.id, plan.revision, zlib.crc32(text.encode()) if text else None,
            plan.slug, mode, unready, os.environ.get("TZ"), *time.tzname, time.timezone,
            time.altzone]


def _keep(store: Store, plan: PlanRow, folder: Folder, mode: bool, unready: dict[str, str],
          tasks: list[TaskSnap], order: list[int], below: dict[int, list[int]],
          wall_of: dict[int, float], now: float, lines: list[str] | None = None) -> bool:
    """Keep the built tasks for the next reader (best effort, like the fold). Kept only when
    reading them back gives the very same tasks (JSON carries no tuple, no NaN). `wall_of`:
    each running task's wall time before its current stretch, by its position; `now`: the
    time they were built for; `lines`: the tasks' lines of `status --json`, when they were
    written (kept after the rest, one to a line: a task's JSON has no line break)."""
    walls = [[at, wall] for at, wall in sorted(wall_of.items())]
    head = {"key": _cache_key(plan, mode, unready), "last": folder.last_id,
            "unbranched": folder.plan.unbranched}
    # Field by field (a column of every task's values each): read back with one `zip`.
    columns = [_packed(list(c)) for c in zip(*tasks)]
    record = {"plan": vars(folder.plan), "columns": columns, "order": order, "at": now,
              "walls": walls, "below": list(below.items()), "about": _about(plan)}
    try:
        body = json.dumps(record, separators=(",", ":"))
        # The head on a line of its own: a reader checks it before decoding the rest.
        text = json.dumps(head, separators=(",", ":")) + "\n" + body
        if lines is not None and len(lines) == len(tasks):
            text += "\n" + "\n".join(lines)
        back = json.loads(body)
        if back["plan"] != record["plan"] or back["walls"] != walls or back["order"] != order \
                or back["about"] != record["about"] \
                or dict(back["below"]) != below \
                or _from_columns(_unpacked(back["columns"], len(tasks))) != tasks:
            return False
    except (TypeError, ValueError):
        return False
    return foldcache.keep_meta(store, f"snap:{plan.id}", "snap:", text)


class Kept:
    """A big plan's kept tasks, field by field (`columns[i]`: field `i` of every task, in
    plan order), brought up to date for a read: the clock's two worked out again, the tasks
    that new events came for (and those whose blocker moved) built again. `lines`: each
    task's kept line of `status --json`, None for one that may read otherwise now (None
    when not asked for, or none was kept); `due`: whether to keep them again."""

    def __init__(self, folder: Folder, mode: bool, columns: list[list[Any]], walls: dict[int, float],
                 data: dict[str, Any], lines: list[str | None] | None, due: bool):
        self.folder, self.mode, self.columns, self.walls = folder, mode, columns, walls
        self.order: list[int] = data["order"]
        self.below: dict[int, list[int]] = {int(k): v for k, v in data["below"]}
        self.about: list[Any] = data["about"]
        self.lines, self.due = lines, due

    def task(self, at: int) -> TaskSnap:
        """The task at position `at`."""
        return _task_at(self.columns, at)

    def tasks(self) -> list[TaskSnap]:
        """Every task, in plan order."""
        return _from_columns(self.columns)

    def snapshot(self, plan: PlanRow, conductor: dict[str, Any] | None, now: float) -> Snapshot:
        return _whole(plan, self.folder, conductor, self.mode, now, self.tasks(), self.order,
                      self.below, self.about, self.columns)

    def keep(self, store: Store, plan: PlanRow, unready: dict[str, str],
             tasks: list[TaskSnap], now: float, lines: list[str] | None) -> bool:
        return _keep(store, plan, self.folder, self.mode, unready, tasks, self.order,
                     self.below, self.walls, now, lines)


def _kept(store: Store, plan: PlanRow, now: float, unready: dict[str, str],
          lines: bool) -> Kept | None:
    """The tasks `_keep` kept, brought up to date (see `Kept`), when nothing they were built
    from changed but events: those are caught up on (see `_caught_up`); None otherwise.
    With `lines`, their kept lines too: handed back only for the tasks that stayed as they
    were kept — not one built again, nor one whose clock moved."""
    try:
        row = store.conn.execute("SELECT value FROM meta WHERE key = ?",
                                 (f"snap:{plan.id}",)).fetchone()
        if row is None:
            return None
        text = row[0]
        cut = text.index("\n")
        head = json.loads(text[:cut])
        last = int(head["last"])
        mode = folder_mode(store, Folder()) or bool(head["unbranched"])
        if head["key"] != _cache_key(plan, mode, unready):
            return None
        new = store.events(plan.id, after=last)
        if len(new) > CATCH_UP or any(e.kind == EventKind.PLAN_APPROVED for e in new):
            return None  # (an approval words every task again)
        end = text.find("\n", cut + 1)
        data = json.loads(text[cut + 1:end] if end > 0 else text[cut + 1:])
        folder = Folder()
        folder.plan = object.__new__(PlanView)
        folder.plan.__dict__ = data["plan"]
        folder.last_id = last
        columns = _unpacked(data["columns"], len(data["order"]))
        if len(columns) != len(TaskSnap._fields):
            return None  # kept by other code
        walls = {int(at): wall for at, wall in data["walls"]}
        running, limits = list(walls), dict(folder.plan.player_limits)  # as kept
        if not new:
            _clocked(columns, walls, folder.plan.player_limits, unready, now)
        elif not _caught_up(store, plan, folder, new, columns, walls, mode, unready, now):
            return None
        known = None
        if lines and end > 0:
            moved = _waits_moved(limits, data["at"], folder.plan.player_limits, now)
            known = _known_lines(text[end + 1:], columns, running, moved, folder.tasks)
        return Kept(folder, mode, columns, walls, data, known,
                    due=len(new) >= KEEP_AFTER or (lines and end < 0))
    except Exception:  # sqlite3.Error, or a record this code did not write: build afresh
        return None


def _packed(column: list[Any]) -> list[Any] | dict[str, Any]:
    """A column as kept: `{"all": value}` when every task has the same plain value, of one
    type (most fields of most tasks are still their default: no model, no flags, no node).
    Read back, every task holds that one value: so never a dict or list one could change."""
    first = column[0] if column else None
    if column and (type(first) in _PLAIN or first == ()) \
            and column.count(first) == len(column) and len(set(map(type, column))) == 1:
        return {"all": first}
    return column


def _unpacked(columns: list[Any], n: int) -> list[list[Any]]:
    """The kept columns of `n` tasks, each a list again."""
    return [[c["all"]] * n if type(c) is dict else c for c in columns]


def _waits_moved(kept: dict[str, float], kept_at: float, limits: dict[str, float],
                 now: float) -> set[str]:
    """The players whose tasks' words (`waiting for codex's limit, resets 14:05`) may read
    otherwise now than when the tasks were kept: their limit still to reset then or now,
    but not the same one."""
    then = {p: at for p, at in kept.items() if at > kept_at}
    since = {p: at for p, at in limits.items() if at > now}
    return {p for p in then.keys() | since.keys() if then.get(p) != since.get(p)}


def _known_lines(text: str, columns: list[list[Any]], running: list[int], moved: set[str],
                 again: dict[int, TaskView]) -> list[str | None] | None:
    """The kept tasks' lines (`text`), None for each task that may read otherwise now: those
    running when kept (their wall time), those of a player in `moved` (their words) and
    those built again from new events (`again`)."""
    known: list[str | None] = [*text.split("\n")]
    ids = columns[_AT["id"]]
    if len(known) != len(ids):
        return None
    for at in running:
        known[at] = None
    if moved:
        for at, player in enumerate(columns[_AT["player"]]):
            if player in moved:
                known[at] = None
    if again:
        for at, task_id in enumerate(ids):
            if task_id in again:
                known[at] = None
    return known


def _caught_up(store: Store, plan: PlanRow, folder: Folder, new: list[Any], columns: list[list[Any]],
               walls: dict[int, float], mode: bool, unready: dict[str, str], now: float) -> bool:
    """Bring the kept tasks (`columns`) up to date with `new` events; False when that would
    cost about what building everything does. `folder` holds the kept plan view; it gets
    the views of the tasks built again, and the new events (so it ends as a whole fold
    would for them). `walls` is updated for the tasks built again."""
    touched = sorted({e.task_id for e in new if e.task_id is not None})
    if len(touched) > REBUILT_MAX:
        return False
    ids = columns[_AT["id"]]
    position = {task_id: at for at, task_id in enumerate(ids)}
    folder.tasks = _views(store, plan, touched, folder.last_id)
    folder.feed(new)
    if folder.plan.unbranched and not mode:
        return False  # an attempt ran with no branch: no task has one any more
    kept_states = columns[_AT["state"]]
    blocked_of = columns[_AT["blocked_by"]]
    blank = TaskView()
    if any(str((folder.tasks.get(i) or blank).state) != kept_states[position[i]]
           for i in touched if i in position):
        states = dict(zip(ids, kept_states))
        states.update((i, (folder.tasks.get(i) or blank).state) for i in touched)
        blocked = blocked_by(dict(zip(ids, columns[_AT["depends_on"]])), states)
        moved = [i for i, was in zip(ids, blocked_of) if blocked.get(i) != was
                 and i not in folder.tasks]
        if len(touched) + len(moved) > REBUILT_MAX:
            return False
        if moved:  # no new events of their own: their views, as of now
            folder.tasks.update(_views(store, plan, moved, folder.last_id))
    else:
        blocked = {i: b for i, b in zip(ids, blocked_of) if b}
    _clocked(columns, walls, folder.plan.player_limits, unready, now)
    limits = {p: at for p, at in folder.plan.player_limits.items() if at > now}
    levels_of = columns[_AT["level"]]
    for task_id, view in folder.tasks.items():
        at = position.get(task_id)
        if at is None:
            continue
        task = _task(plan, _spec(columns, at), view, blocked.get(task_id), levels_of[at],
                     mode, now, limits)
        for column, value in zip(columns, _unready(task, unready) if unready else task):
            column[at] = value
        if view.started_at:
            walls[at] = view.wall
        else:
            walls.pop(at, None)
    return True


def _views(store: Store, plan: PlanRow, task_ids: list[int], upto: int) -> dict[int, TaskView]:
    """These tasks' views folded from their events up to event `upto` (the plan's own events
    folded with them, into a plan view thrown away); a fresh view for a task with none."""
    if not task_ids:
        return {}
    views = Folder().feed(store.history(plan.id, task_ids, upto)).tasks
    return {task_id: views.get(task_id) or TaskView() for task_id in task_ids}


def _from_columns(columns: list[list[Any]]) -> list[TaskSnap]:
    """The tasks whose fields these are (`columns[i]`: field `i` of every task); the tuple
    fields, lists in JSON, are made tuples in place."""
    for field in _TUPLES:
        columns[field] = list(map(tuple, columns[field]))
    return list(map(tuple.__new__, [TaskSnap] * len(columns[0]), zip(*columns)))


def _task_at(columns: list[list[Any]], at: int) -> TaskSnap:
    """The task at position `at` of these fields (its tuple fields made tuples)."""
    values = [column[at] for column in columns]
    for field in _TUPLES:
        values[field] = tuple(values[field])
    return tuple.__new__(TaskSnap, values)


def _spec(columns: list[list[Any]], at: int) -> dict[str, Any]:
    """A task's entry in the plan's document, as far as `_task` reads it, from the task built
    from it (`columns`, position `at`: decoding a 10,000-task document to build a few tasks
    again would cost more than the building)."""
    return {name: columns[_AT[name]][at] for name in _SPEC}


_SPEC = ("id", "title", "prompt", "player", "model", "effort", "mode", "depends_on", "skills",
         "scope", "checkpoint", "check", "runner", "fallback")


def _clocked(columns: list[list[Any]], walls: dict[int, float], limits: dict[str, float],
             unready: dict[str, str], now: float) -> None:
    """The kept tasks' fields (`columns`) with the clock's two (see above) worked out for
    `now`: a running task's wall time (`walls`: before its current stretch), and the words
    of a task whose player has a limit recorded (`limits`)."""
    wall_of, started_of = columns[_AT["wall"]], columns[_AT["started_at"]]
    for at, wall in walls.items():
        wall_of[at] = round(max(0.0, wall + (now - started_of[at])), 2)
    if not limits:
        return
    future = {p: at for p, at in limits.items() if at > now}
    words_of, players = columns[_AT["words"]], columns[_AT["player"]]
    states, started, blocked = (columns[_AT[name]] for name in ("state", "started", "blocked_by"))
    for at, player in enumerate(players):
        if player in limits and not (player in unready and not started[at]
                                     and states[at] in PENDING and not blocked[at]):
            task = _task_at(columns, at)  # (else `_unready`'s words, which stay)
            words_of[at] = describe(states[at], blocked[at], task.until, task.reason,
                                    task,  # type: ignore[arg-type]  # as a view: the same
                                    (player, future[player]) if player in future else None)


class Reader:
    """Snapshots of the current plan, folding only the events added since the last read
    (a front end that polls the store keeps one). The plan's document is decoded again only
    when its revision changes, and while nothing moves — no new event, no run, nothing
    counting time — the last snapshot is handed back as it is. When events came for a few
    tasks, only those tasks are built again (and the ones whose clock or blocker moved):
    every other task of the new snapshot is the last one's, the very same object."""

    def __init__(self) -> None:
        self.plan_id: int | None = None
        self.folder = Folder()
        self.row: PlanRow | None = None
        self.inputs: tuple[Any, ...] | None = None  # what `snap` was built from
        self.snap: Snapshot | None = None
        self._globals: tuple[Any, ...] | None = None  # what every task of `snap` was built from
        self._plan_shape: tuple[Any, ...] | None = None  # ((plan id, revision), shape, positions)

    def read(self, store: Store, now: float | None = None) -> Snapshot:
        conductor = conductor_info(store)
        plan_id = store.current_plan_id()
        if plan_id != self.plan_id:
            self.plan_id, self.row, self.snap, self._globals = plan_id, None, None, None
            self.folder = foldcache.folded(store, plan_id) if plan_id is not None else Folder()
        row = store.plan(plan_id, known=self.row) if plan_id is not None else None
        if row is None:
            return empty(conductor)
        self.row = row
        events = store.events(row.id, after=self.folder.last_id)
        self.folder.feed(events)
        now = time.time() if now is None else now
        unready = unready_players(store)
        inputs = (self.folder.last_id, row.revision, row.approved, row.options, row.base_branch,
                  row.base_commit, conductor, unready)
        if self.snap is not None and inputs == self.inputs and not self._moving(now):
            return self.snap
        self.inputs = inputs
        mode = folder_mode(store, self.folder)
        limits = {p: at for p, at in self.folder.plan.player_limits.items() if at > now}
        known = (row.revision, row.slug, mode, unready, limits)
        if self.snap is not None and known == self._globals:
            self.snap = self._update(row, conductor, mode, now, unready, limits,
                                     {e.task_id for e in events if e.task_id is not None})
        else:
            self._globals = known
            tasks, order = _tasks(row, self.folder, mode, now, unready, self._shape(row)[0])
            self.snap = _whole(row, self.folder, conductor, mode, now, tasks, order)
        return self.snap

    def _update(self, row: PlanRow, conductor: dict[str, Any] | None, mode: bool, now: float,
                unready: dict[str, str], limits: dict[str, float],
                touched: set[int]) -> Snapshot:
        """The last snapshot with the tasks that may have changed built again: those with
        new events, those counting time, and — when a state changed — those whose blocker
        did. Nothing the others show can have moved (same plan, players, limits, mode)."""
        last = self.snap
        assert last is not None
        (deps, level_of, order), position = self._shape(row)
        views, blank = self.folder.tasks, TaskView()
        states = {i: (views.get(i) or blank).state for i in touched}
        if any(str(state) != last.by_id[i].state for i, state in states.items()
               if i in last.by_id):
            blocked = blocked_by(deps, {i: (views.get(i) or blank).state for i in deps})
            again = touched | {t.id for t in last.tasks if t.blocked_by != blocked.get(t.id)}
        else:
            blocked = {t.id: t.blocked_by for t in last.tasks if t.blocked_by}
            again = set(touched)
        again |= {t.id for t in last.tasks if t.started_at}  # their wall time moves
        tasks = list(last.tasks)
        specs = row.doc["tasks"]
        for task_id in again:
            at = position.get(task_id)
            if at is None:
                continue
            task = _task(row, specs[at], views.get(task_id) or blank, blocked.get(task_id),
                         level_of.get(task_id, 0), mode, now, limits)
            tasks[at] = _unready(task, unready) if unready else task
        return _whole(row, self.folder, conductor, mode, now, tasks, order, below=last.below)

    def _shape(self, row: PlanRow) -> tuple[Any, ...]:
        """The plan's `_shape_of` and each task's position in the plan, kept for its
        revision."""
        if self._plan_shape is None or self._plan_shape[0] != (row.id, row.revision):
            position = {t["id"]: at for at, t in enumerate(row.doc["tasks"])}
            self._plan_shape = ((row.id, row.revision), _shape_of(row), position)
        return self._plan_shape[1:]

    def _moving(self, now: float) -> bool:
        """Whether the last snapshot's words or times depend on the clock: a live run, a
        running task, a player's limit still to reset, a run with no end recorded."""
        snap, plan = self.snap, self.folder.plan
        return bool(snap is None or snap.conductor or (snap.summary or {}).get("counts", {}).get("running")
                    or any(at > now for at in plan.player_limits.values())
                    or (plan.first_start is not None and plan.last_end is None))
