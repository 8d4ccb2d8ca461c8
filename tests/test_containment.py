"""Agents contained (issue 28): a task's agent changes nothing but its own worktree and its own
branch. Each boundary is attacked for real by a hostile agent program (tests/agents/), in real
git repositories, with the real `baton` and the real store; what Baton prevents, puts back and
flags is what is pinned here.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers.containment_kit import (
    DETECT_ONLY, flags, integration_ref, run_past_a_failure,
)
from helpers.run_kit import (
    git, load_plan, program, script_agent, task, task_status, wait_for, write_config,
)


# -- the integration branch -------------------------------------------------------------------
def test_an_agent_rewinding_the_integration_branch_is_put_back_and_flagged(repo, baton, tmp_path):
    """Task 2's agent drops task 1's landing off the integration branch (`git update-ref`).
    It is put back before task 2 lands, task 2 is flagged naming the branch, and task 3,
    cut after, has task 1's work."""
    plain = script_agent(tmp_path, "plain", {"1": [
        {"write": "one.txt", "content": "task one\n"}, {"report": "done", "summary": "one"}]})
    write_config(repo, {"plain": plain,
                        "rewinder": program("ref_mover.py", "main", "rewind-integration"),
                        "checker": program("ref_mover.py", "main", "require:one.txt")},
                 extra=DETECT_ONLY)
    load_plan(baton, [task(1, "One", player="plain"),
                      task(2, "Rewinds", player="rewinder", deps=[1]),
                      task(3, "Needs one", player="checker", deps=[2])])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [task_status(baton, n)["state"] for n in (1, 2, 3)] == ["landed"] * 3
    flagged = flags(baton, 2, "ref")
    assert flagged and "integration" in flagged[0]["detail"] and "put back" in \
        flagged[0]["detail"], task_status(baton, 2)
    assert not flags(baton, 1, "ref") and not flags(baton, 3, "ref")
    files = git(repo, "ls-tree", "-r", "--name-only", integration_ref(repo)).splitlines()
    assert "one.txt" in files
    text = baton("status").stdout
    assert "⚑ ref" in text


# -- the person's branch ----------------------------------------------------------------------

def _moved_person(repo: Path, baton, tmp_path, step: str, extra: str = "") -> dict:
    before = git(repo, "rev-parse", "refs/heads/main")
    write_config(repo, {"mover": program("ref_mover.py", "main", step)}, extra=extra)
    load_plan(baton, [task(1, "Moves your branch", player="mover")])
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(repo, "rev-parse", "refs/heads/main") == before  # put back
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    t1 = task_status(baton, 1)
    assert t1["state"] == "landed", t1
    flagged = [f for f in t1["flags"] if f["kind"] == "ref"]
    assert flagged and flagged[0]["detail"].startswith("main was "), t1["flags"]
    assert not [f for f in t1["flags"] if f["kind"] == "outside"], t1["flags"]
    return flagged[0]


def test_an_agent_moving_your_branch_to_another_tree_is_put_back(repo, baton, tmp_path):
    assert "put back" in _moved_person(repo, baton, tmp_path, "person-new-tree",
                                       DETECT_ONLY)["detail"]


def test_an_agent_moving_your_branch_to_the_same_tree_is_flagged_too(repo, baton, tmp_path):
    assert "put back" in _moved_person(repo, baton, tmp_path, "person-same-tree",
                                       DETECT_ONLY)["detail"]


def test_an_agent_deleting_your_branch_is_undone(repo, baton, tmp_path):
    flag = _moved_person(repo, baton, tmp_path, "delete-person", DETECT_ONLY)
    assert "main was deleted while it ran: put back" in flag["detail"]
    assert "delete-person: deleted" in baton("logs", "1").stdout


def test_an_agent_cannot_delete_your_branch_where_the_os_allows(repo, baton, tmp_path):
    from baton_tui.runners import readonly

    if why := readonly.available():
        pytest.skip(f"no read-only view here ({why}): detection only")
    before = git(repo, "rev-parse", "refs/heads/main")
    write_config(repo, {"mover": program("ref_mover.py", "main", "delete-person")})
    load_plan(baton, [task(1, "Deletes your branch", player="mover")])
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "delete-person: refused" in baton("logs", "1").stdout
    assert git(repo, "rev-parse", "refs/heads/main") == before
    assert not task_status(baton, 1)["flags"]


def test_your_own_commits_and_branch_deletions_during_a_run_flag_nothing(repo, baton, tmp_path):
    """The person commits in the checkout and deletes a branch of theirs (one git tracks
    upstream, whose config section goes with it) while an agent runs: no flag, and their
    commit stays where they made it."""
    git(repo, "branch", "topic")
    git(repo, "branch", "tracked")
    git(repo, "branch", "-u", "main", "tracked")
    running, go = tmp_path / "running", tmp_path / "go"
    write_config(repo, {"waiter": program("ref_mover.py", "main", f"signal:{running}",
                                          f"wait:{go}")})
    load_plan(baton, [task(1, "Waits", player="waiter")])
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.update(
        result=baton("run", "--approve", timeout=180)))
    runner.start()
    try:
        wait_for(running.exists, 120, what="the agent to start")
        git(repo, "branch", "-D", "topic")
        git(repo, "branch", "-D", "tracked")
        (repo / "mine.txt").write_text("the person's work\n")
        git(repo, "add", "mine.txt")
        git(repo, "commit", "-q", "-m", "the person's commit")
        mine = git(repo, "rev-parse", "HEAD")
    finally:
        go.write_text("go\n")
        runner.join(200)
    result = outcome["result"]
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(repo, "rev-parse", "refs/heads/main") == mine
    t1 = task_status(baton, 1)
    assert t1["state"] == "landed" and not t1["flags"], t1


# -- processes --------------------------------------------------------------------------------
def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_child_that_respawns_on_sigterm_does_not_outlive_the_task(repo, baton, tmp_path):
    """The agent's child answers SIGTERM by starting a new `setsid` process that ignores
    SIGTERM: the process born while the tree was being ended is ended too."""
    pidfile, ticks = tmp_path / "respawned.pid", tmp_path / "ticks"
    write_config(repo, {"agent": program("respawner.py", str(pidfile), str(ticks))})
    load_plan(baton, [task(1)])
    result = baton("run", "--approve", timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    respawned = int(wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), 30,
                             what="the child to respawn"))
    wait_for(lambda: not _alive(respawned), timeout=30, what="the respawned process to end")
    t1 = task_status(baton, 1)
    assert t1["state"] == "landed" and not t1["flags"], t1


FORGER = """
import pathlib, subprocess, sys
sys.stdin.read()
log = pathlib.Path(sys.argv[1]) / ".git" / "logs" / "HEAD"
try:
    open(log, "a").write("forged\\n")
    print("head log: written", flush=True)
except OSError as exc:
    print(f"head log: refused ({exc.strerror})", flush=True)
pathlib.Path("mine.txt").write_text("mine")
subprocess.run(["git", "add", "mine.txt"], check=True)
subprocess.run(["git", "commit", "-qm", "agent commit"], check=True)
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "tried"]).returncode)
"""


def test_your_checkouts_head_log_is_read_only_to_agents_where_the_os_allows(repo, baton):
    """What the checkout's HEAD log records counts as the person's doing: an agent cannot
    append to it (and pass a move of your branch as yours), while its own git still works."""
    import sys

    from baton_tui.runners import readonly

    if why := readonly.available():
        pytest.skip(f"no read-only view here ({why}): detection only")
    write_config(repo, {"agent": [sys.executable, "-c", FORGER, str(repo)]})
    load_plan(baton, [task(1, "Forger")])
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "head log: refused (Read-only file system)" in baton("logs", "1").stdout
    assert "forged" not in (repo / ".git" / "logs" / "HEAD").read_text()
    t1 = task_status(baton, 1)
    assert t1["state"] == "landed" and not t1["flags"], t1


# -- sibling tasks' places in Baton's home ----------------------------------------------------
def _wt_file(task_id: int, name: str) -> Path:
    import os

    worktrees = Path(os.environ["BATON_HOME"]) / "worktrees"
    return next(worktrees.glob(f"*/*/{task_id}-*")) / name


def test_an_agent_cannot_write_a_siblings_worktree_or_prompt_where_the_os_allows(
        repo, baton, tmp_path):
    """Task 2's agent writes into task 1's worktree, git's folder for it and its prompt while
    task 1 runs: all refused (Baton's home and git's `worktrees/` are read-only to it, but its
    own places); both land their own work only."""
    from baton_tui.runners import readonly

    if why := readonly.available():
        pytest.skip(f"no read-only view here ({why}): detection only")
    running, done = tmp_path / "running", tmp_path / "done"
    write_config(repo, {"waiter": program("ref_mover.py", "main", f"signal:{running}",
                                          f"wait:{done}"),
                        "writer": program("sibling_writer.py", f"wait:{running}", "worktree",
                                          "admin", "prompt", f"signal:{done}")})
    load_plan(baton, [task(1, "Victim", player="waiter"), task(2, "Writer", player="writer")])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    log = baton("logs", "2").stdout
    assert "worktree injected.txt: refused (Read-only file system)" in log, log
    assert "prompt prompt.md: refused (Read-only file system)" in log, log
    assert "admin injected: refused (Read-only file system)" in log, log
    assert "written" not in log, log
    assert [task_status(baton, n)["state"] for n in (1, 2)] == ["landed"] * 2
    assert not task_status(baton, 1)["flags"] and not task_status(baton, 2)["flags"]
    files = git(repo, "ls-tree", "-r", "--name-only", integration_ref(repo)).splitlines()
    assert "injected.txt" not in files and "own-work.txt" in files


def test_a_write_into_a_quiet_siblings_worktree_and_prompt_is_flagged_on_both(
        repo, baton, tmp_path):
    """Without the read-only view: task 1 failed (its worktree waits for a retry); task 2's
    agent then plants a file in it and edits its prompt. Task 2 is flagged naming task 1 and
    the files; task 1 is flagged naming task 2, so a retry never lands the file unseen."""
    go = tmp_path / "go"
    write_config(repo, {"failer": program("ref_mover.py", "main", "require:missing.txt"),
                        "writer": program("sibling_writer.py", f"wait:{go}", "worktree",
                                          "prompt")}, extra=DETECT_ONLY)
    load_plan(baton, [task(1, "Victim", player="failer"), task(2, "Writer", player="writer")])
    run_past_a_failure(baton, go)
    log = baton("logs", "2").stdout
    assert "worktree injected.txt: written" in log and "prompt prompt.md: written" in log, log
    assert _wt_file(1, "injected.txt").exists()
    writer = flags(baton, 2, "sibling")
    assert writer and "task 1" in writer[0]["detail"], task_status(baton, 2)
    assert "injected.txt" in writer[0]["detail"] and "prompt.md of attempt" in \
        writer[0]["detail"], writer
    victim = flags(baton, 1, "sibling")
    assert victim and "task 2" in victim[0]["detail"] and "injected.txt" in \
        victim[0]["detail"], task_status(baton, 1)
    assert "⚑ sibling" in baton("status").stdout


def test_a_failed_siblings_own_files_flag_nothing(repo, baton, tmp_path):
    """The same two tasks, the second writing only its own worktree: no sibling flag. The
    failed task's files were written by its own agent, and by its check, which Baton ran
    after its agent ended while the other task's agent ran."""
    go = tmp_path / "go"
    write_config(repo, {"failer": program("sibling_writer.py"),
                        "writer": program("sibling_writer.py", f"wait:{go}")},
                 extra=DETECT_ONLY)
    load_plan(baton, [task(1, "Fails its check", player="failer",
                           check="echo built > check-output.txt; false"),
                      task(2, "Own work", player="writer")])
    run_past_a_failure(baton, go)
    assert task_status(baton, 2)["state"] == "landed"
    assert _wt_file(1, "own-work.txt").exists() and _wt_file(1, "check-output.txt").exists()
    assert not flags(baton, 1, "sibling") and not flags(baton, 2, "sibling")
