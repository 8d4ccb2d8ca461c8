"""A poller's snapshots are built again only for the tasks that may have changed; after every
batch of events they must equal a snapshot built afresh, field by field and in
`status --json`, and the tasks nothing touched must be the very same objects. The same holds
for `baton status`, which catches the tasks it kept in the store up on new events: during a
live run, after its conductor crashed, and once resumed."""

from __future__ import annotations

import json
import random
import subprocess
import time

import pytest

from baton_tui import procs
from baton_tui.store import render, snapshot
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


# `baton status` (a process of its own each time) catches the tasks it kept up on new events --

def _fresh(store: Store, plan_id: int, upto: int, conductor, now: float):
    """The snapshot built from every event up to `upto`, folded afresh."""
    folder = Folder().feed(e for e in store.events(plan_id) if e.id <= upto)
    return snapshot.build(store.plan(plan_id), folder, conductor,
                          snapshot.folder_mode(store, folder), now,
                          snapshot.unready_players(store))


def _same(got, fresh) -> None:
    assert [(a.id, n, x, y) for a, b in zip(got.tasks, fresh.tasks)
            for n, x, y in zip(a._fields, a, b) if x != y] == []
    assert got == fresh and got.below == fresh.below and got.by_id == fresh.by_id
    assert got.as_json() == fresh.as_json()
    assert [t.id for t in got.rows] == [t.id for t in fresh.rows]


@pytest.fixture
def caught_up(monkeypatch):
    """Every plan keeps its tasks; counts the reads that caught the kept ones up on events."""
    monkeypatch.setattr(snapshot, "CACHE_TASKS", 1)
    calls = []
    real = snapshot._caught_up

    def counted(*args):
        done = real(*args)  # False: too much to catch up on, built afresh instead
        calls.append(done)
        return done

    monkeypatch.setattr(snapshot, "_caught_up", counted)
    return calls


@pytest.mark.parametrize("seed", range(6))
def test_status_caught_up_on_a_live_runs_events_is_the_fresh_build(tmp_path, seed, caught_up,
                                                                    monkeypatch):
    """Each batch read twice: `status --json`'s text (the kept lines of the tasks that stayed
    as they were, the others written again), then the snapshot (no new events by then)."""
    rng = random.Random(seed)
    n = 60
    if seed % 2:  # kept again every few batches: the kept lines change hands often
        monkeypatch.setattr(snapshot, "KEEP_AFTER", 8)
    reused = []  # per `status --json`: whether some task's kept line was used
    write = render.head_and_lines
    monkeypatch.setattr(render, "head_and_lines", lambda snap, lines, written: reused.append(
        len(written) < len(lines)) or write(snap, lines, written))
    sleeper = subprocess.Popen(["sleep", "600"])  # the live conductor, as far as status sees
    try:
        with Store(tmp_path / "baton.db") as store:
            plan_id = store.insert_plan("live", _doc(n))
            store.set_conductor(sleeper.pid, procs.start_token(sleeper.pid), plan_id)
            conductor = snapshot.conductor_info(store)
            assert conductor is not None
            clock = NOW
            snapshot.read_json(store, now=clock)  # kept with their lines
            for _ in range(40):
                batch = [_event(rng, n, clock) for _ in range(rng.randint(1, 6))]
                if rng.random() < 0.05:
                    batch.append((None, K.PLAN_APPROVED, {}))  # words every task again
                with store.tx():
                    for task_id, kind, data in batch:
                        store.append(plan_id, task_id, kind, data)
                clock += rng.choice([0.0, 1.0, 40.0, 1000.0])
                fresh = _fresh(store, plan_id, store.last_event_id(), conductor, clock)
                assert snapshot.read_json(store, now=clock) == render.snapshot_json(fresh)
                _same(snapshot.read(store, now=clock), fresh)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sum(caught_up) > 20  # most reads caught up rather than building every task
    assert sum(reused) > 20     # and wrote again only some of the tasks' lines


def test_caught_up_tasks_are_kept_again_after_many_events(tmp_path, caught_up, monkeypatch):
    monkeypatch.setattr(snapshot, "KEEP_AFTER", 3)
    with Store(tmp_path / "baton.db") as store:
        plan_id = store.insert_plan("kept", _doc(30))
        snapshot.read(store, now=NOW)
        for task_id in (1, 2, 3, 6):
            store.append(plan_id, task_id, K.TASK_STARTED, {"attempt": task_id, "base": "abc",
                                                            "branch": f"b/{task_id}"})
        store.append(plan_id, 1, K.TASK_FAILED, {"reason": "broke"})  # blocks 4 and 5
        _same(snapshot.read(store, now=NOW + 5), _fresh(store, plan_id, 10**9, None, NOW + 5))
        kept = json.loads(store.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (f"snap:{plan_id}",)).fetchone()[0]
            .split("\n")[0])
        assert kept["last"] == store.last_event_id()              # kept as of the last event
        _same(snapshot.read(store, now=NOW + 9), _fresh(store, plan_id, 10**9, None, NOW + 9))
    assert caught_up == [True]                                    # the second read: none new


@pytest.mark.slow
def test_status_while_a_real_conductor_runs_crashes_and_resumes(repo, baton, caught_up):
    """A real run, its conductor killed between moving the integration branch and recording
    the landing, then resumed: every status on the way equals the fresh build."""
    from helpers.run_kit import load_plan, task, wait_for, wait_idle, write_config, script_agent
    from baton_tui.paths import find_repo

    steps = [{"progress": "half"}, {"write": "f{}.txt", "content": "x\n"},
             {"report": "done", "summary": "ok"}]
    script = {str(i): [dict(s, write=s["write"].format(i)) if "write" in s else s for s in steps]
              for i in range(1, 5)}
    write_config(repo, {"agent": script_agent(repo.parent, "a", script)})
    load_plan(baton, [task(1), task(2), task(3, deps=[1]), task(4, deps=[2, 3])], approve=True)
    gate = repo.parent / "gate"
    with Store(find_repo(repo).store_path) as store:
        plan_id = store.current_plan_id()

        def compared() -> object:
            """A status compared with the fresh build of the same events (a read the
            conductor wrote during is read again)."""
            for _ in range(50):
                before, conductor = store.last_event_id(), snapshot.conductor_info(store)
                now = time.time()
                text = snapshot.read_json(store, now=now)
                got = snapshot.read(store, now=now)
                if store.last_event_id() == before and \
                        snapshot.conductor_info(store) == conductor:
                    fresh = _fresh(store, plan_id, before, conductor, now)
                    assert text == render.snapshot_json(fresh)
                    _same(got, fresh)
                    return got
            raise AssertionError("the store never stood still for a read")

        started = baton("run", "--detach", env={"BATON_KILL_AT": f"landed:when={gate}"})
        assert started.returncode == 0, started.stderr
        assert compared().conductor is not None
        base = store.current_plan().base_commit
        integration = store.current_plan().integration_branch
        wait_for(lambda: subprocess.run(["git", "rev-parse", integration], cwd=repo,
                                        capture_output=True, text=True).stdout.strip()
                 not in ("", base), 60, what="the first landing to move the branch")
        assert compared().conductor is not None       # the conductor waits at its kill point
        gate.write_text("")
        wait_for(lambda: snapshot.conductor_info(store) is None, 60, what="the crash")
        after_crash = compared()
        assert after_crash.conductor is None
        assert baton("resume").returncode in (0, 1)
        final = wait_idle(baton)
        assert {t["state"] for t in final["tasks"]} == {"landed"}
        assert {t.state for t in compared().tasks} == {"landed"}
    assert any(caught_up)
