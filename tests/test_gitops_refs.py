"""What gitops answers without a git process, checked against git itself: ref-name rules,
refs read from their files, remembered identities; and the guards that come with them."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.gitops_fixtures import Spawned, commit_on, g, isolated_git, make_repo, write

from baton_tui.gitops import git as gitmod
from baton_tui.gitops import refs
from baton_tui.gitops import landing
from baton_tui.gitops import worktrees as wt

__all__ = ["isolated_git"]

INTEG = "baton/plan/integration"


@pytest.fixture
def repo(tmp_path):
    r = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    g(r, "branch", INTEG)
    return r


def git_accepts(name: str, branch: bool = False) -> bool:
    args = ["git", "check-ref-format", *(["--branch"] if branch else []), name]
    return subprocess.run(args, capture_output=True).returncode == 0


REF_ALPHABET = "ab/.-_@{}~^:?*[\\ \t"


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(REF_ALPHABET, min_size=0, max_size=12))
def test_ref_name_rules_match_git_check_ref_format(name):
    if "\0" in name:
        return
    if not name.startswith("-"):  # git's command line would read it as an option
        assert refs.valid_ref_name(name) == git_accepts(name), name
    full = f"refs/heads/{name}"
    assert refs.valid_ref_name(full) == git_accepts(full), full


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(REF_ALPHABET, min_size=1, max_size=12).filter(lambda n: "@{-" not in n))
def test_branch_name_rules_match_git(name):
    if name.startswith("-"):
        assert not refs.valid_branch_name(name)  # git would read it as an option
        return
    assert refs.valid_branch_name(name) == git_accepts(name, branch=True), name


def test_named_ref_rules():
    for good in ("refs/heads/baton/p/1-a", "heads/x", "refs/heads/a.b", "refs/heads/é"):
        assert refs.valid_ref_name(good), good
    for bad in ("main", "refs/heads/a..b", "refs/heads/.x", "refs/heads/x.lock", "refs//x",
                "refs/heads/x/", "refs/heads/x.", "refs/heads/a@{b", "@", "refs/heads/a b",
                "refs/heads/a\\b", "refs/heads/a~1", "refs/heads/a\x7f"):
        assert not refs.valid_ref_name(bad), bad
    assert not refs.valid_branch_name("HEAD")
    assert not refs.valid_branch_name("-x")


def test_read_ref_agrees_with_git_loose_packed_missing(repo, monkeypatch):
    head = g(repo, "rev-parse", "HEAD")
    spawned = Spawned(monkeypatch)
    assert refs.read_ref(repo, "HEAD") == head
    assert refs.read_ref(repo, "refs/heads/main") == head
    assert refs.read_ref(repo, f"refs/heads/{INTEG}") == head
    assert refs.read_ref(repo, "refs/heads/nope") is None
    assert refs.read_ref(repo, "refs/heads/main/below") is None  # a file is in the way
    assert len(spawned) == 0
    g(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert refs.read_ref(repo, "refs/heads/main") == head
    assert refs.read_ref(repo, f"refs/heads/{INTEG}") == head
    assert refs.read_ref(repo, "refs/heads/nope") is None
    # A loose ref written after packing wins over the packed line, as in git.
    second = commit_on(repo, INTEG, {"b.txt": "b\n"}, "two")
    assert refs.read_ref(repo, f"refs/heads/{INTEG}") == second
    assert len(spawned) == 0
    # Detached HEAD.
    g(repo, "switch", "-q", "--detach", second)
    assert refs.read_ref(repo, "HEAD") == second
    with pytest.raises(ValueError):
        refs.read_ref(repo, "main")


def test_read_ref_in_a_worktree_and_an_unborn_branch(repo, tmp_path):
    w = wt.add_worktree(repo, tmp_path / "home" / "wt" / "t", "baton/plan/1-a", "main")
    assert refs.read_ref(w, "HEAD") == g(w, "rev-parse", "HEAD")
    write(w, "c.txt", "c\n")
    commit = wt.commit_all(w, "c")
    assert refs.read_ref(w, "HEAD") == commit == refs.read_ref(repo, "refs/heads/baton/plan/1-a")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    g(fresh, "init", "-q", "-b", "main")
    assert refs.read_ref(fresh, "HEAD") is None
    # Below the top of a worktree, git is asked (once per folder) where its git dir is.
    assert refs.read_ref(w / ".." / w.name, "HEAD") == commit


def test_read_ref_asks_git_when_the_files_do_not_answer(repo, monkeypatch):
    head = g(repo, "rev-parse", "HEAD")
    (repo / ".git" / "reftable").mkdir()  # as the reftable backend has: files are not the truth
    spawned = Spawned(monkeypatch)
    assert refs.read_ref(repo, "refs/heads/main") == head
    assert refs.read_ref(repo, "refs/heads/nope") is None
    assert len(spawned) == 2


def test_resolve_and_tree_of(repo, monkeypatch):
    head = g(repo, "rev-parse", "HEAD")
    tree = g(repo, "rev-parse", "HEAD^{tree}")
    spawned = Spawned(monkeypatch)
    assert refs.resolve(repo, "HEAD^{commit}", "nope^{commit}", "--all", "HEAD^{tree}") == \
        [head, None, None, tree]
    assert len(spawned) == 1
    assert refs.tree_of(repo, head) == tree
    assert refs.tree_of(repo, head) == tree
    assert len(spawned) <= 2
    with pytest.raises(gitmod.GitError):
        refs.tree_of(repo, "0" * 40)


def test_identity_is_asked_once_per_repository_until_its_config_changes(repo, tmp_path,
                                                                        monkeypatch):
    w = wt.add_worktree(repo, tmp_path / "home" / "wt" / "t", "baton/plan/1-a", "main")
    spawned = Spawned(monkeypatch)
    assert gitmod.identity_env(repo) == gitmod.BATON_IDENTITY
    assert gitmod.identity_env(w) == gitmod.BATON_IDENTITY
    assert gitmod.identity_env(repo) == gitmod.BATON_IDENTITY
    assert [a[1] for a in spawned.argvs] == ["config"]
    g(repo, "config", "user.name", "Person")
    g(repo, "config", "user.email", "p@example.com")
    assert gitmod.identity_env(w) == {}
    assert gitmod.identity_env(repo) == {}
    assert [a[1] for a in spawned.argvs] == ["config", "config"]


def test_ensure_branch_refuses_a_bad_name_without_git(repo, monkeypatch):
    spawned = Spawned(monkeypatch)
    for bad in ("bad..name", "-x", "a b", "HEAD", "x.lock"):
        with pytest.raises(gitmod.GitError):
            wt.ensure_branch(repo, bad, "main")
    assert len(spawned) == 0
    with pytest.raises(gitmod.GitError):
        wt.ensure_branch(repo, "baton/plan/other", "0" * 40)  # no such object
    assert refs.read_ref(repo, "refs/heads/baton/plan/other") is None


def test_commit_and_land_cost_in_processes(repo, tmp_path, monkeypatch):
    base = g(repo, "rev-parse", INTEG)
    w = wt.add_worktree(repo, tmp_path / "home" / "wt" / "t1", "baton/plan/1-a", base)
    write(w, "first.txt", "1\n")
    wt.commit_all(w, "first")  # learns the base: its tree, its droppings; the identity
    landing.land(repo, "baton/plan/1-a", INTEG, "land 1")
    tip = g(repo, "rev-parse", INTEG)
    w2 = wt.add_worktree(repo, tmp_path / "home" / "wt" / "t2", "baton/plan/2-b", tip)
    w3 = wt.add_worktree(repo, tmp_path / "home" / "wt" / "t3", "baton/plan/3-c", tip)
    write(w3, "third.txt", "3\n")
    assert wt.commit_all(w3, "third")
    spawned = Spawned(monkeypatch)
    write(w2, "second.txt", "2\n")
    assert wt.commit_all(w2, "second")
    # The index as Baton's checkout left it: `git commit` writes tree, commit and HEAD.
    assert spawned.commands() == ["add", "commit"]
    assert g(w2, "status", "--porcelain") == ""  # its index installed, holding the commit
    assert g(w2, "log", "--format=%P %s", "-1") == f"{tip} second"
    spawned.argvs.clear()
    # Nothing landed since task 2's branch was cut: the merge is its commit's own tree, and
    # its commit object is written as the first landing's `commit-tree` wrote one
    # (`gitops/commit_object.py`): the ref's move is the one process.
    assert landing.land(repo, "baton/plan/2-b", INTEG, "land 2").ok
    assert [a[1] if a[1] != "-c" else a[3] for a in spawned.argvs] == ["update-ref"]
    spawned.argvs.clear()
    # Task 2 landed after task 3's branch was cut: a real merge.
    assert landing.land(repo, "baton/plan/3-c", INTEG, "land 3").ok
    assert [a[1] if a[1] != "-c" else a[3] for a in spawned.argvs] == \
        ["merge-tree", "update-ref"]
    for name, text in (("first", "1"), ("second", "2"), ("third", "3")):
        assert g(repo, "show", f"{INTEG}:{name}.txt") == text


def test_land_refuses_when_the_task_branch_moves_while_landing(repo, monkeypatch):
    commit_on(repo, "baton/plan/1-a", {"c.txt": "c\n"}, "t1", start="main")
    before = g(repo, "rev-parse", INTEG)
    real = landing.merge_tree

    def merge_then_move(*args):
        out = real(*args)
        commit_on(repo, "baton/plan/1-a", {"late.txt": "late\n"}, "late")  # after the read
        return out

    monkeypatch.setattr(landing, "merge_tree", merge_then_move)
    with pytest.raises(gitmod.GitError):
        landing.land(repo, "baton/plan/1-a", INTEG, "land")
    assert g(repo, "rev-parse", INTEG) == before


def test_land_of_a_contained_branch_changes_nothing(repo):
    tip = commit_on(repo, "t1", {"c.txt": "c\n"}, "t1", start="main")
    first = landing.land(repo, "t1", INTEG, "land").commit
    # Behind the integration branch, or equal to it: nothing to land either way.
    assert landing.land(repo, "t1", INTEG, "again").commit == first
    g(repo, "branch", "same", first)
    assert landing.land(repo, "same", INTEG, "same").commit == first
    assert g(repo, "rev-parse", INTEG) == first
    # A commit that is not contained but merges to the same tree still gets its merge.
    twin = g(repo, "commit-tree", f"{first}^{{tree}}", "-p", tip, "-m", "same tree")
    g(repo, "branch", "twin", twin)
    merged = landing.land(repo, "twin", INTEG, "twin")
    assert merged.ok and merged.commit != first
    assert g(repo, "rev-list", "--parents", "-n1", merged.commit).split()[1:] == [first, twin]


def test_commit_all_puts_back_a_tracked_dropping_the_agent_unstaged(repo, tmp_path):
    write(repo, ".aider.conf.yml", "model: x\n")
    g(repo, "add", ".aider.conf.yml")
    g(repo, "commit", "-qm", "aider config")
    w = wt.add_worktree(repo, tmp_path / "home" / "wt" / "x", "b", "main")
    g(w, "rm", "-q", "--cached", ".aider.conf.yml")
    write(w, "real.txt", "r\n")
    c = wt.commit_all(w, "m")
    files = set(g(repo, "ls-tree", "-r", "--name-only", c).splitlines())
    assert files == {".aider.conf.yml", "a.txt", "real.txt"}
    assert wt.holds_droppings(c) is True
