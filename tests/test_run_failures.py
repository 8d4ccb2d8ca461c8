"""Failures: each fails visibly, independent work still lands, dependents are blocked — end to
end with real agent processes, and on the real conductor with scripted agents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baton_tui.run import control

from helpers.run_kit import (
    branches, events, git, kinds, load_plan, program, script_agent, status, task, tree_files,
    write_config,
)
from helpers.scripted_kit import Scripted, reached


def failed_event(evs: list[dict], task_id: int) -> dict:
    return [e for e in evs if e["kind"] == "task.failed" and e.get("task") == task_id][-1]


def test_failed_tasks_do_not_stop_independent_ones_and_block_their_dependents(
        repo, baton, tmp_path):
    agent = script_agent(tmp_path, "f", {
        "1": [{"print": "tail-line-one: cannot parse config"},
              {"report": "failed", "summary": "", "reason": "config format unknown"}],
        "2": [{"write": "half.txt", "content": "half\n"}, {"print": "Traceback: boom-two"},
              {"exit": 1}],
        "3": [{"write": "quiet.txt", "content": "q\n"}, {"print": "last words of three"}],
        "4": [{"sleep": 1.5}, {"write": "sibling.txt", "content": "s\n"},
              {"report": "done", "summary": "sibling fine"}],
        "5": [{"report": "done", "summary": "never runs"}],
        "6": [{"report": "done", "summary": "never runs"}],
    })
    write_config(repo, {"agent": agent}, limits={"max_parallel": 4})
    load_plan(baton, [task(1, "Reports failure"), task(2, "Crashes"), task(3, "Never reports"),
                      task(4, "Independent sibling"), task(5, "After one", deps=[1]),
                      task(6, "After four and two", deps=[4, 2])])

    result = baton("run", "--approve", timeout=90)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED" in result.stdout

    st = status(baton)
    by_id = {t["id"]: t for t in st["tasks"]}
    assert {i: by_id[i]["state"] for i in by_id} == {
        1: "failed", 2: "failed", 3: "failed", 4: "landed", 5: "queued", 6: "queued"}
    assert by_id[5]["blocked_by"] == 1
    assert by_id[6]["blocked_by"] == 2
    assert by_id[4]["blocked_by"] is None

    assert "config format unknown" in by_id[1]["reason"]
    assert "exited (status 1) without reporting" in by_id[2]["reason"]
    assert "exited (status 0) without reporting" in by_id[3]["reason"]

    evs = events(baton)
    # The tail of each agent's output is attached to its failure.
    assert "tail-line-one: cannot parse config" in failed_event(evs, 1)["data"]["output"]
    assert "Traceback: boom-two" in failed_event(evs, 2)["data"]["output"]
    assert "last words of three" in failed_event(evs, 3)["data"]["output"]
    for blocked in (5, 6):
        assert "task.started" not in kinds(evs, blocked)

    # The sibling landed; nothing of the failed tasks did; their branches are kept with the work.
    files = tree_files(repo, st["plan"]["integration_branch"])
    assert files.get("sibling.txt") == "s"
    assert not {"half.txt", "quiet.txt"} & set(files)
    names = branches(repo)
    for tid, name in ((2, "crashes"), (3, "never-reports")):
        [branch] = [b for b in names if b.endswith(f"/{tid}-{name}")]
        assert by_id[tid]["branch"] == branch
    # A failed task's worktree keeps the agent's files for inspection.
    worktree = next(e for e in evs if e["kind"] == "task.started" and e["task"] == 2)
    assert (Path(worktree["data"]["workdir"]) / "half.txt").read_text() == "half\n"
    assert st["conductor"] is None


def test_agent_that_prints_garbage_still_works(repo, baton, tmp_path):
    write_config(repo, {"agent": program("garbage.py")})
    load_plan(baton, [task(1, "Garbage")])
    result = baton("run", "--approve", timeout=60)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    st = status(baton)
    assert st["tasks"][0]["state"] == "landed"
    assert tree_files(repo, st["plan"]["integration_branch"])["garbage-survivor.txt"] == \
        "still here"
    logs = baton("logs", "1")
    assert logs.returncode == 0
    assert "carriage returns" in logs.stdout
    assert len(logs.stdout) > 3 * 1024 * 1024
    assert baton("log").returncode == 0  # the event log stays readable


@pytest.mark.slow
def test_hanging_agent_is_stopped_after_stall_and_fails_with_branch_kept(repo, baton, tmp_path):
    agent = script_agent(tmp_path, "h", {
        "1": [{"write": "partial.txt", "content": "partial\n"}, {"print": "thinking..."},
              {"hang": True}],
        "2": [{"write": "fine.txt", "content": "fine\n"}, {"report": "done", "summary": "ok"}],
    })
    write_config(repo, {"agent": agent}, limits={"stall": "3s"})
    load_plan(baton, [task(1, "Hangs"), task(2, "Fine")])

    result = baton("run", "--approve", timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    st = status(baton)
    by_id = {t["id"]: t for t in st["tasks"]}
    assert by_id[2]["state"] == "landed"
    assert by_id[1]["state"] == "failed"
    assert "silent for" in by_id[1]["reason"]
    evs = events(baton)
    assert any(e["kind"] == "task.flagged" and e["task"] == 1 for e in evs)
    assert "thinking..." in failed_event(evs, 1)["data"]["output"]
    assert by_id[1]["branch"] in branches(repo)
    workdir = Path(next(e for e in evs if e["kind"] == "task.started" and e["task"] == 1)
                   ["data"]["workdir"])
    assert (workdir / "partial.txt").read_text() == "partial\n"
    # The agent's process group is gone.
    import subprocess
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(tmp_path / "h-script.json") not in ps


@pytest.mark.slow
def test_stop_kills_the_whole_group_even_when_the_agent_ignores_sigterm(repo, baton, tmp_path):
    from helpers.run_kit import alive, program, wait_for, wait_idle, wait_state

    pidfile = tmp_path / "pids"
    write_config(repo, {"agent": program("stubborn.py", str(pidfile))})
    load_plan(baton, [task(1, "Stubborn")])
    assert baton("run", "--approve", "--detach").returncode == 0
    wait_state(baton, 1, "running")
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), what="the agent's pids")
    agent_pid, helper_pid = map(int, pidfile.read_text().split())
    assert baton("stop", "1").returncode == 0
    st = wait_idle(baton, timeout=40)
    assert st["tasks"][0]["state"] == "failed"
    assert "stopped" in st["tasks"][0]["reason"]
    wait_for(lambda: not alive(agent_pid) and not alive(helper_pid), timeout=10,
             what="the agent and its helper to be gone")


# On the real conductor with scripted agents (`helpers.scripted_kit`): the same finishing and
# landing, without an agent process; the runs above are the end-to-end ones.
def test_landing_conflict_fails_one_task_and_leaves_nothing_half_merged(repo):
    run = Scripted(repo)
    run.config()
    run.plan([task(1, "Writes one"), task(2, "Writes two")])
    # Task 2 writes once task 1 landed: its landing then conflicts.
    code = run.run({
        "1": [{"write": "shared.txt", "content": "one\n"}, {"write": "only1.txt", "content": "1"},
              {"report": "done", "summary": "one"}],
        "2": [{"until": reached(1, "landed")}, {"write": "shared.txt", "content": "two\n"},
              {"write": "only2.txt", "content": "2"}, {"report": "done", "summary": "two"}]})
    assert code == 1

    st = run.status()
    by_id = {t["id"]: t for t in st["tasks"]}
    assert (by_id[1]["state"], by_id[2]["state"]) == ("landed", "failed")
    assert "conflict" in by_id[2]["reason"] and "shared.txt" in by_id[2]["reason"]
    assert failed_event(run.events(), 2)["data"]["conflicts"] == ["shared.txt"]

    files = tree_files(repo, st["plan"]["integration_branch"])
    assert files["shared.txt"] == "one"
    assert "only1.txt" in files and "only2.txt" not in files
    for text in files.values():
        assert "<<<<<<<" not in text and ">>>>>>>" not in text
    # The failing task's branch is kept, with its own version of the file.
    assert git(repo, "show", f"{by_id[2]['branch']}:shared.txt") == "two"
    assert git(repo, "show", f"{by_id[2]['branch']}:only2.txt") == "2"
    # Nothing touched the person's checkout or branch.
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(repo, "rev-parse", "main") == st["plan"]["base_commit"]
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"


def test_research_writes_are_discarded_not_a_failure_and_land_nowhere(repo):
    """Research may run commands that write (caches, reports) in its throwaway worktree: the
    task is still done, and nothing it wrote reaches any branch or the person's checkout."""
    run = Scripted(repo)
    run.config()
    run.plan([task(1, "Look", mode="research"), task(2, "Build"),
              task(3, "Uses findings", deps=[1])])
    code = run.run({
        "1": [{"write": "stray-notes.md", "content": "oops\n"},
              {"append": "README.md", "content": "edited by research\n"},
              {"report": "done", "summary": "looked around"}],
        "2": [{"write": "build.txt", "content": "b\n"}, {"report": "done", "summary": "built"}],
        "3": [{"report": "done", "summary": "used the findings"}]})
    assert code == 0
    by_id = {t["id"]: t for t in run.status()["tasks"]}
    assert by_id[1]["state"] == "done"
    assert [by_id[2]["state"], by_id[3]["state"]] == ["landed", "landed"]

    for branch in branches(repo):
        files = tree_files(repo, branch)
        assert "stray-notes.md" not in files, branch
        assert "edited by research" not in files.get("README.md", ""), branch
    assert git(repo, "status", "--porcelain") == "?? baton.toml"
    # Kept for inspection under Baton's own ref, not a branch; its worktree is gone.
    evs = run.events()
    done = next(e for e in evs if e["kind"] == "task.done" and e["task"] == 1)
    kept = done["data"]["kept"]
    assert kept.startswith("refs/baton/") and "stray-notes.md" in done["data"]["discarded"]
    assert git(repo, "show", f"{kept}:stray-notes.md") == "oops"
    started = next(e for e in evs if e["kind"] == "task.started" and e["task"] == 1)
    assert not Path(started["data"]["workdir"]).exists()


def test_a_report_decides_not_the_exit_status(repo):
    run = Scripted(repo)
    run.config()
    run.plan([task(1)])
    code = run.run({"1": [{"progress": "PROGRESS-NOTE halfway"},
                          {"write": "done.txt", "content": "d"},
                          {"report": "done", "summary": "finished, then crashed on cleanup"},
                          {"exit": 3}]})
    assert code == 0
    st = run.status()
    assert st["tasks"][0]["state"] == "landed"
    assert st["tasks"][0]["progress"] == "PROGRESS-NOTE halfway"
    assert st["tasks"][0]["summary"] == "finished, then crashed on cleanup"
    assert tree_files(repo, st["plan"]["integration_branch"])["done.txt"] == "d"


def test_retry_after_a_landing_conflict_can_land(repo):
    run = Scripted(repo)
    run.config()
    run.plan([task(1), task(2)])
    code = run.run({
        "1": [{"write": "shared.txt", "content": "one\n"}, {"report": "done", "summary": "one"}],
        "2": [{"until": reached(1, "landed")}, {"write": "shared.txt", "content": "two\n"},
              {"report": "done", "summary": "two"}]})
    assert code == 1
    assert run.states() == {1: "landed", 2: "failed"}
    # Retried with feedback, its agent resolves the conflict.
    code = run.conduct({"2": [{"write": "shared.txt", "content": "one\ntwo\n"},
                              {"report": "done", "summary": "resolved"}]},
                       lambda ws: control.retry_task(ws, 2, "keep both lines"))
    assert code == 0
    st = run.status()
    assert [t["state"] for t in st["tasks"]] == ["landed", "landed"]
    assert git(repo, "show", f"{st['plan']['integration_branch']}:shared.txt") == "one\ntwo"
    # The retry's prompt named the conflicted file it had to resolve, and the feedback.
    prompts = sorted(Path(os.environ["BATON_HOME"]).rglob("prompt.md"), key=os.path.getmtime)
    last = prompts[-1].read_text()
    assert "conflict" in last and "shared.txt" in last and "keep both lines" in last
