"""Agents contained, part three (issue 49): a running sibling's worktree reached through `..`,
conflict markers left in a file, a trust check racing a changing `baton.toml`, a git identity
only in the environment, a repository's instruction files at planning. Each is attacked by a
hostile scripted agent (tests/agents/) in real git repositories with the real `baton`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.containment_kit import integration_ref
from helpers.run_kit import git, load_plan, program, task, task_status, write_config


# -- a running sibling's worktree, through `..` -------------------------------------------------
def test_a_running_siblings_worktree_is_read_only_through_dotdot_too(repo, baton, tmp_path):
    """Task 2's agent never enters another folder: it writes `../<task 1's worktree>/…`
    relative to the folder it was started in, while task 1's agent runs. Refused, as by
    absolute path; neither task lands the file."""
    from baton_tui.run import readonly

    if why := readonly.available():
        pytest.skip(f"no read-only view here ({why}): detection only")
    running, done = tmp_path / "running", tmp_path / "done"
    write_config(repo, {"waiter": program("ref_mover.py", "main", f"signal:{running}",
                                          f"wait:{done}"),
                        "writer": program("sibling_writer.py", f"wait:{running}", "dotdot",
                                          f"signal:{done}")})
    load_plan(baton, [task(1, "Victim", player="waiter"), task(2, "Writer", player="writer")])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    log = baton("logs", "2").stdout
    assert "dotdot injected.txt: refused (Read-only file system)" in log, log
    assert "written" not in log, log
    assert [task_status(baton, n)["state"] for n in (1, 2)] == ["landed"] * 2
    files = git(repo, "ls-tree", "-r", "--name-only", integration_ref(repo)).splitlines()
    assert "injected.txt" not in files and "own-work.txt" in files
