"""The status snapshot's records: what `baton status`, the TUI board and its header all show.

Plain tuples with named fields (standard library only): `store.snapshot` builds them from the
plan row and the folded events; every front end reads them. Plan-level words (`merged`,
`complete`, `failed` …) and a task's state in plain words are decided here and nowhere else.
"""

from __future__ import annotations

import json
import time
from operator import itemgetter

from baton_tui.core.events import BROKEN, FINISHED, PENDING, SETTLED, WAITING, State

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Self

    from baton_tui.core.views import TaskView

NO_PLAN = ("no plan yet: draft one with `baton plan --goal \"…\"` or load one with "
           "`baton plan --from FILE`")


_UNCOMPARED = frozenset({"by_id", "below"})  # raw or derived from the compared fields


class _Frozen(tuple[object, ...]):
    """A read-only record: equal when every compared field is (the TUI redraws on change).

    A tuple underneath, built in one C call: a 10,000-task snapshot makes 10,000 of them, and
    setting forty slots one by one cost a fifth of `baton status`. A subclass declares its
    fields as annotations, in order (what checkers read); they become `_fields`, and each
    a property reading its position (an annotation alone makes no attribute: nothing is
    stored twice, and construction stays the one C call).
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _compared: tuple[int, ...] | None = None   # positions compared, None: all of them

    def __new__(cls, **fields: Any) -> Self:
        return tuple.__new__(cls, map(fields.get, cls._fields))

    def __init_subclass__(cls) -> None:
        cls._fields = tuple(cls.__annotations__)  # the class's own, in order (3.10+)
        for at, name in enumerate(cls._fields):
            setattr(cls, name, property(itemgetter(at), doc=name))
        kept = tuple(at for at, name in enumerate(cls._fields) if name not in _UNCOMPARED)
        cls._compared = None if len(kept) == len(cls._fields) else kept

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def _key(self) -> tuple[object, ...]:
        kept = self._compared
        return tuple(self) if kept is None else tuple(self[at] for at in kept)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

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
    # The fields, in order (`store.snapshot` builds the tuple by position).
    id: int
    title: str
    prompt: str
    player: str
    model: str | None
    effort: str | None
    mode: str                      # a `Mode` word
    depends_on: tuple[int, ...]
    skills: tuple[str, ...]
    scope: tuple[str, ...]
    checkpoint: bool
    check: str | None
    branch: str | None             # None: not a build task, or folder mode
    worktree: str | None
    level: int
    state: str                     # a `State` word
    words: str                     # the state in plain words (`describe`)
    unready: str | None            # why its player cannot start here (a pending task only)
    reason: str | None
    progress: str | None
    until: float | None
    started_at: float | None
    wall: float
    tokens: int
    cost: float | None             # None: its player reported no cost
    summary: str | None
    last_report: str | None
    flags: tuple[dict[str, Any], ...]
    attempts: int
    started: bool
    blocked_by: int | None
    question: dict[str, Any] | None  # an open checkpoint: what, evidence
    answerable: bool
    decisions: tuple[dict[str, Any], ...]
    needs_approval: bool
    limit: str | None
    reassigned: bool
    runner: str                    # where it runs: `local` or a `[runners.NAME]`
    node: str | None               # the worker its attempt ran on (None: local, not started)
    job: str | None                # the engine's key for its attempt (None: local)
    worktree_reason: str | None    # why it has no worktree though it had one (recycled)
    pr: dict[str, Any] | None      # its pull request of a stack (number, url, branch, base)
    open_comments: int             # review comments on its lines not yet answered by a retry
    told: dict[str, Any] | None    # `baton tell`: count, unread, the last message
    fallback: tuple[str, ...]      # players to move to at a far-off usage limit, in order
    last_started: float | None     # when it last started (kept once it stops: `started_at`
                                   # in `status --json`; `started_at` here is the running stretch)

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
    ("branch", "branch"), ("worktree", "worktree"), ("started_at", "last_started"),
    ("blocked_by", "blocked_by"), ("reason", "reason"), ("progress", "progress"),
    ("until", "until"), ("checkpoint", "question"), ("summary", "summary"),
    ("last_report", "last_report"), ("flags", None), ("decisions", None), ("words", "words"),
    ("needs_approval", "needs_approval"), ("wall", "wall"), ("tokens", "tokens"),
    ("cost", "cost"), ("attempts", "attempts"), ("player_ready", None),
    ("player_problem", "unready"), ("runner", "runner"), ("node", "node"), ("job", "job"),
    ("worktree_reason", "worktree_reason"), ("pr", "pr"),
    ("open_comments", "open_comments"), ("told", "told"),
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
            column = columns[_AT[field or key]]  # (a field here: None only above)
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


def _lists(column: tuple[Any, ...], key: str, dumps: Callable[..., str]) -> list[str]:
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
    # The fields, in order; a field the empty snapshot leaves out reads None.
    plan_id: int | None
    slug: str
    goal: str
    autonomy: str                  # an `Autonomy` word
    approved: bool
    state: str                     # the plan's word (`plan_word`)
    conductor: dict[str, Any] | None
    conductor_died: str | None     # why the last conductor stopped unexpectedly (none runs)
    stopped_by: str | None
    budget: dict[str, Any] | None
    base_branch: str | None
    base_commit: str | None
    integration_branch: str | None
    folder_mode: bool
    tasks: tuple[TaskSnap, ...]
    rows: tuple[TaskSnap, ...]
    questions: tuple[tuple[str, str, str | None], ...]  # question, recommendation, answer
    summary: dict[str, Any] | None
    pr: dict[str, Any] | None      # the plan's one pull request (`handoff pr --single`)
    by_id: dict[int, TaskSnap]     # indexes: id -> task,
    below: dict[int, list[int]]    # id -> its direct dependents' ids

    @property
    def empty(self) -> bool:
        return self.plan_id is None

    @property
    def conductor_pid(self) -> int | None:
        return self.conductor["pid"] if self.conductor else None

    def task(self, task_id: int | None) -> TaskSnap | None:
        return None if task_id is None else (self.by_id or {}).get(task_id)

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
                     "conductor_died": self.conductor_died,
                     "base_branch": self.base_branch, "base_commit": self.base_commit,
                     "integration_branch": self.integration_branch, "pr": self.pr},
            "conductor": self.conductor,
            "tasks": [t.as_json() for t in self.tasks],
            "summary": self.summary,
        }


def empty(conductor: dict[str, Any] | None = None) -> Snapshot:
    return Snapshot(plan_id=None, state="no plan", tasks=(), rows=(), questions=(), budget=None,
                    conductor=conductor, approved=False, autonomy="guarded", goal="", slug="",
                    folder_mode=False, by_id={}, below={})


def plan_word(approved: bool, states: "Sequence[str]", modes: "Sequence[str]", running: bool,
              check_failed: bool) -> str:
    """One word for the plan: draft, approved, running, waiting, failed, complete, merged
    (`states` and `modes`: its tasks', in the same order)."""
    if running:
        return "running"
    if states and "merged" in states and all(
            s in SETTLED or (m != "build" and s == State.DONE) for s, m in zip(states, modes)):
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
    if state in (State.PAUSED, State.QUEUED) and reason:  # interrupted; runner unreachable
        return f"{state}: {reason}"
    if state == State.CHECKPOINT:
        return "checkpoint: waiting for you"
    if state in BROKEN and reason:
        return f"{state}: {reason}"
    return str(state)
