"""A poller's snapshots are built again only for the tasks that may have changed; after every
batch of events they must equal a snapshot built afresh, field by field and in
`status --json`, and the tasks nothing touched must be the very same objects."""

from __future__ import annotations

import random

import pytest

from baton_tui.store import snapshot
from baton_tui.core.views import Folder
from baton_tui.store.db import Store
from baton_tui.core.events import EventKind

K = EventKind
NOW = 1_900_000_000.0


def _doc(n: int) -> dict:
    tasks = []
    for i in range(1, n + 1):
        deps = [i - 1] if i % 5 else []          # chains of five…
        if i > 10 and i % 7 == 0:
            deps.append(i - 10)                  # …crossed now and then
        tasks.append({"id": i, "title": f"Task {i}", "prompt": "p",
                      "player": "script" if i % 3 else "codex", "check": "true",
                      "depends_on": deps, "mode": "research" if i % 11 == 0 else "build"})
    return {"version": 1, "goal": "incremental", "tasks": tasks}


def _event(rng: random.Random, n: int, clock: float) -> tuple[int | None, str, dict]:
    task = rng.randint(1, n)
    roll = rng.random()
    if roll < 0.04:
        return None, rng.choice([K.RUN_STARTED, K.RUN_FINISHED]), {"code": 0}
    choices = [
        (K.TASK_QUEUED, {}),
        (K.TASK_STARTED, {"attempt": 1, "branch": f"b/{task}", "base": "abc",
                          "workdir": f"/w/{task}"}),
        (K.TASK_PROGRESS, {"message": f"step {rng.randint(1, 9)}"}),
        (K.TASK_USAGE, {"tokens": rng.randint(1, 500), "cost": rng.choice([None, 0.01])}),
        (K.TASK_FLAGGED, {"flag": "stall", "message": "quiet"}),
        (K.TASK_FAILED, {"reason": "it broke"}),
        (K.TASK_DONE, {"summary": "ok"}),
        (K.TASK_LANDED, {}),
        (K.TASK_PAUSED, {"reason": "usage limit", "until": clock + rng.choice([-5, 30, 900]),
                         "limit": "known", "player": rng.choice(["script", "codex"])}),
        (K.TASK_RESET, {}),
        (K.TASK_CHECKPOINT, {"what": "drop a table", "attempt": 1}),
        (K.TASK_APPROVAL_VOIDED, {"edit": "task-title"}),
    ]
    kind, data = rng.choice(choices)
    return task, kind, data


@pytest.mark.parametrize("seed", range(6))
def test_the_incremental_snapshot_is_the_fresh_one_after_every_batch(tmp_path, seed):
    rng = random.Random(seed)
    n = 60
    with Store(tmp_path / "baton.db") as store:
        plan_id = store.insert_plan("incremental", _doc(n))
        reader = snapshot.Reader()
        clock = NOW
        last = reader.read(store, now=clock)
        reused = 0
        for _ in range(40):
            batch = [_event(rng, n, clock) for _ in range(rng.randint(1, 4))]
            with store.tx():
                for task_id, kind, data in batch:
                    store.append(plan_id, task_id, kind, data)
            clock += rng.choice([0.0, 1.0, 40.0, 1000.0])
            got = reader.read(store, now=clock)
            fresh = snapshot.build(store.plan(plan_id), Folder().feed(
                store.events(plan_id)), snapshot.conductor_info(store),
                snapshot.folder_mode(store, reader.folder), clock,
                snapshot.unready_players(store))
            assert got == fresh
            assert got.as_json() == fresh.as_json()
            assert [t.id for t in got.rows] == [t.id for t in fresh.rows]
            touched = {task_id for task_id, _, _ in batch}
            reused += sum(1 for a, b in zip(last.tasks, got.tasks)
                          if a is b and a.id not in touched)
            last = got
        assert reused > 40 * n // 2  # most tasks were carried over, not built again


def test_an_edit_builds_the_whole_plan_again(tmp_path):
    with Store(tmp_path / "baton.db") as store:
        plan_id = store.insert_plan("edited", _doc(12))
        reader = snapshot.Reader()
        first = reader.read(store, now=NOW)
        doc = _doc(12)
        doc["tasks"][3]["title"] = "Renamed"
        store.update_plan(plan_id, doc=doc, revision=store.plan(plan_id).revision + 1)  # as edits do
        store.append(plan_id, 4, K.TASK_APPROVAL_VOIDED, {"edit": "task-title"})
        again = reader.read(store, now=NOW)
        assert again.task(4).title == "Renamed" and again.task(1) is not first.task(1)
