"""Git processes per build task of a chain, counted end to end: at most seven.

Git's own event trace (`GIT_TRACE2_EVENT`, which every git process of the run inherits: the
conductor's, the attempt shims', the agents', and the ones git itself starts) logs a `start`
for each git process, so a `worktree add` counts with the children it runs (its branch, its
HEAD, its checkout). Runs of a chain of one and of three trivial build tasks (no check) tell
the run's fixed cost from what each task adds: worktree and branch (made while the task's
dependency runs: a `worktree add`, four processes — or, once a task has landed, its worktree
taken over: a `status` that finds it clean and a `switch` to the new branch — then `reset
--keep` to the new tip when the task starts), the commit of the agent's work (`add -A`, then
one `git commit` of that index), the landing (no merge-tree when nothing landed since the
task's branch was cut, as in a chain: the merge is the task's own tree; its merge commit
written and the integration branch moved by Baton once the run's first landing's
`commit-tree` told who commits, `gitops/commit_object.py` and `gitops/ref_update.py`: no
process at all) — and the `git status`
of the person's checkout that tells whether the agent wrote outside its worktree
(`run/outside.py`). That look is taken after each attempt; the one before an attempt is the
previous task's, since no agent ran in between (the first task's own look is the run's).
A task with a scope costs no more: what its commit changed is read from the index Baton
checked out (`gitops/index_file.py`), so its scope check needs no `git diff` — the
tasks and the files off their scope below are flagged all the same.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from helpers.core import BatonCLI, git
from helpers.run_kit import load_plan, script_agent, status, task, write_config

PER_TASK_LIMIT = 7  # 6, plus the outside-write fingerprint's `git status` after the attempt
# Once per run: git --version, creating the integration branch, what the first commit learns
# about the approved commit (its tree, whether it holds agent droppings), identity, the
# first task's look at the checkout before its attempt, and the first landing's
# `commit-tree` (the later ones are written without it).
RUN_FIXED_LIMIT = 7


def command(argv: list[str]) -> str:
    """The git subcommand of a traced argv (after `git` and any `-c key=value`)."""
    words = argv[1:]
    i = 0
    while i < len(words) and words[i] in ("-c", "-C"):
        i += 2
    return words[i] if i < len(words) else "?"


def started(trace: Path) -> list[list[str]]:
    """The argv of every git process git's event trace saw start."""
    events = (json.loads(line) for line in trace.read_text().splitlines())
    return [e["argv"] for e in events if e.get("event") == "start"]


def run_chain(base: Path, n: int, scope: bool = False) -> Counter:
    base.mkdir()
    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# sample\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    agent = script_agent(base, "count", {
        str(i): [{"write": f"t{i}.txt", "content": f"task {i}\n"},
                 *([{"write": f"off{i}.txt", "content": "off scope\n"}] if i % 2 else []),
                 {"report": "done", "summary": f"task {i}"}] for i in range(1, n + 1)})
    write_config(repo, {"agent": agent})
    baton = BatonCLI(repo)
    extra = (lambda i: {"scope": [f"t{i}.txt"]}) if scope else (lambda i: {})
    load_plan(baton, [task(i, deps=[i - 1] if i > 1 else [], **extra(i))
                      for i in range(1, n + 1)], approve=True)
    trace = base / "git-trace2.json"
    result = baton("run", timeout=180, env={"GIT_TRACE2_EVENT": str(trace)})
    assert result.returncode == 0, result.stdout + result.stderr
    tasks = status(baton)["tasks"]
    assert {t["id"]: t["state"] for t in tasks} == {i: "landed" for i in range(1, n + 1)}
    flagged = {t["id"]: [f["kind"] for f in t["flags"]] for t in tasks}
    assert flagged == {i: ["scope"] if scope and i % 2 else [] for i in range(1, n + 1)}, tasks
    return Counter(command(argv) for argv in started(trace))


@pytest.mark.slow
@pytest.mark.parametrize("scope", [False, True], ids=["no-scope", "scope"])
def test_a_build_task_of_a_chain_costs_at_most_seven_git_processes(tmp_path, scope):
    one = run_chain(tmp_path / "one", 1, scope)
    three = run_chain(tmp_path / "three", 3, scope)
    per_task = {cmd: (three[cmd] - one[cmd]) / 2 for cmd in three | one
                if three[cmd] != one[cmd]}
    total_per_task = (sum(three.values()) - sum(one.values())) / 2
    fixed = sum(one.values()) - total_per_task
    report = (f"per task {total_per_task}: {sorted(per_task.items(), key=lambda kv: -kv[1])}; "
              f"one-task run {sum(one.values())}: {dict(one.most_common())}")
    assert total_per_task <= PER_TASK_LIMIT, report
    assert fixed <= RUN_FIXED_LIMIT, report
