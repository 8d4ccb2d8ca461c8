"""End-to-end: a six-task DAG runs to landed tasks on real git with real agent processes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.run_kit import (
    events, first, git, kinds, load_plan, script_agent, status, task, tree_files, write_config,
)

FINDINGS = "FINDINGS-7f3a: the package keeps one function per module"


def prompt_files(task_id: int) -> list[Path]:
    home = Path(os.environ["BATON_HOME"])
    return sorted(home.glob(f"runs/*/*/task-{task_id}/attempt-*/prompt.md"))


@pytest.mark.slow
def test_six_task_dag_with_parallel_branches_and_research(repo, baton, tmp_path):
    agent = script_agent(tmp_path, "dag", {
        "1": [{"print": "reading"}, {"sleep": 0.3}, {"report": "done", "summary": FINDINGS}],
        "2": [{"sleep": 0.8}, {"write": "a.txt", "content": "a\n"},
              {"report": "done", "summary": "a written"}],
        "3": [{"sleep": 0.8}, {"write": "b.txt", "content": "b\n"},
              {"report": "done", "summary": "b written"}],
        # 4 and 5 build on their dependency's file: only there if it was cut after the landing.
        "4": [{"append": "a.txt", "content": "a2\n"}, {"report": "done", "summary": "a grown"}],
        "5": [{"append": "b.txt", "content": "b2\n"}, {"report": "done", "summary": "b grown"}],
        "6": [{"write": "c.txt", "content": "c\n"}, {"report": "done", "summary": "joined"}],
    })
    write_config(repo, {"agent": agent}, research={"agent": agent}, limits={"max_parallel": 4})
    load_plan(baton, [
        task(1, "Survey", mode="research"),
        task(2, "Left one"), task(3, "Right one"),
        task(4, "Left two", deps=[2]), task(5, "Right two", deps=[3]),
        task(6, "Join", deps=[1, 4, 5]),
    ])

    result = baton("run", "--approve", timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr

    st = status(baton)
    by_id = {t["id"]: t for t in st["tasks"]}
    assert by_id[1]["state"] == "done"
    assert [by_id[i]["state"] for i in range(2, 7)] == ["landed"] * 5
    assert st["conductor"] is None

    # Everything landed on the integration branch, built on what came before.
    files = tree_files(repo, st["plan"]["integration_branch"])
    assert files["a.txt"] == "a\na2"
    assert files["b.txt"] == "b\nb2"
    assert files["c.txt"] == "c"
    # The person's branch is untouched until handoff; research left no branch of its own.
    assert git(repo, "rev-parse", "main") == st["plan"]["base_commit"]
    assert not [b for b in git(repo, "branch", "--format=%(refname:short)").splitlines()
                if b.startswith("baton/") and "/1-" in b]

    evs = events(baton)
    # Dependents start only after their dependencies landed (research: after it is done).
    for dependent, dep, kind in [(4, 2, "task.landed"), (5, 3, "task.landed"),
                                 (6, 4, "task.landed"), (6, 5, "task.landed"),
                                 (6, 1, "task.done")]:
        assert first(evs, "task.started", dependent)["id"] > first(evs, kind, dep)["id"], \
            (dependent, dep)
    # The two branches ran side by side: 3 started before 2 was done.
    assert first(evs, "task.started", 3)["id"] < first(evs, "task.done", 2)["id"]
    # Each task started exactly once.
    for tid in range(1, 7):
        assert kinds(evs, tid).count("task.started") == 1, kinds(evs, tid)

    # The research report reached the dependent's prompt file, which is private.
    [prompt] = prompt_files(6)
    text = prompt.read_text()
    assert FINDINGS in text
    assert "Inputs from the tasks this one depends on" in text
    assert oct(prompt.stat().st_mode & 0o777) == "0o600"
    assert not str(prompt).startswith(str(repo))
    # A task that does not depend on the research never sees it.
    assert FINDINGS not in prompt_files(2)[0].read_text()
