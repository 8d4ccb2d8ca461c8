"""`baton handoff merge` killed inside a merge, and landed work undone on the person's branch
(issue 50): the next `handoff merge` finishes or undoes the interrupted merge itself — no lock
left, nothing lost, every landed file on the branch — and Baton never advises a commit that
would revert merged work, nor says "all landed work is on main" when the tree says otherwise.

The kills land exactly inside the window (`BATON_KILL_AT`, baton_tui/killpoints.py): after
the merge's files are written and before the branch moves (`merge-files`), and after the
branch moved while the new index is still git's lock (`merge-moved`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers.handoff_kit import FILES, TASKS, git, landed_plan

ALL = {name: text for files in FILES.values() for name, text in files.items()}


def lock(repo: Path) -> Path:
    return repo / ".git" / "index.lock"


def killed_merge(repo: Path, baton, point: str, nth: int = 1) -> subprocess.CompletedProcess:
    result = baton("handoff", "merge", env={"BATON_KILL_AT": f"{point}@{nth}"})
    assert result.returncode == -9, result.stdout + result.stderr  # SIGKILLed there
    assert lock(repo).exists()  # what the kill leaves: git refuses every command now
    return result


def all_landed_work_is_here(repo: Path) -> None:
    for name, text in ALL.items():
        assert (repo / name).read_text() == text, name
        assert git(repo, "show", f"main:{name}") == text.rstrip("\n"), name
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert not lock(repo).exists()


@pytest.mark.parametrize("point", ["merge-files", "merge-moved"])
@pytest.mark.parametrize("nth", [1, 3])
def test_the_next_merge_finishes_or_undoes_a_killed_one(repo, baton, point, nth):
    landed_plan(repo, TASKS, FILES)
    killed_merge(repo, baton, point, nth)
    again = baton("handoff", "merge")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "interrupted merge" in again.stdout
    assert "all landed work is on main" in again.stdout
    all_landed_work_is_here(repo)
    assert git(repo, "log", "--format=%s", "main").count("Merge task") == 3  # each merged once


@pytest.mark.parametrize("point", ["merge-files", "merge-moved"])
def test_a_lock_removed_by_hand_as_git_says_loses_nothing(repo, baton, point):
    landed_plan(repo, TASKS, FILES)
    killed_merge(repo, baton, point, 2)
    lock(repo).unlink()  # "remove the file manually to continue", as git says
    again = baton("handoff", "merge")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "commit or stash" not in again.stdout + again.stderr
    all_landed_work_is_here(repo)


def test_changes_that_would_revert_a_merge_are_never_advised_to_be_committed(repo, baton):
    landed_plan(repo, TASKS, FILES, land_ids=[1, 2])
    assert baton("handoff", "merge").returncode == 0
    # The index and the files back at what main held before Baton merged task 2 (as an
    # interrupted merge whose record is gone would leave its index).
    git(repo, "rm", "-q", "lines.py")
    refused = baton("handoff", "merge")
    assert refused.returncode == 2
    said = refused.stdout + refused.stderr
    assert "lines.py" in said and "commit or stash" not in said and "would undo it" in said
    assert "git restore --staged --worktree --source=HEAD -- lines.py" in said
    git(repo, "restore", "--staged", "--worktree", "--source=HEAD", "--", "lines.py")
    assert baton("handoff", "merge").returncode == 0
    assert (repo / "lines.py").read_text() == FILES[2]["lines.py"]


def test_all_landed_work_is_on_main_is_said_of_the_tree(repo, baton):
    landed_plan(repo, TASKS, FILES, land_ids=[1, 2])
    assert baton("handoff", "merge").returncode == 0
    git(repo, "rm", "-q", "words.py")  # task 1's work, undone by a commit of the person's
    git(repo, "commit", "-q", "-m", "oops")
    again = baton("handoff", "merge")
    said = again.stdout + again.stderr
    assert again.returncode == 1, said
    assert "all landed work is on main" not in said
    assert "task 1's change is not in main's tree: words.py" in said
    assert "task 2" not in said.replace("task 2 was already merged", "")
