"""Typed events: one vocabulary of kinds and states, readable from today's databases."""

from __future__ import annotations

import re
from pathlib import Path

from baton_tui.core.events import STATE_EVENTS, Event, EventKind, State, kind_of
from baton_tui.core.payloads import PAYLOADS
from baton_tui.core.views import Folder

SOURCE = Path(__file__).resolve().parents[1] / "baton_tui"
LITERAL = re.compile(r"[\"']((?:task|plan|run|conductor|planner|handoff|trust)\.[a-z_]+)[\"']")


def test_no_event_kind_is_spelled_as_a_string_outside_the_events_module():
    kinds = {k.value for k in EventKind}
    found = []
    for path in SOURCE.rglob("*.py"):
        if path.name == "events.py" and path.parent.name == "core":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found += [f"{path.relative_to(SOURCE)}:{number}: {m}"
                      for m in LITERAL.findall(line) if m in kinds]
    assert found == []


def test_kinds_read_back_typed_and_unknown_kinds_stay_strings():
    assert Event(1, 1, 1, "task.landed").kind is EventKind.TASK_LANDED
    assert Event(1, 1, 1, "task.landed").state is State.LANDED
    newer = Event(2, 1, 1, "task.teleported", {"to": "mars"})
    assert newer.kind == "task.teleported" and newer.state is None
    views = Folder().feed([Event(1, 1, 1, "task.started"), newer]).tasks
    assert views[1].state == State.RUNNING  # an unknown kind changes nothing
    assert kind_of("run.finished") is EventKind.RUN_FINISHED


def test_every_state_is_reached_by_some_event():
    assert set(STATE_EVENTS.values()) == set(State)


def payload_problems(events: list[Event]) -> list[str]:
    """Keys an event carries that its kind's typed payload does not declare."""
    problems = []
    for event in events:
        shape = PAYLOADS.get(event.kind)
        if shape is None:
            continue
        extra = set(event.data) - set(shape.__annotations__)
        if extra:
            problems.append(f"{event.kind}: {sorted(extra)}")
    return sorted(set(problems))


def test_folding_derives_what_the_engine_used_to_scan_for():
    e = [Event(i, 1, 1, k, d, ts=float(i)) for i, (k, d) in enumerate([
        ("task.queued", {"feedback": "try harder", "not_before": 50.0}),
        ("task.started", {"attempt": 7, "base": "abc", "branch": "b", "workdir": "/w"}),
        ("task.checkpoint", {"what": "drop", "evidence": "DROP TABLE x", "attempt": 7}),
        ("task.checkpoint_answered", {"checkpoint": 3, "answer": "yes"}),
        ("task.failed", {"conflicts": ["a.py"], "reason": "conflict"}),
        ("task.queued", {"by": "autopilot"}),
        ("task.flagged", {"flag": "loop", "message": "again"}),
    ], 1)]
    view = Folder().feed(e).view(1)
    assert (view.base, view.branch, view.workdir, view.attempt) == ("abc", "b", "/w", 7)
    assert view.pending_checkpoint == 3 and view.checkpoint_answer == "yes"
    assert view.checkpoint_evidence == "DROP TABLE x" and not view.answerable
    assert view.lost_landing and view.conflicts == ["a.py"]
    assert view.autopilot_retries == 1 and view.feedback is None and view.not_before == 0
    assert view.flags == [{"kind": "loop", "detail": "again", "at": 7.0}]
    assert payload_problems(e) == []
    assert payload_problems([Event(1, 1, 1, "task.usage", {"tokens": 1, "dollars": 2})]) \
        == ["task.usage: ['dollars']"]


def test_the_placed_index_is_every_task_with_a_worktree_or_a_held_branch():
    """`Folder.placed` (what the conductor's checks after each attempt walk instead of every
    task) names exactly the tasks whose view has a worktree or a branch to hold, after every
    event and in a fold read back from the cache."""
    import random

    from baton_tui.store import foldcache

    K = EventKind
    rng = random.Random(7)
    folder = Folder()
    for i in range(1, 1500):
        task = rng.randint(1, 25)
        kind, data = rng.choice([
            (K.TASK_QUEUED, {}),
            (K.TASK_STARTED, {"attempt": 1, "branch": f"b/{task}", "workdir": f"/w/{task}"}),
            (K.TASK_DONE, {"summary": "ok"}),
            (K.TASK_FAILED, {"reason": "broke", "tip": f"{i:040x}"}),
            (K.TASK_FAILED, {"reason": "refused"}),
            (K.TASK_PARKED, {"reason": "twice", "tip": f"{i:040x}", "log": 3}),
            (K.TASK_LANDED, {"commit": f"{i:040x}", "tip": f"{i:040x}"}),
            (K.TASK_RECYCLED, {"to": rng.randint(1, 25)}),
            (K.TASK_MERGED, {}),
            (K.TASK_DISCARDED, {}),
            (K.TASK_RESET, {}),
        ])
        folder.apply(Event(i, 1, task, kind, data, ts=float(i)))
        assert set(folder.placed) == {task_id for task_id, view in folder.tasks.items()
                                      if view.workdir or view.must_hold}
    assert 0 < len(folder.placed) < len(folder.tasks)
    text = foldcache.dump(folder)
    assert text is not None and '"placed"' not in text  # derived, never stored
    again = foldcache.load(text)
    assert again is not None and set(again.placed) == set(folder.placed)
