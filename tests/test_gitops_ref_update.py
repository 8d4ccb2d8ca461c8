"""The integration branch moved by Baton as `update-ref` moves it: the same ref file and log
line, no git process — and git itself whenever Baton cannot be sure (a lock held, a ref that
moved, a ref checked out)."""

from __future__ import annotations

import re

import pytest

from helpers.gitops_fixtures import INTEG, commit_on, g, git_started, isolated_git, landing_repo

from baton_tui.gitops import ref_update
from baton_tui.gitops.git import GitError
from baton_tui.gitops.landing import land

REF = f"refs/heads/{INTEG}"

__all__ = ["isolated_git"]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return landing_repo(tmp_path, monkeypatch)


def log_lines(repo) -> list[str]:
    return (repo / ".git" / "logs" / REF).read_text().splitlines()


def test_after_the_first_landing_the_ref_moves_as_git_moves_it(repo, tmp_path):
    for i in (1, 2, 3):
        commit_on(repo, f"t{i}", {f"f{i}.txt": f"{i}\n"}, f"task {i}", start="main")
    results = [land(repo, f"t{i}", INTEG, f"land t{i}") for i in (1, 2, 3)]
    assert all(r.ok for r in results)
    assert git_started(tmp_path, "update-ref") == 0  # the first landing's `commit-tree` told who commits
    assert g(repo, "rev-parse", INTEG) == results[-1].commit
    assert (repo / ".git" / REF).read_text() == results[-1].commit + "\n"
    g(repo, "update-ref", "-m", "by git", "refs/heads/other", "main", identity=False)
    by_git = (repo / ".git" / "logs" / "refs" / "heads" / "other").read_text()
    shape = re.compile(r"([0-9a-f]{40}) ([0-9a-f]{40}) (Ann Person <ann@example.com>) (\d+) "
                       r"([+-]\d{4})\t(.*)")
    git_line = shape.fullmatch(by_git.strip())
    assert git_line and git_line.group(6) == "by git", by_git
    made, *ours = log_lines(repo)
    assert made.endswith("\tbranch: Created from main")
    before = g(repo, "rev-parse", "main")
    for line, old, result, name in zip(ours, [before, *(r.commit for r in results)], results,
                                       ("t1", "t2", "t3")):
        found = shape.fullmatch(line)
        assert found, line
        assert found.group(1, 2, 6) == (old, result.commit, f"baton: land {name}")
        assert found.group(3, 5) == git_line.group(3, 5)  # who, and the offset, as git says
        assert abs(int(found.group(4)) - int(git_line.group(4))) < 600
    assert g(repo, "reflog", "show", "--format=%gs", INTEG).splitlines()[:3] == \
        ["baton: land t3", "baton: land t2", "baton: land t1"]
    assert g(repo, "fsck", "--strict", "--no-dangling") == ""
    assert not list((repo / ".git" / "refs" / "heads").rglob("*.lock"))


def prepared(repo) -> tuple[str, str]:
    """The integration tip after a first landing by git, and a merge commit to move it to."""
    commit_on(repo, "t1", {"f1.txt": "1\n"}, "task 1", start="main")
    commit_on(repo, "t2", {"f2.txt": "2\n"}, "task 2", start="main")
    old = land(repo, "t1", INTEG, "land t1").commit
    tree = g(repo, "write-tree")  # any commit will do as the new tip
    return old, g(repo, "commit-tree", tree, "-p", old, "-m", "next")


def test_a_lock_someone_holds_is_left_to_git(repo):
    old, new = prepared(repo)
    lock = repo / ".git" / (REF + ".lock")
    lock.write_text("someone else's\n")
    assert ref_update.swap(repo, REF, new, old, {}, "baton: land t2") is None
    assert lock.read_text() == "someone else's\n"  # theirs: never touched
    with pytest.raises(GitError):
        land(repo, "t2", INTEG, "land t2")  # git waits for the lock, then gives up
    assert g(repo, "rev-parse", INTEG) == old


def test_a_moved_ref_or_task_branch_fails_and_nothing_moves(repo):
    old, new = prepared(repo)
    t2 = g(repo, "rev-parse", "t2")
    with pytest.raises(GitError, match="expected"):
        ref_update.swap(repo, REF, new, new, {}, "baton: land t2")  # not where it was read
    with pytest.raises(GitError, match="refs/heads/t2"):
        ref_update.swap(repo, REF, new, old, {"refs/heads/t2": old}, "baton: land t2")
    assert g(repo, "rev-parse", INTEG) == old and g(repo, "rev-parse", "t2") == t2
    assert len(log_lines(repo)) == 2  # made, then the first landing
    assert not list((repo / ".git" / "refs" / "heads").rglob("*.lock"))
    assert ref_update.swap(repo, REF, new, old, {"refs/heads/t2": t2}, "baton: land\n t2") is True
    assert g(repo, "rev-parse", INTEG) == new
    assert log_lines(repo)[-1].endswith("\tbaton: land t2")  # folded as git folds it


def test_a_ref_checked_out_or_without_a_log_is_left_to_git(repo):
    old, new = prepared(repo)
    g(repo, "symbolic-ref", "HEAD", REF)  # git would log HEAD's move too
    assert ref_update.swap(repo, REF, new, old, {}, "m") is None
    g(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    (repo / ".git" / "logs" / REF).unlink()  # core.logAllRefUpdates decides whether to begin one
    assert ref_update.swap(repo, REF, new, old, {}, "m") is None
    assert g(repo, "rev-parse", INTEG) == old
