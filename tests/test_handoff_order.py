"""Handoff merge order: work a branch carries is merged before it, so each merge is one task."""

from __future__ import annotations

import json
import subprocess

from helpers.scripted_kit import Scripted, reached


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def run_scripted(repo, baton, goal: str, steps: dict, tasks: list[dict]) -> None:
    """Run a plan of `tasks` on player `a`, its `steps` per task id. The run is the set-up
    (what is tested is the handoff of what it landed): the real conductor in this process,
    the steps played by the scripted runner — the same branches, landings and store."""
    kit = Scripted(repo)
    kit.config(players=["a"])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")
    plan = repo.parent / "plan.json"
    plan.write_text(json.dumps({"version": 1, "goal": goal, "tasks": tasks}))
    assert baton("trust").returncode == 0
    assert baton("plan", "--from", str(plan)).returncode == 0
    assert kit.run(steps, timeout=120) == 0


def test_each_merge_brings_only_its_own_task(repo, baton):
    run_scripted(repo, baton, "order", {
        "1": [{"until": reached(3, "landed")}, {"write": "one.txt", "content": "1\n"},
              {"report": "done", "summary": "1"}],
        "2": [{"write": "two.txt", "content": "2\n"}, {"report": "done", "summary": "2"}],
        "3": [{"write": "three.txt", "content": "3\n"}, {"report": "done", "summary": "3"}],
    }, [{"id": 1, "title": "One", "player": "a"},
        {"id": 2, "title": "Two", "player": "a", "depends_on": [1]},
        {"id": 3, "title": "Three", "player": "a"}])
    # Task 3 landed before task 2 was cut, so task 2's branch carries it.
    carried = git(repo, "ls-tree", "--name-only", "baton/order/2-two")
    assert "three.txt" in carried.split()
    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stderr
    assert "already merged" not in merged.stdout
    merges = git(repo, "log", "--first-parent", "--format=%H %s", "main").splitlines()
    titled = {line.split(" ", 1)[1]: line.split(" ", 1)[0] for line in merges
              if line.split(" ", 1)[1].startswith("Merge task")}
    assert list(titled) == ["Merge task 2: Two", "Merge task 3: Three", "Merge task 1: One"]
    for title, own in (("Merge task 1: One", "one.txt"), ("Merge task 3: Three", "three.txt"),
                       ("Merge task 2: Two", "two.txt")):
        sha = titled[title]
        changed = git(repo, "diff", "--name-only", f"{sha}^1", sha).split()
        assert changed == [own], (title, changed)


def test_review_leaves_out_work_discarded_after_it_landed(repo, baton):
    run_scripted(repo, baton, "review", {
        "1": [{"write": "keep.txt", "content": "keep\n"}, {"report": "done", "summary": "k"}],
        "2": [{"write": "drop.txt", "content": "drop\n"}, {"report": "done", "summary": "d"}],
    }, [{"id": 1, "title": "Keep", "player": "a"}, {"id": 2, "title": "Drop", "player": "a"}])
    before = json.loads(baton("handoff", "review", "--json").stdout)
    assert sorted(before["files"]) == ["drop.txt", "keep.txt"]
    assert baton("discard", "2").returncode == 0
    after = json.loads(baton("handoff", "review", "--json").stdout)
    assert after["files"] == ["keep.txt"]
    assert "drop.txt" not in after["diff"]
    assert [t["id"] for t in after["tasks"]] == [1]
