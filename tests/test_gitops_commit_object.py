"""A landing's merge commit written without `commit-tree` after the first: the same object."""

from __future__ import annotations

import os
import subprocess

import pytest

from helpers.gitops_fixtures import INTEG, commit_on, g, git_started, isolated_git, landing_repo

from baton_tui.gitops.landing import land

__all__ = ["isolated_git"]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return landing_repo(tmp_path, monkeypatch)


def commit_trees(tmp_path) -> int:
    return git_started(tmp_path, "commit-tree")


def as_git_writes_it(repo, commit: str) -> str:
    """`git commit-tree` of the same tree, parents, message and time as `commit`."""
    fields = g(repo, "show", "-s", "--format=%T%n%P%n%at %ad", "--date=raw", commit).split("\n")
    tree, parents, when = fields[0], fields[1].split(), fields[2].split(" ", 1)[1]
    message = subprocess.run(["git", "cat-file", "commit", commit], cwd=repo, check=True,
                             capture_output=True).stdout.split(b"\n\n", 1)[1]
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    env.pop("GIT_TRACE2_EVENT")
    return subprocess.run(["git", "commit-tree", tree, *[a for p in parents for a in ("-p", p)]],
                          cwd=repo, env=env, input=message, capture_output=True,
                          check=True).stdout.decode().strip()


def test_after_the_first_landing_the_merge_commit_is_the_one_commit_tree_writes(
        repo, tmp_path):
    tips = [commit_on(repo, f"t{i}", {f"f{i}.txt": f"{i}\n"}, f"task {i}", start="main")
            for i in (1, 2, 3)]
    results = [land(repo, f"t{i}", INTEG, f"land t{i}\n\nwith a body ünïcode") for i in (1, 2, 3)]
    assert all(r.ok for r in results)
    assert commit_trees(tmp_path) == 1  # the first only
    for result, tip in zip(results[1:], tips[1:]):
        assert result.commit == as_git_writes_it(repo, result.commit)
        assert g(repo, "rev-parse", f"{result.commit}^2") == tip
    assert g(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", INTEG) == \
        "Ann Person <ann@example.com>|Ann Person <ann@example.com>"
    assert g(repo, "fsck", "--strict", "--no-dangling") == ""
    assert g(repo, "rev-parse", INTEG) == results[-1].commit


def test_a_changed_identity_is_asked_of_git_again(repo, tmp_path):
    for i in (1, 2, 3):
        commit_on(repo, f"t{i}", {f"f{i}.txt": f"{i}\n"}, f"task {i}", start="main")
    land(repo, "t1", INTEG, "land t1")
    g(repo, "config", "user.name", "Bea Other")
    land(repo, "t2", INTEG, "land t2")
    assert commit_trees(tmp_path) == 2
    assert g(repo, "log", "-1", "--format=%an|%cn", INTEG) == "Bea Other|Bea Other"
    assert land(repo, "t3", INTEG, "land t3").ok and commit_trees(tmp_path) == 2


def test_a_shared_repository_is_left_to_commit_tree(repo, tmp_path):
    g(repo, "config", "core.sharedRepository", "group")
    os.chmod(repo / ".git" / "objects", 0o2775)
    for i in (1, 2):
        commit_on(repo, f"t{i}", {f"f{i}.txt": f"{i}\n"}, f"task {i}", start="main")
        assert land(repo, f"t{i}", INTEG, f"land t{i}").ok
    assert commit_trees(tmp_path) == 2
