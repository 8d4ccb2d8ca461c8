"""Refreshing a task branch with the integration branch before a retry."""

from __future__ import annotations

from helpers.gitops_fixtures import commit_on, g, isolated_git, make_repo, write

from baton_tui.gitops.landing import land, refresh
from baton_tui.gitops.worktrees import add_worktree, ensure_branch

__all__ = ["isolated_git"]


def _setup(tmp_path, landed: dict[str, str], task_files: dict[str, str]):
    """A task worktree cut from the integration branch, which then moves on (`landed`)."""
    repo = make_repo(tmp_path / "repo", {"shared.txt": "base\n"})
    base = g(repo, "rev-parse", "HEAD")
    ensure_branch(repo, "baton/p/integration", base)
    wt = add_worktree(repo, tmp_path / "wt", "baton/p/1-task", base)
    commit_on(repo, "baton/p/integration", landed, "another task landed")
    for rel, text in task_files.items():
        write(wt, rel, text)
    return repo, wt


def test_conflicting_refresh_leaves_markers_and_records_the_merge(tmp_path):
    repo, wt = _setup(tmp_path, {"shared.txt": "theirs\n"}, {"shared.txt": "ours\n"})
    conflicts = refresh(wt, "refs/heads/baton/p/integration")
    assert conflicts == ["shared.txt"]
    text = (wt / "shared.txt").read_text()
    assert "<<<<<<<" in text and "ours" in text and "theirs" in text
    parents = g(wt, "rev-list", "--parents", "-n", "1", "HEAD").split()
    assert len(parents) == 3  # a merge of the task's work and the integration branch
    assert g(wt, "status", "--porcelain") == ""
    # Once the agent resolves it, the task lands cleanly.
    write(wt, "shared.txt", "ours\ntheirs\n")
    from baton_tui.gitops.worktrees import commit_all

    commit_all(wt, "resolved")
    result = land(repo, "baton/p/1-task", "baton/p/integration", "land")
    assert result.ok, result.conflicts
    assert g(repo, "show", "baton/p/integration:shared.txt") == "ours\ntheirs"


def test_clean_refresh_brings_the_integration_branch_in(tmp_path):
    repo, wt = _setup(tmp_path, {"theirs.txt": "t\n"}, {"mine.txt": "mine\n"})
    assert refresh(wt, "refs/heads/baton/p/integration") == []
    assert (wt / "theirs.txt").read_text() == "t\n" and (wt / "mine.txt").read_text() == "mine\n"
    assert refresh(wt, "refs/heads/baton/p/integration") is None  # already up to date
