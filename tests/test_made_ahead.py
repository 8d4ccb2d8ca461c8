"""Worktrees made ahead: a task's worktree is made while its dependencies still run, and its
start brings it to the integration tip they landed on (`Starter.make_ahead`,
`placing.prepare_ahead`, `worktrees.move_ahead`). A run of the real CLI (its conductor killed),
the rest on the real conductor with scripted agents; real git throughout.

The first task's agent waits for a flag (or a gate), so the test sees the dependent's
worktree while its dependency is still running.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from helpers.chaos_kit import worktrees_dir
from helpers.gitops_fixtures import g, make_repo, write
from helpers.run_kit import (
    alive, git, kill, load_plan, popen_baton, script_agent, status, task, wait_for,
    write_config,
)
from helpers.scripted_kit import Scripted

from baton_tui.gitops import making
from baton_tui.gitops import worktrees as wt


def gate_agent(flag: Path, file: str = "t1.txt", word: str = "one") -> list[str]:
    """Waits for `flag`, writes `file` (`word` in it) and reports done."""
    code = ("import os, pathlib, subprocess, sys, time\n"
            "sys.stdin.read()\n"
            f"while not os.path.exists({str(flag)!r}): time.sleep(0.05)\n"
            f"pathlib.Path({file!r}).write_text({word!r} + '\\n')\n"
            f"sys.exit(subprocess.run(['baton', 'report', 'done', '--summary', {word!r}])"
            ".returncode)\n")
    return [sys.executable, "-c", code]


def chain(repo: Path, baton, tmp_path: Path, second: list[dict] | None = None) -> Path:
    flag = tmp_path / "go"
    later = script_agent(tmp_path, "later", {"2": second or [
        {"write": "t2.txt", "content": "two\n"}, {"report": "done", "summary": "two"}]})
    write_config(repo, {"gate": gate_agent(flag), "agent": later})
    load_plan(baton, [task(1, player="gate"), task(2, deps=[1])])
    return flag


def held_worktree(title: str = "2-task-2") -> Path:
    """The dependent's worktree once it is made ahead (held: its making unfinished)."""
    return wait_for(lambda: next((p for p in worktrees_dir().rglob(title)
                                  if making.held(p)), None), what=f"{title} made ahead")


def run_through_gate(repo: Path, flag: Path, meanwhile=None, title: str = "2-task-2",
                     code: int = 0) -> tuple[Path, str | None]:
    """`baton run --approve` until the worktree `title` is made ahead; `meanwhile(it)`, then
    the gate opened (`flag`) and the run's exit `code` awaited. Returns that worktree and
    the commit it was made ahead at."""
    run = popen_baton(repo, "run", "--approve")
    try:
        ahead = held_worktree(title)
        made_at = making.held(ahead)
        if meanwhile:
            meanwhile(ahead)
        flag.touch()
        assert run.wait(timeout=120) == code, run.communicate()
    finally:
        flag.touch()
        if run.poll() is None:
            run.kill()
    return ahead, made_at


@pytest.mark.slow
def test_a_conductor_killed_after_making_a_worktree_ahead_leaves_it_to_the_next(
        repo, baton, tmp_path):
    flag = chain(repo, baton, tmp_path)
    run = popen_baton(repo, "run", "--approve", "--detach")
    assert run.wait(timeout=60) == 0, run.communicate()
    ahead = held_worktree()
    conductor = status(baton)["conductor"]["pid"]
    kill(conductor)
    wait_for(lambda: not alive(conductor), what="the conductor to die")
    assert making.held(ahead)  # still held: nobody started the task
    flag.touch()
    resumed = baton("resume", timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert {t["id"]: t["state"] for t in status(baton)["tasks"]} == {1: "landed", 2: "landed"}
    assert (ahead / "t1.txt").read_text() == "one\n" and not making.pending(ahead)


# -- on the real conductor with scripted agents (`helpers.scripted_kit`) ---------------------

def through_gate(run: Scripted, scripts: dict, meanwhile=None, title: str = "2-task-2",
                 code: int = 0) -> tuple[Path, str | None]:
    """Run until the worktree `title` is made ahead; `meanwhile(it)`, then task 1 let go (it
    waits for the gate) and the run's exit `code` checked. Returns that worktree and the
    commit it was made ahead at."""
    gate, found = threading.Event(), {}

    def person(_ws) -> None:
        try:
            ahead = found["ahead"] = held_worktree(title)
            found["made_at"] = making.held(ahead)
            if meanwhile:
                meanwhile(ahead)
        finally:
            gate.set()

    first = [{"until": lambda _ws: gate.is_set()}, *scripts["1"]]
    assert run.run({**scripts, "1": first}, meanwhile=person) == code
    return found["ahead"], found["made_at"]


def scripted(repo: Path, tasks: list[dict]) -> Scripted:
    run = Scripted(repo)
    run.config()
    run.plan(tasks)
    return run


DID = {i: [{"write": f"t{i}.txt", "content": f"{i}\n"}, {"report": "done", "summary": f"did {i}"}]
       for i in (1, 2, 3)}


def test_a_dependents_worktree_is_made_while_its_dependency_runs_and_starts_on_its_landing(
        repo):
    run = scripted(repo, [task(1), task(2, deps=[1])])

    def made_not_started(ahead: Path) -> None:
        assert (ahead / "README.md").exists() and not (ahead / "t1.txt").exists()
        assert run.task(2)["state"] == "queued"  # made, not started

    ahead, made_at = through_gate(run, {"1": DID[1], "2": DID[2]}, made_not_started)
    evs = run.events()
    landed_1 = next(e for e in evs if e["kind"] == "task.landed" and e["task"] == 1)
    started_2 = next(e for e in evs if e["kind"] == "task.started" and e["task"] == 2)
    assert Path(started_2["data"]["workdir"]) == ahead
    # Brought to the tip task 1 landed on: its base, and its files.
    assert started_2["data"]["base"] == landed_1["data"]["commit"] != made_at
    assert (ahead / "t1.txt").read_text() == "1\n" and (ahead / "t2.txt").exists()
    assert not making.pending(ahead)
    assert run.states() == {1: "landed", 2: "landed"}


def test_a_worktree_made_ahead_takes_over_a_landed_tasks_worktree(repo):
    """A chain of three: while task 2 runs, task 3's worktree is made ahead from task 1's,
    which has landed (moved to task 3's place and switched to its branch: no new checkout);
    task 1's branch keeps its work, and status says where its worktree went."""
    run = scripted(repo, [task(1), task(2, deps=[1]), task(3, deps=[2])])

    def taken_over(ahead: Path) -> None:
        first = run.task(1)
        assert first["state"] == "landed" and first["worktree"] is None
        assert first["worktree_reason"] == "recycled for task 3 (its work is on its branch)"
        assert (ahead / "t1.txt").read_text() == "1\n"  # task 1's files, on task 3's branch
        assert git(ahead, "rev-parse", "HEAD") == making.held(ahead)

    # Task 2 waits for the gate here (task 1 is let go at once, in its place).
    gate, found = threading.Event(), {}

    def person(_ws) -> None:
        try:
            found["ahead"] = held_worktree("3-task-3")
            taken_over(found["ahead"])
        finally:
            gate.set()

    code = run.run({"1": DID[1], "2": [{"until": lambda _ws: gate.is_set()}, *DID[2]],
                    "3": DID[3]}, meanwhile=person)
    assert code == 0
    ahead = found["ahead"]
    by_id = {t["id"]: t for t in run.status()["tasks"]}
    assert {i: t["state"] for i, t in by_id.items()} == {1: "landed", 2: "landed", 3: "landed"}
    assert Path(by_id[3]["worktree"]) == ahead and not making.pending(ahead)
    assert sorted(p.name for p in ahead.iterdir() if p.suffix == ".txt") == \
        ["t1.txt", "t2.txt", "t3.txt"]
    assert git(repo, "show", f"{by_id[1]['branch']}:t1.txt") == "1"  # its branch kept its work
    assert git(repo, "worktree", "list").count("\n") == 2  # tasks 2's and 3's, and the checkout


FAILS = [{"report": "failed", "reason": "no"}]


def test_a_run_that_ends_before_the_task_started_removes_its_worktree_and_branch(repo):
    run = scripted(repo, [task(1), task(2, deps=[1])])
    ahead, _made_at = through_gate(run, {"1": FAILS, "2": DID[2]}, code=1)
    assert not ahead.exists() and not making.pending(ahead)
    assert "baton/" in git(repo, "branch", "--list", "baton/*/1-*")
    assert git(repo, "branch", "--list", "baton/*/2-*") == ""
    assert git(repo, "worktree", "list").count("\n") == 1  # task 1's, beside the checkout


def test_a_worktree_made_ahead_that_someone_wrote_in_is_kept_then_committed_on_discard(
        repo, baton):
    run = scripted(repo, [task(1), task(2, deps=[1])])
    ahead, _made_at = through_gate(run, {"1": FAILS, "2": DID[2]}, code=1,
                                   meanwhile=lambda path: (path / "notes.txt").write_text("mine\n"))
    assert (ahead / "notes.txt").read_text() == "mine\n"  # never deleted
    assert git(repo, "branch", "--list", "baton/*/2-*") != ""
    discarded = baton("discard", "2")
    assert discarded.returncode == 0, discarded.stdout + discarded.stderr
    [kept] = [e["data"]["kept"] for e in run.events()
              if e["kind"] == "task.discarded" and e["task"] == 2]
    assert kept and git(repo, "show", f"{kept}:notes.txt") == "mine"  # committed to a ref
    collected = baton("gc")
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert not ahead.exists() and git(repo, "show", f"{kept}:notes.txt") == "mine"
    assert not making.pending(ahead)  # its marker went with it


# -- move_ahead on real git, without a conductor ----------------------------------------------

def ahead_of(tmp_path: Path) -> tuple[Path, Path, str, str, making.Making]:
    """A repository, a worktree made ahead at its first commit, and a second commit on
    another branch (the integration tip, moved on) changing a.txt and adding b.txt."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    first = g(repo, "rev-parse", "HEAD")
    g(repo, "checkout", "-q", "-b", "integration")
    write(repo, "a.txt", "a, landed\n")
    write(repo, "b.txt", "b\n")
    g(repo, "add", "-A")
    g(repo, "commit", "-q", "-m", "landed")
    tip = g(repo, "rev-parse", "HEAD")
    g(repo, "checkout", "-q", "main")
    path = tmp_path / "wts" / "2-b"
    work = making.Making(path)
    work.begin()
    wt.add_worktree(repo, path, "baton/p/2-b", first, making=work, whole=True)
    work.hold(first)
    assert making.held(path) == first and (path / "a.txt").read_text() == "a\n"
    return repo, path, first, tip, making.Making(path)


def test_move_ahead_brings_the_branch_and_its_files_to_the_new_tip(tmp_path):
    repo, path, first, tip, work = ahead_of(tmp_path)
    work.begin()
    assert wt.move_ahead(path, first, tip, work) == tip
    assert g(repo, "rev-parse", "refs/heads/baton/p/2-b") == tip
    assert (path / "a.txt").read_text() == "a, landed\n" and (path / "b.txt").exists()
    assert g(path, "status", "--porcelain") == ""


def test_move_ahead_never_overwrites_an_edit_made_in_the_folder_meanwhile(tmp_path):
    repo, path, first, tip, work = ahead_of(tmp_path)
    write(path, "a.txt", "someone's edit\n")
    work.begin()
    assert wt.move_ahead(path, first, tip, work) == first  # stays where it was cut
    assert (path / "a.txt").read_text() == "someone's edit\n"
    assert g(repo, "rev-parse", "refs/heads/baton/p/2-b") == first


def test_move_ahead_leaves_a_branch_someone_moved_alone(tmp_path):
    repo, path, first, tip, work = ahead_of(tmp_path)
    write(path, "c.txt", "c\n")
    g(path, "add", "c.txt")
    g(path, "commit", "-q", "-m", "someone's commit")
    mine = g(path, "rev-parse", "HEAD")
    work.begin()
    assert wt.move_ahead(path, first, tip, work) == first
    assert g(repo, "rev-parse", "refs/heads/baton/p/2-b") == mine
    assert (path / "c.txt").exists() and not (path / "b.txt").exists()


def test_a_worktree_made_ahead_counts_as_unfinished_until_its_task_starts(tmp_path):
    _repo, path, first, _tip, _work = ahead_of(tmp_path)
    assert making.pending(path) and making.untouched(path)  # no one's work: gc may undo it
    write(path, "notes.txt", "mine\n")
    assert not making.untouched(path)  # now someone's: committed to a ref before any cleanup
    (path / "notes.txt").unlink()
    marker = json.loads(path.with_name(path.name + ".preparing").read_text())
    assert marker["ahead"] == first and marker["procs"] == []
    again = making.Making(path)
    again.begin()  # its task starts: a kill from here on undoes it
    assert making.held(path) is None and making.pending(path)
    again.done()
    assert not making.pending(path)
