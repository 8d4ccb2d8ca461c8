"""The rule book: may the person do this now? One plain sentence when not, else None.

Every front end asks here — the CLI commands and run control raise the sentence as
their refusal, the TUI dims the key and shows the same sentence — so the two can
never disagree. Pure: a table of rules over a status `Snapshot`, no I/O.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Callable, Protocol

from baton_tui.core.events import ACTIVE, LANDED, PENDING, RESTARTABLE, SETTLED, State
from baton_tui.core.snapshot import NO_PLAN, Snapshot, TaskSnap


class Action(StrEnum):
    """Everything a person can ask of a plan or a task."""

    EDIT_PROMPT = "edit_prompt"
    EDIT_TITLE = "edit_title"
    EDIT_PLAYER = "edit_player"
    EDIT_MODEL = "edit_model"
    EDIT_EFFORT = "edit_effort"
    EDIT_MODE = "edit_mode"
    EDIT_DEPS = "edit_deps"
    EDIT_SKILLS = "edit_skills"
    EDIT_SCOPE = "edit_scope"
    EDIT_CHECK = "edit_check"
    EDIT_CHECKPOINT = "edit_checkpoint"
    EDIT_RUNNER = "edit_runner"
    EDIT_FALLBACK = "edit_fallback"
    ADD_TASK = "add_task"
    REMOVE_TASK = "remove_task"
    APPROVE = "approve"
    RUN = "run"
    START_TASK = "start_task"
    STOP_TASK = "stop_task"
    RETRY_TASK = "retry_task"
    DONE = "done"
    DISCARD = "discard"
    ANSWER_CHECKPOINT = "answer_checkpoint"
    SET_AUTONOMY = "set_autonomy"
    PAUSE = "pause"
    MERGE = "merge"
    DETAIL = "detail"              # look at a task (needs one selected, nothing else)
    TAKE = "take"                  # take a task over in its worktree
    BUDGET = "budget"              # change the plan's budget
    NEW_PLAN = "new_plan"          # replace the current plan
    ARCHIVE_PLAN = "archive_plan"  # replace it, archiving its open work (`--new`)


# Field-edit actions -> the plan field they change.
FIELDS: dict[Action, str] = {
    Action.EDIT_PROMPT: "prompt", Action.EDIT_TITLE: "title", Action.EDIT_PLAYER: "player",
    Action.EDIT_MODEL: "model", Action.EDIT_EFFORT: "effort", Action.EDIT_MODE: "mode",
    Action.EDIT_DEPS: "depends_on", Action.EDIT_SKILLS: "skills", Action.EDIT_SCOPE: "scope",
    Action.EDIT_CHECK: "check", Action.EDIT_CHECKPOINT: "checkpoint",
    Action.EDIT_RUNNER: "runner", Action.EDIT_FALLBACK: "fallback",
}
EDIT_OF = {field: action for action, field in FIELDS.items()}
# A paused or failed task may be reassigned, nothing else.
REASSIGN_FIELDS = frozenset({"player", "model", "effort"})
TASK_ACTIONS = frozenset({*FIELDS, Action.DETAIL, Action.TAKE, Action.REMOVE_TASK,
                          Action.START_TASK, Action.STOP_TASK, Action.RETRY_TASK, Action.DONE,
                          Action.DISCARD, Action.ANSWER_CHECKPOINT})
NOT_APPROVED = ("the plan is not approved: review it, then approve it (`baton approve`, "
                "or a in the app)")


class PlayerFacts:
    """What the edit rules need to know about players: model catalog and effort levels.

    `catalog(name)` is None for a player that takes any model name, () for one that runs
    no model; `efforts(name)` is () for a player without effort levels; `check_is_task(name)`
    is True for a player that runs no agent, its task's check being the whole task.
    """

    def __init__(self, catalog: Callable[[str], tuple[str, ...] | None],
                 efforts: Callable[[str], tuple[str, ...]],
                 check_is_task: Callable[[str], bool] = lambda name: False):
        self.catalog = catalog
        self.efforts = efforts
        self.check_is_task = check_is_task


def why_not(action: Action | str, snap: Snapshot, task: TaskSnap | None = None,
            players: PlayerFacts | None = None, *, with_dependents: bool = False,
            carriers: frozenset[int] | set[int] = frozenset()) -> str | None:
    """The reason `action` cannot be done now, or None when it can.

    `with_dependents` and `carriers` are for discarding a landed task: whether the person
    asked to discard what was built on it too, and the tasks whose branches carry its work
    without depending on it (the engine finds those with git).
    """
    action = Action(action)
    if snap.empty:
        return NO_PLAN
    if action in TASK_ACTIONS and task is None:
        return "no task selected"
    if action in FIELDS:
        assert task is not None
        return why_not_edit(FIELDS[action], task, players)
    if action == Action.DISCARD:
        assert task is not None
        return _discard(snap, task, with_dependents, carriers)
    rule = _RULES.get(action)
    return rule(snap, task) if rule else None


class Editable(Protocol):
    """What an edit is judged by: its task alone (a `TaskSnap` is one)."""

    @property
    def id(self) -> int: ...
    @property
    def state(self) -> str: ...
    @property
    def started(self) -> bool: ...
    @property
    def reassigned(self) -> bool: ...
    @property
    def player(self) -> str: ...


def why_not_edit(field: str, task: Editable, players: PlayerFacts | None) -> str | None:
    """The reason `field` of `task` cannot be edited now, or None."""
    movable = task.state in RESTARTABLE or (task.reassigned and task.state == State.QUEUED)
    if task.started:
        if not movable:
            return (f"task {task.id} has started ({task.state}): its fields are frozen; a paused "
                    f"or failed task may only be reassigned (player, model, effort) and retried")
        if field not in REASSIGN_FIELDS:
            return (f"task {task.id} has started ({task.state}): its fields are frozen except "
                    f"its player, model and effort, which may change before a retry")
    if players is not None:
        if field == "model" and players.catalog(task.player) == ():
            return f"player {task.player!r} runs no model"
        if field == "effort" and not players.efforts(task.player):
            return f"player {task.player!r} has no effort levels"
    return None


def id_list(ids: list[int], shown: int = 20) -> str:
    """Task ids for a sentence: all of a few, the first `shown` and a count of a plan's
    thousands (one line stays one readable line)."""
    if len(ids) <= shown:
        return ", ".join(map(str, ids))
    return ", ".join(map(str, ids[:shown])) + f" and {len(ids) - shown:,} more"


def _remove(snap: Snapshot, task: TaskSnap | None) -> str | None:
    assert task is not None
    if task.started:
        return (f"task {task.id} has started ({task.state}): its fields are frozen and it "
                "cannot be removed")
    dependents = snap.dependents(task.id)
    if dependents:
        return (f"task {task.id} cannot be removed: task{'s' * (len(dependents) > 1)} "
                f"{id_list(dependents)} depend{'s' * (len(dependents) == 1)} on it — change "
                "their dependencies first (`baton task-deps N IDS`)")
    if len(snap.tasks) == 1:
        return "the plan's last task cannot be removed; load a new plan instead"
    return None


def _run(snap: Snapshot, task: TaskSnap | None) -> str | None:
    return None if snap.approved else NOT_APPROVED


def _start(snap: Snapshot, task: TaskSnap | None) -> str | None:
    assert task is not None
    if task.mode == "manual":
        return f"task {task.id} is manual: do it yourself, then mark it done (`baton done {task.id}`)"
    if task.state != State.DRAFT:
        return f"task {task.id} is already {task.state}"
    if task.mode == "build" and not snap.approved:
        return "build tasks start only after approval; research tasks may start before"
    if task.blocked_by:
        return f"task {task.id} is blocked by task {task.blocked_by}"
    return None


def _stop(snap: Snapshot, task: TaskSnap | None) -> str | None:
    assert task is not None
    if task.state not in ACTIVE:
        return f"task {task.id} is not running ({task.state})"
    return None


def _retry(snap: Snapshot, task: TaskSnap | None) -> str | None:
    # Not approved (an edit voided it): the task is queued with its feedback all the same,
    # and starts once the plan is approved again.
    assert task is not None
    if task.state == State.LANDED and task.open_comments:
        return None  # a follow-up: the fix of its review comments lands on top of it
    if task.state == State.LANDED:
        return (f"task {task.id} has landed and has no open review comment: comment on its "
                f"lines first (`baton comment {task.id} FILE:LINE TEXT`), then retry it")
    if task.state not in RESTARTABLE:
        return (f"task {task.id} is {task.state}: only a failed, parked or paused task can be "
                "retried")
    return None


def _take(snap: Snapshot, task: TaskSnap | None) -> str | None:
    assert task is not None
    if task.mode != "build":
        return f"task {task.id} is a {task.mode} task: only a build task has a worktree to take over"
    if task.state not in ACTIVE and task.state not in RESTARTABLE:
        return (f"task {task.id} is {task.state}: only a running, paused, failed or parked task "
                "can be taken over")
    return None


def _done(snap: Snapshot, task: TaskSnap | None) -> str | None:
    assert task is not None
    if task.mode == "manual":
        return None if task.state in PENDING else f"task {task.id} is already {task.state}"
    if task.mode == "build" and task.state in RESTARTABLE:
        return None  # taken over: the person finished it in its worktree
    return (f"task {task.id} is a {task.mode} task ({task.state}): an agent's task is done when "
            f"it reports; to finish it yourself, stop it first (`baton stop {task.id}`)")


def built_on(snap: Snapshot, task: TaskSnap, carriers: frozenset[int] | set[int] = frozenset()
             ) -> list[int]:
    """What discarding a landed task takes with it: every task depending on it, directly or
    through others, and the carriers — those not discarded already."""
    below: set[int] = set(carriers)
    frontier = [task.id]
    while frontier:  # iterative: plan shape never meets the recursion limit
        current = frontier.pop()
        for dependent in snap.dependents(current):
            if dependent not in below:
                below.add(dependent)
                frontier.append(dependent)
    return sorted(t for t in below if (snap.task(t) or task).state != State.DISCARDED)


def _tasks_do(ids: list[int], one: str, many: str) -> str:
    """"task 6 holds" or "tasks 6, 7 hold": the subject and its verb agree."""
    return f"task {ids[0]} {one}" if len(ids) == 1 else f"tasks {id_list(ids)} {many}"


def _discard(snap: Snapshot, task: TaskSnap, with_dependents: bool,
             carriers: frozenset[int] | set[int]) -> str | None:
    if task.state in ACTIVE:
        return f"task {task.id} is {task.state}: stop it first (`baton stop {task.id}`)"
    if task.state in SETTLED:
        return f"task {task.id} is already {task.state}"
    if task.state != State.LANDED:
        return None
    victims = built_on(snap, task, carriers)
    state_of = {d: (snap.task(d) or task).state for d in victims}  # (as `built_on` reads them)
    merged = [d for d in victims if state_of[d] == State.MERGED]
    if merged:
        return (f"task {task.id} cannot be discarded: tasks {id_list(merged)} "
                "built on it are already merged")
    if victims and not with_dependents:
        # Precisely: a dependent (directly or through others) needs its work, and so does a
        # task whose branch holds it (cut from the integration branch after it landed:
        # merging that branch would bring the work home). A task cut before it landed does
        # not, however late it ran or landed.
        depending = set(built_on(snap, task))
        holding = [d for d in victims if d not in depending]
        dependents = sorted(depending & set(victims))
        why = "; ".join(part for part in (
            _tasks_do(dependents, "depends", "depend") + " on it" if dependents else "",
            _tasks_do(holding, "holds", "hold") + " its work (cut from the integration branch "
            "after it landed)" if holding else "") if part)
        return (f"task {task.id} has landed and {why}: discard them too with "
                f"`baton discard {task.id} --with-dependents`")
    live = [d for d in victims if state_of[d] in ACTIVE]
    if live:
        return (f"task {live[0]} is {state_of[live[0]]} and depends on task {task.id}: stop it "
                f"first (`baton stop {live[0]}`)")
    return None


def _answer(snap: Snapshot, task: TaskSnap | None) -> str | None:
    assert task is not None
    if not task.answerable:
        return f"task {task.id} has no checkpoint waiting for an answer"
    return None


def _pause(snap: Snapshot, task: TaskSnap | None) -> str | None:
    return None if snap.conductor else "no run is going"


def _merge(snap: Snapshot, task: TaskSnap | None) -> str | None:
    if snap.folder_mode:
        return "folder mode: the tasks worked in this folder directly — there is nothing to merge"
    if not snap.base_branch:
        return "the plan has not run yet: there is nothing to merge"
    if not any(t.state in LANDED and t.mode == "build" for t in snap.tasks):
        waiting = [t.id for t in snap.tasks if t.mode == "build"
                   and t.state not in (*LANDED, State.DISCARDED)]
        return "no landed task to merge" + (
            f" ({'task' if len(waiting) == 1 else 'tasks'} {id_list(waiting)} "
            f"{'has' if len(waiting) == 1 else 'have'} not landed)" if waiting else "")
    return None


def unready_sentence(player: str, why: str) -> str:
    """Why a task cannot be given to `player`: the one sentence every front end shows."""
    return f"player {player!r} is not ready here: {why}"


def _approve(snap: Snapshot, task: TaskSnap | None) -> str | None:
    waiting = [t for t in snap.tasks if t.unready and not t.started and t.mode != "manual"]
    if not waiting:
        return None
    why_of: dict[str, str] = {}  # each player's first task says why
    for t in waiting:
        why_of.setdefault(t.player, t.unready or "")
    why = "; ".join(unready_sentence(p, reason) for p, reason in why_of.items())
    return (f"tasks {id_list([t.id for t in waiting])} are on players that cannot start "
            f"here ({why}): move each to a ready player (`baton task-player N P`) first")


def open_work(snap: Snapshot) -> list[int]:
    """Started tasks whose work is neither merged nor discarded (nor a finished non-build)."""
    return [t.id for t in snap.tasks if t.started and t.state not in SETTLED
            and not (t.mode != "build" and t.state == State.DONE)]


def _archive(snap: Snapshot, task: TaskSnap | None) -> str | None:
    if snap.conductor:
        return (f"a run is going on the current plan (conductor pid {snap.conductor_pid}): "
                "let it finish or pause it before replacing the plan")
    return None


def _new_plan(snap: Snapshot, task: TaskSnap | None) -> str | None:
    busy = _archive(snap, task)
    if busy:
        return busy
    work = open_work(snap)
    if work:
        return (f"the current plan ({snap.slug}) has work that is neither merged nor discarded "
                f"(tasks {id_list(work)}); finish it with `baton handoff merge` or "
                "`baton discard N`, or pass --new to archive it")
    return None


_RULES: dict[Action, Callable[[Snapshot, TaskSnap | None], str | None]] = {
    Action.REMOVE_TASK: _remove, Action.RUN: _run, Action.START_TASK: _start,
    Action.STOP_TASK: _stop, Action.RETRY_TASK: _retry, Action.DONE: _done,
    Action.ANSWER_CHECKPOINT: _answer, Action.PAUSE: _pause,
    Action.MERGE: _merge, Action.NEW_PLAN: _new_plan, Action.ARCHIVE_PLAN: _archive,
    Action.APPROVE: _approve,
    Action.TAKE: _take,
}
