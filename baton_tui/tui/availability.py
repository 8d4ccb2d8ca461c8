"""Why a key does not apply right now — one plain sentence, or None when it does.

The App's `check_action` dims a key whose reason is not None, and pressing a dimmed
key shows the reason, so no key is ever silently ignored. Pure: a table of rules
over the Board, tested without a UI. The engine still decides; these rules only
say early what it would refuse.
"""

from __future__ import annotations

from typing import Callable

from baton_tui.tui.board import Board, TaskRow

# Actions that edit one field of the focused task -> the plan field.
FIELD_ACTIONS = {
    "edit_prompt": "prompt", "pick_player": "player", "pick_model": "model",
    "pick_effort": "effort", "pick_mode": "mode", "edit_deps": "depends_on",
    "edit_skills": "skills", "edit_title": "title", "edit_scope": "scope",
    "edit_check": "check", "toggle_checkpoint": "checkpoint",
}
REASSIGN = frozenset({"player", "model", "effort"})
REASSIGNABLE_STATES = frozenset({"paused", "failed", "parked"})
TASK_ACTIONS = frozenset({*FIELD_ACTIONS, "task_detail", "remove_task", "start_task",
                          "stop_task", "retry_task", "answer_checkpoint", "mark_done"})
PLAN_ACTIONS = frozenset({*TASK_ACTIONS, "add_task", "approve", "run_plan", "pause_run",
                          "pick_autonomy"})
NO_PLAN = "no plan yet — state a goal in the chat, or load one with `baton plan --from FILE`"
SETTLED = frozenset({"done", "landed", "merged", "discarded"})


class PlayerFacts:
    """What the rules need to know about players: catalog and effort levels."""

    def __init__(self, catalog: Callable[[str], tuple[str, ...] | None],
                 efforts: Callable[[str], tuple[str, ...]]):
        self.catalog = catalog
        self.efforts = efforts


def unavailable(action: str, board: Board, task: TaskRow | None,
                players: PlayerFacts | None = None) -> str | None:
    """The reason `action` cannot run now, or None."""
    if action not in PLAN_ACTIONS:
        return None
    if board.empty:
        return NO_PLAN
    if action in TASK_ACTIONS and task is None:
        return "no task selected"
    if action in FIELD_ACTIONS:
        assert task is not None
        return _field_reason(FIELD_ACTIONS[action], task, players)
    rule = _RULES.get(action)
    return rule(board, task) if rule else None


def _field_reason(field: str, task: TaskRow, players: PlayerFacts | None) -> str | None:
    if task.started:
        if task.state in REASSIGNABLE_STATES and field in REASSIGN:
            pass
        elif task.state in REASSIGNABLE_STATES:
            return (f"task #{task.id} has started ({task.state}): only its player, model and "
                    f"effort may change before a retry")
        else:
            return f"task #{task.id} has started ({task.words}): its fields are frozen"
    if players is not None:
        if field == "model" and players.catalog(task.player) == ():
            return f"player {task.player} runs no model"
        if field == "effort" and not players.efforts(task.player):
            return f"player {task.player} has no effort levels"
    return None


def _remove(board: Board, task: TaskRow | None) -> str | None:
    assert task is not None
    if task.started:
        return f"task #{task.id} has started ({task.words}): it cannot be removed"
    dependents = board.dependents(task.id)
    if dependents:
        return (f"tasks {', '.join('#' + str(d) for d in dependents)} depend on #{task.id}: "
                f"change their dependencies first (d)")
    if len(board.tasks) == 1:
        return "the plan's last task cannot be removed"
    return None


def _approve(board: Board, task: TaskRow | None) -> str | None:
    return "the plan is already approved" if board.approved else None


def _run(board: Board, task: TaskRow | None) -> str | None:
    if not board.approved:
        return "the plan is not approved yet — press a to approve it first"
    if board.conductor_pid:
        return f"the run is going (conductor pid {board.conductor_pid})"
    if all(t.state in SETTLED for t in board.tasks):
        return "every task is finished — nothing left to run"
    return None


def _start(board: Board, task: TaskRow | None) -> str | None:
    assert task is not None
    if task.state not in ("draft", "queued"):
        return f"task #{task.id} is {task.words}"
    if task.mode == "manual":
        return f"task #{task.id} is manual: do it yourself, then mark it done (m)"
    if task.mode == "build" and not board.approved:
        return "build tasks start only after approval (a); research tasks may start before"
    if task.blocked_by:
        return f"task #{task.id} is blocked by #{task.blocked_by}"
    return None


def _stop(board: Board, task: TaskRow | None) -> str | None:
    assert task is not None
    if task.state not in ("running", "checkpoint"):
        return f"task #{task.id} is not running ({task.words})"
    return None


def _retry(board: Board, task: TaskRow | None) -> str | None:
    assert task is not None
    if task.state not in REASSIGNABLE_STATES:
        return f"only a failed, parked or paused task can be retried (#{task.id} is {task.words})"
    return None


def _answer(board: Board, task: TaskRow | None) -> str | None:
    assert task is not None
    if task.state != "checkpoint":
        return f"task #{task.id} is not waiting at a checkpoint"
    return None


def _done(board: Board, task: TaskRow | None) -> str | None:
    assert task is not None
    if task.mode != "manual":
        return "only manual tasks are marked done by hand"
    if task.state in SETTLED:
        return f"task #{task.id} is already {task.state}"
    return None


def _pause(board: Board, task: TaskRow | None) -> str | None:
    return None if board.conductor_pid else "no run is going"


_RULES: dict[str, Callable[[Board, TaskRow | None], str | None]] = {
    "remove_task": _remove, "approve": _approve, "run_plan": _run, "start_task": _start,
    "stop_task": _stop, "retry_task": _retry, "answer_checkpoint": _answer,
    "mark_done": _done, "pause_run": _pause,
}
