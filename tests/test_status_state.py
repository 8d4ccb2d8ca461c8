"""The plan's one-word state in `status`, derived from its tasks' states."""

from __future__ import annotations

from baton_tui.store.db import Store
from baton_tui.store import snapshot


def _plan(tmp_path, tasks):
    store = Store(tmp_path / "state" / "baton.db")
    doc = {"version": 1, "goal": "g", "tasks": [
        {"id": i, "title": f"t{i}", "player": "script", "mode": mode, "check": "true"}
        for i, mode in tasks]}
    plan_id = store.insert_plan("g", doc)
    store.update_plan(plan_id, approved=True)
    return store, plan_id


def test_merged_once_every_build_task_is_merged_and_research_is_done(tmp_path):
    store, plan_id = _plan(tmp_path, [(1, "research"), (2, "build")])
    store.append(plan_id, 1, "task.done", {"summary": "found"})
    store.append(plan_id, 2, "task.landed", {})
    assert snapshot.read(store).as_json()["plan"]["state"] == "complete"
    store.append(plan_id, 2, "task.merged", {})
    assert snapshot.read(store).as_json()["plan"]["state"] == "merged"


def test_failed_and_waiting_and_untouched(tmp_path):
    store, plan_id = _plan(tmp_path, [(1, "build"), (2, "build")])
    assert snapshot.read(store).as_json()["plan"]["state"] == "approved"
    store.append(plan_id, 1, "task.paused", {"until": 1.0})
    assert snapshot.read(store).as_json()["plan"]["state"] == "waiting"
    store.append(plan_id, 2, "task.failed", {"reason": "x"})
    assert snapshot.read(store).as_json()["plan"]["state"] == "failed"
