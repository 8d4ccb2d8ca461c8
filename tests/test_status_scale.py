"""The status path at scale: the cached fold, the tuple-backed snapshot, the JSON layout.

The cached fold must be indistinguishable from folding every event afresh (field by field,
types included), and a fold made by other code must never be read back. The snapshot's
records are built positionally for speed, so each field is checked here by its name.
"""

from __future__ import annotations

import json

import pytest

from baton_tui.core import snapshot as records
from baton_tui.store import foldcache, render, snapshot
from baton_tui.store.db import Store
from baton_tui.core.events import EventKind, State
from baton_tui.store.render import status_json
from baton_tui.core.views import Folder

K = EventKind


def _doc(n: int) -> dict:
    tasks = [{"id": i, "title": f"Task {i}", "prompt": f"do {i}", "player": "script",
              "check": "true", "depends_on": [i - 1] if i > 1 else []} for i in range(1, n + 1)]
    tasks[2]["title"] = 'tricky }, {"id": 99, "x": "\\n'   # the JSON layout's boundary text
    return {"version": 1, "goal": "scale", "tasks": tasks}


def _rich_log(store: Store, plan_id: int) -> None:
    """Every detail the views keep, on a handful of tasks."""
    a = store.append
    for t in (1, 2, 3, 4, 5, 6):
        a(plan_id, t, K.TASK_QUEUED, {"feedback": "again" if t == 2 else None})
    a(plan_id, None, K.RUN_STARTED, {"until_failures": 3, "deadline": 2e9})
    a(plan_id, 1, K.TASK_STARTED, {"attempt": 1, "base": "abc", "branch": "baton/x/1-a",
                                   "workdir": "/w/1"})
    for step in range(25):
        a(plan_id, 1, K.TASK_PROGRESS, {"message": f"step {step}"})
    a(plan_id, 1, K.TASK_USAGE, {"tokens": 1200, "cost": 0.25})
    a(plan_id, 1, K.TASK_FLAGGED, {"flag": "outside", "message": "wrote /tmp/x",
                                   "files": ["/tmp/x"], "attempt": 1})
    a(plan_id, 1, K.TASK_CHECKPOINT, {"what": "drop a table", "evidence": "plan.sql",
                                      "attempt": 1})
    a(plan_id, 1, K.TASK_CHECKPOINT_ANSWERED, {"checkpoint": store.last_event_id(),
                                               "answer": "yes", "by": "watch"})
    a(plan_id, 1, K.TASK_CONTINUED, {})
    a(plan_id, 1, K.TASK_CHECK, {"exit": 0, "output": "ok"})
    a(plan_id, 1, K.TASK_DONE, {"summary": "did one"})
    a(plan_id, 1, K.TASK_LANDED, {})
    a(plan_id, 2, K.TASK_STARTED, {"attempt": 2})
    a(plan_id, 2, K.TASK_PAUSED, {"reason": "usage limit", "until": 2e9, "limit": "known",
                                  "player": "script"})
    a(plan_id, 2, K.TASK_REASSIGNED, {"from": "script", "to": "other"})
    a(plan_id, 3, K.TASK_STARTED, {"attempt": 3})
    a(plan_id, 3, K.TASK_FAILED, {"reason": "conflict", "conflicts": ["a.py"]})
    a(plan_id, 4, K.TASK_APPROVAL_VOIDED, {"edit": "task-title"})
    a(plan_id, 5, K.TASK_STARTED, {"attempt": 5})
    a(plan_id, 5, K.TASK_RESET, {})
    a(plan_id, 6, K.TASK_STARTED, {"attempt": 6})
    a(plan_id, 6, K.TASK_CHECKPOINT, {"what": "push", "attempt": 6, "held": True})
    a(plan_id, 8, K.TASK_STARTED, {"attempt": 8})
    a(plan_id, None, K.RUN_STOPPED, {"by": "failures", "detail": "1 task failure(s)"})


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "baton.db") as s:
        plan_id = s.insert_plan("scale", _doc(8))
        _rich_log(s, plan_id)
        yield s


def _same(a: Folder, b: Folder) -> None:
    assert a.last_id == b.last_id
    assert vars(a.plan) == vars(b.plan)
    assert a.tasks.keys() == b.tasks.keys()
    for task_id, view in a.tasks.items():
        other = b.tasks[task_id]
        assert vars(view) == vars(other), task_id
        for name, value in vars(view).items():
            assert type(value) is type(getattr(other, name)), (task_id, name)


def test_the_cached_fold_is_the_fresh_fold_field_by_field(store):
    fresh = Folder().feed(store.events(1))
    text = foldcache.dump(fresh)
    assert text is not None
    _same(fresh, foldcache.load(text))
    assert fresh.tasks[6].state is State.CHECKPOINT


def test_folded_feeds_only_what_came_after_the_cache_and_saves_a_big_fold(store):
    assert foldcache.cached(store, 1) is None
    foldcache.folded(store, 1, save_after=1)            # folds everything, saves it
    cached = foldcache.cached(store, 1)
    assert cached is not None and cached.last_id == store.last_event_id()
    store.append(1, 7, K.TASK_QUEUED, {})
    store.append(1, 7, K.TASK_STARTED, {"attempt": 7})
    later = foldcache.folded(store, 1)                  # the cache plus two events
    _same(Folder().feed(store.events(1)), later)
    assert later.tasks[7].state == State.RUNNING


def test_a_fold_made_by_other_code_is_never_read(store, monkeypatch):
    foldcache.save(store, 1, Folder().feed(store.events(1)))
    assert foldcache.cached(store, 1) is not None
    monkeypatch.setattr(foldcache, "_version", "another-baton")
    assert foldcache.cached(store, 1) is None
    assert foldcache.load("{not json") is None


def test_a_view_with_an_attribute_set_outside_its_init_is_not_cached(store):
    folder = Folder().feed(store.events(1))
    folder.tasks[1].extra = {1, 2}                      # JSON could not carry it back
    assert foldcache.dump(folder) is None


def test_saving_inside_a_write_transaction_is_skipped(store):
    folder = Folder().feed(store.events(1))
    with store.tx():
        assert foldcache.save(store, 1, folder) is False
    assert foldcache.save(store, 1, folder) is True


def test_every_snapshot_field_by_name(store):
    plan = store.plan(1)
    snap = snapshot.build(plan, Folder().feed(store.events(1)), None, False, 2e9 - 10,
                          {"script": "not here — install it"})
    one, two, three, four, six, seven, eight = (snap.task(i) for i in (1, 2, 3, 4, 6, 7, 8))
    assert (one.id, one.title, one.prompt, one.player, one.mode) == (1, "Task 1", "do 1",
                                                                     "script", "build")
    assert one.check == "true" and one.checkpoint is False and one.depends_on == ()
    assert one.branch == "baton/scale/1-task-1" and one.worktree == "/w/1"
    assert one.state == "landed" and one.level == 0 and two.level == 1
    assert one.tokens == 1200 and one.cost == 0.25 and one.attempts == 1 and one.started
    assert one.summary == "did one" and one.last_report == "done: did one"
    assert one.progress == "step 24" and [f["kind"] for f in one.flags] == ["outside"]
    assert one.decisions[0]["answer"] == "yes" and one.decisions[0]["by"] == "watch"
    assert one.unready is None  # started: the player's readiness no longer matters
    assert two.state == "paused" and two.until is None  # the old player's reset is moot
    assert two.reason == "usage limit"
    assert two.limit == "known" and two.reassigned is True
    assert three.state == "failed" and three.words == "failed: conflict"
    assert four.needs_approval is True and four.blocked_by == 3
    assert four.words == "blocked by #3"
    assert six.question == {"what": "push", "evidence": None} and six.answerable is True
    assert six.started_at is None and eight.state == "running"
    assert eight.wall == pytest.approx(2e9 - 10 - eight.started_at, abs=0.01)
    assert seven.unready == "not here — install it" and seven.blocked_by == 3
    assert snap.dependents(1) == [2] and snap.dependents(8) == [] and snap.task(99) is None
    assert snap == snapshot.build(plan, Folder().feed(store.events(1)), None, False, 2e9 - 10,
                                  {"script": "not here — install it"})


def test_a_recycled_worktree_reads_as_none_with_its_reason_until_one_is_made_again(store):
    def built():
        return snapshot.build(store.plan(1), Folder().feed(store.events(1)), None, False, 2e9)

    store.append(1, 1, K.TASK_RECYCLED, {"to": 8, "workdir": "/w/1"})
    one = built().task(1)
    assert one.worktree is None and one.state == "landed"
    assert one.worktree_reason == "recycled for task 8 (its work is on its branch)"
    assert one.as_json()["worktree"] is None
    assert one.as_json()["worktree_reason"] == one.worktree_reason
    store.append(1, 1, K.TASK_STARTED, {"attempt": 9, "workdir": "/w/1-again"})  # taken, say
    again = built().task(1)
    assert again.worktree == "/w/1-again" and again.worktree_reason is None


def test_the_status_json_layout_is_the_same_json(store):
    status = snapshot.read(store).as_json()
    text = status_json(status)
    assert json.loads(text) == json.loads(json.dumps(status, indent=2))
    lines = text.splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert sum(1 for line in lines if line.startswith('    {"id": ')) == len(status["tasks"])
    empty = records.empty().as_json()
    assert json.loads(status_json(empty)) == empty


def test_each_task_in_status_json_has_its_pinned_keys_in_order(store):
    snap = snapshot.read(store)
    for task in snap.tasks:
        expected = {
            "id": task.id, "title": task.title, "player": task.player, "mode": task.mode,
            "state": task.state, "model": task.model, "effort": task.effort,
            "depends_on": list(task.depends_on), "branch": task.branch,
            "worktree": task.worktree, "started_at": task.last_started,
            "blocked_by": task.blocked_by, "reason": task.reason, "progress": task.progress,
            "until": task.until, "checkpoint": task.question, "summary": task.summary,
            "last_report": task.last_report, "flags": [dict(f) for f in task.flags],
            "decisions": [dict(d) for d in task.decisions], "words": task.words,
            "needs_approval": task.needs_approval, "wall": task.wall, "tokens": task.tokens,
            "cost": task.cost, "attempts": task.attempts,
            "player_ready": task.unready is None, "player_problem": task.unready,
            "runner": task.runner, "node": task.node, "job": task.job,
            "worktree_reason": task.worktree_reason, "pr": task.pr,
            "open_comments": task.open_comments, "told": task.told,
        }
        got = task.as_json()
        assert list(got) == list(expected) and got == expected
        got["flags"].append({"kind": "mine"})  # a copy: the snapshot stays as it was
        assert task.as_json()["flags"] == expected["flags"]


def test_a_reader_hands_back_the_same_snapshot_while_nothing_moves(tmp_path):
    with Store(tmp_path / "baton.db") as s:
        plan_id = s.insert_plan("idle", _doc(5))
        s.append(plan_id, 1, K.TASK_QUEUED, {})
        reader = snapshot.Reader()
        first = reader.read(s, now=1e9)
        assert reader.read(s, now=1e9 + 5) is first  # idle: no rebuild, no new object
        s.append(plan_id, 1, K.TASK_STARTED, {"attempt": 1})
        running = reader.read(s, now=1e9 + 6)
        assert running is not first and running.task(1).state == "running"
        later = reader.read(s, now=running.task(1).started_at + 60)
        assert later is not running and later.task(1).wall >= 59  # a running task's clock
        s.append(plan_id, 1, K.TASK_DONE, {"summary": "ok"})
        s.append(plan_id, None, K.RUN_FINISHED, {"code": 0})
        done = reader.read(s, now=2e9)
        assert done.task(1).state == "done" and reader.read(s, now=2e9 + 1) is done
        s.update_plan(plan_id, approved=True)  # no event: the row itself changed
        assert reader.read(s, now=2e9 + 2).approved is True


def _fast_is_exact(snap: records.Snapshot) -> None:
    from baton_tui.store.render import snapshot_json

    assert snapshot_json(snap) == status_json(snap.as_json())
    tasks = snap.tasks
    for k in range(len(tasks) + 1):
        assert records.tasks_json(tasks[:k], ",\n") == ",\n".join(
            json.dumps(t.as_json()) for t in tasks[:k])


def test_the_fast_status_json_is_the_same_text(store):
    snap = snapshot.build(store.plan(1), Folder().feed(store.events(1)), None, False,
                          2e9 - 10, {"script": "not here — install it"})
    assert snap.task(1).flags and snap.task(1).decisions and snap.task(6).question
    _fast_is_exact(snap)                      # flags, decisions, a checkpoint, unready
    _fast_is_exact(snapshot.read(store))
    _fast_is_exact(records.empty())


def test_the_fast_status_json_with_values_no_snapshot_would_hold(store):
    """Lists and dicts where a plain value belongs, a NUL, nested and missing lists: the
    fast writer falls back a field at a time and still writes exactly what json.dumps does."""
    snap = snapshot.read(store)
    odd = [
        {"title": "a\x00b ✓ \u2028 \"q\"", "reason": ["two", "items"], "model": {"k": 1, "j": 2},
         "progress": ["one"], "until": float("inf"), "summary": {"x": [1, 2]}},
        {"depends_on": [[1, 2], [3]], "flags": None, "decisions": [{"what": "w", "by": "b"}]},
        {"depends_on": [4, 5], "flags": ({"kind": "k", "detail": "d", "at": 1.5},) * 2,
         "question": {"what": "w", "evidence": None}, "unready": "no", "wall": -0.0},
    ]
    tasks = list(snap.tasks)
    for at, change in enumerate(odd):
        tasks[at] = records.TaskSnap(**{**tasks[at].fields(), **change})
    _fast_is_exact(records.Snapshot(**{**snap.fields(), "tasks": tuple(tasks)}))


def _kept(store: Store) -> bool:
    return store.conn.execute("SELECT 1 FROM meta WHERE key = 'snap:1'").fetchone() is not None


def _fresh(store: Store, now: float) -> records.Snapshot:
    plan = store.current_plan()
    folder = Folder().feed(store.events(plan.id))
    return snapshot.build(plan, folder, None, snapshot.folder_mode(store, folder), now,
                          snapshot.unready_players(store))


def _exactly(a: records.Snapshot, b: records.Snapshot) -> None:
    assert a == b and a.below == b.below and a.by_id == b.by_id
    assert [t.id for t in a.rows] == [t.id for t in b.rows]
    assert status_json(a.as_json()) == status_json(b.as_json())


def test_a_big_plans_kept_tasks_read_back_as_the_built_ones(store, monkeypatch):
    monkeypatch.setattr(snapshot, "CACHE_TASKS", 1)
    kept = []
    monkeypatch.setattr(snapshot, "_keep", lambda *a: kept.append(1) or _real_keep(*a))
    store.append(1, 7, K.TASK_PAUSED, {"reason": "usage limit", "until": 2e9 + 50,
                                       "limit": "known", "player": "script"})
    for now in (2e9 - 10, 2e9 + 10, 2e9 + 100):   # limits still to reset, then gone
        first = snapshot.read(store, now=now)
        assert _kept(store)
        again = snapshot.read(store, now=now)     # from the kept tasks
        _exactly(first, _fresh(store, now))
        _exactly(again, _fresh(store, now))
    assert len(kept) == 1                         # kept once, read back since
    words = snapshot.read(store, now=2e9 - 10).task(7).words
    assert words == records.describe("paused", None, 2e9 + 50, "usage limit")
    assert snapshot.read(store, now=2e9 + 1000).task(8).wall > snapshot.read(
        store, now=2e9).task(8).wall              # a running task's clock still runs


_real_keep = snapshot._keep


def _kept_lines(store: Store) -> int:
    record = store.conn.execute("SELECT value FROM meta WHERE key = 'snap:1'").fetchone()[0]
    return len(record.split("\n")) - 2  # (the head and the tasks' fields come first)


def test_status_json_from_kept_lines_is_the_fresh_text(store, monkeypatch):
    """`status --json` writes again only the tasks that may read otherwise than their kept
    line: across a limit still to reset, then reset, with a running task's clock, and
    after new events."""
    monkeypatch.setattr(snapshot, "CACHE_TASKS", 1)
    store.append(1, 7, K.TASK_PAUSED, {"reason": "usage limit", "until": 2e9 + 50,
                                       "limit": "known", "player": "script"})
    first = snapshot.read_json(store, now=2e9 - 10)
    assert first == status_json(_fresh(store, 2e9 - 10).as_json())
    assert _kept_lines(store) == 8
    written = []
    real = records.tasks_json
    monkeypatch.setattr(render, "tasks_json", lambda tasks, between: written.append(
        [t.id for t in tasks]) or real(tasks, between))
    for now in (2e9 - 10, 2e9 + 10, 2e9 + 100, 2e9 - 100):
        assert snapshot.read_json(store, now=now) == status_json(_fresh(store, now).as_json())
    # Task 8 runs (its clock moves); every task is the script's, whose limit resets at 2e9 + 50.
    assert written == [[8], [8], [1, 2, 3, 4, 5, 6, 7, 8], [8]]
    store.append(1, 2, K.TASK_RESET, {})             # the limit no longer holds any task
    store.append(1, 8, K.TASK_DONE, {"summary": "ok"})
    store.append(1, 8, K.TASK_LANDED, {})
    for now in (2e9 - 10, 2e9 + 100):
        assert snapshot.read_json(store, now=now) == status_json(_fresh(store, now).as_json())
    assert written[-2:] == [[2, 8], [1, 2, 3, 4, 5, 6, 7, 8]]  # the two with new events


def test_tasks_kept_by_a_reader_of_no_lines_are_kept_again_with_them(store, monkeypatch):
    monkeypatch.setattr(snapshot, "CACHE_TASKS", 1)
    snapshot.read(store, now=2e9)                    # `baton status`: no lines written
    assert _kept_lines(store) == 0
    first = snapshot.read_json(store, now=2e9)       # from the kept tasks, every line written
    assert _kept_lines(store) == 8                   # and kept with them at once
    assert snapshot.read_json(store, now=2e9) == first == status_json(
        _fresh(store, 2e9).as_json())


def test_kept_lines_with_a_number_json_cannot_carry_still_give_json(store):
    snap = snapshot.read(store, now=2e9)
    lines = render.snapshot_json_lines(snap)[1]
    assert lines is not None and len(lines) == 8
    odd = records.TaskSnap(**{**snap.tasks[0].fields(), "until": float("inf")})
    changed = records.Snapshot(**{**snap.fields(), "tasks": (odd, *snap.tasks[1:])})
    written = render.task_lines([odd])                # the one line written again
    text, kept = render.head_and_lines(changed, [*written, *lines[1:]], written)
    assert text == status_json(changed.as_json()) and json.loads(text)["tasks"][0]["until"] is None
    assert kept is None                               # such a text's lines are not kept


def test_kept_tasks_are_not_read_after_anything_they_came_from_changed(store, monkeypatch):
    monkeypatch.setattr(snapshot, "CACHE_TASKS", 1)
    snapshot.read(store, now=2e9)
    store.append(1, 7, K.TASK_QUEUED, {})                           # a new event
    _exactly(snapshot.read(store, now=2e9), _fresh(store, 2e9))
    doc = store.plan(1).doc
    doc["tasks"][6]["title"] = "Renamed, same revision"            # the document
    store.update_plan(1, doc=doc)
    _exactly(snapshot.read(store, now=2e9), _fresh(store, 2e9))
    assert snapshot.read(store, now=2e9).task(7).title == "Renamed, same revision"
    store.set_meta("players.readiness", {"script": {"ready": False, "reason": "gone"}})
    _exactly(snapshot.read(store, now=2e9), _fresh(store, 2e9))    # the players found
    assert snapshot.read(store, now=2e9).task(7).unready == "gone"
    store.set_meta("snap:1", {"key": "not this code's"})           # a record of another
    _exactly(snapshot.read(store, now=2e9), _fresh(store, 2e9))


def test_a_small_plan_keeps_no_tasks_and_a_live_runs_plan_keeps_them(store, monkeypatch):
    snapshot.read(store, now=2e9)
    assert not _kept(store)                                         # 8 tasks: built each time
    monkeypatch.setattr(snapshot, "CACHE_TASKS", 1)
    monkeypatch.setattr(snapshot, "conductor_info", lambda s: {"pid": 1, "started": 0,
                                                              "plan": 1})
    assert snapshot.read(store, now=2e9).state == "running"
    assert _kept(store)                                   # its new events are caught up on


def test_status_json_loads_no_argparse_typing_or_hashlib(repo, baton):
    """What the status path was trimmed of stays trimmed (each cost milliseconds per call)."""
    import subprocess
    import sys

    from conftest import write_plan

    write_plan(repo / "p.json", [{"id": 1, "title": "a", "player": "codex"}])
    assert baton("plan", "--from", "p.json").returncode == 0
    script = ("import io, sys, contextlib\nfrom baton_tui.cli import main\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    assert main(['status', '--json']) == 0\n"
              "print(sorted(m for m in ('argparse', 'typing', 'hashlib') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
