"""The SQLite store: WAL, typed events, task state folded from events, concurrent readers
(`baton status --json` in other processes) while a writer appends."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from baton_tui.paths import find_repo
from baton_tui.store.db import Store
from baton_tui.core.dag import blocked_by
from baton_tui.core.events import STATES, STATE_EVENTS, Event
from baton_tui.core.views import fold
from baton_tui.store import snapshot

from conftest import write_plan

TASKS = [
    {"id": 1, "title": "Schema", "player": "codex"},
    {"id": 2, "title": "API", "player": "codex", "depends_on": [1]},
    {"id": 3, "title": "UI", "player": "codex", "depends_on": [2]},
    {"id": 4, "title": "Docs", "player": "codex"},
]


def ev(i: int, task: int | None, kind: str, ts: float = 0.0, **data) -> Event:
    return Event(i, 1, task, kind, data, ts)


# --- fold -------------------------------------------------------------------------------

def test_every_state_event_names_a_state():
    assert set(STATE_EVENTS.values()) <= set(STATES)


def test_running_done_landed():
    events = [ev(1, 1, "task.queued", 10), ev(2, 1, "task.started", 11),
              ev(3, 1, "task.progress", 12, message="halfway"),
              ev(4, 1, "task.done", 21, summary="added the schema"),
              ev(5, 1, "task.landed", 22)]
    views = fold(events[:2])
    assert views[1].state == "running" and views[1].started and views[1].attempts == 1
    views = fold(events[:3])
    assert views[1].progress == "halfway"
    views = fold(events)
    view = views[1]
    assert view.state == "landed"
    assert view.summary == "added the schema"
    assert view.wall == pytest.approx(10.0)
    assert view.ended_at == 22


def test_paused_with_until_then_resumed():
    until = time.time() + 3600
    views = fold([ev(1, 1, "task.started", 1), ev(2, 1, "task.paused", 5, reason="usage limit",
                                                   until=until)])
    assert views[1].state == "paused" and views[1].until == until
    assert views[1].reason == "usage limit"
    assert views[1].wall == pytest.approx(4.0)
    views = fold([ev(1, 1, "task.started", 1), ev(2, 1, "task.paused", 5, until=until),
                  ev(3, 1, "task.resumed", 100), ev(4, 1, "task.done", 102)])
    assert views[1].state == "done" and views[1].until is None
    assert views[1].wall == pytest.approx(6.0)
    assert views[1].attempts == 1  # a resume is the same attempt


def test_failed_reason_retry_and_reset():
    views = fold([ev(1, 1, "task.started"), ev(2, 1, "task.failed", reason="no report"),
                  ev(3, 1, "task.started")])
    assert views[1].state == "running" and views[1].attempts == 2 and views[1].reason is None
    views = fold([ev(1, 1, "task.started"), ev(2, 1, "task.failed", reason="no report")])
    assert views[1].reason == "no report"
    views = fold([ev(1, 1, "task.started"), ev(2, 1, "task.reset")])
    assert views[1].state == "draft" and not views[1].started


def test_checkpoint_usage_flags():
    views = fold([ev(1, 1, "task.started"), ev(2, 1, "task.checkpoint", what="drop table"),
                  ev(3, 1, "task.usage", tokens=100, cost=0.5),
                  ev(4, 1, "task.usage", tokens=50, cost=0.25),
                  ev(5, 1, "task.flagged", message="edited outside scope: x.py")])
    view = views[1]
    assert view.state == "checkpoint" and view.checkpoint == "drop table"
    assert (view.tokens, view.cost) == (150, 0.75)
    assert [(f["kind"], f["detail"]) for f in view.flags] == [("note", "edited outside scope: x.py")]


def test_detail_and_plan_events_do_not_change_state():
    views = fold([ev(1, None, "plan.approved"), ev(2, 1, "task.started"),
                  ev(3, 1, "task.reported", summary="s"), ev(4, 1, "plan.edited")])
    assert views[1].state == "running" and views[1].summary == "s"


def test_blocked_by_failed_dependency_transitively():
    deps = {1: [], 2: [1], 3: [2], 4: []}
    views = fold([ev(1, 1, "task.started"), ev(2, 1, "task.failed", reason="boom"),
                  ev(3, 4, "task.queued")])
    assert blocked_by(deps, {t: v.state for t, v in views.items()}) == {2: 1, 3: 1}
    views = fold([ev(1, 1, "task.started"), ev(2, 1, "task.parked")])
    assert blocked_by(deps, {t: v.state for t, v in views.items()}) == {2: 1, 3: 1}
    views = fold([ev(1, 1, "task.started"), ev(2, 1, "task.done")])
    assert blocked_by(deps, {t: v.state for t, v in views.items()}) == {}


# --- the store --------------------------------------------------------------------------

@pytest.fixture
def loaded(repo, baton):
    write_plan(repo / "p.json", TASKS)
    result = baton("plan", "--from", "p.json")
    assert result.returncode == 0, result.stderr
    return repo


def test_store_is_wal_in_git_common_dir(loaded):
    path = find_repo(loaded).store_path
    assert path == (loaded / ".git" / "baton" / "baton.db").resolve()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_store_outside_git_lives_in_dot_baton(tmp_path, monkeypatch):
    folder = tmp_path / "plain"
    folder.mkdir()
    write_plan(folder / "p.json", [{"id": 1, "title": "a", "player": "codex"}])
    result = subprocess.run([sys.executable, "-m", "baton_tui", "plan", "--from", "p.json"],
                            cwd=folder, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (folder / ".baton" / "state" / "baton.db").is_file()


def test_events_round_trip_in_order(loaded):
    with Store(find_repo(loaded).store_path) as store:
        plan = store.current_plan()
        first = store.append(plan.id, 1, "task.started", {"attempt": 1})
        second = store.append(plan.id, 1, "task.progress", {"message": "ünïcode ✓"})
        assert second > first
        events = store.events(plan.id, after=first - 1)
        assert [(e.kind, e.data) for e in events] == [
            ("task.started", {"attempt": 1}), ("task.progress", {"message": "ünïcode ✓"})]
        assert store.events(plan.id, task_id=2) == []
        assert store.last_event_id() == second


def test_status_derived_from_events(loaded, baton):
    with Store(find_repo(loaded).store_path) as store:
        pid = store.current_plan().id
        until = time.time() + 7200
        for task, kind, data in [(1, "task.started", {}), (1, "task.failed", {"reason": "boom"}),
                                 (4, "task.started", {}),
                                 (4, "task.paused", {"reason": "usage limit", "until": until})]:
            store.append(pid, task, kind, data)
    status = baton.json("status", "--json")
    by_id = {t["id"]: t for t in status["tasks"]}
    assert by_id[1]["state"] == "failed" and by_id[1]["reason"] == "boom"
    assert by_id[2]["state"] == "draft" and by_id[2]["blocked_by"] == 1
    assert by_id[3]["blocked_by"] == 1
    assert by_id[4]["state"] == "paused" and by_id[4]["until"] == until
    assert status["plan"]["state"] == "failed"
    text = baton("status").stdout
    assert "blocked by #1" in text and "paused until" in text and "failed: boom" in text


def test_status_running_done_landed(loaded):
    with Store(find_repo(loaded).store_path) as store:
        pid = store.current_plan().id
        store.append(pid, 1, "task.started")
        assert snapshot.read(store).as_json()["tasks"][0]["state"] == "running"
        store.append(pid, 1, "task.done", {"summary": "ok"})
        assert snapshot.read(store).as_json()["tasks"][0]["state"] == "done"
        store.append(pid, 1, "task.landed")
        status = snapshot.read(store).as_json()
        assert status["tasks"][0]["state"] == "landed"
        assert status["tasks"][0]["summary"] == "ok"
        assert status["tasks"][0]["attempts"] == 1
        assert status["summary"]["counts"] == {"draft": 3, "landed": 1}


READER = r"""
import json, subprocess, sys
n, bad, last = 0, [], None
for _ in range(int(sys.argv[1])):
    r = subprocess.run([sys.executable, "-m", "baton_tui", "status", "--json"],
                       capture_output=True, text=True)
    try:
        doc = json.loads(r.stdout)
        progress = doc["tasks"][0]["progress"]
    except Exception as exc:
        bad.append(f"unparsable ({exc}): {r.stdout[:200]!r} {r.stderr[:200]!r}")
        continue
    if r.returncode != 0:
        bad.append(f"exit {r.returncode}: {r.stderr[:300]}")
    n += 1
    last = progress
print(json.dumps({"reads": n, "bad": bad, "last": last}))
"""


def test_concurrent_readers_while_a_writer_appends(loaded):
    path = find_repo(loaded).store_path
    stop = threading.Event()
    written = [0]

    def writer() -> None:
        with Store(path) as store:
            pid = store.current_plan().id
            store.append(pid, 1, "task.started")
            while not stop.is_set():
                with store.tx():
                    for _ in range(5):
                        written[0] += 1
                        store.append(pid, 1, "task.progress", {"message": f"step {written[0]}"})
                    store.append(pid, 4, "task.usage", {"tokens": 10})
                time.sleep(0.005)  # a busy run: a few hundred events a second

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        readers = [subprocess.Popen([sys.executable, "-c", READER, "6"], cwd=loaded,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for _ in range(3)]
        results = [json.loads(r.communicate(timeout=300)[0]) for r in readers]
    finally:
        stop.set()
        thread.join()
    assert written[0] > 50
    for result in results:
        assert result["bad"] == []
        assert result["reads"] == 6
        assert result["last"] is None or result["last"].startswith("step ")
    # the writer's work is all there afterwards
    with Store(path) as store:
        status = snapshot.read(store).as_json()
    assert status["tasks"][0]["progress"] == f"step {written[0]}"
    assert status["tasks"][3]["tokens"] % 10 == 0 and status["tasks"][3]["tokens"] > 0


def test_status_reads_a_store_another_process_is_writing(loaded):
    """A long write transaction in another process does not stop `baton status`."""
    path = find_repo(loaded).store_path
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        "c.execute('BEGIN IMMEDIATE')\n"
        "c.execute(\"INSERT INTO events (plan_id, task_id, kind, data, ts) "
        "VALUES (1, 1, 'task.started', '{}', 0)\")\n"
        "print('holding', flush=True)\n"
        "sys.stdin.readline()\n"
        "c.execute('COMMIT')\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        start = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "baton_tui", "status", "--json"],
                                cwd=loaded, capture_output=True, text=True, timeout=30)
        assert time.monotonic() - start < 10
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["tasks"][0]["state"] == "draft"  # not yet committed
    finally:
        holder.communicate("go\n", timeout=30)
    result = subprocess.run([sys.executable, "-m", "baton_tui", "status", "--json"],
                            cwd=loaded, capture_output=True, text=True)
    assert json.loads(result.stdout)["tasks"][0]["state"] == "running"


def test_status_on_a_corrupt_store_is_one_line(repo, baton):
    path = find_repo(repo).store_path
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    for argv in (["status", "--json"], ["status"], ["log", "--json"]):
        result = baton(*argv)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.splitlines()) == 1 and "baton.db" in result.stderr


def test_an_attempts_mark_changes_whenever_its_record_does(loaded):
    """The conductor decodes a live attempt's record only when its mark moved: every change
    of the record must move it (a note in its spec, the agent's pid, its end)."""
    with Store(find_repo(loaded).store_path) as store:
        plan = store.current_plan()
        one = store.new_attempt(plan.id, 1, "nonce-1", "codex", {"cwd": "/w/1"}, "/l/1")
        two = store.new_attempt(plan.id, 2, "nonce-2", "codex", {"cwd": "/w/2"}, "/l/2")
        first = store.attempt_marks([one, two, 999])
        assert set(first) == {one, two}, "an attempt that is not recorded has no mark"
        assert first[one] != first[two]
        store.note_attempt(one, "leftover", True)
        second = store.attempt_marks([one, two])
        assert second[one] != first[one] and second[two] == first[two]
        store.update_attempt(two, pid=1234, pgid=1234)
        third = store.attempt_marks([one, two])
        assert third[two] != second[two] and third[one] == second[one]
        store.update_attempt(two, ended=time.time(), exit_status=0)
        assert store.attempt_marks([two])[two] != third[two]
        assert store.attempt_marks([]) == {}


def test_a_fold_kept_in_the_process_follows_every_new_event(loaded):
    """`foldcache.reading` feeds the fold it keeps only the events written since: what it
    reads must be the plan as its latest event left it, from any store object."""
    from baton_tui.store import foldcache

    path = find_repo(loaded).store_path
    states = lambda folder: {t: v.state for t, v in folder.tasks.items()}  # noqa: E731
    with Store(path) as store:
        plan = store.current_plan()
        assert 1 not in foldcache.reading(store, plan.id, states)  # no event of its own yet
        store.append(plan.id, 1, "task.started", {"attempt": 1})
        assert foldcache.reading(store, plan.id, states)[1] == "running"
    with Store(path) as other:  # another connection to the same store: the same kept fold
        other.append(plan.id, 1, "task.failed", {"reason": "boom"})
        found = foldcache.reading(other, plan.id, states)
    assert found[1] == "failed" and 4 not in found
