"""End-to-end lifecycle: detached runs, status from another process, Baton killed, Ctrl-C,
stop, retry, logs — real conductor, real shims, real agents, real git."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from helpers.run_kit import (
    alive, branches, events, git, kill, kinds, load_plan, popen_baton, script_agent, status,
    task, tree_files, wait_for, wait_idle, wait_state, write_config,
)

ORDER = {"draft": 0, "queued": 1, "running": 2, "done": 3, "landed": 4}


def work(name: str, seconds: float) -> list[dict]:
    return [{"print": f"working on {name}"}, {"sleep": seconds},
            {"write": f"{name}.txt", "content": f"{name}\n"},
            {"report": "done", "summary": f"{name} written"}]


@pytest.mark.slow
def test_detach_returns_at_once_and_status_follows_the_run_from_another_process(
        repo, baton, tmp_path):
    agent = script_agent(tmp_path, "d", {"1": work("one", 3), "2": work("two", 3),
                                          "3": work("three", 0.5)})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1), task(2), task(3, deps=[1, 2])])

    started = time.monotonic()
    result = baton("run", "--approve", "--detach", timeout=30)
    returned = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    assert "conductor running" in result.stdout
    st = status(baton)
    assert isinstance(st["conductor"]["pid"], int) and alive(st["conductor"]["pid"])
    assert all(t["state"] not in ("landed",) for t in st["tasks"]), (returned, st["tasks"])
    # Views attach to the live conductor: a foreground `baton run` and `baton logs 1 -f`.
    view = popen_baton(repo, "run")
    follower = popen_baton(repo, "logs", "1", "-f")

    # A second process reads the store while the run is live: always exit 0, states only advance.
    seen: dict[int, list[str]] = {1: [], 2: [], 3: []}
    while True:
        current = baton("status", "--json")
        assert current.returncode == 0, current.stderr
        import json
        doc = json.loads(current.stdout)
        for t in doc["tasks"]:
            if not seen[t["id"]] or seen[t["id"]][-1] != t["state"]:
                seen[t["id"]].append(t["state"])
        assert baton("status").returncode == 0
        if doc["conductor"] is None:
            break
        assert time.monotonic() - started < 90, seen
    for tid, trail in seen.items():
        assert trail[-1] == "landed", seen
        ranks = [ORDER[s] for s in trail]
        assert ranks == sorted(ranks), seen
    assert "running" in seen[1] or "running" in seen[2], seen
    assert len(seen[3]) > 1, seen  # task 3 was seen waiting before it landed
    out, err = view.communicate(timeout=30)
    assert view.returncode == 0, out + err
    assert "#3 Task 3: landed" in out
    out, err = follower.communicate(timeout=30)
    assert follower.returncode == 0, err
    assert "working on one" in out and "wrote one.txt" in out


@pytest.mark.slow
def test_logs_follow_waits_for_a_task_that_has_not_started_yet(repo, baton, tmp_path):
    agent = script_agent(tmp_path, "w", {"1": work("one", 2), "2": work("two", 0)})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1), task(2, deps=[1])])
    assert baton("run", "--approve", "--detach", timeout=30).returncode == 0
    follower = popen_baton(repo, "logs", "2", "-f")
    early = baton("logs", "2")  # without -f there is nothing to show yet
    assert early.returncode == 2 and "task 2 has not run yet" in early.stderr
    out, err = follower.communicate(timeout=60)
    assert follower.returncode == 0, err
    assert "task 2 has not started yet: waiting for it" in err
    assert "working on two" in out and "wrote two.txt" in out
    wait_idle(baton)
    # Nothing runs now: a task that is not in the plan is said so at once, not waited for.
    result = baton("logs", "9", "-f", timeout=10)
    assert result.returncode == 2 and "task 9 has not run yet" in result.stderr


@pytest.mark.slow
def test_sigkill_of_the_conductor_then_resume_loses_nothing_and_starts_nothing_twice(
        repo, baton, tmp_path):
    # While Baton is dead, task 2's agent finishes (resume must collect it) and task 3's runs on
    # (resume must reattach to it).
    agent = script_agent(tmp_path, "k", {
        "1": work("one", 0.2), "2": work("two", 2), "3": work("three", 7),
        "4": work("four", 0.5), "5": work("five", 0.5)})
    write_config(repo, {"agent": agent}, limits={"max_parallel": 3})
    load_plan(baton, [task(1), task(2), task(3), task(4, deps=[1]), task(5, deps=[2, 4])])

    assert baton("run", "--approve", "--detach").returncode == 0
    wait_state(baton, 1, "landed", timeout=40)
    st = wait_for(lambda: (lambda s: s if {t["id"]: t["state"] for t in s["tasks"]}[2]
                           == "running" else None)(status(baton)), what="task 2 running")
    pid = st["conductor"]["pid"]
    kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(pid), what="the conductor to die")
    st = status(baton)
    assert st["conductor"] is None
    # The agents outlived Baton: their shims keep running them.
    assert {t["id"]: t["state"] for t in st["tasks"]}[2] == "running"

    wait_for(lambda: "task.reported" in kinds(events(baton), 2), timeout=30,
             what="task 2 to report while no conductor runs")
    time.sleep(0.5)  # its agent exits after the report
    st = status(baton)
    assert {t["id"]: t["state"] for t in st["tasks"]}[3] == "running"
    result = baton("resume", timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    st = status(baton)
    assert [t["state"] for t in st["tasks"]] == ["landed"] * 5
    evs = events(baton)
    for tid in range(1, 6):
        assert kinds(evs, tid).count("task.started") == 1, (tid, kinds(evs, tid))
        assert kinds(evs, tid).count("task.landed") == 1, (tid, kinds(evs, tid))
    assert kinds(evs).count("conductor.started") == 2
    files = tree_files(repo, st["plan"]["integration_branch"])
    for name in ("one", "two", "three", "four", "five"):
        assert files[f"{name}.txt"] == name


@pytest.mark.slow
def test_ctrl_c_pauses_running_tasks_exits_130_and_resume_finishes_them(repo, baton, tmp_path):
    agent = script_agent(tmp_path, "i", {"1": work("one", 6), "2": work("two", 6),
                                          "3": work("three", 0.2)})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1), task(2), task(3, deps=[1])])

    view = popen_baton(repo, "run", "--approve")
    try:
        wait_for(lambda: all(t["state"] == "running" for t in status(baton)["tasks"][:2]),
                 timeout=40, what="tasks 1 and 2 running")
        view.send_signal(signal.SIGINT)
        out, err = view.communicate(timeout=60)
    finally:
        if view.poll() is None:
            kill(view.pid)
    assert view.returncode == 130, out + err
    st = status(baton)
    states = {t["id"]: t["state"] for t in st["tasks"]}
    assert states == {1: "paused", 2: "paused", 3: "queued"}
    assert st["conductor"] is None

    result = baton("resume", timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    st = status(baton)
    assert [t["state"] for t in st["tasks"]] == ["landed"] * 3
    evs = events(baton)
    for tid in (1, 2):
        assert "task.paused" in kinds(evs, tid)
        assert kinds(evs, tid)[-1] == "task.landed"
    files = tree_files(repo, st["plan"]["integration_branch"])
    assert files["one.txt"] == "one" and files["three.txt"] == "three"


def test_sigterm_to_a_foreground_run_pauses_and_exits_130(repo, baton, tmp_path):
    write_config(repo, {"agent": script_agent(tmp_path, "t", {"1": work("one", 20)})})
    load_plan(baton, [task(1)])
    view = popen_baton(repo, "run", "--approve")
    try:
        wait_state(baton, 1, "running", timeout=40)
        view.send_signal(signal.SIGTERM)
        out, err = view.communicate(timeout=60)
    finally:
        if view.poll() is None:
            kill(view.pid)
    assert view.returncode == 130, out + err
    st = status(baton)
    assert st["tasks"][0]["state"] == "paused" and st["conductor"] is None
    ps = os.popen("ps -eo args").read()
    assert str(tmp_path / "t-script.json") not in ps  # the agent was stopped, state saved


def test_a_repo_with_no_git_identity_still_commits_and_lands(repo, baton, tmp_path, monkeypatch):
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    assert git(repo, "config", "user.email", check=False) == ""
    # A hook that would fail every commit: Baton's own commits run no hooks.
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho hook ran >&2\nexit 1\n")
    hook.chmod(0o755)

    write_config(repo, {"agent": script_agent(tmp_path, "n", {
        "1": work("one", 0), "2": work("two", 0)})})
    load_plan(baton, [task(1), task(2, deps=[1])])
    result = baton("run", "--approve", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    st = status(baton)
    assert [t["state"] for t in st["tasks"]] == ["landed", "landed"]
    integ = st["plan"]["integration_branch"]
    assert tree_files(repo, integ)["two.txt"] == "two"
    authors = git(repo, "log", "--format=%an <%ae>", f"main..{integ}").splitlines()
    assert authors and all(a == "Baton <baton@localhost>" for a in authors), authors


@pytest.mark.slow
def test_stop_a_hanging_task_then_retry_with_feedback(repo, baton, tmp_path):
    agent = script_agent(tmp_path, "s", {
        "1": [{"write": "draft.txt", "content": "draft\n"}, {"print": "stuck"}, {"hang": True}],
    })
    fixed = script_agent(tmp_path, "s2", {
        "1": [{"write": "draft.txt", "content": "final\n"},
              {"report": "done", "summary": "finished on retry"}],
    })
    write_config(repo, {"agent": agent, "fixed": fixed})
    load_plan(baton, [task(1, "Gets stuck")])

    assert baton("run", "--approve", "--detach").returncode == 0
    wait_state(baton, 1, "running")
    wait_for(lambda: "stuck" in baton("logs", "1").stdout, what="the agent's output")
    result = baton("stop", "1")
    assert result.returncode == 0, result.stderr
    st = wait_idle(baton, timeout=40)
    t1 = st["tasks"][0]
    assert t1["state"] == "failed" and "stopped" in t1["reason"]
    assert t1["branch"] in branches(repo)
    ps = os.popen("ps -eo args").read()
    assert str(tmp_path / "s-script.json") not in ps

    # `baton logs N` prints the agent's output.
    logs = baton("logs", "1")
    assert logs.returncode == 0 and "stuck" in logs.stdout

    # Reassign the failed task and retry it with feedback.
    assert baton("task-player", "1", "fixed").returncode == 0
    assert baton("trust").returncode == 0
    result = baton("retry", "1", "--feedback", "FEEDBACK-42: finish the draft")
    assert result.returncode == 0, result.stdout + result.stderr
    st = wait_idle(baton, timeout=40)
    assert st["tasks"][0]["state"] == "landed", st["tasks"][0]
    home = Path(os.environ["BATON_HOME"])
    prompts = sorted(home.glob("runs/*/*/task-1/attempt-*/prompt.md"),
                     key=lambda p: int(p.parent.name.split("-")[1]))
    assert len(prompts) == 2
    assert "FEEDBACK-42: finish the draft" in prompts[-1].read_text()
    assert "FEEDBACK-42" not in prompts[0].read_text()
    assert tree_files(repo, st["plan"]["integration_branch"])["draft.txt"] == "final"
    logs = baton("logs", "1").stdout
    assert "stuck" in logs and "wrote draft.txt" in logs
