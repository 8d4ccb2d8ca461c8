"""Making, undoing and repairing task worktrees; committing onto the task's branch; Baton's own
index.lock — each on real git, without a conductor (the end-to-end windows are in
tests/test_chaos.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.gitops_fixtures import g, isolated_git, make_repo, write

from baton_tui.gitops import git as gitmod
from baton_tui.gitops import making, onbranch
from baton_tui.gitops import worktrees as wt

__all__ = ["isolated_git"]


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {"a.txt": "a\n"})


def test_a_worktree_made_under_a_marker_is_pending_until_done(repo, tmp_path):
    path = tmp_path / "home" / "wt" / "1-a"
    work = making.Making(path)
    work.begin()
    assert making.pending(path)
    wt.add_worktree(repo, path, "baton/p/1-a", "main", making=work)
    assert (path / "a.txt").exists() and making.pending(path)
    work.done()
    assert not making.pending(path) and not list(path.parent.glob("*.preparing*"))


def test_undo_ends_what_still_works_in_it_and_removes_folder_and_record(repo, tmp_path):
    path = tmp_path / "home" / "wt" / "1-a"
    work = making.Making(path)
    work.begin()
    wt.add_worktree(repo, path, "baton/p/1-a", "main", making=work)
    admin = wt.admin_dirs(repo, path)
    assert len(admin) == 1
    (admin[0] / "locked").write_text("initializing\n")  # as git leaves it, killed half way
    # A step still running in it (an orphaned set-up, say), recorded in the marker.
    stray = subprocess.Popen(["sleep", "60"], cwd=path)
    work.started.append({"pid": stray.pid, "token": None})
    work._write()
    assert making.undo(repo, path) == []
    assert stray.wait(timeout=10) == -9
    assert not path.exists() and not admin[0].exists() and not making.pending(path)
    assert "1-a" not in g(repo, "worktree", "list")
    again = wt.add_worktree(repo, path, "baton/p/1-a", "main")  # made again at once
    assert (again / "a.txt").read_text() == "a\n"


def test_repair_gives_a_folder_without_git_back_keeping_every_file(repo, tmp_path):
    path = wt.add_worktree(repo, tmp_path / "home" / "wt" / "1-a", "baton/p/1-a", "main")
    write(path, "mine.txt", "the agent's work\n")
    write(path, "a.txt", "edited\n")
    (path / ".git").unlink()
    g(repo, "worktree", "prune")  # another task's clean-up forgets it meanwhile
    making.repair(repo, path, "baton/p/1-a")
    assert (path / "mine.txt").read_text() == "the agent's work\n"
    assert (path / "a.txt").read_text() == "edited\n"
    assert g(path, "symbolic-ref", "HEAD") == "refs/heads/baton/p/1-a"
    status = sorted(g(path, "status", "--porcelain", "--untracked-files=all").splitlines())
    assert [line.strip() for line in status] == ["?? mine.txt", "M a.txt"]
    assert not path.with_name("1-a.repair").exists()
    assert wt.commit_all(path, "kept")


def test_repair_works_while_another_worktree_holds_a_git_folder(repo, tmp_path):
    """Another task's agent turned its worktree's `.git` into a repository of its own
    (`git init`): this one's repair (`baton retry`) still gives it back to git (issue 28)."""
    other = wt.add_worktree(repo, tmp_path / "home" / "wt" / "2-b", "baton/p/2-b", "main")
    (other / ".git").unlink()
    g(other, "init", "-q")
    path = wt.add_worktree(repo, tmp_path / "home" / "wt" / "1-a", "baton/p/1-a", "main")
    write(path, "mine.txt", "the agent's work\n")
    (path / ".git").unlink()
    g(repo, "worktree", "prune")
    making.repair(repo, path, "baton/p/1-a")
    assert g(path, "symbolic-ref", "HEAD") == "refs/heads/baton/p/1-a"
    assert g(path, "status", "--porcelain", "--untracked-files=all") == "?? mine.txt"
    assert g(path, "rev-parse", "--git-common-dir") == str((repo / ".git").resolve())
    assert wt.commit_all(path, "kept")


def test_commit_on_branch_puts_work_from_another_branch_on_the_tasks(repo, tmp_path):
    path = wt.add_worktree(repo, tmp_path / "home" / "wt" / "1-a", "baton/p/1-a", "main")
    g(path, "checkout", "-q", "-b", "other")
    write(path, "x.txt", "on other\n")
    commit, moved = onbranch.commit_on_branch(path, "baton/p/1-a", "Task 1")
    assert moved == "other" and commit
    assert g(repo, "rev-parse", "baton/p/1-a") == commit  # a fast-forward
    assert g(path, "symbolic-ref", "HEAD") == "refs/heads/baton/p/1-a"
    assert g(path, "status", "--porcelain") == ""
    # Detached at an older commit, unrelated to the task's branch tip: one commit on top.
    g(path, "checkout", "-q", "--detach", "main")
    write(path, "y.txt", "detached\n")
    again, moved = onbranch.commit_on_branch(path, "baton/p/1-a", "Task 1 again")
    assert moved == "a detached HEAD"
    assert g(repo, "rev-parse", f"{again}^") == commit
    assert g(repo, "show", f"{again}:y.txt") == "detached"


def test_a_lock_left_by_a_killed_baton_is_taken_over_and_a_foreign_one_is_not(repo, tmp_path):
    path = wt.add_worktree(repo, tmp_path / "home" / "wt" / "1-a", "baton/p/1-a", "main")
    write(path, "x.txt", "x\n")
    gitdir = Path(g(path, "rev-parse", "--absolute-git-dir"))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (gitdir / "index.lock").write_text(f"baton {dead} 123.0\n")
    (gitdir / f"index.baton-commit-{dead}-abcd1234").write_text("left over")
    assert wt.commit_all(path, "taken over")
    assert not (gitdir / "index.lock").exists()
    assert not list(gitdir.glob("index.baton-*"))
    write(path, "y.txt", "y\n")
    (gitdir / "index.lock").write_text("")  # git's own (or an agent's): respected
    with pytest.raises(gitmod.GitError, match="remove it if none is"):
        wt.commit_all(path, "refused")
    assert (gitdir / "index.lock").exists()


# -- locks a killed git left (gitops/left_locks.py) ---------------------------------------

def _dead_group() -> int:
    """A process group that has ended: the pid of a child that exited (it led its group)."""
    child = subprocess.Popen(["true"], start_new_session=True)
    child.wait()
    return child.pid


def _locks_of_a_killed_git(repo, tmp_path):
    home = tmp_path / "home" / "wt" / "p"
    one = wt.add_worktree(repo, home / "1-a", "baton/p/1-a", "main")
    two = wt.add_worktree(repo, home / "2-b", "baton/p/2-b", "main")
    heads = gitmod.common_dir(repo) / "refs" / "heads"
    locks = [heads / "baton/p/1-a.lock", heads / "baton/p/2-b.lock",
             heads / "baton/p/integration.lock", heads / "main.lock"]
    for lock in locks:
        lock.touch()
    return home, one, two, locks


def test_left_locks_on_the_plans_refs_are_removed_and_the_persons_kept(repo, tmp_path):
    import time

    from baton_tui.gitops import left_locks

    home, one, _two, locks = _locks_of_a_killed_git(repo, tmp_path)
    [admin] = wt.admin_dirs(repo, one)
    (admin / "HEAD.lock").touch()
    removed = left_locks.clear(repo, "p", home, group=_dead_group(), before=time.time() + 1)
    assert sorted(removed) == sorted([*locks[:3], admin / "HEAD.lock"])
    assert locks[3].exists()  # refs/heads/main.lock: the person's
    g(one, "commit", "--allow-empty", "-q", "-m", "moves again")  # the branch is usable


def test_a_lock_in_a_worktree_someone_works_in_or_made_since_is_kept(repo, tmp_path):
    import time

    from baton_tui.gitops import left_locks

    home, one, two, locks = _locks_of_a_killed_git(repo, tmp_path)
    agent = subprocess.Popen(["sleep", "60"], cwd=one)  # an agent that outlived the conductor
    try:
        removed = left_locks.clear(repo, "p", home, group=_dead_group(), before=time.time() + 1)
    finally:
        agent.kill()
        agent.wait()
    assert sorted(removed) == [locks[1], locks[2]]
    assert locks[0].exists()
    # Made after this conductor began: one of its own gits may hold it.
    locks[1].touch()
    assert left_locks.clear(repo, "p", home, group=_dead_group(),
                            before=time.time() - 60) == []
    assert locks[1].exists()


def test_left_locks_wait_for_a_git_of_the_dead_group_still_running(repo, tmp_path):
    import time

    from baton_tui.gitops import left_locks

    home, _one, _two, locks = _locks_of_a_killed_git(repo, tmp_path)
    # A git of the dead conductor's group still running (orphaned, killed alone).
    orphan = subprocess.Popen(["git", "cat-file", "--batch"], cwd=repo, stdin=subprocess.PIPE,
                              start_new_session=True)
    try:
        assert left_locks.clear(repo, "p", home, group=orphan.pid, before=time.time() + 1,
                                wait=0.3) == []
        assert all(lock.exists() for lock in locks)
    finally:
        orphan.kill()
        orphan.wait()
    assert len(left_locks.clear(repo, "p", home, group=orphan.pid, before=time.time() + 1)) == 3
