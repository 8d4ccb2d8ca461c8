"""Landing on the integration branch without a checkout; diffs; scope globs."""

from __future__ import annotations

import pytest

from helpers.gitops_fixtures import (
    all_refs, commit_on, g, isolated_git, make_repo, snapshot_files, write,
)

from baton_tui.gitops import git as gitmod
from baton_tui.gitops.git import GitError
from baton_tui.gitops.landing import (
    LandResult, changed_files, diff_stat, diff_text, files_outside, land,
)

INTEG = "baton/plan/integration"

__all__ = ["isolated_git"]


@pytest.fixture
def repo(tmp_path):
    r = make_repo(tmp_path / "repo", {"a.txt": "one\ntwo\nthree\n", "b.txt": "b\n"})
    g(r, "branch", INTEG)
    return r


@pytest.mark.parametrize("words,version", [
    ("git version 2.30.2", (2, 30, 2)),
    ("git version 2.37.1 (Apple Git-137.1)", (2, 37, 1)),
    ("git version 2.39.0.windows.1", (2, 39, 0)),
    ("git version 2.38", (2, 38, 0)),
    ("git version 2.45.2.vfs.0.0", (2, 45, 2)),
    ("not git at all", None),
])
def test_git_version_words_are_read_as_the_version(words, version):
    assert gitmod.parse_version(words) == version


def test_git_basics(repo, tmp_path):
    assert gitmod.supports_worktrees()
    assert gitmod.git_version() >= (2, 38, 0)
    assert gitmod.repo_root(repo / "a.txt") == repo.resolve()
    assert gitmod.repo_root(tmp_path / "home") is None
    assert gitmod.common_dir(repo) == (repo / ".git").resolve()
    assert gitmod.current_branch(repo) == "main"
    head = gitmod.head_commit(repo)
    assert gitmod.rev_parse(repo, "main") == head
    assert gitmod.rev_parse(repo, "nope") is None
    assert gitmod.rev_parse(repo, "--all") is None
    g(repo, "switch", "-q", "--detach")
    assert gitmod.current_branch(repo) is None
    with pytest.raises(GitError) as err:
        gitmod.git(repo, "rev-parse", "--verify", "no-such-ref")
    assert err.value.returncode != 0 and err.value.args_[0] == "rev-parse"


def test_is_dirty_counts_tracked_only(repo):
    assert not gitmod.is_dirty(repo)
    write(repo, "untracked.txt", "x")
    assert not gitmod.is_dirty(repo)
    write(repo, "a.txt", "changed\n")
    assert gitmod.is_dirty(repo)


def test_identity_env(repo):
    assert gitmod.identity_env(repo) == gitmod.BATON_IDENTITY
    g(repo, "config", "user.name", "Person")
    g(repo, "config", "user.email", "p@example.com")
    assert gitmod.identity_env(repo) == {}


def test_land_clean_makes_merge_commit_without_checkout(repo):
    tip = commit_on(repo, "baton/plan/1-a", {"c.txt": "c\n"}, "task 1", start="main")
    before_files = snapshot_files(repo)
    onto = g(repo, "rev-parse", INTEG)
    res = land(repo, "baton/plan/1-a", INTEG, "Land task 1")
    assert isinstance(res, LandResult) and res.ok and res.conflicts == []
    assert g(repo, "rev-parse", INTEG) == res.commit
    parents = g(repo, "rev-list", "--parents", "-n1", res.commit).split()[1:]
    assert parents == [onto, tip]
    assert g(repo, "log", "-1", "--format=%an <%ae>|%s", res.commit) == \
        "Baton <baton@localhost>|Land task 1"
    assert g(repo, "show", f"{res.commit}:c.txt") == "c"
    # nothing checked out: the person's files, branch and index are as they were
    assert snapshot_files(repo) == before_files
    assert gitmod.current_branch(repo) == "main" and not gitmod.is_dirty(repo)


def test_land_two_tasks_merge_and_noop(repo):
    commit_on(repo, "t1", {"a.txt": "ONE\ntwo\nthree\n"}, "t1", start="main")
    commit_on(repo, "t2", {"a.txt": "one\ntwo\nTHREE\n"}, "t2", start="main")
    r1 = land(repo, "t1", INTEG, "land t1")
    r2 = land(repo, "t2", f"refs/heads/{INTEG}", "land t2")
    assert r1.ok and r2.ok
    assert g(repo, "show", f"{INTEG}:a.txt") == "ONE\ntwo\nTHREE"
    again = land(repo, "t1", INTEG, "again")
    assert again.ok and again.commit == r2.commit
    assert g(repo, "rev-parse", INTEG) == r2.commit


def test_land_conflict_changes_nothing(repo):
    commit_on(repo, "t1", {"a.txt": "mine\n", "b.txt": "b1\n"}, "t1", start="main")
    commit_on(repo, "t2", {"a.txt": "theirs\n", "b.txt": "b2\n", "new.txt": "n\n"}, "t2",
              start="main")
    assert land(repo, "t1", INTEG, "land t1").ok
    refs = all_refs(repo)
    files = snapshot_files(repo)
    objects_dir_files = {p.name for p in (repo / ".git").iterdir()}
    res = land(repo, "t2", INTEG, "land t2")
    assert not res.ok and res.commit is None
    assert sorted(res.conflicts) == ["a.txt", "b.txt"]
    assert all_refs(repo) == refs
    assert snapshot_files(repo) == files
    assert {p.name for p in (repo / ".git").iterdir()} == objects_dir_files
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert not gitmod.is_dirty(repo)


def test_land_runs_no_hooks(repo):
    commit_on(repo, "t1", {"c.txt": "c\n"}, "t1", start="main")
    hooks = repo / ".git" / "hooks"
    for name in ("reference-transaction", "post-commit", "pre-commit"):
        (hooks / name).write_text("#!/bin/sh\ntouch \"$GIT_DIR/../hook-ran\"\nexit 1\n")
        (hooks / name).chmod(0o755)
    assert land(repo, "t1", INTEG, "land").ok
    assert not (repo / "hook-ran").exists()


def test_land_detects_concurrent_move(repo):
    commit_on(repo, "t1", {"c.txt": "c\n"}, "t1", start="main")
    commit_on(repo, "t2", {"d.txt": "d\n"}, "t2", start="main")
    checked = g(repo, "rev-parse", INTEG)
    # someone else lands t2 after we looked at the integration branch
    moved = land(repo, "t2", INTEG, "land t2").commit
    with pytest.raises(GitError):
        land(repo, "t1", INTEG, "land t1", expected_onto=checked)
    assert g(repo, "rev-parse", INTEG) == moved


def test_land_missing_refs(repo):
    with pytest.raises(GitError):
        land(repo, "no-such-branch", INTEG, "x")
    commit_on(repo, "t1", {"c.txt": "c\n"}, "t1", start="main")
    with pytest.raises(GitError):
        land(repo, "t1", "baton/other/integration", "x")


def test_diffs(repo):
    base = g(repo, "rev-parse", "main")
    (repo / "bin.dat").write_bytes(b"\x00\x01\x02" * 10)
    write(repo, "a.txt", "one\nTWO\nthree\nfour\n")
    g(repo, "rm", "-q", "b.txt")
    g(repo, "add", "-A")
    g(repo, "commit", "-q", "-m", "change")
    assert changed_files(repo, base, "HEAD") == ["a.txt", "b.txt", "bin.dat"]
    assert diff_stat(repo, base, "HEAD") == [("a.txt", 2, 1), ("b.txt", 0, 1), ("bin.dat", 0, 0)]
    text = diff_text(repo, base, "HEAD")
    assert "--- a/a.txt" in text and "+TWO" in text and "Binary files" in text
    assert changed_files(repo, "HEAD", "HEAD") == []


@pytest.mark.parametrize(
    "scope, expected",
    [
        ([], []),
        (["src/"], ["README.md", "docs/guide/intro.md", "tests/test_x.py"]),
        (["src"], ["README.md", "docs/guide/intro.md", "tests/test_x.py"]),
        (["src/**", "tests/*.py"], ["README.md", "docs/guide/intro.md"]),
        (["**/*.md"], ["src/app/main.py", "src/util.py", "tests/test_x.py"]),
        (["*.md"], ["docs/guide/intro.md", "src/app/main.py", "src/util.py", "tests/test_x.py"]),
        (["src/*.py"], ["README.md", "docs/guide/intro.md", "src/app/main.py",
                        "tests/test_x.py"]),
        (["docs/**/intro.md", "./README.md", "src/app/", "tests/test_?.py"], ["src/util.py"]),
        (["**"], []),
    ],
)
def test_files_outside(scope, expected):
    paths = ["README.md", "docs/guide/intro.md", "src/app/main.py", "src/util.py",
             "tests/test_x.py"]
    assert sorted(files_outside(paths, scope)) == expected
