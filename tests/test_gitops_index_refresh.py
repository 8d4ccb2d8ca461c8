"""A worktree's index refreshed ahead of its task's commit (`worktrees.refresh_ahead`), on a
copy: real git repositories, real files, real processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from helpers.gitops_fixtures import g, isolated_git, make_repo, write

from baton_tui.gitops import fresh_index
from baton_tui.gitops import worktrees as wt
from baton_tui.run.placing import refresh_index_later

__all__ = ["isolated_git"]

FILES = fresh_index.RACY_WORTH + 36


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", {f"d/f{n}.txt": f"file {n}\n" for n in range(FILES)})


def checkout(repo, tmp_path, name="t1"):
    return wt.add_worktree(repo, tmp_path / "home" / "worktrees" / name, f"baton/p/{name}",
                           "main")


def index_of(worktree: Path) -> Path:
    return Path(g(worktree, "rev-parse", "--path-format=absolute", "--git-path", "index"))


def fresh_copies(worktree: Path) -> list[Path]:
    return sorted(index_of(worktree).parent.glob("index.baton-fresh-*"))


def a_second_later(path: Path) -> None:
    """Wait until the clock has left the second `path` was written in (git's racy test
    compares whole seconds)."""
    deadline = time.monotonic() + 30
    while int(time.time()) <= int(path.stat().st_mtime) and time.monotonic() < deadline:
        time.sleep(0.05)


def stamp(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def test_a_fresh_checkout_is_racy_and_its_refreshed_copy_is_not(repo, tmp_path):
    worktree = checkout(repo, tmp_path)
    index = index_of(worktree)
    assert fresh_index.racy_entries(index) >= fresh_index.RACY_WORTH  # written in the checkout's own second
    a_second_later(index)
    before = stamp(index)
    assert fresh_index.refresh(worktree)
    assert stamp(index) == before  # the index itself is never touched (the agent's to use)
    [copy] = fresh_copies(worktree)
    assert fresh_index.racy_entries(copy) == 0


def test_the_commit_starts_from_the_refreshed_copy_and_misses_no_edit(repo, tmp_path):
    worktree = checkout(repo, tmp_path)
    a_second_later(index_of(worktree))
    assert fresh_index.refresh(worktree)
    write(worktree, "d/f1.txt", "FILE 1\n")  # the same size: only its times tell
    write(worktree, "new.txt", "new\n")
    (worktree / "d" / "f2.txt").unlink()
    commit = wt.commit_all(worktree, "agent's work")
    assert commit is not None
    assert fresh_copies(worktree) == []  # taken by the commit
    changed = g(worktree, "diff-tree", "-r", "--name-status", "--no-commit-id", "HEAD~1", "HEAD")
    assert sorted(changed.splitlines()) == ["A\tnew.txt", "D\td/f2.txt", "M\td/f1.txt"]
    assert g(worktree, "status", "--porcelain") == ""


def test_a_copy_of_an_index_replaced_since_is_dropped(repo, tmp_path):
    worktree = checkout(repo, tmp_path)
    a_second_later(index_of(worktree))
    assert fresh_index.refresh(worktree)
    # The agent tells git to leave a file alone, then edits it: only the real index knows.
    g(worktree, "update-index", "--skip-worktree", "d/f3.txt")
    write(worktree, "d/f3.txt", "edited where git was told not to look\n")
    write(worktree, "d/f4.txt", "FILE 4\n")
    assert wt.commit_all(worktree, "agent's work") is not None
    assert fresh_copies(worktree) == []
    changed = g(worktree, "diff-tree", "-r", "--name-only", "--no-commit-id", "HEAD~1", "HEAD")
    assert changed.splitlines() == ["d/f4.txt"]


def test_nothing_is_refreshed_when_little_is_racy(tmp_path):
    small = make_repo(tmp_path / "small", {"a.txt": "a\n", "b.txt": "b\n"})
    worktree = checkout(small, tmp_path)
    assert fresh_index.racy_entries(index_of(worktree)) < fresh_index.RACY_WORTH
    assert not fresh_index.big_enough(worktree)
    assert refresh_index_later(worktree) is None  # not even a thread
    assert not fresh_index.refresh(worktree)
    assert fresh_copies(worktree) == []


def test_nothing_is_refreshed_while_the_index_is_locked(repo, tmp_path):
    worktree = checkout(repo, tmp_path)
    index = index_of(worktree)
    a_second_later(index)
    lock = index.with_name("index.lock")
    lock.write_text("")  # someone's git is at work on it
    try:
        assert not fresh_index.refresh(worktree)
    finally:
        lock.unlink()
    assert fresh_copies(worktree) == []


def test_a_start_refreshes_its_new_worktrees_index_a_second_later(repo, tmp_path):
    worktree = checkout(repo, tmp_path)
    timer = refresh_index_later(worktree)
    assert timer is not None
    timer.join(timeout=60)
    assert not timer.is_alive()
    [copy] = fresh_copies(worktree)
    assert fresh_index.racy_entries(copy) == 0
    os.utime(worktree / "d" / "f5.txt")  # touched, unchanged: nothing to commit
    assert wt.commit_all(worktree, "nothing") is None


def test_a_worktree_made_ahead_starts_from_its_refreshed_index(repo, tmp_path):
    from baton_tui.gitops.making import Making

    path = tmp_path / "home" / "worktrees" / "ahead"
    made_at = g(repo, "rev-parse", "main")
    wt.add_worktree(repo, path, "baton/p/ahead", made_at, whole=True)
    a_second_later(index_of(path))
    assert fresh_index.refresh(path)
    write(repo, "later.txt", "landed meanwhile\n")
    g(repo, "add", "-A")
    g(repo, "commit", "-q", "-m", "landed")
    tip = g(repo, "rev-parse", "main")
    work = Making(path)
    work.begin()
    assert wt.move_ahead(path, made_at, tip, work) == tip
    work.done()
    assert fresh_copies(path) == []  # it became the index `reset --keep` started from
    assert (path / "later.txt").read_text() == "landed meanwhile\n"
    assert g(path, "status", "--porcelain") == ""
    assert fresh_index.racy_entries(index_of(path)) < fresh_index.RACY_WORTH


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_looks_at_the_persons_checkout_read_through_a_refreshed_copy(repo):
    from baton_tui.run import outside
    from baton_tui.workspace import Workspace

    index = index_of(repo)  # just committed in: racily clean
    a_second_later(index)
    ws = Workspace(repo)
    try:
        before = stamp(index)
        assert outside.fingerprint(ws)["checkout"] == {}  # the first look reads the index
        wait_for(lambda: fresh_copies(repo), "a refreshed copy beside the person's index")
        assert stamp(index) == before  # the person's index is never written
        write(repo, "d/f6.txt", "FILE 6\n")  # the same size: only its times tell
        assert set(outside.fingerprint(ws)["checkout"]) == {"d/f6.txt"}
        assert fresh_copies(repo)  # read through, kept for the next look
        # The person stages a change: the copy is of an index since replaced, and dropped.
        write(repo, "d/f7.txt", "changed\n")
        g(repo, "add", "d/f7.txt")
        g(repo, "update-index", "--skip-worktree", "d/f6.txt")
        assert set(outside.fingerprint(ws)["checkout"]) == {"d/f7.txt"}
    finally:
        ws.close()


def test_a_copy_left_half_refreshed_by_a_killed_process_goes(repo, tmp_path):
    import subprocess

    worktree = checkout(repo, tmp_path)
    index = index_of(worktree)
    gone = subprocess.Popen(["true"])
    gone.wait()
    left = index.with_name(f"index.baton-refresh-{gone.pid}-0000")
    running = index.with_name(f"index.baton-refresh-{os.getpid()}-0000")
    left.write_bytes(index.read_bytes())
    running.write_bytes(index.read_bytes())
    a_second_later(index)
    assert fresh_index.refresh(worktree)
    assert not left.exists() and running.exists()


def test_an_index_is_refreshed_once(repo, tmp_path):
    worktree = checkout(repo, tmp_path)
    a_second_later(index_of(worktree))
    assert fresh_index.refresh(worktree)
    [copy] = fresh_copies(worktree)
    assert not fresh_index.refresh(worktree)  # no second process for the same index
    assert fresh_copies(worktree) == [copy]
