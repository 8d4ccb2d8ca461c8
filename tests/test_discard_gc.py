"""`baton discard N [--with-dependents]` and `baton gc [--dry-run]` through the real CLI.

The rule under test: nothing Baton does deletes a branch or a worktree with unmerged work
unless the person discards that task, and before any cleanup a worktree's state is committed
to a ref of its own (`refs/baton/…`).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, write_plan
from helpers import scripted_kit
from helpers.run_kit import states

pytestmark = pytest.mark.slow


def use_agent(repo: Path, baton, script: dict) -> None:
    script_path = repo.parent / "agent-script.json"
    script_path.write_text(json.dumps(script))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script_path)]
    (repo / "baton.toml").write_text(f"[players.custom.bot]\ncommand = {json.dumps(argv)}\n")
    git(repo, "add", "baton.toml")
    git(repo, "commit", "-q", "-m", "baton.toml")
    assert baton("trust").returncode == 0


def task(id: int, title: str, deps: tuple[int, ...] = ()) -> dict:
    return {"id": id, "title": title, "prompt": f"do {title}", "player": "bot",
            "depends_on": list(deps)}


def done(path: str, text: str) -> list[dict]:
    return [{"write": path, "content": text}, {"report": "done", "summary": f"wrote {path}"}]


run_plan = functools.partial(scripted_kit.run_plan, goal="Cleanup goal")


def branches(baton) -> dict[int, str]:
    return {t["id"]: t["branch"] for t in baton.json("status", "--json")["tasks"]}


def worktrees(baton) -> dict[int, Path]:
    """Each task's worktree, from the run log (`task.started` events)."""
    out = baton("log", "--json")
    assert out.returncode == 0
    found = {}
    for line in out.stdout.splitlines():
        event = json.loads(line)
        if event["kind"] == "task.started":
            found[event["task"]] = Path(event["data"]["workdir"])
    return found


def refs(repo: Path, prefix: str = "refs/baton/") -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", prefix).split()


def branch_exists(repo: Path, branch: str) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
                          cwd=repo, capture_output=True).returncode == 0


def tree_files(repo: Path, commit: str) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", commit).splitlines()


# --------------------------------------------------------------------------- discard

def test_discard_a_landed_task_requires_its_dependents(repo, baton):
    # task 1 reports once task 2's worktree is made ahead (a sibling of its own): had task 1
    # landed first, task 2 could take its worktree over, and there would be none to keep
    ahead = {"await": "../2-uses-base/.git"}
    use_agent(repo, baton, {"1": [ahead, *done("base.txt", "b\n")],
                            "2": done("uses.txt", "u\n"), "3": done("free.txt", "f\n")})
    run_plan(repo, baton, [task(1, "Base"), task(2, "Uses base", (1,)), task(3, "Free")])
    assert states(baton) == {1: "landed", 2: "landed", 3: "landed"}
    trees, names = worktrees(baton), branches(baton)
    assert trees[2] == trees[1].parent / "2-uses-base"
    # a leftover the agent did not commit is part of the state kept (in task 2's worktree:
    # nothing starts after it, so it is never taken over)
    (trees[2] / "scratch.txt").write_text("left behind\n")

    refused = baton("discard", "1")
    assert refused.returncode == 2
    assert "task 1 has landed and task 2 depends on it: discard" in refused.stderr, refused.stderr
    assert "--with-dependents" in refused.stderr
    assert states(baton) == {1: "landed", 2: "landed", 3: "landed"}
    assert refs(repo) == []

    result = baton("discard", "1", "--with-dependents")
    assert result.returncode == 0, result.stderr
    assert "task 1 (Base) discarded" in result.stdout
    assert "task 2 (Uses base) discarded" in result.stdout
    assert states(baton) == {1: "discarded", 2: "discarded", 3: "landed"}

    kept = refs(repo, "refs/baton/cleanup-goal/discarded/")
    assert len(kept) == 2
    one = next(r for r in kept if r.rsplit("/", 1)[1].startswith("1-"))
    two = next(r for r in kept if r.rsplit("/", 1)[1].startswith("2-"))
    assert one in result.stdout and two in result.stdout
    assert "base.txt" in tree_files(repo, one)
    assert {"uses.txt", "scratch.txt"} <= set(tree_files(repo, two))
    # discarding keeps the worktrees and branches until gc; the handoff skips them
    assert (trees[2] / "scratch.txt").exists()
    assert all(branch_exists(repo, name) for name in names.values())
    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "merged task 3" in merged.stdout
    assert "task 1" not in merged.stdout and "task 2" not in merged.stdout
    assert (repo / "free.txt").exists()
    assert not (repo / "base.txt").exists() and not (repo / "uses.txt").exists()

    again = baton("discard", "1")
    assert again.returncode == 2 and "already discarded" in again.stderr


def test_discard_a_leaf_task_needs_no_flag(repo, baton):
    use_agent(repo, baton, {"1": done("base.txt", "b\n"), "2": done("uses.txt", "u\n")})
    run_plan(repo, baton, [task(1, "Base"), task(2, "Uses base", (1,))])
    result = baton("discard", "2")
    assert result.returncode == 0, result.stderr
    assert states(baton) == {1: "landed", 2: "discarded"}


def test_discard_a_failed_task(repo, baton):
    use_agent(repo, baton, {
        "1": [{"write": "half.txt", "content": "half done\n"},
              {"report": "failed", "reason": "the tests will not pass"}],
        "2": done("ok.txt", "ok\n"),
    })
    run_plan(repo, baton, [task(1, "Broken"), task(2, "Fine")], expect=1)
    assert states(baton) == {1: "failed", 2: "landed"}
    status = baton.json("status", "--json")
    assert "tests will not pass" in status["tasks"][0]["reason"]

    result = baton("discard", "1")
    assert result.returncode == 0, result.stderr
    assert states(baton) == {1: "discarded", 2: "landed"}
    kept = refs(repo, "refs/baton/cleanup-goal/discarded/")
    assert len(kept) == 1 and kept[0].rsplit("/", 1)[1].startswith("1-")
    assert "half.txt" in tree_files(repo, kept[0])
    # with the failed task discarded, the plan completes at the handoff
    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "have not landed" not in merged.stdout
    assert baton.json("status", "--json")["plan"]["state"] == "merged"


def test_discard_a_merged_task_is_refused(repo, baton):
    use_agent(repo, baton, {"*": done("x.txt", "x\n")})
    run_plan(repo, baton, [task(1, "X")])
    assert baton("handoff", "merge").returncode == 0
    result = baton("discard", "1")
    assert result.returncode == 2 and "already merged" in result.stderr
    assert states(baton) == {1: "merged"}


# --------------------------------------------------------------------------- gc

@pytest.fixture
def mixed(repo, baton):
    """Task 1 merged, 2 landed but unmerged (conflict), 3 discarded, 4 failed."""
    use_agent(repo, baton, {
        "1": done("one.txt", "1\n"),
        "2": done("README.md", "agent readme\n"),
        "3": done("three.txt", "3\n"),
        "4": [{"write": "four.txt", "content": "4\n"}, {"report": "failed", "reason": "no"}],
    })
    run_plan(repo, baton, [task(1, "One"), task(2, "Two"), task(3, "Three"), task(4, "Four")],
             expect=1)
    (repo / "README.md").write_text("person readme\n")
    git(repo, "commit", "-q", "-am", "person edits README")
    assert baton("discard", "3").returncode == 0
    merge = baton("handoff", "merge")
    assert merge.returncode == 1, merge.stdout + merge.stderr
    assert states(baton) == {1: "merged", 2: "landed", 3: "discarded", 4: "failed"}
    return repo


def test_gc_dry_run_lists_what_would_go_and_removes_nothing(mixed, baton):
    repo = mixed
    trees = worktrees(baton)
    refs_before = refs(repo)
    listed_before = git(repo, "worktree", "list", "--porcelain")

    result = baton("gc", "--dry-run")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"would remove {trees[1]} (merged" in out
    assert f"would remove {trees[3]} (discarded" in out
    assert str(trees[2]) not in out and str(trees[4]) not in out
    assert "would free" in out and "in 2 worktrees" in out
    size = out.split("would free ")[1].split(" in ")[0]
    number, unit = size.split()
    assert float(number) > 0 and unit in ("B", "KB", "MB", "GB")
    for path in trees.values():
        assert (path / ".git").exists()
    assert refs(repo) == refs_before
    assert git(repo, "worktree", "list", "--porcelain") == listed_before


def test_gc_removes_only_merged_or_discarded_worktrees_each_kept_under_a_ref(mixed, baton):
    repo = mixed
    trees = worktrees(baton)
    names = branches(baton)
    (trees[1] / "notes.txt").write_text("uncommitted note\n")

    result = baton("gc")
    assert result.returncode == 0, result.stderr
    assert f"removed {trees[1]}" in result.stdout and f"removed {trees[3]}" in result.stdout
    assert "freed" in result.stdout and "in 2 worktrees" in result.stdout

    assert not trees[1].exists() and not trees[3].exists()
    # never unmerged work: the landed-but-unmerged and the failed task keep worktree and branch
    assert (trees[2] / "README.md").read_text() == "agent readme\n"
    assert (trees[4] / "four.txt").read_text() == "4\n"
    assert branch_exists(repo, names[2]) and branch_exists(repo, names[4])
    listed = git(repo, "worktree", "list", "--porcelain")
    assert str(trees[2]) in listed and str(trees[4]) in listed
    assert str(trees[1]) not in listed and str(trees[3]) not in listed

    kept = refs(repo, "refs/baton/cleanup-goal/gc/")
    assert sorted(r.rsplit("/", 1)[1].split("-")[0] for r in kept) == ["1", "3"]
    one = next(r for r in kept if r.rsplit("/", 1)[1].startswith("1-"))
    assert {"one.txt", "notes.txt"} <= set(tree_files(repo, one))
    assert git(repo, "show", f"{one}:notes.txt") == "uncommitted note"
    # the state is untouched by gc: what was merged stays merged, the rest stays as it was
    assert states(baton) == {1: "merged", 2: "landed", 3: "discarded", 4: "failed"}

    second = baton("gc")
    assert second.returncode == 0
    assert "in no worktrees" in second.stdout
    assert (trees[2] / ".git").exists() and (trees[4] / ".git").exists()


def test_gc_with_nothing_merged_removes_nothing(repo, baton):
    use_agent(repo, baton, {"*": done("x.txt", "x\n")})
    run_plan(repo, baton, [task(1, "X"), task(2, "Y")])
    trees = worktrees(baton)
    result = baton("gc")
    assert result.returncode == 0
    assert "in no worktrees" in result.stdout
    assert "only merged or discarded work is collected" in result.stdout
    assert all((p / ".git").exists() for p in trees.values())
    assert refs(repo) == []


def wait_for(baton, predicate, timeout: float = 60):
    import time

    deadline = time.monotonic() + timeout
    while True:
        status = baton.json("status", "--json")
        if predicate(status):
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.3)


def test_discard_with_dependents_refuses_while_a_dependent_runs(repo, baton):
    use_agent(repo, baton, {"1": done("base.txt", "b\n"),
                            "2": [{"progress": "working"}, {"hang": True}]})
    plan = write_plan(repo.parent / "plan.json", [task(1, "Base"), task(2, "Uses base", (1,))],
                      goal="Cleanup goal")
    assert baton("plan", "--from", str(plan)).returncode == 0
    assert baton("run", "--approve", "--detach").returncode == 0
    try:
        wait_for(baton, lambda s: [t["state"] for t in s["tasks"]] == ["landed", "running"])
        result = baton("discard", "1", "--with-dependents")
        assert result.returncode == 2, result.stdout
        assert "task 2 is running" in result.stderr and "baton stop 2" in result.stderr
        assert states(baton) == {1: "landed", 2: "running"}
        assert refs(repo) == []
    finally:
        baton("stop", "2")
        wait_for(baton, lambda s: s["conductor"] is None)
    assert states(baton)[2] != "running"
    result = baton("discard", "1", "--with-dependents")
    assert result.returncode == 0, result.stderr
    assert states(baton) == {1: "discarded", 2: "discarded"}


def test_discard_counts_tasks_cut_after_it_landed(repo, baton):
    """One at a time, task 2's branch is cut from the integration branch after task 1 landed:
    it carries task 1's work, so discarding task 1 alone would still bring it home."""
    use_agent(repo, baton, {"1": done("one.txt", "1\n"), "2": done("two.txt", "2\n")})
    toml = repo / "baton.toml"
    toml.write_text(toml.read_text() + "\n[limits]\nmax_parallel = 1\n")
    git(repo, "commit", "-q", "-am", "one at a time")
    assert baton("trust").returncode == 0
    run_plan(repo, baton, [task(1, "One"), task(2, "Two")])
    names = branches(baton)
    assert subprocess.run(["git", "merge-base", "--is-ancestor", names[1], names[2]],
                          cwd=repo).returncode == 0

    refused = baton("discard", "1")
    assert refused.returncode == 2, refused.stdout
    assert "task 2 holds its work" in refused.stderr and "--with-dependents" in refused.stderr
    assert states(baton) == {1: "landed", 2: "landed"}

    # task 2 committed on top of task 1, not the other way round: it discards alone
    assert baton("discard", "2").returncode == 0
    assert states(baton) == {1: "landed", 2: "discarded"}
    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert (repo / "one.txt").exists() and not (repo / "two.txt").exists()



ORDERED_AGENT = """
import os, subprocess, sys, time
from pathlib import Path
task, marks = os.environ["BATON_TASK"], Path(sys.argv[1])

def wait(ok):
    deadline = time.monotonic() + 120
    while not ok():
        assert time.monotonic() < deadline, "waited too long"
        time.sleep(0.05)

def task_one_landed():
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)",
                           "refs/heads/baton/*/integration"],
                          capture_output=True, text=True).stdout.split()
    return any(subprocess.run(["git", "cat-file", "-e", f"{r}:1.txt"]).returncode == 0
               for r in refs)

if task == "1":
    wait(lambda: (marks / "2-started").exists())  # task 2's worktree is cut: it lacks 1.txt
elif task == "2":
    (marks / "2-started").touch()
    wait(task_one_landed)  # task 2 lands after task 1 all the same
Path(f"{task}.txt").write_text(task + "\\n")
subprocess.run(["baton", "report", "done", "--summary", "wrote " + task], check=True)
"""


def test_discard_counts_only_tasks_whose_branch_holds_its_work(repo, baton, tmp_path):
    """Task 2 was cut before task 1 landed and landed after it: it does not hold task 1's
    work, so it is not taken along. Task 3 depends only on task 2, but was cut after task 1
    landed: its branch holds task 1's work (merging it would bring that home), so discarding
    task 1 alone is refused, naming task 3 as holding its work, not as depending on it."""
    agent = tmp_path / "ordered_agent.py"
    agent.write_text(ORDERED_AGENT)
    argv = [sys.executable, str(agent), str(tmp_path)]
    (repo / "baton.toml").write_text(f"[players.custom.bot]\ncommand = {json.dumps(argv)}\n"
                                     "[limits]\nmax_parallel = 2\n")
    git(repo, "add", "baton.toml")
    git(repo, "commit", "-q", "-m", "baton.toml")
    assert baton("trust").returncode == 0
    run_plan(repo, baton, [task(1, "One"), task(2, "Two"), task(3, "Three", deps=(2,))],
             real=True)  # the agent program's timing is the point: `baton run`, processes
    names = branches(baton)

    def holds(a: int, b: int) -> bool:
        return subprocess.run(["git", "merge-base", "--is-ancestor", names[a], names[b]],
                              cwd=repo).returncode == 0

    assert not holds(1, 2) and holds(1, 3) and holds(2, 3)
    refused = baton("discard", "1")
    assert refused.returncode == 2, refused.stdout
    assert "task 1 has landed and task 3 holds its work (cut" in refused.stderr, refused.stderr
    assert "depends on it" not in refused.stderr and "depend on it" not in refused.stderr
    assert "--with-dependents" in refused.stderr
    refused = baton("discard", "2")
    assert refused.returncode == 2, refused.stderr
    assert "has landed and task 3 depends on it:" in refused.stderr, refused.stderr
    assert baton("discard", "1", "--with-dependents").returncode == 0
    assert states(baton) == {1: "discarded", 2: "landed", 3: "discarded"}
