"""What a commit changed, read from its index: the same paths `git diff` names, or nothing.

`commit_all` remembers the paths a commit changed only when the worktree's index is still
the one Baton's own checkout (or commit) left holding HEAD; the scope check then needs no
`git diff`. Every case here compares with git's own answer, and the cases where the index
cannot be trusted (staged by the agent, replaced, split) must fall back to git.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from helpers.gitops_fixtures import g, isolated_git, make_repo, write

from baton_tui.gitops import fresh_index, index_file, landing, refs
from baton_tui.gitops import worktrees as wt

__all__ = ["isolated_git"]


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {"a.txt": "a\n", "src/b.py": "b = 1\n",
                                         "src/c.py": "c = 1\n", "tool.sh": "echo\n",
                                         "doc": "a file, then a folder\n",
                                         ".gitignore": "*.log\n"})


@pytest.fixture
def worktree(repo, tmp_path):
    return wt.add_worktree(repo, tmp_path / "home" / "worktrees" / "t1", "baton/p/1-a", "main")


def git_diff(repo, base: str, tip: str) -> list[str]:
    out = subprocess.run(["git", "diff", "--name-only", "--no-renames", "-z", base, tip, "--"],
                         cwd=repo, capture_output=True, check=True).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def test_the_paths_a_commit_changed_are_read_from_its_index_and_match_git(repo, worktree):
    base = g(worktree, "rev-parse", "HEAD")
    write(worktree, "a.txt", "a2\n")                       # modified
    (worktree / "src" / "c.py").unlink()                    # deleted
    write(worktree, "src/new.py", "n = 1\n")                # new
    (worktree / "tool.sh").chmod(0o755)                     # mode only
    (worktree / "doc").unlink()                             # a file becomes a folder
    write(worktree, "doc/index.md", "# doc\n")
    write(worktree, "debug.log", "ignored\n")               # ignored: not committed
    os.makedirs(worktree / "odd", exist_ok=True)
    (worktree / "odd" / "caf\xe9 'x'\nadd 'y'.txt").write_text("odd name\n")
    with open(os.fsencode(worktree / "odd") + b"/latin-1 caf\xe9.txt", "w") as fh:
        fh.write("a name that is not UTF-8\n")
    commit = wt.commit_all(worktree, "work")
    known = refs.known_changes(commit, base)
    assert known is not None, "the index held HEAD alone: the changes are known"
    assert known == git_diff(repo, base, commit)
    assert "src/new.py" in known and "tool.sh" in known and "debug.log" not in known
    assert landing.changed_files(repo, base, "refs/heads/baton/p/1-a") == known


def test_a_second_commit_in_the_same_worktree_is_read_from_the_index_the_first_installed(
        repo, worktree):
    first = wt.commit_all(worktree, "nothing yet") or g(worktree, "rev-parse", "HEAD")
    write(worktree, "src/b.py", "b = 2\n")
    second = wt.commit_all(worktree, "work")
    write(worktree, "src/b.py", "b = 3\n")
    write(worktree, "src/d.py", "d = 1\n")
    third = wt.commit_all(worktree, "more work")
    assert refs.known_changes(second, first) == ["src/b.py"]
    assert refs.known_changes(third, second) == git_diff(repo, second, third) \
        == ["src/b.py", "src/d.py"]


def test_what_the_agent_staged_itself_is_never_missed(repo, worktree):
    """An agent's `git add` replaces the index Baton checked out: its changes are asked of git
    (a file staged and then deleted from the folder is still in the commit)."""
    base = g(worktree, "rev-parse", "HEAD")
    write(worktree, "outside.txt", "staged by the agent\n")
    g(worktree, "add", "outside.txt")
    write(worktree, "src/b.py", "b = 2\n")
    commit = wt.commit_all(worktree, "work")
    assert refs.known_changes(commit, base) is None
    assert landing.changed_files(repo, base, commit) == git_diff(repo, base, commit) \
        == ["outside.txt", "src/b.py"]


def test_an_agents_own_commit_is_asked_of_git(repo, worktree):
    base = g(worktree, "rev-parse", "HEAD")
    write(worktree, "secret.txt", "committed by the agent\n")
    g(worktree, "add", "secret.txt")
    g(worktree, "commit", "-qm", "agent's own")
    write(worktree, "src/b.py", "b = 2\n")
    commit = wt.commit_all(worktree, "work")
    assert refs.known_changes(commit, base) is None
    assert landing.changed_files(repo, base, "refs/heads/baton/p/1-a") == \
        ["secret.txt", "src/b.py"]


def test_an_index_rewritten_with_the_same_entries_is_not_trusted(repo, worktree):
    """Any rewrite of the index (here git's own refresh) is a new version: not the one
    Baton's checkout left, so the changes are asked of git — never read from a file someone
    else may have written."""
    index = fresh_index.index_of(worktree)
    head = g(worktree, "rev-parse", "HEAD")
    assert index_file.holds(index, head)
    later = (worktree / "a.txt").stat().st_mtime + 5
    os.utime(worktree / "a.txt", (later, later))  # a new time git records on refresh
    g(worktree, "update-index", "-q", "--refresh")
    assert not index_file.holds(index, head)
    write(worktree, "a.txt", "a2\n")
    commit = wt.commit_all(worktree, "work")
    assert refs.known_changes(commit, head) is None
    assert landing.changed_files(repo, head, commit) == ["a.txt"]


def test_a_private_copy_that_differs_from_the_index_is_not_trusted(repo, worktree,
                                                                     monkeypatch):
    """The commit stages into a private copy (perhaps a refreshed one from beside the index):
    when it does not hold what the index holds, nothing is read from it."""
    head = g(worktree, "rev-parse", "HEAD")
    write(worktree, "a.txt", "a2\n")
    real = fresh_index.index_of(worktree)
    forged = real.with_name("forged")
    subprocess.run(["git", "add", "a.txt"], cwd=worktree, check=True,
                   env={**os.environ, "GIT_INDEX_FILE": str(forged)})
    original = wt._temp_index

    def forged_copy(path, tag):
        found, tmp = original(path, tag)
        os.replace(forged, tmp)
        return found, tmp

    monkeypatch.setattr(wt, "_temp_index", forged_copy)
    commit = wt.commit_all(worktree, "work")
    assert refs.known_changes(commit, head) is None
    assert landing.changed_files(repo, head, commit) == ["a.txt"]


def test_unusual_indexes_are_left_to_git(repo, worktree, tmp_path):
    index = fresh_index.index_of(worktree)
    assert index_file.read(index) is not None
    g(worktree, "update-index", "--split-index")
    assert index_file.read(index) is None, "a split index keeps entries elsewhere"
    g(worktree, "update-index", "--no-split-index", "--index-version", "4")
    assert index_file.read(index) is None, "version 4 compresses paths"
    (tmp_path / "junk").write_bytes(b"DIRC\0\0\0\x02\0\0\0\x05" + b"\0" * 30)
    assert index_file.read(tmp_path / "junk") is None
    assert index_file.read(tmp_path / "missing") is None


def test_an_index_bigger_than_worth_reading_is_left_to_git(repo, worktree, monkeypatch):
    monkeypatch.setattr(index_file, "MAX_ENTRIES", 3)
    base = g(worktree, "rev-parse", "HEAD")
    write(worktree, "a.txt", "a2\n")
    commit = wt.commit_all(worktree, "work")
    assert refs.known_changes(commit, base) is None
    assert landing.changed_files(repo, base, commit) == ["a.txt"]
