"""A real run of the real CLI recycles landed tasks' worktrees (`gitops.recycling`), and
`baton status` says where each one went."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.chaos_kit import worktrees_dir
from helpers.run_kit import load_plan, script_agent, task, tree_files, wait_idle, write_config


@pytest.mark.slow
def test_a_run_recycles_landed_worktrees_and_status_says_so(repo, baton):
    """Three independent tasks one at a time: the second and third take over the worktree
    of the one that landed before them."""
    script = {str(i): [{"write": f"t{i}.txt", "content": f"{i}\n"},
                       {"report": "done", "summary": f"did {i}"}] for i in (1, 2, 3)}
    write_config(repo, {"agent": script_agent(repo.parent, "a", script)})
    load_plan(baton, [task(1), task(2), task(3)], approve=True)
    result = baton("run", env={"BATON_MAX_PARALLEL": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    final = wait_idle(baton)
    by_id = {t["id"]: t for t in final["tasks"]}
    assert {t["state"] for t in final["tasks"]} == {"landed"}
    recycled = [i for i in (1, 2) if by_id[i]["worktree"] is None]
    assert recycled == [1, 2]
    for i in recycled:
        assert by_id[i]["worktree_reason"] == \
            f"recycled for task {i + 1} (its work is on its branch)"
    assert by_id[3]["worktree"] and by_id[3]["worktree_reason"] is None
    for i in (1, 2, 3):  # every branch keeps its own work, the integration has them all
        assert tree_files(repo, by_id[i]["branch"]).get(f"t{i}.txt") == f"{i}"
    integration = final["plan"]["integration_branch"]
    assert {f"t{i}.txt" for i in (1, 2, 3)} <= set(tree_files(repo, integration))
    folders = [p for p in worktrees_dir().rglob("*") if (p / ".git").is_file()]
    assert folders == [Path(by_id[3]["worktree"])]  # one checkout served all three
    text = baton("status")
    assert "worktree recycled for task 2" in text.stdout
    assert os.path.isdir(by_id[3]["worktree"])
