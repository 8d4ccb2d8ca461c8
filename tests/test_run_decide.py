"""Which queued tasks start next, in what order, on what capacity (`run.decide.choose`).

A pure function of the run's state: real `Task`s and plan documents, views folded from
real events, the real ready queue — no store, no process, no git. The conductor acts on
what it returns (tests/test_run_scheduling.py runs the whole of it)."""

from __future__ import annotations

import asyncio
import time

from baton_tui.core.events import Event, EventKind
from baton_tui.core.views import Folder
from baton_tui.plan.model import PlanDocument, Task
from baton_tui.run import decide
from baton_tui.runners.base import AttemptHandle
from baton_tui.run.state import RunState, Tracked
from baton_tui.store.rows import PlanRow

K = EventKind
NOW = 1_000_000.0


def no_cap(_player: str) -> int | None:
    return None


class History:
    """A plan's events, folded as the conductor folds them."""

    def __init__(self) -> None:
        self.folder = Folder()
        self.last = 0

    def add(self, task_id: int | None, kind: str, **data: object) -> "History":
        self.last += 1
        self.folder.apply(Event(self.last, 1, task_id, kind, dict(data), NOW))
        return self


def task(id: int, deps: tuple[int, ...] = (), mode: str = "build",
         player: str = "claude") -> Task:
    return Task(id=id, title=f"task {id}", player=player, mode=mode, depends_on=list(deps))


def run_state(tasks: list[Task], history: History, *, approved: bool = True,
              git_mode: bool = True, max_parallel: int = 4) -> RunState:
    doc = PlanDocument(version=1, goal="a goal", tasks=tasks)
    plan = PlanRow(doc=doc.model_dump(mode="json"), id=1, slug="a-goal", created=NOW,
                   revision=1, archived=False, approved=approved, approved_at=None,
                   base_branch="main", base_commit=None, transcript=[], options={})
    return RunState.of(plan, doc, history.folder, git_mode, max_parallel)


def queued(*ids: int) -> History:
    history = History()
    for task_id in ids:
        history.add(task_id, K.TASK_QUEUED)
    return history


def started(choice: decide.Choice) -> list[int]:
    return [t.id for t, _message in choice.starts]


def test_the_longest_remaining_path_starts_first_within_the_free_slots():
    # 1 -> 2 -> 3 is the longest path; 4 and 5 stand alone; 6 waits for 5.
    tasks = [task(1), task(2, (1,)), task(3, (2,)), task(4), task(5), task(6, (5,))]
    run = run_state(tasks, queued(1, 2, 3, 4, 5, 6), max_parallel=2)
    assert started(decide.choose(run, NOW, no_cap)) == [1, 5]
    run.max_parallel = 10
    assert started(decide.choose(run, NOW, no_cap)) == [1, 5, 4]  # 2, 3, 6 wait for theirs


def test_running_and_finishing_tasks_take_slots_and_are_not_started_again():
    tasks = [task(i) for i in range(1, 6)]
    history = queued(1, 2, 3, 4, 5)
    run = run_state(tasks, history.add(1, K.TASK_STARTED, attempt=1), max_parallel=3)
    run.tracked[1] = Tracked(AttemptHandle(attempt_id=1, task_id=1))
    loop = asyncio.new_event_loop()
    try:
        run.finishing[2] = loop.create_future()  # being collected (never awaited here)
        assert started(decide.choose(run, NOW, no_cap)) == [3]
        assert run.free_slots() == 1
    finally:
        loop.close()


def test_a_paused_session_comes_first_and_is_told_to_continue():
    tasks = [task(1), task(2), task(3, (2,))]
    history = queued(1, 2, 3).add(1, K.TASK_STARTED, attempt=1)
    history.add(1, K.TASK_PAUSED, reason="interrupted", attempt=1)
    choice = decide.choose(run_state(tasks, history), NOW, no_cap)
    assert started(choice) == [1, 2]
    assert choice.starts[0][1] == ("You were paused (interrupted). Continue the task where "
                                   "you left off.")
    assert choice.starts[1][1] is None


def test_a_pause_until_a_reset_waits_for_it():
    history = queued(1).add(1, K.TASK_STARTED, attempt=1)
    history.add(1, K.TASK_PAUSED, reason="usage limit", until=NOW + 60, attempt=1)
    run = run_state([task(1)], history)
    assert started(decide.choose(run, NOW, no_cap)) == []
    assert started(decide.choose(run, NOW + 61, no_cap)) == [1]


def test_a_player_at_its_own_cap_waits_while_others_start():
    tasks = [task(1, player="slow"), task(2, player="slow"), task(3, player="slow"),
             task(4)]
    run = run_state(tasks, queued(1, 2, 3, 4))
    caps = {"slow": 2}
    assert started(decide.choose(run, NOW, caps.get)) == [1, 2, 4]
    run.tracked[1] = Tracked(AttemptHandle(attempt_id=7, task_id=1))
    assert started(decide.choose(run, NOW, caps.get)) == [2, 4]


def test_a_player_at_its_usage_limit_is_waited_for():
    history = queued(1, 2, 3).add(3, K.TASK_STARTED, attempt=1)
    history.add(3, K.TASK_PAUSED, reason="usage limit", until=NOW + 30, attempt=1,
                player="claude", limit="known")
    tasks = [task(1), task(2, player="codex"), task(3)]
    run = run_state(tasks, history)
    assert started(decide.choose(run, NOW, no_cap)) == [2]
    assert started(decide.choose(run, NOW + 31, no_cap)) == [3, 1, 2]  # the paused one first


def test_build_tasks_wait_for_approval_research_does_not():
    tasks = [task(1), task(2, mode="research")]
    run = run_state(tasks, queued(1, 2), approved=False)
    assert started(decide.choose(run, NOW, no_cap)) == [2]


def test_folder_mode_runs_one_task_at_a_time():
    tasks = [task(1), task(2), task(3)]
    run = run_state(tasks, queued(1, 2, 3), git_mode=False, max_parallel=8)
    assert started(decide.choose(run, NOW, no_cap)) == [1]


def test_nothing_starts_once_the_run_is_stopped():
    history = queued(1, 2).add(None, K.RUN_STOPPED, by="failures", detail="1 failure")
    assert decide.choose(run_state([task(1), task(2)], history), NOW, no_cap) == decide.Choice()


def test_a_not_before_time_holds_a_queued_task():
    history = queued(1).add(1, K.TASK_QUEUED, not_before=NOW + 5, rate_limited=True)
    run = run_state([task(1)], history)
    assert started(decide.choose(run, NOW, no_cap)) == []
    assert started(decide.choose(run, NOW + 6, no_cap)) == [1]


def test_manual_tasks_are_announced_once_and_never_started():
    run = run_state([task(1, mode="manual"), task(2)], queued(1, 2))
    choice = decide.choose(run, NOW, no_cap)
    assert [t.id for t in choice.announce] == [1] and started(choice) == [2]
    run.announced_manual.add(1)
    assert decide.choose(run, NOW, no_cap).announce == []


def test_checkpoint_answers_resume_the_agent_or_release_a_held_task():
    history = queued(1, 2, 3)
    for task_id, held in ((1, False), (2, False), (3, True)):
        history.add(task_id, K.TASK_STARTED, attempt=task_id)
        history.add(task_id, K.TASK_CHECKPOINT, attempt=task_id, what="a step", held=held)
    answers = {1: "yes", 2: "no", 3: "no"}
    for task_id, answer in answers.items():
        checkpoint = history.folder.view(task_id).pending_checkpoint
        history.add(task_id, K.TASK_CHECKPOINT_ANSWERED, checkpoint=checkpoint, answer=answer,
                    by="person")
    choice = decide.choose(run_state([task(1), task(2), task(3)], history), NOW, no_cap)
    assert [(t.id, message) for t, message in choice.starts] == [
        (1, decide.YES_MESSAGE), (2, decide.NO_MESSAGE)]
    assert [(t.id, yes) for t, yes in choice.release] == [(3, False)]


def test_a_task_that_only_needs_its_landing_is_landed_not_started():
    history = queued(1).add(1, K.TASK_STARTED, attempt=1)
    history.add(1, K.TASK_FAILED, stage="land", reason="landing failed")
    history.add(1, K.TASK_QUEUED)
    run = run_state([task(1)], history)
    choice = decide.choose(run, NOW, no_cap)
    assert [t.id for t in choice.land] == [1] and started(choice) == []
    assert decide.choose(run_state([task(1)], history, git_mode=False), NOW,
                         no_cap).land == []  # folder mode: nothing to land, it starts again


def test_choosing_changes_nothing():
    tasks = [task(1), task(2, (1,)), task(3), task(4)]
    run = run_state(tasks, queued(1, 2, 3, 4), max_parallel=2)
    heap = sorted(run.ready.heap)
    first = decide.choose(run, time.time(), no_cap)
    assert sorted(run.ready.heap) == heap and not run.starting and not run.finishing
    assert started(decide.choose(run, time.time(), no_cap)) == started(first) == [1, 3]
