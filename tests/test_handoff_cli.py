"""`baton handoff review|merge` through the real CLI, after a real run of scripted agents.

Each test runs a plan of scripted agents in a real git repository — the real conductor in
this process, the scripts played by the scripted runner; one test runs it as `baton run` with
the demo agent (`baton_tui.demo.agent`) as a process — then reads and merges the landed
task branches as a person would.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import pytest

from conftest import git, write_plan
from helpers import scripted_kit
from helpers.run_kit import states

pytestmark = pytest.mark.slow


def use_agent(repo: Path, baton, script: dict, *, commit: bool = True) -> None:
    """A custom player `bot` running the scripted agent on `script`, trusted."""
    script_path = repo.parent / "agent-script.json"
    script_path.write_text(json.dumps(script))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script_path)]
    (repo / "baton.toml").write_text(f"[players.custom.bot]\ncommand = {json.dumps(argv)}\n")
    if commit:
        git(repo, "add", "baton.toml")
        git(repo, "commit", "-q", "-m", "baton.toml")
    trusted = baton("trust")
    assert trusted.returncode == 0, trusted.stderr


def task(id: int, title: str, deps: tuple[int, ...] = (), **extra) -> dict:
    return {"id": id, "title": title, "prompt": f"do {title}", "player": "bot",
            "depends_on": list(deps), **extra}


run_plan = functools.partial(scripted_kit.run_plan, goal="Handoff goal")


def branch_of(baton, task_id: int) -> str:
    tasks = baton.json("status", "--json")["tasks"]
    return next(t["branch"] for t in tasks if t["id"] == task_id)


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    import subprocess

    return subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=repo).returncode == 0


def done(summary: str, *steps: dict) -> list[dict]:
    return [*steps, {"report": "done", "summary": summary}]


# --------------------------------------------------------------------------- review

@pytest.fixture
def landed_three(repo, baton):
    """Three landed tasks: 1 and 2 independent, 3 built on 1."""
    use_agent(repo, baton, {
        "1": done("alpha", {"write": "alpha.txt", "content": "a1\na2\n"}),
        "2": done("beta", {"write": "beta.txt", "content": "b1\n"},
                  {"append": "README.md", "content": "beta notes\n"}),
        "3": done("gamma", {"write": "gamma.txt", "content": "g1\ng2\ng3\n"}),
    })
    run_plan(repo, baton, [task(1, "Alpha"), task(2, "Beta"), task(3, "Gamma", (1,))])
    assert states(baton) == {1: "landed", 2: "landed", 3: "landed"}
    return repo


def test_review_has_a_section_per_task_with_files_and_stats(landed_three, baton):
    result = baton("handoff", "review")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "3 landed tasks · 4 files · +7 −0 · onto main" in out
    sections = out.split("── task ")[1:]
    assert [s.split(":")[0] for s in sections] == ["1", "2", "3"]
    assert "1 file, +2 −0: alpha.txt" in sections[0]
    assert "2 files, +2 −0: README.md, beta.txt" in sections[1]
    assert "1 file, +3 −0: gamma.txt" in sections[2]
    # the combined diff follows the sections
    assert "+++ b/gamma.txt" in out and "+beta notes" in out


def test_review_one_task_shows_only_its_own_changes(landed_three, baton):
    """Task 3 was cut from the integration branch after task 1 landed; its section must not
    repeat task 1's alpha.txt."""
    result = baton("handoff", "review", "--task", "3")
    assert result.returncode == 0, result.stderr
    assert "── task 3: Gamma" in result.stdout
    assert "── task 1" not in result.stdout
    assert "+++ b/gamma.txt" in result.stdout
    assert "alpha.txt" not in result.stdout and "beta.txt" not in result.stdout

    data = baton.json("handoff", "review", "--task", "3", "--json")
    assert data["id"] == 3 and data["files"] == ["gamma.txt"]
    assert (data["added"], data["deleted"]) == (3, 0)


def test_review_json_shape(landed_three, baton):
    data = baton.json("handoff", "review", "--json")
    base = git(landed_three, "rev-parse", "HEAD")
    assert data["base"] == base
    assert data["integration"] == "baton/handoff-goal/integration"
    assert data["files"] == ["README.md", "alpha.txt", "beta.txt", "gamma.txt"]
    assert data["stats"] == {"files": 4, "added": 7, "deleted": 0}
    assert "+++ b/alpha.txt" in data["diff"]
    assert [t["id"] for t in data["tasks"]] == [1, 2, 3]
    by_id = {t["id"]: t for t in data["tasks"]}
    assert by_id[2]["files"] == ["README.md", "beta.txt"]
    assert by_id[2]["branch"] == "baton/handoff-goal/2-beta"
    for section in data["tasks"]:
        assert set(section) >= {"id", "title", "branch", "files", "added", "deleted", "diff"}


def test_review_of_a_task_that_has_not_landed_is_refused(repo, baton):
    use_agent(repo, baton, {"1": done("ok", {"write": "x.txt", "content": "x\n"}),
                            "2": [{"report": "failed", "reason": "cannot"}]})
    run_plan(repo, baton, [task(1, "Ok"), task(2, "Broken")], expect=1)
    result = baton("handoff", "review", "--task", "2")
    assert result.returncode == 2
    assert "not landed" in result.stderr


# --------------------------------------------------------------------------- merge

def test_merge_in_plan_order_onto_the_recorded_branch(landed_three, baton):
    repo = landed_three
    before = git(repo, "rev-parse", "HEAD")
    result = baton("handoff", "merge")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all landed work is on main" in result.stdout
    subjects = git(repo, "log", "--first-parent", "--format=%s", f"{before}..main").splitlines()
    assert subjects == ["Merge task 3: Gamma", "Merge task 2: Beta", "Merge task 1: Alpha"]
    for tid in (1, 2, 3):
        assert is_ancestor(repo, branch_of(baton, tid), "main")
    assert (repo / "gamma.txt").read_text() == "g1\ng2\ng3\n"
    assert git(repo, "status", "--porcelain") == ""
    assert states(baton) == {1: "merged", 2: "merged", 3: "merged"}
    assert baton.json("status", "--json")["plan"]["state"] == "merged"

    again = baton("handoff", "merge")
    assert again.returncode == 0
    assert git(repo, "rev-parse", "HEAD") == git(repo, "rev-parse", "main")
    assert "already merged" in again.stdout


def test_merge_goes_onto_the_branch_recorded_at_approval(repo, baton):
    """Approved on `feature`: handoff merges onto `feature`, and refuses from `main`."""
    git(repo, "switch", "-q", "-c", "feature")
    use_agent(repo, baton, {"*": done("ok", {"write": "f.txt", "content": "f\n"})})
    run_plan(repo, baton, [task(1, "Feature work")], real=True)  # this file's run end to end
    main_before = git(repo, "rev-parse", "main")

    git(repo, "switch", "-q", "main")
    wrong = baton("handoff", "merge")
    assert wrong.returncode == 2
    assert "wrong branch" in wrong.stderr and "git switch feature" in wrong.stderr
    assert git(repo, "rev-parse", "main") == main_before

    git(repo, "switch", "-q", "feature")
    result = baton("handoff", "merge")
    assert result.returncode == 0, result.stderr
    assert "merged task 1 onto feature" in result.stdout
    assert is_ancestor(repo, branch_of(baton, 1), "feature")
    assert git(repo, "rev-parse", "main") == main_before


@pytest.fixture
def conflicting(repo, baton):
    """Tasks 1 and 3 are clean; task 2 edits README.md, which the person then edits too."""
    use_agent(repo, baton, {
        "1": done("one", {"write": "one.txt", "content": "1\n"}),
        "2": done("readme", {"write": "README.md", "content": "# sample\n\nfrom the agent\n"}),
        "3": done("three", {"write": "three.txt", "content": "3\n"}),
    })
    run_plan(repo, baton, [task(1, "One"), task(2, "Readme"), task(3, "Three")])
    (repo / "README.md").write_text("# sample\n\nfrom the person\n")
    git(repo, "commit", "-q", "-am", "person edits the README after approval")
    return repo


def test_merge_stops_at_a_conflict_with_the_tree_untouched_then_goes_on(conflicting, baton):
    repo = conflicting
    person = git(repo, "rev-parse", "HEAD")
    b1, b2, b3 = (branch_of(baton, i) for i in (1, 2, 3))

    result = baton("handoff", "merge")
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "merged task 1 onto main" in out
    assert "stopped at task 2" in out and "README.md" in out
    assert f"git merge --no-ff {b2}" in out
    assert "baton handoff merge" in out
    # the tree is untouched: only task 1's clean merge happened, nothing half-done
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert git(repo, "rev-parse", "HEAD^1") == person
    assert git(repo, "log", "-1", "--format=%s") == "Merge task 1: One"
    assert (repo / "README.md").read_text() == "# sample\n\nfrom the person\n"
    assert is_ancestor(repo, b1, "HEAD")
    assert not is_ancestor(repo, b2, "HEAD") and not is_ancestor(repo, b3, "HEAD")
    assert not (repo / "three.txt").exists()
    assert states(baton) == {1: "merged", 2: "landed", 3: "landed"}

    # finish task 2 by hand with the named command
    import subprocess

    by_hand = subprocess.run(["git", "merge", "--no-ff", b2], cwd=repo, capture_output=True,
                             text=True)
    assert by_hand.returncode == 1 and "CONFLICT" in by_hand.stdout
    (repo / "README.md").write_text("# sample\n\nfrom the person\nfrom the agent\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "--no-edit")

    again = baton("handoff", "merge")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "task 1 was already merged" in again.stdout
    assert "task 2 was already merged" in again.stdout
    assert "merged task 3 onto main" in again.stdout
    assert is_ancestor(repo, b3, "HEAD") and (repo / "three.txt").read_text() == "3\n"
    assert (repo / "README.md").read_text() == "# sample\n\nfrom the person\nfrom the agent\n"
    assert git(repo, "status", "--porcelain") == ""
    assert states(baton) == {1: "merged", 2: "merged", 3: "merged"}


def test_merge_conflict_at_the_first_task_leaves_head_where_it_was(repo, baton):
    use_agent(repo, baton, {
        "1": done("readme", {"write": "README.md", "content": "agent\n"}),
        "2": done("other", {"write": "other.txt", "content": "o\n"}),
    })
    run_plan(repo, baton, [task(1, "Readme"), task(2, "Other")])
    (repo / "README.md").write_text("person\n")
    git(repo, "commit", "-q", "-am", "diverge")
    head = git(repo, "rev-parse", "HEAD")

    result = baton("handoff", "merge")
    assert result.returncode == 1
    assert "stopped at task 1" in result.stdout and "README.md" in result.stdout
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""
    assert not is_ancestor(repo, branch_of(baton, 2), "HEAD")
    assert states(baton) == {1: "landed", 2: "landed"}


def test_merge_stops_at_a_task_branch_deleted_by_hand_in_one_line(landed_three, baton):
    """A task branch the person deleted stops the merge at that task, as a conflict does:
    exit 1, one line naming the task and its branch, the tasks before it merged and nothing
    after it; restored, the next merge goes on."""
    repo = landed_three
    beta = branch_of(baton, 2)
    tip = git(repo, "rev-parse", beta)
    before = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "-d", f"refs/heads/{beta}")  # as `git branch -D`, worktree or not

    result = baton("handoff", "merge")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["merged task 1 onto main"]
    assert result.stderr.splitlines() == [
        f"baton: stopped at task 2 (Beta): its branch {beta} is gone (deleted?), so it and the "
        "tasks after it were not merged — restore the branch (`git reflog` shows its last "
        "commit) or `baton discard 2`, then `baton handoff merge` again"]
    assert git(repo, "log", "--first-parent", "--format=%s", f"{before}..main").splitlines() \
        == ["Merge task 1: Alpha"]
    assert not is_ancestor(repo, branch_of(baton, 3), "main")
    assert git(repo, "status", "--porcelain") == ""
    assert states(baton) == {1: "merged", 2: "landed", 3: "landed"}

    git(repo, "branch", beta, tip)
    again = baton("handoff", "merge")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.splitlines()[:3] == ["task 1 was already merged",
                                             "merged task 2 onto main", "merged task 3 onto main"]
    assert states(baton) == {1: "merged", 2: "merged", 3: "merged"}


def test_merge_refused_on_a_dirty_tree_but_not_for_untracked_files(landed_three, baton):
    repo = landed_three
    head = git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("# sample\nlocal edit\n")
    dirty = baton("handoff", "merge")
    assert dirty.returncode == 2
    assert "uncommitted changes" in dirty.stderr and "README.md" in dirty.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "README.md").read_text() == "# sample\nlocal edit\n"
    assert states(baton) == {1: "landed", 2: "landed", 3: "landed"}

    # a staged change is just as dirty
    git(repo, "add", "README.md")
    assert baton("handoff", "merge").returncode == 2
    git(repo, "reset", "-q", "--hard")

    (repo / "scratch.txt").write_text("not tracked\n")
    clean = baton("handoff", "merge")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert (repo / "scratch.txt").read_text() == "not tracked\n"
    assert states(baton) == {1: "merged", 2: "merged", 3: "merged"}


def test_merge_refused_on_the_wrong_branch(landed_three, baton):
    repo = landed_three
    git(repo, "switch", "-q", "-c", "elsewhere")
    head = git(repo, "rev-parse", "HEAD")
    result = baton("handoff", "merge")
    assert result.returncode == 2
    assert "wrong branch" in result.stderr and "elsewhere" in result.stderr
    assert "git switch main" in result.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "rev-parse", "main") == head
    assert states(baton) == {1: "landed", 2: "landed", 3: "landed"}

    git(repo, "switch", "-q", "--detach")
    detached = baton("handoff", "merge")
    assert detached.returncode == 2 and "detached" in detached.stderr


def test_merge_before_any_run_is_refused(repo, baton):
    plan = write_plan(repo.parent / "plan.json",
                      [{"id": 1, "title": "T", "prompt": "p", "player": "script",
                        "check": "true"}])
    assert baton("plan", "--from", str(plan)).returncode == 0
    result = baton("handoff", "merge")
    assert result.returncode == 2
    assert "has not run" in result.stderr


# --------------------------------------------------------------------------- approval warning

def _script_plan(repo: Path, baton) -> None:
    plan = write_plan(repo.parent / "plan.json",
                      [{"id": 1, "title": "T", "prompt": "p", "player": "script",
                        "check": "true"}])
    assert baton("plan", "--from", str(plan)).returncode == 0


def test_approve_warns_when_tracked_files_have_uncommitted_changes(repo, baton):
    _script_plan(repo, baton)
    (repo / "README.md").write_text("# sample\nwork in progress\n")
    result = baton("approve")
    assert result.returncode == 0, result.stderr
    assert "warning" in result.stderr and "uncommitted changes" in result.stderr
    assert "agents will not see them" in result.stderr
    assert "warning" not in result.stdout
    assert "approved onto main" in result.stdout
    # the approval records the last commit, not the edit
    status = baton.json("status", "--json")
    assert status["plan"]["approved"] is True
    assert status["plan"]["base_commit"] == git(repo, "rev-parse", "HEAD")


def test_approve_warns_for_a_staged_change_too(repo, baton):
    _script_plan(repo, baton)
    (repo / "new.py").write_text("x = 1\n")
    git(repo, "add", "new.py")
    result = baton("approve")
    assert result.returncode == 0
    assert "uncommitted changes" in result.stderr


def test_approve_does_not_warn_for_untracked_files(repo, baton):
    _script_plan(repo, baton)
    (repo / "scratch.txt").write_text("notes\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("binary\n")
    result = baton("approve")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "approved onto main" in result.stdout


def test_the_warning_is_recorded_with_the_approval(repo, baton):
    _script_plan(repo, baton)
    (repo / "README.md").write_text("dirty\n")
    assert baton("approve").returncode == 0
    approved = [json.loads(line) for line in baton("log", "--json").stdout.splitlines()
                if json.loads(line)["kind"] == "plan.approved"]
    assert len(approved) == 1
    assert any("uncommitted changes" in w for w in approved[0]["data"]["warnings"])


def test_run_approve_warns_too(repo, baton):
    _script_plan(repo, baton)
    (repo / "README.md").write_text("dirty\n")
    result = baton("run", "--approve")
    assert result.returncode == 0, result.stderr
    assert "uncommitted changes" in result.stderr
