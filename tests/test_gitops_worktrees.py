"""Task worktrees: creation, hook-free commits, droppings, snapshots, copy-in, removal."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from helpers.gitops_fixtures import Spawned, g, isolated_git, make_repo, write

from baton_tui.core.errors import BatonError
from baton_tui.gitops import git as gitmod
from baton_tui.gitops import refs
from baton_tui.gitops import worktrees as wt

__all__ = ["isolated_git"]


@pytest.fixture
def repo(tmp_path):
    r = make_repo(tmp_path / "repo", {"a.txt": "a\n", "src/b.py": "b = 1\n",
                                      ".gitignore": "*.log\n.env\n"})
    return r


@pytest.fixture
def worktree(repo, tmp_path):
    return wt.add_worktree(repo, tmp_path / "home" / "worktrees" / "t1", "baton/p/1-a", "main")


def failing_hooks(repo):
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("pre-commit", "commit-msg", "prepare-commit-msg", "post-commit",
                 "reference-transaction"):
        h = hooks / name
        h.write_text(f"#!/bin/sh\necho ran > \"$(git rev-parse --git-common-dir)/{name}-ran\"\n"
                     "exit 1\n")
        h.chmod(h.stat().st_mode | stat.S_IXUSR)


def test_ensure_branch_creates_and_keeps(repo):
    head = gitmod.head_commit(repo)
    assert wt.ensure_branch(repo, "baton/p/integration", head) == head
    assert g(repo, "rev-parse", "baton/p/integration") == head
    assert gitmod.current_branch(repo) == "main"
    write(repo, "a.txt", "a2\n")
    g(repo, "commit", "-qam", "two")
    # existing branch is left where it is
    assert wt.ensure_branch(repo, "baton/p/integration", "HEAD") == head
    assert g(repo, "rev-parse", "baton/p/integration") == head
    with pytest.raises(gitmod.GitError):
        wt.ensure_branch(repo, "bad..name", head)


def test_add_worktree_outside_and_reattach(repo, tmp_path, worktree):
    assert worktree.is_dir() and (worktree / "a.txt").read_text() == "a\n"
    assert gitmod.current_branch(worktree) == "baton/p/1-a"
    assert gitmod.common_dir(worktree) == gitmod.common_dir(repo)
    with pytest.raises(BatonError):
        wt.add_worktree(repo, repo / "inside", "baton/p/2-b", "main")
    # an existing branch is attached to, keeping its commits
    write(worktree, "new.txt", "n\n")
    c = wt.commit_all(worktree, "work")
    wt.remove_worktree(repo, worktree)
    assert not worktree.exists()
    again = wt.add_worktree(repo, tmp_path / "home" / "worktrees" / "t1b", "baton/p/1-a", "main")
    assert gitmod.head_commit(again) == c and (again / "new.txt").exists()


def test_add_detached_worktree(repo, tmp_path):
    p = wt.add_detached_worktree(repo, tmp_path / "home" / "wt" / "research", "main")
    assert gitmod.current_branch(p) is None
    assert gitmod.head_commit(p) == gitmod.head_commit(repo)


def test_commit_all_without_identity_and_hooks(repo, worktree):
    failing_hooks(repo)
    assert gitmod.identity_env(worktree) == gitmod.BATON_IDENTITY
    before = gitmod.head_commit(worktree)
    write(worktree, "a.txt", "changed\n")
    write(worktree, "src/new.py", "x = 2\n")
    (worktree / "src" / "b.py").unlink()
    write(worktree, "debug.log", "ignored\n")
    write(worktree, ".aider.chat.history.md", "chat\n")
    write(worktree, ".aider.tags.cache.v3/cache.db", "db\n")
    write(worktree, "src/.baton-prompt-1.md", "prompt\n")
    c = wt.commit_all(worktree, "Task 1: work")
    assert c and c != before
    assert g(worktree, "rev-parse", "HEAD") == c == g(repo, "rev-parse", "baton/p/1-a")
    assert g(worktree, "rev-parse", "HEAD~1") == before
    files = set(g(repo, "ls-tree", "-r", "--name-only", c).splitlines())
    assert files == {".gitignore", "a.txt", "src/new.py"}
    assert g(repo, "log", "-1", "--format=%an <%ae>|%cn|%s", c) == \
        "Baton <baton@localhost>|Baton|Task 1: work"
    assert not list((repo / ".git").glob("*-ran")), "a hook ran"
    # the worktree is clean afterwards (droppings and ignored files aside)
    assert not gitmod.is_dirty(worktree)
    assert wt.changed_paths(worktree) == []
    assert g(worktree, "status", "--porcelain", "--untracked-files=no") == ""
    assert not list((repo / ".git" / "worktrees").rglob("index.*"))
    # nothing left: no commit
    assert wt.commit_all(worktree, "again") is None
    assert gitmod.head_commit(worktree) == c


def test_commit_all_uses_person_identity_when_configured(repo, worktree):
    g(repo, "config", "user.name", "Person")
    g(repo, "config", "user.email", "person@example.com")
    write(worktree, "a.txt", "p\n")
    c = wt.commit_all(worktree, "msg")
    assert g(repo, "log", "-1", "--format=%an <%ae>", c) == "Person <person@example.com>"


def test_the_private_index_copy_keeps_the_index_time_git_judges_racy_entries_by(worktree):
    # With coarse file times (a 6.x kernel's multigrain timestamps) an edit made in the clock
    # tick the checkout ran leaves a file's size, mtime and ctime exactly as the index
    # recorded them. git then re-reads the file only because the index file is no older than
    # the entry ("racily clean"). commit_all works on a private copy of the index: a copy
    # stamped with its own, later time made git trust the stale entry, and a same-size edit
    # was not committed (seen once in the full suite). The copy keeps the index's time.
    index = Path(g(worktree, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    tick = (worktree / "a.txt").stat().st_mtime_ns
    os.utime(index, ns=(tick, tick))  # the checkout wrote its index in a.txt's tick
    real, tmp = wt._temp_index(worktree, "test")
    try:
        assert real == index and tmp.read_bytes() == index.read_bytes()
        assert tmp.stat().st_mtime_ns == tick
    finally:
        tmp.unlink()


def test_commit_all_keeps_tracked_dropping_and_unstages_agent_staged(repo, tmp_path):
    write(repo, ".aider.conf.yml", "model: x\n")
    g(repo, "add", ".aider.conf.yml")
    g(repo, "commit", "-qm", "aider config")
    w = wt.add_worktree(repo, tmp_path / "home" / "wt" / "x", "b", "main")
    write(w, ".aider.conf.yml", "model: changed\n")
    write(w, ".aider.input.history", "h\n")
    g(w, "add", "-f", ".aider.input.history")  # the agent staged a dropping itself
    write(w, "real.txt", "r\n")
    c = wt.commit_all(w, "m")
    files = set(g(repo, "ls-tree", "-r", "--name-only", c).splitlines())
    assert ".aider.conf.yml" in files and ".aider.input.history" not in files
    assert g(repo, "show", f"{c}:.aider.conf.yml") == "model: x"
    assert "real.txt" in files


def test_commit_all_respects_held_index_lock(worktree):
    write(worktree, "a.txt", "z\n")
    lock = Path(g(worktree, "rev-parse", "--git-path", "index.lock"))
    if not lock.is_absolute():
        lock = worktree / lock
    lock.write_text("")
    try:
        with pytest.raises(gitmod.GitError):
            wt.commit_all(worktree, "m")
    finally:
        lock.unlink()
    assert wt.commit_all(worktree, "m")


def test_changed_paths_proves_read_only(repo, tmp_path):
    w = wt.add_detached_worktree(repo, tmp_path / "home" / "wt" / "research", "HEAD")
    write(w, ".aider.chat.history.md", "chat\n")
    write(w, "notes.log", "ignored\n")
    assert wt.changed_paths(w) == []
    write(w, "src/b.py", "b = 2\n")
    write(w, "stray/new.txt", "x\n")
    (w / "a.txt").unlink()
    assert wt.changed_paths(w) == ["a.txt", "src/b.py", "stray/new.txt"]


def test_snapshot_does_not_move_head_branch_or_index(repo, worktree):
    head = gitmod.head_commit(worktree)
    write(worktree, "a.txt", "edited\n")
    write(worktree, "untracked.txt", "u\n")
    g(worktree, "add", "a.txt")  # something staged in the real index
    status_before = g(worktree, "status", "--porcelain")
    c = wt.snapshot(worktree, "refs/baton/p/snapshots/1", "snapshot task 1")
    assert c and g(repo, "rev-parse", "refs/baton/p/snapshots/1") == c
    assert g(repo, "rev-parse", f"{c}^") == head
    assert g(repo, "show", f"{c}:untracked.txt") == "u"
    assert g(repo, "show", f"{c}:a.txt") == "edited"
    assert gitmod.head_commit(worktree) == head
    assert g(repo, "rev-parse", "baton/p/1-a") == head
    assert g(worktree, "status", "--porcelain") == status_before
    with pytest.raises(ValueError):
        wt.snapshot(worktree, "baton/x", "m")


def test_snapshot_without_head(tmp_path):
    r = tmp_path / "empty"
    r.mkdir()
    g(r, "init", "-q", "-b", "main")
    write(r, "x.txt", "x")
    assert wt.snapshot(r, "refs/baton/s", "m") is None


def test_remove_worktree(repo, worktree):
    write(worktree, "dirty.txt", "d")
    wt.snapshot(worktree, "refs/baton/keep", "keep")
    wt.remove_worktree(repo, worktree)
    assert not worktree.exists()
    assert str(worktree) not in g(repo, "worktree", "list")
    assert g(repo, "show", "refs/baton/keep:dirty.txt") == "d"
    # already gone: pruned quietly
    wt.remove_worktree(repo, worktree)


def test_copy_into(repo, worktree, tmp_path):
    write(repo, ".env", "SECRET=1\n")
    write(repo, "config/app.local", "local\n")
    write(repo, "config/other.local", "other\n")
    write(repo, "config/app.toml", "toml\n")
    copied = wt.copy_into(repo, worktree, [".env", "config/*.local", "missing.*"])
    assert copied == [".env", "config/app.local", "config/other.local"]
    assert (worktree / ".env").read_text() == "SECRET=1\n"
    assert not (worktree / "config" / "app.toml").exists()
    # existing files in the worktree are not overwritten
    write(repo, "a.txt", "person's uncommitted edit\n")
    assert wt.copy_into(repo, worktree, ["a.txt"]) == []
    assert (worktree / "a.txt").read_text() == "a\n"
    for bad in ["../outside.txt", "/etc/passwd", "config/../../x", "..", "a/../../b"]:
        with pytest.raises(BatonError):
            wt.copy_into(repo, worktree, [bad])
    (tmp_path / "secret.txt").write_text("s")
    os.symlink(tmp_path / "secret.txt", repo / "link.txt")
    with pytest.raises(BatonError):
        wt.copy_into(repo, worktree, ["link.txt"])
    assert not (worktree / "link.txt").exists()


def test_dir_size(tmp_path):
    d = tmp_path / "d"
    write(d, "a", "x" * 100)
    write(d, "sub/b", "y" * 50)
    assert wt.dir_size(d) == 150
    assert wt.dir_size(tmp_path / "missing") == 0


def test_is_dropping():
    assert wt.is_dropping(".aider.chat.history.md")
    assert wt.is_dropping("sub/.aider.tags.cache.v3/x")
    assert wt.is_dropping(".baton-prompt.md")
    assert not wt.is_dropping("src/aider.py")


def test_commit_all_with_dev_null_global_config(repo, worktree, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    write(worktree, "z.txt", "z\n")
    c = wt.commit_all(worktree, "no identity anywhere")
    assert g(repo, "log", "-1", "--format=%ae", c) == "baton@localhost"


def test_commit_all_is_one_git_commit_with_no_hook_signing_gc_or_clean_up(repo, worktree,
                                                                          monkeypatch):
    """The usual case (the index as Baton's checkout left it): `add -A`, then one `git
    commit` — and nothing of the person's commit settings reaches it."""
    failing_hooks(repo)
    for key, value in (("commit.gpgSign", "true"), ("gpg.program", "false"),
                       ("commit.cleanup", "strip"), ("gc.auto", "1"), ("gc.autoDetach", "false"),
                       ("commit.template", str(repo / "missing-template"))):
        g(repo, "config", key, value)
    write(worktree, "first.txt", "1\n")
    wt.commit_all(worktree, "first")  # learns HEAD: its droppings, the identity
    before = gitmod.head_commit(worktree)
    write(worktree, "a.txt", "changed\n")
    spawned = Spawned(monkeypatch)
    message = "Task 1: work\n\n# kept: not a comment\n\n\ntrailing blank lines kept\n\n"
    c = wt.commit_all(worktree, message)
    assert spawned.commands() == ["add", "commit"]
    assert c and g(worktree, "rev-parse", "HEAD") == c == g(repo, "rev-parse", "baton/p/1-a")
    assert g(repo, "rev-list", "--parents", "-n1", c).split() == [c, before]
    raw = subprocess.run(["git", "cat-file", "commit", c], cwd=repo, capture_output=True,
                         text=True, check=True).stdout
    assert raw.split("\n\n", 1)[1] == message  # verbatim: no line taken as a comment
    assert g(repo, "cat-file", "-t", f"{c}^{{tree}}") == "tree"
    assert not list((repo / ".git").glob("*-ran")), "a hook ran"
    assert not list((repo / ".git" / "objects" / "pack").glob("*.pack")), "gc ran"
    assert g(worktree, "status", "--porcelain") == ""
    # What it made is known without git: its tree and parent (the landing's fast path).
    assert refs.loose_commit(worktree, c) == (g(repo, "rev-parse", f"{c}^{{tree}}"), (before,))


def test_commit_all_leaves_a_half_done_merge_to_the_plumbing(repo, worktree, monkeypatch):
    """A merge the agent left half done: `git commit` would make a merge commit of it (and
    take a cherry-pick's author); Baton's commit stays one parent, on HEAD."""
    other = g(repo, "commit-tree", f"{gitmod.head_commit(repo)}^{{tree}}", "-m", "elsewhere")
    admin = gitmod.git_dirs(worktree)[0]
    (admin / "MERGE_HEAD").write_text(other + "\n")
    before = gitmod.head_commit(worktree)
    write(worktree, "a.txt", "merged by hand\n")
    spawned = Spawned(monkeypatch)
    c = wt.commit_all(worktree, "Task 1: work")
    assert "commit" not in spawned.commands()
    assert spawned.commands()[-2:] == ["commit-tree", "update-ref"]
    assert g(repo, "rev-list", "--parents", "-n1", c).split() == [c, before]


def test_loose_commit_reads_a_fresh_commit_and_leaves_the_rest_to_git(repo):
    head = gitmod.head_commit(repo)
    tree = g(repo, "rev-parse", "HEAD^{tree}")
    assert refs.loose_commit(repo, head) == (tree, ())
    assert refs.loose_commit(repo, tree) is None  # not a commit
    assert refs.loose_commit(repo, "0" * 40) is None  # no such object
    assert refs.loose_commit(repo, "HEAD") is None  # not an object id
    g(repo, "repack", "-adq")
    g(repo, "prune-packed")
    assert refs.loose_commit(repo, head) is None  # packed: git answers


def test_git_dirs_follows_a_worktree_removed_made_again_and_moved(repo, tmp_path):
    """What a `.git` names is remembered, and read again when the worktree's record is gone
    or its `.git` was written since: never an answer about a worktree that is no more."""
    import shutil

    place = tmp_path / "wt"
    g(repo, "worktree", "add", "-q", "-b", "one", str(place))
    first = gitmod.git_dirs(place)
    assert first is not None and first[1] == (repo / ".git").resolve()
    assert gitmod.git_dirs(place) == first  # remembered
    shutil.rmtree(first[0])  # its record pruned, its `.git` file left as it was
    assert gitmod.git_dirs(place) != first
    g(repo, "worktree", "prune")
    shutil.rmtree(place)
    g(repo, "worktree", "add", "-q", "-b", "two", str(place))
    assert gitmod.git_dirs(place) == first  # made again: the same record's name
    moved = repo / ".git" / "worktrees" / "moved"
    first[0].rename(moved)
    (place / ".git").write_text(f"gitdir: {moved}\n")
    again = gitmod.git_dirs(place)
    assert again is not None and again[0] == moved.resolve()
