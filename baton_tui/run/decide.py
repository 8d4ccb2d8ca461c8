"""Which tasks start next, in what order, on what capacity: a pure function of the run's state.

`choose` only reads (`RunState`, the time, each player's own cap); the conductor acts on
what it returns — starts the tasks, lands the ones only Baton's commit was left for,
releases the ones held at a review, announces manual ones. So the scheduling policy can be
tested on plain tasks and views, with no store and no process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from baton_tui.core.events import BROKEN, State
from baton_tui.core.words import Mode
from baton_tui.plan.model import Task
from baton_tui.run.state import RunState

# A player's own `max_parallel` (None or 0: no cap of its own).
Cap = Callable[[str], int | None]

PAUSED_MESSAGE = "You were paused ({reason}). Continue the task where you left off."
YES_MESSAGE = ("The person answered your checkpoint: YES — go ahead with the step, then "
               "finish and report.")
NO_MESSAGE = ("The person answered your checkpoint: NO — do not take that step. Finish "
              "without it if you can, else report failed.")


@dataclass
class Choice:
    """What the conductor does this tick, besides following what runs."""

    starts: list[tuple[Task, str | None]] = field(default_factory=list)  # start order
    land: list[Task] = field(default_factory=list)      # reported: only the landing is left
    release: list[tuple[Task, bool]] = field(default_factory=list)  # held, answered yes/no
    announce: list[Task] = field(default_factory=list)  # manual tasks, said once


def choose(run: RunState, now: float, cap: Cap) -> Choice:
    """Tasks that may start now, with a resume message where they continue a session, and
    the other steps the tasks looked at call for.

    Paused sessions come first (a reset has arrived), then the longest remaining path,
    then the most direct dependents (`Ready.rank`). Nothing new starts once a stop
    condition is met; a task edited mid-run waits for approval; a player at its usage limit
    is waited for, and one at its own `max_parallel` too. Only the tasks the ready queue
    offers are looked at, and only while there is room to start one (`run.ready`).
    """
    choice = Choice()
    if run.folder.plan.stopped_by:
        return choice
    chosen: dict[str, int] = {}  # tasks of each capped player running, starting or chosen

    def room() -> int:  # a landing or a release takes a slot as a start does
        return run.free_slots() - len(choice.starts) - len(choice.land) - len(choice.release)

    def take(task: Task, message: str | None) -> None:
        if _player_room(run, task, cap, chosen):
            choice.starts.append((task, message))

    limited = {p for p, at in run.folder.plan.player_limits.items() if at > now}
    limited |= {run.by_id[t].player for t in [*run.tracked, *run.finishing]
                if t in run.by_id and run.view(t).declared_limit}  # being collected
    for task_id in run.ready.walk(room):
        task = run.by_id[task_id]
        if run.busy(task_id) or task_id in run.making_ahead:
            continue  # (one whose worktree is being made ahead starts once it is made)
        view = run.view(task_id)
        state = view.state
        if state == State.QUEUED and (view.needs_approval or task.player in limited):
            continue
        if state == State.QUEUED and view.finish_only and task.mode == Mode.BUILD \
                and run.git_mode:  # its agent reported: only Baton's commit or landing
            choice.land.append(task)
            continue
        if state == State.QUEUED and run.ready.deps_ready(task_id):
            if task.mode == Mode.MANUAL:
                if task_id not in run.announced_manual:
                    choice.announce.append(task)
                continue
            if task.mode == Mode.BUILD and not run.plan.approved:
                continue
            if view.not_before > now:
                continue
            take(task, None)
        elif state in BROKEN and view.reassigned and not run.pause_requested:
            take(task, None)  # moved to another player: it starts there at once
        elif state == State.PAUSED and not run.pause_requested and not view.taken:
            if view.until and view.until > now:
                continue
            take(task, PAUSED_MESSAGE.format(reason=view.reason or "paused"))
        elif state == State.CHECKPOINT and view.held and view.checkpoint_answer:
            choice.release.append((task, view.checkpoint_answer == "yes"))
        elif state == State.CHECKPOINT:
            answer = view.checkpoint_answer
            if answer == "yes":
                take(task, YES_MESSAGE)
            elif answer == "no":
                take(task, NO_MESSAGE)
    choice.starts.sort(key=lambda item: (run.view(item[0].id).state != State.PAUSED,
                                         run.ready.rank.get(item[0].id, (0, 0)), item[0].id))
    return choice


def _player_room(run: RunState, task: Task, cap: Cap, chosen: dict[str, int]) -> bool:
    """Whether `task`'s player is under its own `max_parallel`, counting its tasks running,
    starting and already `chosen` (updated when there is room)."""
    limit = cap(task.player)
    if not limit:
        return True
    if task.player not in chosen:
        chosen[task.player] = sum(1 for task_id in [*run.tracked, *run.starting]
                                  if run.by_id[task_id].player == task.player)
    if chosen[task.player] >= limit:
        return False
    chosen[task.player] += 1
    return True


def has_room(run: RunState, task: Task, cap: Cap) -> bool:
    """Whether one more start of `task` fits now (slots and its player's own cap)."""
    return run.free_slots() > 0 and _player_room(run, task, cap, {})
