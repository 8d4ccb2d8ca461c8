"""Landings in one pass: tasks waiting for the landing lock together land together.

The branches queued while a landing holds the lock are merged one on another and the
integration branch moves once, in one `update-ref --stdin` transaction (counted through a
`git` shim first on PATH). A conflicting branch is left out of the pass and fails alone; a
crash after the pass moved the branch, before its landings were recorded, loses nothing and
lands nothing twice: the new conductor adopts the whole pass.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from baton_tui.core.events import EventKind, State
from baton_tui.core.slug import integration_branch, task_branch
from baton_tui.gitops import landing
from baton_tui.plan.model import PlanDocument
from baton_tui.run import landings, refguard
from baton_tui.run.finish import Finisher
from baton_tui.workspace import Workspace
from helpers.run_kit import events, git, load_plan, script_agent, task, wait_for, write_config


def ref_moves(repo: Path, ref: str) -> list[str]:
    """The landings' moves of `ref` its log records (by git or by Baton, alike)."""
    return [line for line in git(repo, "reflog", "show", "--format=%gs", ref).splitlines()
            if line.startswith("baton: land")]


def branch_with(repo: Path, branch: str, name: str, content: str) -> None:
    """A task branch off main holding one commit that writes `name`."""
    base = git(repo, "rev-parse", "main")
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=content,
                          capture_output=True, text=True, check=True).stdout.strip()
    listing = git(repo, "ls-tree", "main")
    tree = subprocess.run(["git", "mktree"], cwd=repo, input=f"{listing}\n100644 blob {blob}\t"
                          f"{name}\n", capture_output=True, text=True, check=True).stdout.strip()
    commit = git(repo, "commit-tree", tree, "-p", base, "-m", f"work on {name}")
    git(repo, "update-ref", f"refs/heads/{branch}", commit)


def test_branches_land_in_turn_with_one_ref_move_and_a_conflict_left_out(repo):
    git(repo, "branch", "integration", "main")
    branch_with(repo, "a", "a.txt", "a\n")
    branch_with(repo, "b", "a.txt", "b\n")  # conflicts with a, once a is in
    branch_with(repo, "c", "c.txt", "c\n")
    before = git(repo, "rev-parse", "integration")
    results = landing.land_all(repo, [("a", "Land a"), ("b", "Land b"), ("c", "Land c")],
                               "integration")
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].conflicts == ["a.txt"]
    assert ref_moves(repo, "integration") == ["baton: land a, c"]  # one move for both
    tip = git(repo, "rev-parse", "integration")
    assert tip == results[2].commit
    # The same history one landing at a time makes: a merge per branch, each on the last.
    assert git(repo, "rev-parse", f"{tip}^1", f"{tip}^2").split() == [
        results[0].commit, git(repo, "rev-parse", "c")]
    assert git(repo, "rev-parse", f"{results[0].commit}^1") == before
    assert git(repo, "log", "--format=%s", "integration").splitlines()[:2] == ["Land c",
                                                                               "Land a"]


def test_a_pass_that_cannot_move_the_branch_moves_nothing(repo):
    git(repo, "branch", "integration", "main")
    branch_with(repo, "a", "a.txt", "a\n")
    before = git(repo, "rev-parse", "integration")
    with pytest.raises(landing.GitError):
        landing.land_all(repo, [("a", "Land a"), ("missing", "Land missing")], "integration")
    assert git(repo, "rev-parse", "integration") == before


def test_landings_waiting_for_the_lock_land_in_one_pass(repo, baton, tmp_path):
    """Three finishers ask to land while the lock is held; the first to get it lands all
    three, with one move of the integration branch, and each hears its own landing."""
    write_config(repo, {"agent": script_agent(tmp_path, "a", {})})
    load_plan(baton, [task(1), task(2), task(3)], approve=True)
    ws = Workspace(repo)
    plan = ws.store.current_plan()
    doc = PlanDocument.model_validate(plan.doc)
    for t in doc.tasks:
        branch_with(repo, task_branch(plan.slug, t.id, t.title), f"t{t.id}.txt", f"{t.id}\n")
    key = (str(ws.paths.store_path), plan.id)
    answers: dict[int, State] = {}

    def finish(t) -> None:
        other = ws.sibling()
        try:
            answers[t.id] = Finisher(other, plan, doc).land(t, None)
        finally:
            other.close()

    with refguard.LOCK:  # a landing under way
        threads = [threading.Thread(target=finish, args=(t,)) for t in doc.tasks]
        for thread in threads:
            thread.start()
        wait_for(lambda: key in landings._queues and len(landings._queues[key].waiting) == 3, 60,
                 what="three landings queued")
    for thread in threads:
        thread.join(60)
    assert answers == {1: State.LANDED, 2: State.LANDED, 3: State.LANDED}
    moves = ref_moves(repo, integration_branch(plan.slug))
    assert len(moves) == 1, moves
    tip = git(repo, "rev-parse", integration_branch(plan.slug))
    landed = [e for e in events(baton) if e["kind"] == "task.landed"]
    assert sorted(e["task"] for e in landed) == [1, 2, 3]
    assert landed[-1]["data"]["commit"] == tip
    for t in (1, 2, 3):
        assert git(repo, "show", f"{tip}:t{t}.txt") == str(t)
    ws.close()


def test_a_crash_after_a_pass_moved_the_branch_adopts_every_landing_of_it(repo, baton,
                                                                         tmp_path):
    """A pass moved the integration branch for three finished tasks and the conductor died
    before it recorded any of them: the next conductor's check adopts the whole pass
    (nothing put back), and landing the tasks again finds each already there (nothing
    lands twice, nothing is lost)."""
    write_config(repo, {"agent": script_agent(tmp_path, "a", {})})
    load_plan(baton, [task(1), task(2), task(3)], approve=True)
    ws = Workspace(repo)
    plan = ws.store.current_plan()
    doc = PlanDocument.model_validate(plan.doc)
    integration = integration_branch(plan.slug)
    git(repo, "branch", integration, plan.base_commit)
    for t in doc.tasks:  # finished: started on its branch, done, not landed
        branch = task_branch(plan.slug, t.id, t.title)
        branch_with(repo, branch, f"t{t.id}.txt", f"{t.id}\n")
        ws.store.append(plan.id, t.id, EventKind.TASK_STARTED, {
            "player": "agent", "branch": branch, "base": plan.base_commit})
        ws.store.append(plan.id, t.id, EventKind.TASK_DONE, {"summary": f"task {t.id}"})
    passed = landing.land_all(repo, [(task_branch(plan.slug, t.id, t.title),
                                      f"Land task {t.id}: {t.title}") for t in doc.tasks],
                              integration)
    tip = passed[-1].commit
    refguard._expected.clear()  # what a new conductor's process knows
    assert refguard.check_integration(ws, plan) == tip
    assert git(repo, "rev-parse", integration) == tip
    assert not [e for e in events(baton) if e["kind"] == "run.repaired"]
    states = [Finisher(ws, plan, doc).land(t, None) for t in doc.tasks]  # as `resume` does
    assert states == [State.LANDED] * 3
    assert git(repo, "rev-parse", integration) == tip
    landed = [e for e in events(baton) if e["kind"] == "task.landed"]
    assert [(e["task"], e["data"]["commit"]) for e in landed] == [(1, tip), (2, tip), (3, tip)]
    subjects = git(repo, "log", "--format=%s", integration).splitlines()
    for t in (1, 2, 3):
        assert subjects.count(f"Land task {t}: Task {t}") == 1, subjects
    ws.close()


def _planned(repo: Path, baton, tmp_path: Path) -> tuple[Workspace, object, PlanDocument, str]:
    write_config(repo, {"agent": script_agent(tmp_path, "a", {})})
    load_plan(baton, [task(1), task(2)], approve=True)
    ws = Workspace(repo)
    plan = ws.store.current_plan()
    integration = integration_branch(plan.slug)
    git(repo, "branch", integration, plan.base_commit)
    refguard._expected.clear()
    return ws, plan, PlanDocument.model_validate(plan.doc), integration


def test_a_start_does_not_wait_for_a_landing_or_a_check(repo, baton, tmp_path):
    """While a landing or another attempt's check holds the ref lock, a start whose
    integration branch is where Baton left it cuts its worktree from there: it reads the
    tip, and takes no lock for it (one landing used to stall every queued start)."""
    from baton_tui.run import placing

    ws, plan, doc, integration = _planned(repo, baton, tmp_path)
    tip = refguard.check_integration(ws, plan)  # noted once, under the lock
    assert tip == plan.base_commit
    made: dict[str, object] = {}

    def start() -> None:
        other = ws.sibling()
        try:
            made["workdir"] = placing.prepare_build(other, plan, doc.tasks[0])
        except BaseException as exc:  # reported below, not lost in the thread
            made["error"] = exc
        finally:
            other.close()

    with refguard.LOCK:  # held by a landing (or a check after an attempt) meanwhile
        thread = threading.Thread(target=start)
        thread.start()
        wait_for(lambda: made, 120, what="the start, while the lock is held")
    thread.join(60)
    assert "error" not in made, made
    workdir = made["workdir"]
    assert workdir.base == tip and git(workdir.path, "rev-parse", "HEAD") == tip
    ws.close()


def test_a_start_after_the_branch_moved_waits_for_the_lock_and_puts_it_back(repo, baton,
                                                                           tmp_path):
    """The integration branch is not where Baton left it: the start takes the lock (never
    reading a landing halfway) and the branch is put back before a worktree is cut from
    it — from the tip Baton expects, not the one it found."""
    ws, plan, doc, integration = _planned(repo, baton, tmp_path)
    tip = refguard.check_integration(ws, plan)
    branch_with(repo, "stray", "stray.txt", "an agent's\n")
    stray = git(repo, "rev-parse", "stray")
    git(repo, "update-ref", f"refs/heads/{integration}", stray)  # an agent moved it
    assert refguard.check_integration(ws, plan) == tip
    assert git(repo, "rev-parse", integration) == tip
    assert [e for e in events(baton) if e["kind"] == "run.repaired"]
    ws.close()


def test_a_landing_between_its_move_and_its_note_is_never_put_back(repo, baton, tmp_path):
    """A landing has moved the integration branch and not yet noted it (it holds the lock):
    a start that reads the branch then finds it differ from the tip noted, waits for the
    lock, and takes the landing's tip — the landing is never put back."""
    ws, plan, doc, integration = _planned(repo, baton, tmp_path)
    refguard.check_integration(ws, plan)
    branch = task_branch(plan.slug, 1, "Task 1")
    branch_with(repo, branch, "t1.txt", "1\n")
    got: dict[str, object] = {}

    def read() -> None:
        other = ws.sibling()
        try:
            got["tip"] = refguard.check_integration(other, plan)
        finally:
            other.close()

    with refguard.LOCK:  # the landing
        landed = landing.land_all(repo, [(f"refs/heads/{branch}", "Land task 1: Task 1")],
                                  integration)[-1].commit
        thread = threading.Thread(target=read)
        thread.start()
        wait_for(lambda: _frames_of(thread)[:1] == ["check_integration"], 60,
                 what="the read, waiting for the lock")
        refguard.landed(ws, plan, landed)
        ws.store.append(plan.id, 1, EventKind.TASK_LANDED, {"commit": landed})
    thread.join(60)
    assert got == {"tip": landed}
    assert git(repo, "rev-parse", integration) == landed
    assert not [e for e in events(baton) if e["kind"] == "run.repaired"]
    ws.close()


def _frames_of(thread: threading.Thread) -> list:
    """The frames `thread` is in now (innermost first)."""
    import sys

    frame = sys._current_frames().get(thread.ident or -1)
    found = []
    while frame is not None:
        found.append(frame.f_code.co_name)
        frame = frame.f_back
    return found
