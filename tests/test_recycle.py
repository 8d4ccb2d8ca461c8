"""A landed task's worktree is recycled for the next task (`gitops.recycling`,
`placing._take_over`): moved to the new task's place and switched to its branch at the
integration tip, the landed branch keeping its work — and only when nothing can be lost.
Real git; a real run in test_recycle_run.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.gitops_fixtures import g, isolated_git, make_repo, write

from baton_tui.gitops import landing, making, recycling, worktrees

__all__ = ["isolated_git"]

INTEGRATION = "refs/heads/baton/p/integration"


def landed_worktree(tmp_path: Path) -> tuple[Path, Path, str]:
    """A repository whose task branch `baton/p/1-a` landed from the worktree `wt/1`
    (clean); returns (repo, worktree, the landing's integration commit)."""
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n", "src/a.py": "a = 1\n"})
    g(repo, "update-ref", INTEGRATION, "HEAD")
    wt = worktrees.add_worktree(repo, tmp_path / "wt" / "1", "baton/p/1-a", INTEGRATION)
    write(wt, "src/one.py", "one = 1\n")
    worktrees.commit_all(wt, "Task 1")
    result = landing.land(repo, "baton/p/1-a", "baton/p/integration", "Land task 1")
    assert result.ok
    return repo, wt, result.commit


def test_a_clean_landed_worktree_serves_the_next_task_and_its_branch_keeps_the_work(tmp_path):
    repo, old, landed = landed_worktree(tmp_path)
    commit_commit(repo, "src/b.py", "b = 2\n")  # the integration tip moved on since
    tip = g(repo, "rev-parse", INTEGRATION)
    one = g(repo, "rev-parse", "baton/p/1-a")
    assert recycling.recyclable(repo, old, "baton/p/1-a", landed, tip)
    new = tmp_path / "wt" / "2"
    work = making.Making(new)
    work.begin()
    assert recycling.recycle(repo, old, new, "baton/p/2-b", tip, work)
    work.done()
    assert not old.exists()
    assert g(new, "symbolic-ref", "HEAD") == "refs/heads/baton/p/2-b"
    assert g(new, "rev-parse", "HEAD") == tip
    assert g(repo, "rev-parse", "baton/p/1-a") == one       # the landed branch is untouched
    assert g(new, "status", "--porcelain", "--untracked-files=all") == ""
    files = {str(p.relative_to(new)) for p in new.rglob("*") if p.is_file()
             and ".git" not in p.parts}
    assert files == set(g(repo, "ls-tree", "-r", "--name-only", tip).splitlines())
    g(repo, "worktree", "prune")  # git's record of it follows the move: nothing to prune
    worktree_list = g(repo, "worktree", "list", "--porcelain")
    assert f"worktree {new}" in worktree_list and f"worktree {old}\n" not in worktree_list


def commit_commit(repo: Path, path: str, text: str) -> None:
    """Move the integration branch on by one commit (as another task's landing would)."""
    tree_wt = repo.parent / "side"
    g(repo, "worktree", "add", "-q", "--detach", str(tree_wt), INTEGRATION)
    write(tree_wt, path, text)
    g(tree_wt, "add", "-A")
    g(tree_wt, "commit", "-q", "-m", f"add {path}")
    g(repo, "update-ref", INTEGRATION, g(tree_wt, "rev-parse", "HEAD"))
    g(repo, "worktree", "remove", "--force", str(tree_wt))


@pytest.mark.parametrize("change", ["edited", "untracked", "moved branch", "other branch"])
def test_a_worktree_that_holds_anything_not_landed_is_never_recycled(tmp_path, change):
    repo, old, landed = landed_worktree(tmp_path)
    tip = g(repo, "rev-parse", INTEGRATION)
    if change == "edited":
        write(old, "src/a.py", "a = 'edited by hand'\n")
    elif change == "untracked":
        write(old, "notes.txt", "mine\n")
    elif change == "moved branch":  # a commit on the branch after it landed
        write(old, "src/later.py", "later = 1\n")
        worktrees.commit_all(old, "after landing")
    else:
        g(old, "switch", "-q", "-c", "someone-else")
    assert not recycling.recyclable(repo, old, "baton/p/1-a", landed, tip)


def test_recycling_refuses_a_branch_or_place_already_taken(tmp_path):
    repo, old, _landed = landed_worktree(tmp_path)
    tip = g(repo, "rev-parse", INTEGRATION)
    g(repo, "branch", "baton/p/2-b", tip)
    new = tmp_path / "wt" / "2"
    assert not recycling.recycle(repo, old, new, "baton/p/2-b", tip, making.Making(new))
    assert old.exists() and not new.exists()
