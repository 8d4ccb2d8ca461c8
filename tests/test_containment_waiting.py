"""Waiting tasks' branches held to Baton's record: a task that failed, was held at a checkpoint
or is done before landing waits with its branch at the commit its waiting event recorded
(`tip`). An agent moving or deleting such a sibling's branch has it put back (and is flagged),
so the sibling lands its own work; a commit the person makes in the waiting task's own
worktree stands. Hostile agents are real programs (tests/agents/ref_mover.py) in real git
repositories with the real `baton`.
"""

from __future__ import annotations

import subprocess

import pytest

from baton_tui.run import refguard
from baton_tui.workspace import Workspace
from helpers.containment_kit import DETECT_ONLY, assert_put_back, branch_ref, flags, integration_ref
from helpers.run_kit import (
    events, git, load_plan, program, script_agent, task, task_status, wait_idle,
    wait_state, write_config,
)

def _waiting_tip(baton, task_id: int, kind: str) -> str:
    tips = [e["data"].get("tip") for e in events(baton)
            if e["kind"] == kind and e["task"] == task_id]
    assert tips and tips[-1], f"no tip on task {task_id}'s {kind}"
    return tips[-1]


def _files(repo, ref: str) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", ref).splitlines()


def _wait_done(baton) -> None:
    """The detached run ended (its conductor gone)."""
    wait_idle(baton, timeout=180)


def _failed_one_then_mover(repo, baton, tmp_path, step: str, extra: str = DETECT_ONLY) -> None:
    """Task 1 commits `one.txt` and fails (its first attempt only); task 2, once task 1 has
    failed, moves task 1's branch with `step`, then finishes. Protected (`extra` empty), one
    agent at a time: task 2's view is made once task 1 waits."""
    go = tmp_path / "go"
    write_config(repo, {
        "one": program("ref_mover.py", "main", "commit:one.txt", f"fail-first:{tmp_path / 'once'}"),
        "mover": program("ref_mover.py", "main", f"wait:{go}", step)}, extra=extra,
        limits=None if extra else {"max_parallel": 1})
    load_plan(baton, [task(1, "One", player="one"), task(2, "Mover", player="mover")],
              approve=True)
    assert baton("run", "--detach").returncode == 0
    wait_state(baton, 1, "failed", timeout=120)
    go.write_text("go\n")
    wait_state(baton, 2, "landed", timeout=120)
    _wait_done(baton)


@pytest.mark.parametrize("step, how", [("rewind-task:1", "was moved to"),
                                       ("delete-task:1", "was deleted")])
def test_an_agent_moving_a_failed_siblings_branch_has_it_put_back_and_the_retry_lands_its_work(
        repo, baton, tmp_path, step, how):
    """Task 1 failed with its work committed; task 2's agent rewinds or deletes task 1's
    branch. After task 2's attempt the branch is back at the commit `task.failed` recorded,
    task 2 is flagged naming it (task 1 is not), and `baton retry 1` lands task 1's own work."""
    _failed_one_then_mover(repo, baton, tmp_path, step)
    branch = branch_ref(baton, 1)
    tip = _waiting_tip(baton, 1, "task.failed")
    assert "one.txt" in _files(repo, tip)
    assert_put_back(repo, baton, branch, tip, how)
    result = baton("retry", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    wait_state(baton, 1, "landed", timeout=120)
    _wait_done(baton)
    assert "one.txt" in _files(repo, integration_ref(repo))
    assert len([e for e in events(baton) if e["kind"] == "run.repaired"]) == 1
    landed = [e["data"] for e in events(baton) if e["kind"] == "task.landed" and e["task"] == 1]
    assert subprocess.run(["git", "merge-base", "--is-ancestor", tip, landed[-1]["tip"]],
                          cwd=repo).returncode == 0


def test_an_agent_rewinding_a_branch_held_at_a_checkpoint_has_it_put_back_and_yes_lands_it(
        repo, baton, tmp_path):
    """Guarded: task 1 finished without asking at its checkpoint, so it is held before landing,
    its work committed by Baton. Task 2's agent rewinds task 1's branch (Baton's commit
    dropped): it is put back at the commit `task.checkpoint` recorded, task 2 is flagged, and
    when the person answers yes task 1 lands its own work."""
    go = tmp_path / "go"
    plain = script_agent(tmp_path, "plain", {"1": [
        {"write": "held.txt", "content": "held work\n"}, {"report": "done", "summary": "one"}]})
    write_config(repo, {"plain": plain,
                        "mover": program("ref_mover.py", "main", f"wait:{go}", "rewind-task:1")},
                 extra=DETECT_ONLY)
    load_plan(baton, [task(1, "One", player="plain", checkpoint=True),
                      task(2, "Mover", player="mover")], approve=True)
    assert baton("run", "--detach").returncode == 0
    held = wait_state(baton, 1, "checkpoint", timeout=120)
    assert held["checkpoint"]["what"].startswith("finished without asking first")
    tip = _waiting_tip(baton, 1, "task.checkpoint")
    assert "held.txt" in _files(repo, tip)
    go.write_text("go\n")
    wait_state(baton, 2, "landed", timeout=120)
    _wait_done(baton)
    branch = branch_ref(baton, 1)
    assert git(repo, "rev-parse", branch) == tip
    flagged = flags(baton, 2, "ref")
    assert flagged and branch.removeprefix("refs/heads/") in flagged[0]["detail"], flagged
    assert "held.txt" not in _files(repo, integration_ref(repo))
    result = baton("checkpoint-answer", "1", "yes")
    assert result.returncode == 0, result.stdout + result.stderr
    wait_state(baton, 1, "landed", timeout=120)
    _wait_done(baton)
    assert "held.txt" in _files(repo, integration_ref(repo))
    assert len([e for e in events(baton) if e["kind"] == "run.repaired"]) == 1
    assert not flags(baton, 1, "ref")


def _failed_one(repo, baton, tmp_path) -> tuple[Workspace, str]:
    """Task 1 failed with `one.txt` committed; returns the workspace and its worktree."""
    write_config(repo, {"one": program("ref_mover.py", "main", "commit:one.txt",
                                       f"fail-first:{tmp_path / 'once'}")})
    load_plan(baton, [task(1, "One", player="one")], approve=True)
    baton("run", timeout=180)
    failed = task_status(baton, 1)
    assert failed["state"] == "failed", failed
    ws = Workspace(repo)
    workdir = ws.store.latest_attempt(ws.store.current_plan().id, 1).spec["cwd"]
    return ws, workdir


@pytest.mark.parametrize("then", ["retry", "done"])
def test_the_persons_commit_in_a_failed_tasks_worktree_stands(repo, baton, tmp_path, then):
    """The person fixes failed task 1 by hand in its worktree and commits: the check finds its
    branch moved, reads the move in the worktree's own HEAD log, and leaves it (no repair, no
    flag) — while a move made anywhere else afterwards is put back to the person's commit.
    `baton retry 1` (or `baton done 1`) then lands the person's fix with the task's work."""
    ws, workdir = _failed_one(repo, baton, tmp_path)
    plan = ws.store.current_plan()
    branch = branch_ref(baton, 1)
    tip = _waiting_tip(baton, 1, "task.failed")
    with open(f"{workdir}/fix.txt", "w") as fh:
        fh.write("fixed by hand\n")
    git(workdir, "add", "fix.txt")
    git(workdir, "commit", "-q", "-m", "my fix")
    mine = git(workdir, "rev-parse", "HEAD")
    assert git(repo, "rev-parse", branch) == mine != tip
    assert refguard.hold_branches(ws, plan) == []
    assert git(repo, "rev-parse", branch) == mine
    git(repo, "update-ref", branch, tip)  # elsewhere: not the worktree's own move
    moved = refguard.hold_branches(ws, plan)
    assert [(m.ref, m.expected, m.found) for m in moved] == [(branch, mine, tip)]
    assert git(repo, "rev-parse", branch) == mine
    repaired = [e["data"] for e in events(baton) if e["kind"] == "run.repaired"]
    assert [(r["ref"], r["commit"]) for r in repaired] == [(branch, mine)]
    result = baton(then, "1")
    assert result.returncode == 0, result.stdout + result.stderr
    wait_state(baton, 1, "landed", timeout=120)
    _wait_done(baton)
    files = _files(repo, integration_ref(repo))
    assert "fix.txt" in files and "one.txt" in files
    assert not flags(baton, 1, "ref")
    assert len([e for e in events(baton) if e["kind"] == "run.repaired"]) == 1


def test_a_waiting_task_starts_again_as_its_own(repo, baton, tmp_path):
    """Once a waiting task starts again its branch is its own: the fold holds nothing for it
    while it runs, and a retried task's own commits are never put back."""
    from baton_tui.core.events import EventKind
    from baton_tui.core.views import Folder

    ws, _workdir = _failed_one(repo, baton, tmp_path)
    plan = ws.store.current_plan()
    folder = Folder().feed(ws.store.events(plan.id))
    assert folder.view(1).must_hold == _waiting_tip(baton, 1, "task.failed")
    ws.store.append(plan.id, 1, EventKind.TASK_QUEUED, {"by": "retry"})
    folder = Folder().feed(ws.store.events(plan.id))
    assert folder.view(1).must_hold is not None  # queued: still waiting
    ws.store.append(plan.id, 1, EventKind.TASK_STARTED, {"attempt": 99, "player": "one"})
    assert Folder().feed(ws.store.events(plan.id)).view(1).must_hold is None


def test_an_agent_cannot_move_a_waiting_siblings_branch_where_the_os_allows(
        repo, baton, tmp_path):
    """In the agent's read-only view a failed sibling's branch is a read-only file: its
    `git update-ref` of it is refused, nothing is put back and the sibling's branch is as
    its failure left it."""
    from baton_tui.runners import readonly

    if why := readonly.available():
        pytest.skip(f"no read-only view here ({why}): detection only")
    _failed_one_then_mover(repo, baton, tmp_path, "rewind-task:1", extra="")
    log = baton("logs", "2").stdout
    assert "rewind-task:1: refused" in log, log
    assert git(repo, "rev-parse", branch_ref(baton, 1)) == _waiting_tip(baton, 1, "task.failed")
    assert not task_status(baton, 2)["flags"], task_status(baton, 2)
    assert not [e for e in events(baton) if e["kind"] == "run.repaired"]


def test_held_lists_waiting_branches_after_the_persons_and_before_the_landed(repo, baton, tmp_path):
    """`held` (what the read-only view locks, in order, up to HELD_MAX): the integration
    branch, the person's, the waiting tasks' branches, then the landed ones' — never the
    branch of the task about to start."""
    ws, _workdir = _failed_one(repo, baton, tmp_path)
    plan = ws.store.current_plan()
    held = refguard.held(ws, plan)
    branch = branch_ref(baton, 1)
    assert held[:3] == [integration_ref(repo), "refs/heads/main", branch], held
    assert branch not in refguard.held(ws, plan, branch.removeprefix("refs/heads/"))


def test_batons_own_moves_of_a_waiting_branch_never_trip_the_hold(repo, baton, tmp_path):
    """What Baton itself does to a waiting task's branch stands: a retry's refresh after a
    landing conflict (committed and merged in the task's worktree) is not put back; a
    discarded task's branch is no longer held, and `gc` then removes its worktree without a
    repair."""
    from baton_tui.gitops import landing

    ws, workdir = _failed_one(repo, baton, tmp_path)
    plan = ws.store.current_plan()
    branch, integration = branch_ref(baton, 1), integration_ref(repo)
    (repo / "other.txt").write_text("landed meanwhile\n")
    git(repo, "add", "other.txt")
    tree = git(repo, "write-tree")
    git(repo, "reset", "-q")
    (repo / "other.txt").unlink()
    git(repo, "update-ref", integration,
        git(repo, "commit-tree", tree, "-p", git(repo, "rev-parse", integration), "-m", "other"))
    with open(f"{workdir}/left.txt", "w") as fh:
        fh.write("left by the agent\n")
    assert landing.refresh(workdir, integration) == []
    refreshed = git(repo, "rev-parse", branch)
    assert refreshed != _waiting_tip(baton, 1, "task.failed")
    assert refguard.hold_branches(ws, plan) == []
    assert git(repo, "rev-parse", branch) == refreshed
    result = baton("discard", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert branch not in refguard.held(ws, plan)
    git(repo, "update-ref", branch, _waiting_tip(baton, 1, "task.failed"))
    assert refguard.hold_branches(ws, plan) == []
    result = baton("gc")
    assert result.returncode == 0, result.stdout + result.stderr
    assert refguard.hold_branches(ws, plan) == []
    assert not [e for e in events(baton) if e["kind"] == "run.repaired"]


def test_only_where_its_own_worktree_left_the_branch_stands(repo, baton, tmp_path):
    """The worktree's HEAD log is followed while HEAD is on the task's branch there: after two
    commits of the person's, a rewind (made elsewhere) to the first is put back to the second;
    commits the person makes on another branch checked out in that worktree leave the task's
    branch held where it was."""
    ws, workdir = _failed_one(repo, baton, tmp_path)
    plan = ws.store.current_plan()
    branch = branch_ref(baton, 1)
    commits = []
    for name in ("a.txt", "b.txt"):
        with open(f"{workdir}/{name}", "w") as fh:
            fh.write(f"{name}\n")
        git(workdir, "add", name)
        git(workdir, "commit", "-q", "-m", name)
        commits.append(git(workdir, "rev-parse", "HEAD"))
    git(repo, "update-ref", branch, commits[0])
    moved = refguard.hold_branches(ws, plan)
    assert [(m.expected, m.found) for m in moved] == [(commits[1], commits[0])]
    assert git(repo, "rev-parse", branch) == commits[1]
    git(workdir, "checkout", "-q", "-b", "mine")
    with open(f"{workdir}/c.txt", "w") as fh:
        fh.write("c\n")
    git(workdir, "add", "c.txt")
    git(workdir, "commit", "-q", "-m", "on my branch")
    assert refguard.hold_branches(ws, plan) == []
    assert git(repo, "rev-parse", branch) == commits[1]
    git(workdir, "checkout", "-q", branch.removeprefix("refs/heads/"))
    git(workdir, "reset", "-q", "--hard", commits[0])  # the person's own rewind, in its worktree
    assert refguard.hold_branches(ws, plan) == []
    assert git(repo, "rev-parse", branch) == commits[0]


def test_a_worktree_git_file_pointed_elsewhere_names_no_log_that_counts(repo, baton, tmp_path):
    """A waiting task's `.git` pointed at a folder outside git's own `worktrees/` (one anyone
    may write, holding a HEAD log that claims a move): the move is put back all the same."""
    ws, workdir = _failed_one(repo, baton, tmp_path)
    plan = ws.store.current_plan()
    branch = branch_ref(baton, 1)
    tip = _waiting_tip(baton, 1, "task.failed")
    planted = git(repo, "commit-tree", git(repo, "rev-parse", f"{tip}^{{tree}}"), "-p", tip,
                  "-m", "planted")
    fake = tmp_path / "fake-admin"
    (fake / "logs").mkdir(parents=True)
    (fake / "logs" / "HEAD").write_text("x\n" * 4096 + f"{tip} {planted} Person <p@x> 0 +0000"
                                        "\tcommit: mine\n")
    with open(f"{workdir}/.git", "w") as fh:
        fh.write(f"gitdir: {fake}\n")
    refguard._LOGS.clear()  # as a new process reads it
    git(repo, "update-ref", branch, planted)
    moved = refguard.hold_branches(ws, plan)
    assert [(m.expected, m.found) for m in moved] == [(tip, planted)]
    assert git(repo, "rev-parse", branch) == tip
