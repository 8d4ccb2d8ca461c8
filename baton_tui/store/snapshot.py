"""One typed status snapshot: what `baton status`, the TUI board and its header all show.

Built from the plan row and the folded events, read with the standard library only
(a second terminal must answer at once while a run is live). Plan-level words
(`merged`, `complete`, `failed` …) are decided here and nowhere else.
"""

from __future__ import annotations

import time
from operator import itemgetter

from baton_tui import procs
from baton_tui.plan.dag import blocked_by, levels, topo_order
from baton_tui.plan.slug import task_branch
from baton_tui.run import budget, policy
from baton_tui.store import foldcache
from baton_tui.store.db import PlanRow, Store
from baton_tui.store.events import BROKEN, FINISHED, PENDING, SETTLED, WAITING, State
from baton_tui.store.views import Folder, PlanView, TaskView

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any
    from collections.abc import Sequence

NO_PLAN = ("no plan yet: draft one with `baton plan --goal \"…\"` or load one with "
           "`baton plan --from FILE`")


_UNCOMPARED = frozenset({"by_id", "below"})  # raw or derived from the compared fields


class _Frozen(tuple):
    """A read-only record: equal when every compared field is (the TUI redraws on change).

    A tuple underneath, built in one C call: a 10,000-task snapshot makes 10,000 of them, and
    setting forty slots one by one cost a fifth of `baton status`. Fields are named in
    `_fields`; each is a property reading its position.
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _compared: tuple[int, ...] | None = None   # positions compared, None: all of them

    def __new__(cls, **fields: Any) -> Any:
        return tuple.__new__(cls, map(fields.get, cls._fields))

    def __init_subclass__(cls) -> None:
        for at, name in enumerate(cls._fields):
            setattr(cls, name, property(itemgetter(at), doc=name))
        kept = tuple(at for at, name in enumerate(cls._fields) if name not in _UNCOMPARED)
        cls._compared = None if len(kept) == len(cls._fields) else kept

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def _key(self) -> tuple:
        kept = self._compared
        return tuple(self) if kept is None else tuple(self[at] for at in kept)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(
            f"{name}={value!r}" for name, value in zip(self._fields, self)) + ")"

    def fields(self) -> dict[str, Any]:
        """Every field by name (to build a changed copy: `type(x)(**{**x.fields(), …})`)."""
        return dict(zip(self._fields, self))

    __hash__ = None  # type: ignore[assignment]  # holds lists and dicts


class TaskSnap(_Frozen):
    """One task: its plan fields and what its events say."""

    __slots__ = ()
    _fields = (
        "id", "title", "prompt", "player", "model", "effort", "mode", "depends_on", "skills",
        "scope", "checkpoint", "check", "branch", "worktree", "level", "state", "words",
        "unready",  # why its player cannot start here (a pending task only), else None
        "reason", "progress", "until", "started_at", "wall", "tokens", "cost", "summary",
        "last_report", "flags", "attempts", "started", "blocked_by", "question", "answerable",
        "decisions", "needs_approval", "limit", "reassigned",
    )

    def as_json(self) -> dict[str, Any]:
        """The task in `status --json` (pinned keys first)."""
        out = dict(zip(_JSON_KEYS, _json_values(self)))  # one C call for the plain fields
        out["depends_on"] = list(self.depends_on)
        out["flags"] = [dict(f) for f in self.flags] if self.flags else []
        out["decisions"] = [dict(d) for d in self.decisions] if self.decisions else []
        out["player_ready"] = self.unready is None
        return out


# `status --json`'s task keys, in order, and the field each shows (`None`: set in `as_json`).
_JSON_FIELDS = (
    ("id", "id"), ("title", "title"), ("player", "player"), ("mode", "mode"),
    ("state", "state"), ("model", "model"), ("effort", "effort"), ("depends_on", None),
    ("branch", "branch"), ("worktree", "worktree"), ("started_at", "started_at"),
    ("blocked_by", "blocked_by"), ("reason", "reason"), ("progress", "progress"),
    ("until", "until"), ("checkpoint", "question"), ("summary", "summary"),
    ("last_report", "last_report"), ("flags", None), ("decisions", None), ("words", "words"),
    ("needs_approval", "needs_approval"), ("wall", "wall"), ("tokens", "tokens"),
    ("cost", "cost"), ("attempts", "attempts"), ("player_ready", None),
    ("player_problem", "unready"),
)
_JSON_KEYS = tuple(key for key, _ in _JSON_FIELDS)
_json_values = itemgetter(*(TaskSnap._fields.index(field or "id") for _, field in _JSON_FIELDS))
_AT = {name: at for at, name in enumerate(TaskSnap._fields)}
_APART = "\x00"  # an item separator json.dumps never writes otherwise (it escapes a NUL)
_LISTED = ("depends_on", "flags", "decisions")  # tuples here, lists in the JSON


def tasks_json(tasks: "Sequence[TaskSnap]", between: str = ", ") -> str:
    """`between.join(json.dumps(t.as_json()) for t in tasks)`: the same text, written faster.

    At 10,000 tasks the dictionaries `as_json` makes and the encoder's walk through them (28
    keys encoded again for every task) were a third of `baton status --json`. Here a field
    of every task goes through json's C encoder in one call, items separated by a NUL —
    which json.dumps escapes inside strings, so each one found is a separator — and is split
    back into one text per task. A field that reads the same for every task (no model, no
    branch yet) joins the constant text between the others, with the keys; one join makes
    the whole. Should a field hold a list or dict of two items or more where a plain value
    belongs (never, as the snapshot is built), its separators show in the count, and that
    field is encoded one task at a time instead.
    """
    import json

    dumps = json.dumps
    n = len(tasks)
    if not n:
        return ""
    columns = list(zip(*tasks))  # field position -> that field of every task
    fixed = ["{"]  # the constant text before each varying field, and after the last
    varying: list[list[str]] = []
    for key, field in _JSON_FIELDS:
        if key == "player_ready":
            texts = ["true" if u is None else "false" for u in columns[_AT["unready"]]]
        elif key in _LISTED:
            texts = _lists(columns[_AT[key]], key, dumps)
        else:
            column = columns[_AT[field]]
            if column.count(None) == n:
                texts = ["null"]
            else:
                texts = dumps(column, separators=(_APART, ": "))[1:-1].split(_APART)
                if len(texts) != n:
                    texts = [dumps(v) for v in column]
        fixed[-1] += ("" if key == "id" else ", ") + dumps(key) + ": "
        if texts.count(texts[0]) == len(texts):  # the same for every task
            fixed[-1] += texts[0]
        else:
            varying.append(texts)
            fixed.append("")
    fixed[-1] += "}"
    if not varying:
        return between.join([fixed[0]] * n)
    # Task after task: varying field, the text after it, … the last text running into the
    # next task's first (`}, {"id": `), so the whole is one join of one flat list.
    width = 2 * len(varying)
    out: list[str] = [""] * (width * n)
    for at, texts in enumerate(varying):
        out[2 * at::width] = texts
        out[2 * at + 1::width] = [fixed[at + 1]] * n
    joint = fixed[-1] + between + fixed[0]
    out[width - 1::width] = [joint] * n
    out[-1] = fixed[-1]
    return fixed[0] + "".join(out)


def _lists(column: tuple, key: str, dumps: Any) -> list[str]:
    """A tuple field of every task as `as_json` shows it: a list, empty when the field is."""
    if not any(column):
        return ["[]"] * len(column)
    if all(type(v) is tuple or not v for v in column):
        text = dumps([v or () for v in column], separators=(_APART, ": "))
        parts = text[2:-2].split("]" + _APART + "[")  # each item is a list: `[…]`
        if len(parts) == len(column):
            return ["[" + p.replace(_APART, ", ") + "]" for p in parts]
    if key == "depends_on":
        return [dumps(list(v)) for v in column]
    return [dumps([dict(x) for x in v]) if v else "[]" for v in column]


class Snapshot(_Frozen):
    """The whole plan as every front end shows it; `plan_id is None`: there is no plan.

    `tasks` are in plan order (as `status` lists them), `rows` in dependency order (as the
    TUI's cards show them): the same objects twice.
    """

    __slots__ = ()
    _fields = (
        "plan_id", "slug", "goal", "autonomy", "approved", "state", "conductor", "stopped_by",
        "budget",
        "base_branch", "base_commit", "integration_branch", "folder_mode", "tasks", "rows",
        "questions", "summary",
        "by_id", "below",  # indexes: id -> task, id -> its direct dependents' ids
    )

    @property
    def empty(self) -> bool:
        return self.plan_id is None

    @property
    def conductor_pid(self) -> int | None:
        return self.conductor["pid"] if self.conductor else None

    def task(self, task_id: int | None) -> TaskSnap | None:
        return (self.by_id or {}).get(task_id)

    def dependents(self, task_id: int) -> list[int]:
        """Tasks that name `task_id` among their direct dependencies (in plan order)."""
        return list((self.below or {}).get(task_id, ()))

    def as_json(self) -> dict[str, Any]:
        """`baton status --json`: plan, conductor, tasks, summary."""
        if self.empty:
            return {"plan": None, "conductor": self.conductor, "tasks": [], "summary": None}
        return {
            "plan": {"goal": self.goal, "slug": self.slug, "approved": self.approved,
                     "autonomy": self.autonomy, "state": self.state,
                     "stopped_by": self.stopped_by, "budget": self.budget,
                     "base_branch": self.base_branch, "base_commit": self.base_commit,
                     "integration_branch": self.integration_branch},
            "conductor": self.conductor,
            "tasks": [t.as_json() for t in self.tasks],
            "summary": self.summary,
        }


def empty(conductor: dict[str, Any] | None = None) -> Snapshot:
    return Snapshot(plan_id=None, state="no plan", tasks=(), rows=(), questions=(), budget=None,
                    conductor=conductor, approved=False, autonomy="guarded", goal="", slug="")


def conductor_info(store: Store) -> dict[str, Any] | None:
    """The live conductor (pid, since), or None when none runs."""
    row = store.conductor()
    if row is None or not procs.alive(row["pid"], row["create_time"]):
        return None
    return {"pid": row["pid"], "started": row["started"], "plan": row["plan_id"]}


def plan_word(approved: bool, tasks: list[TaskSnap], running: bool, check_failed: bool) -> str:
    """One word for the plan: draft, approved, running, waiting, failed, complete, merged."""
    states = [t.state for t in tasks]
    if running:
        return "running"
    if states and "merged" in states and all(
            t.state in SETTLED or (t.mode != "build" and t.state == State.DONE) for t in tasks):
        return "merged"
    if any(s in BROKEN for s in states) or (check_failed and states):
        return "failed"
    if states and all(s in FINISHED for s in states):
        return "complete"
    if any(s in WAITING for s in states):
        return "waiting"
    return "approved" if approved else "draft"


def _clock(at: float) -> str:
    return time.strftime("%H:%M", time.localtime(at))


def describe(state: str, blocked: int | None, until: float | None, reason: str | None,
             view: TaskView | None = None, waits_for: tuple[str, float] | None = None) -> str:
    """A task's state in plain words: `blocked by #3`, `paused until 15:00`, `failed: why`,
    `waiting for codex's limit, resets 14:05`, `waiting for your approval`."""
    if blocked:
        return f"blocked by #{blocked}"
    if view is not None and view.needs_approval and state in PENDING:
        return "waiting for your approval (edited mid-run)"
    if waits_for and state == State.QUEUED:
        return f"waiting for {waits_for[0]}'s limit, resets {_clock(waits_for[1])}"
    if state == State.PAUSED and view is not None and view.limit == "unknown" and until:
        return f"paused: usage limit, reset unknown — probing at {_clock(until)}"
    if state == State.PAUSED and until:
        return "paused until " + _clock(until)
    if state == State.CHECKPOINT:
        return "checkpoint: waiting for you"
    if state in BROKEN and reason:
        return f"{state}: {reason}"
    return str(state)


def build(plan: PlanRow, folder: Folder, conductor: dict[str, Any] | None,
          folder_mode: bool, now: float, unready: dict[str, str] | None = None) -> Snapshot:
    """The snapshot of `plan`, from its folded events; `unready` names the players recorded as
    unable to start here (see `unready_players`), with why."""
    tasks, order = _tasks(plan, folder, folder_mode, now, unready)
    return _whole(plan, folder, conductor, folder_mode, now, tasks, order)


def _shape_of(plan: PlanRow) -> tuple:
    """What the plan's document says of its graph — (dependencies, levels, dependency
    order) — the same for every snapshot of one revision."""
    specs = plan.doc["tasks"]
    deps = {t["id"]: list(t.get("depends_on", [])) for t in specs}
    level_of = levels(deps)
    return deps, level_of, topo_order(deps, [t["id"] for t in specs], level_of)


def _tasks(plan: PlanRow, folder: Folder, folder_mode: bool, now: float,
           unready: dict[str, str] | None,
           shape: tuple | None = None) -> tuple[list[TaskSnap], list[int]]:
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
           below: dict[int, list[int]] | None = None, about: list | None = None) -> Snapshot:
    """The snapshot around its tasks: the plan's words, budget, summary and indexes (`below`:
    the dependents index, and `about`: the document's `_about`, when the caller has them)."""
    goal, autonomy, questions = about or _about(plan)
    check = folder.plan.run_check
    # Field by field (one C call): reading 10,000 tasks' fields one property at a time was
    # a good part of the build.
    columns = list(zip(*tasks)) if tasks else [()] * len(TaskSnap._fields)
    ids = columns[_AT["id"]]
    by_id = dict(zip(ids, tasks))
    if below is None:
        below = {}
        for task_id, task_deps in zip(ids, columns[_AT["depends_on"]]):
            for dep in dict.fromkeys(task_deps):
                below.setdefault(dep, []).append(task_id)
    return Snapshot(
        plan_id=plan.id, slug=plan.slug, goal=goal,
        autonomy=policy.level(autonomy), approved=plan.approved,
        stopped_by=folder.plan.stopped_by,
        budget=budget.status(plan.options.get("budget"), tasks, folder, now),
        state=plan_word(plan.approved, tasks, conductor is not None,
                        bool(check and check.get("exit") not in (0, None))),
        conductor=conductor, base_branch=plan.base_branch, base_commit=plan.base_commit,
        integration_branch=None if folder_mode else plan.integration_branch,
        folder_mode=folder_mode, tasks=tuple(tasks),
        rows=tuple(by_id[i] for i in order),
        questions=tuple(tuple(q) for q in questions),
        summary=_summary(folder, columns, conductor is not None, now),
        by_id=by_id, below=below)


def _about(plan: PlanRow) -> list:
    """What a snapshot shows of the plan's document besides its tasks: goal, autonomy and
    the planner's questions (question, recommendation, answer)."""
    doc = plan.doc
    return [doc.get("goal", ""), doc.get("autonomy"),
            [[q.get("question", ""), q.get("recommendation", ""), q.get("answer")]
             for q in doc.get("questions", [])]]


# States `describe` has more words for than the state's own (with no blocker, limit or edit).
_WORDY = frozenset({State.PAUSED, State.CHECKPOINT, State.FAILED, State.PARKED})


def _task(plan: PlanRow, spec: dict[str, Any], view: TaskView, blocked: int | None, level: int,
          folder_mode: bool, now: float, limits: dict[str, float]) -> TaskSnap:
    get = spec.get
    mode = get("mode", "build")
    started_at = view.started_at
    wall = view.wall + ((now - started_at) if started_at else 0.0)
    state = view.state
    build_task = mode == "build" and not folder_mode
    player = spec["player"]
    until, reason = view.until, view.reason
    waits_for = (player, limits[player]) if player in limits else None
    # Most tasks' words are their state's: `describe` only when it may say more.
    words = (describe(state, blocked, until, reason, view, waits_for)
             if blocked or waits_for or view.needs_approval or state in _WORDY else str(state))
    flags, decisions = view.flags, view.decisions
    # Positional, in `TaskSnap._fields` order (one tuple per task: see `_Frozen`).
    return tuple.__new__(TaskSnap, (
        spec["id"], spec["title"], get("prompt", ""), player, get("model"),
        get("effort"), mode, tuple(get("depends_on", ())),
        tuple(get("skills", ())), tuple(get("scope", ())),
        bool(get("checkpoint")), get("check"),
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
        view.needs_approval, view.limit, bool(view.reassigned)))


def _summary(folder: Folder, columns: list[tuple], running: bool, now: float) -> dict[str, Any]:
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

    A plan of `CACHE_TASKS` tasks or more keeps its built tasks in the store (see `_cached`):
    while no event comes and the plan is not edited, the next read starts from them.
    """
    conductor = conductor_info(store)
    plan = store.current_plan()
    if plan is None:
        return empty(conductor)
    now = time.time() if now is None else now
    unready = unready_players(store)
    # Kept only with no live run, and a live run's events outdate them: not worth a look then.
    snap = _cached(store, plan, now, unready) if conductor is None else None
    if snap is not None:
        return snap
    folder = foldcache.folded(store, plan.id)
    mode = folder_mode(store, folder)
    tasks, order = _tasks(plan, folder, mode, now, unready)
    snap = _whole(plan, folder, conductor, mode, now, tasks, order)
    if len(tasks) >= CACHE_TASKS and conductor is None:  # (a live run's would outdate it)
        _keep(store, plan, folder, mode, unready, tasks, order, snap.below)
    return snap


# The built tasks of a big plan, kept in the store -------------------------------------------
# Folding is cached already (`foldcache`), but at 10,000 tasks reading the fold back and
# building every task from it was still most of `baton status`. So a reader with no live run
# to outdate it keeps the built tasks too, in the `meta` table as JSON (data, never code),
# under a key that holds everything they were built from: a hash of the code that builds
# them, the plan's id, revision, document (its CRC) and slug, folder mode, the players found
# unready and the time zone (`paused until 15:00`), with the last event folded. Only two
# things in a task depend on the clock, and they are worked out again on every read: the wall
# time of a running task (from its wall before this stretch, kept for it) and the words of a
# task whose player has a usage limit recorded (`waiting for codex's limit, resets 14:05`
# holds only until then). The rest of the snapshot — budget, summary, the plan's word, the
# indexes — is built around the tasks as ever.
CACHE_TASKS = 1000  # a smaller plan builds its tasks about as fast as it reads them back
_TUPLES = tuple(_AT[name] for name in ("depends_on", "skills", "scope", "flags", "decisions"))
_code: str | None = None


def _cache_key(plan: PlanRow, mode: bool, unready: dict[str, str]) -> list:
    import os
    import zlib

    global _code
    if _code is None:
        import sys

        _code = foldcache.fingerprint([sys.modules[name].__file__ for name in (
            "baton_tui.store.snapshot", "baton_tui.store.views", "baton_tui.store.events",
            "baton_tui.plan.dag", "baton_tui.plan.slug")])
    text = plan.doc_text  # (every row read from the store has it)
    return [_code, plan.id, plan.revision, zlib.crc32(text.encode()) if text else None,
            plan.slug, mode, unready, os.environ.get("TZ"), *time.tzname, time.timezone,
            time.altzone]


def _keep(store: Store, plan: PlanRow, folder: Folder, mode: bool, unready: dict[str, str],
          tasks: list[TaskSnap], order: list[int], below: dict[int, list[int]]) -> bool:
    """Keep the built tasks for the next reader (best effort, like the fold). Kept only when
    reading them back gives the very same tasks (JSON carries no tuple, no NaN)."""
    import json

    walls = [[at, folder.tasks[t.id].wall] for at, t in enumerate(tasks) if t.started_at]
    head = {"key": _cache_key(plan, mode, unready), "last": folder.last_id,
            "unbranched": folder.plan.unbranched}
    # Field by field (a column of every task's values each): read back with one `zip`.
    columns = [list(c) for c in zip(*tasks)]
    record = {"plan": vars(folder.plan), "columns": columns, "order": order,
              "walls": walls, "below": list(below.items()), "about": _about(plan)}
    try:
        body = json.dumps(record, separators=(",", ":"))
        # The head on a line of its own: a reader checks it before decoding the rest.
        text = json.dumps(head, separators=(",", ":")) + "\n" + body
        back = json.loads(body)
        if back["plan"] != record["plan"] or back["walls"] != walls or back["order"] != order \
                or back["about"] != record["about"] \
                or dict(back["below"]) != below or _rebuilt(back["columns"], {}, {}, {}, 0.0) != tasks:
            return False
    except (TypeError, ValueError):
        return False
    return foldcache.keep_meta(store, f"snap:{plan.id}", "snap:", text)


def _cached(store: Store, plan: PlanRow, now: float,
            unready: dict[str, str]) -> Snapshot | None:
    """The snapshot from the tasks `_keep` kept, when nothing they were built from changed."""
    import json

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
        if head["key"] != _cache_key(plan, mode, unready) or store.conn.execute(
                "SELECT 1 FROM events WHERE id > ? AND plan_id = ? LIMIT 1",
                (last, plan.id)).fetchone():
            return None
        data = json.loads(text[cut + 1:])
        folder = Folder()
        folder.plan = object.__new__(PlanView)
        folder.plan.__dict__ = data["plan"]
        folder.last_id = last
        tasks = _rebuilt(data["columns"], dict(data["walls"]), folder.plan.player_limits,
                         unready, now)
        return _whole(plan, folder, None, mode, now, tasks, data["order"], dict(data["below"]),
                      data["about"])
    except Exception:  # sqlite3.Error, or a record this code did not write: build afresh
        return None


def _rebuilt(columns: list[list], walls: dict[int, float], limits: dict[str, float],
             unready: dict[str, str], now: float) -> list[TaskSnap]:
    """Tasks from their kept fields (`columns[i]`: field `i` of every task), with the
    clock's two (see above) worked out for `now`."""
    if len(columns) != len(TaskSnap._fields):
        raise ValueError("kept by other code")
    for at in _TUPLES:
        columns[at] = list(map(tuple, columns[at]))
    wall_of, started_of = columns[_AT["wall"]], columns[_AT["started_at"]]
    for at, wall in walls.items():
        wall_of[at] = round(max(0.0, wall + (now - started_of[at])), 2)
    n = len(columns[0])
    tasks = list(map(tuple.__new__, [TaskSnap] * n, zip(*columns)))
    if not limits:
        return tasks
    future = {p: at for p, at in limits.items() if at > now}
    words_at = _AT["words"]
    for at, task in enumerate(tasks):
        player = task.player
        if player in limits and not (player in unready and not task.started
                                     and task.state in PENDING and not task.blocked_by):
            values = list(task)  # (else `_unready`'s words, which stay)
            values[words_at] = describe(task.state, task.blocked_by, task.until, task.reason,
                                        task,  # type: ignore[arg-type]  # as a view: the same
                                        (player, future[player]) if player in future else None)
            tasks[at] = tuple.__new__(TaskSnap, values)
    return tasks


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
        self.inputs: tuple | None = None  # what `snap` was built from
        self.snap: Snapshot | None = None
        self._globals: tuple | None = None  # what every task of `snap` was built from
        self._plan_shape: tuple | None = None  # ((plan id, revision), shape, positions)

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

    def _shape(self, row: PlanRow) -> tuple:
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
        return bool(snap is None or snap.conductor or snap.summary.get("counts", {}).get("running")
                    or any(at > now for at in plan.player_limits.values())
                    or (plan.first_start is not None and plan.last_end is None))
