"""Engine queries that used to walk every task, against the plain walks they replace.

The merge order with carried work first (a minimum tree instead of every carried pair) must
give exactly the order of the depth-first walk over carried lists; the conductor's ready
queue must offer the same tasks, with the same unmet dependencies, as a scan of every task;
the dependents index of the snapshot must answer as a scan does. Random histories come
from hypothesis; a 10,000-task chain shows the cost stays linear.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton_tui.handoff.order import carried_first
from baton_tui.run.ready import Ready
from baton_tui.core.events import BROKEN, LANDED, Event, EventKind, State
from baton_tui.core.views import Folder

K = EventKind


def reference_merge_order(base_order, position, landed, cut):
    """The depth-first walk handoff used before: per task, the list of every task it carries."""
    carried = {task: [o for o, at in landed.items() if o != task and at < cut.get(task, 0)]
               for task in landed}
    order, placed = [], set()
    for root in base_order:
        stack = [(root, False)]
        while stack:
            task_id, expanded = stack.pop()
            if task_id in placed:
                continue
            if expanded:
                placed.add(task_id)
                order.append(task_id)
                continue
            stack.append((task_id, True))
            inner = sorted(carried.get(task_id, []), key=lambda t: position.get(t, t))
            stack.extend((t, False) for t in reversed(inner) if t not in placed)
    return order


@st.composite
def histories(draw):
    """A plan order and a run: tasks cut then landed (cut before landing), some never."""
    n = draw(st.integers(1, 14))
    base = draw(st.permutations(range(1, n + 1)))
    steps = draw(st.lists(st.sampled_from(range(1, n + 1)), max_size=3 * n))
    event, cut, landed = 0, {}, {}
    for task in steps:  # each step cuts the task's branch, or lands a cut, unlanded one
        event += 1
        if task in cut and task not in landed and draw(st.booleans()):
            landed[task] = event
        elif task not in landed:
            cut[task] = event
    return list(base), {t: i for i, t in enumerate(base)}, landed, cut


@settings(max_examples=400, deadline=None)
@given(histories())
def test_carried_first_is_the_depth_first_walk(history):
    base, position, landed, cut = history
    assert carried_first(base, position, landed, cut) == \
        reference_merge_order(base, position, landed, cut)


def test_carried_first_on_a_10000_task_chain_is_fast():
    n = 10_000
    base = list(range(1, n + 1))
    cut = {t: 2 * t - 1 for t in base}
    landed = {t: 2 * t for t in base}  # each task cut after the previous one landed
    started = time.process_time()
    assert carried_first(base, {t: t - 1 for t in base}, landed, cut) == base
    assert time.process_time() - started < 2.0  # the pairs alone are 50 million


# --- the ready queue -----------------------------------------------------------------------

class _Task:
    def __init__(self, id, deps, mode="build"):
        self.id, self.depends_on, self.mode = id, deps, mode


class _Doc:
    def __init__(self, tasks):
        self.tasks = tasks


def _scan(doc, folder, git_mode, approved):
    """What a walk over every task finds: unmet dependencies and who may be offered."""
    state = {t.id: folder.view(t.id).state for t in doc.tasks}
    by_id = {t.id: t for t in doc.tasks}

    def satisfied(d):
        if by_id[d].mode == "build" and git_mode:
            return state[d] in LANDED
        return state[d] == State.DONE or state[d] in LANDED

    unmet = {t.id: sum(1 for d in t.depends_on if d in by_id and not satisfied(d))
             for t in doc.tasks}
    offered = set()
    for t in doc.tasks:
        view = folder.view(t.id)
        s = view.state
        if s == State.QUEUED and unmet[t.id] == 0 and not view.needs_approval \
                and t.mode != "manual" and (t.mode != "build" or approved):
            offered.add(t.id)
        elif (s in BROKEN and view.reassigned) or (s == State.PAUSED and not view.taken) \
                or s == State.CHECKPOINT or (s == State.QUEUED and t.mode == "manual"
                                             and unmet[t.id] == 0 and not view.needs_approval):
            offered.add(t.id)
    return unmet, offered


KINDS = [K.TASK_QUEUED, K.TASK_STARTED, K.TASK_DONE, K.TASK_LANDED, K.TASK_FAILED,
         K.TASK_PAUSED, K.TASK_CHECKPOINT, K.TASK_REASSIGNED, K.TASK_APPROVAL_VOIDED,
         K.TASK_DISCARDED, K.TASK_RESET, K.TASK_MERGED]


@st.composite
def runs(draw):
    n = draw(st.integers(1, 9))
    tasks = [_Task(i, sorted(draw(st.sets(st.integers(1, i - 1), max_size=3))) if i > 1 else [],
                   draw(st.sampled_from(["build", "build", "research", "manual"])))
             for i in range(1, n + 1)]
    events = draw(st.lists(st.tuples(st.integers(1, n), st.sampled_from(KINDS)), max_size=40))
    return tasks, events, draw(st.booleans()), draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(runs())
def test_the_ready_queue_matches_a_scan_after_every_event(run):
    tasks, events, git_mode, approved = run
    doc, folder = _Doc(tasks), Folder()
    ready = Ready(doc, folder, git_mode, approved)
    for i, (task_id, kind) in enumerate(events, start=1):
        data = {"player": "x", "to": "y"} if kind == K.TASK_REASSIGNED else {}
        folder.apply(Event(i, 1, task_id, kind, data, float(i)))
        ready.touch({task_id})
        unmet, offered = _scan(doc, folder, git_mode, approved)
        assert ready.unmet == unmet
        assert set(ready.key) | ready.urgent == offered
        assert {t: s for s, ids in ready.by_state.items() for t in ids} == \
            {t.id: folder.view(t.id).state for t in tasks}
    walked = list(ready.walk(lambda: 1_000))
    assert len(walked) == len(set(walked))
    assert set(walked) == _scan(doc, folder, git_mode, approved)[1]


def test_walk_stops_when_there_is_no_room_and_keeps_what_it_looked_at():
    tasks = [_Task(i, []) for i in range(1, 101)]
    folder = Folder()
    for i in range(1, 101):
        folder.apply(Event(i, 1, i, K.TASK_QUEUED, {}, 0.0))
    ready = Ready(_Doc(tasks), folder, True, True)
    room = [3]

    def left():
        return room[0]

    seen = []
    for task_id in ready.walk(left):
        seen.append(task_id)
        room[0] -= 1
    assert seen == [1, 2, 3]  # equal paths: lowest ids first
    assert list(ready.walk(lambda: 100))[:5] == [1, 2, 3, 4, 5]  # nothing was lost


def test_a_landing_unblocks_exactly_its_dependents_in_a_10000_task_chain():
    n = 10_000
    tasks = [_Task(i, [i - 1] if i > 1 else []) for i in range(1, n + 1)]
    folder = Folder()
    event = 0
    for i in range(1, n + 1):
        event += 1
        folder.apply(Event(event, 1, i, K.TASK_QUEUED, {}, 0.0))
    ready = Ready(_Doc(tasks), folder, True, True)
    assert list(ready.walk(lambda: 10)) == [1]
    started = time.process_time()
    for i in range(1, 2001):
        for kind in (K.TASK_STARTED, K.TASK_DONE, K.TASK_LANDED):
            event += 1
            folder.apply(Event(event, 1, i, kind, {}, 0.0))
            ready.touch({i})
        assert list(ready.walk(lambda: 10)) == [i + 1]
    assert time.process_time() - started < 5.0  # a scan per landing would be 20 million looks
    assert ready.rank[1] == (-n, -1) and ready.ids(State.LANDED) == set(range(1, 2001))


# --- following many agents ---------------------------------------------------------------

def test_tree_cpu_times_reads_the_table_once_and_agrees_with_one_root_at_a_time():
    import os
    import subprocess

    from baton_tui import procs

    busy = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 30"
    shells = [subprocess.Popen(["sh", "-c", f"({busy}) & {busy}"]) for _ in range(3)]
    try:
        time.sleep(0.5)
        for _ in range(100):  # until every loop is over: sleeping trees use no more CPU
            first = procs.tree_cpu_times([s.pid for s in shells])
            time.sleep(0.3)
            again = procs.tree_cpu_times([s.pid for s in shells])
            if first == again:
                break
        one_by_one = {s.pid: procs.tree_cpu_time(s.pid) for s in shells}
        assert again.keys() == one_by_one.keys()
        for pid, total in again.items():
            assert total > 0.0 and abs(total - one_by_one[pid]) < 0.02, (total, one_by_one[pid])
        assert procs.tree_cpu_times([os.getpid() + 10_000_000]) == {os.getpid() + 10_000_000: 0.0}
        assert procs.tree_cpu_times([]) == {}
    finally:
        for shell in shells:
            procs.kill_tree(shell.pid)
            shell.wait()


def test_a_refusal_naming_thousands_of_tasks_stays_one_readable_line():
    from baton_tui.core.rules import id_list

    assert id_list([1, 3]) == "1, 3"
    text = id_list(list(range(1, 10_001)))
    assert text.startswith("1, 2, 3") and text.endswith("20 and 9,980 more")
    assert len(text) < 120


# --- a full house ------------------------------------------------------------------------

@pytest.mark.slow
def test_max_parallel_64_runs_64_agents_at_once_on_a_small_machine(repo, baton):
    """No thread waits on a running agent (its shim's exit wakes the loop), so 64 at once
    is what `max_parallel = 64` gives, whatever the number of cores."""
    import json as _json

    from helpers.core import write_plan

    (repo / "baton.toml").write_text("[limits]\nmax_parallel = 64\nstall = \"5m\"\n")
    tasks = [{"id": i, "title": f"Wait {i}", "prompt": "wait", "player": "script",
              "check": "sleep 20"} for i in range(1, 65)]
    path = write_plan(repo.parent / "plan.json", tasks, goal="Full house")
    assert baton("plan", "--from", str(path)).returncode == 0
    assert baton("trust").returncode == 0
    ran = baton("run", "--approve", timeout=600)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    log = [_json.loads(line) for line in baton("log", "--json").stdout.splitlines()]
    spans = {}
    for event in log:
        if event["kind"] == "task.started":
            spans[event["task"]] = [event["ts"], None]
        elif event["kind"] == "task.done":
            spans[event["task"]][1] = event["ts"]
    assert len(spans) == 64 and all(end for _, end in spans.values())
    peak = max(sum(1 for s, e in spans.values() if s <= at < e) for at, _ in spans.values())
    assert peak >= 48, peak  # on two busy cores: nearly all of them, not cores + 4


@pytest.mark.slow
def test_a_finished_run_leaves_its_fold_in_the_store(repo, baton):
    import sqlite3

    from helpers.core import write_plan

    tasks = [{"id": i, "title": f"T{i}", "prompt": "p", "player": "script", "check": "true",
              "depends_on": [i - 1] if i > 1 else []} for i in range(1, 4)]
    assert baton("plan", "--from", str(write_plan(repo.parent / "p.json", tasks))).returncode == 0
    assert baton("run", "--approve").returncode == 0
    with sqlite3.connect(repo / ".git" / "baton" / "baton.db") as db:
        (text,) = db.execute("SELECT value FROM meta WHERE key LIKE 'fold:%'").fetchone()
        last = db.execute("SELECT MAX(id) FROM events").fetchone()[0]
    from baton_tui.store import foldcache

    folder = foldcache.load(text)
    assert folder is not None and folder.last_id == last  # up to run.finished
    assert {v.state for v in folder.tasks.values()} == {"landed"}
