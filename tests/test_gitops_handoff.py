"""Handoff review and merge into the person's checkout."""

from __future__ import annotations

import pytest

from helpers.gitops_fixtures import (
    all_refs, commit_on, g, isolated_git, make_repo, snapshot_files, write,
)

from baton_tui.core.errors import BatonError
from baton_tui.gitops import git as gitmod
from baton_tui.gitops.handoff import MergeOutcome, TaskBranch, merge, review
from baton_tui.gitops.landing import land

__all__ = ["isolated_git"]

INTEG = "baton/p/integration"


@pytest.fixture
def repo(tmp_path):
    r = make_repo(tmp_path / "repo", {"shared.txt": "1\n2\n3\n", "keep.txt": "k\n"})
    g(r, "branch", INTEG)
    return r


def three_tasks(repo) -> list[TaskBranch]:
    commit_on(repo, "baton/p/1-a", {"a.txt": "a\n"}, "task 1", start="main")
    commit_on(repo, "baton/p/2-b", {"b.txt": "b\n", "shared.txt": "ONE\n2\n3\n"}, "task 2",
              start="main")
    commit_on(repo, "baton/p/3-c", {"c.txt": "c\n", "keep.txt": None}, "task 3", start="main")
    return [TaskBranch(1, "Add a", "baton/p/1-a"), TaskBranch(2, "Add b", "baton/p/2-b"),
            TaskBranch(3, "Add c", "baton/p/3-c")]


def test_review_sections(repo):
    tasks = three_tasks(repo)
    base = g(repo, "rev-parse", "main")
    for t in tasks:
        assert land(repo, t.branch, INTEG, f"land {t.id}").ok
    r = review(repo, base, INTEG, tasks)
    assert r["base"] == base and r["integration"] == INTEG
    assert r["files"] == ["a.txt", "b.txt", "c.txt", "keep.txt", "shared.txt"]
    assert r["stats"] == {"files": 5, "added": 4, "deleted": 2}
    assert "+ONE" in r["diff"] and "-k" in r["diff"]
    t1, t2, t3 = r["tasks"]
    assert (t1["id"], t1["title"], t1["branch"]) == (1, "Add a", "baton/p/1-a")
    assert t1["files"] == ["a.txt"] and (t1["added"], t1["deleted"]) == (1, 0)
    assert "+a" in t1["diff"] and "b.txt" not in t1["diff"]
    assert t2["files"] == ["b.txt", "shared.txt"] and (t2["added"], t2["deleted"]) == (2, 1)
    assert t3["files"] == ["c.txt", "keep.txt"] and (t3["added"], t3["deleted"]) == (1, 1)


def test_review_dependent_task_is_against_base(repo):
    base = g(repo, "rev-parse", "main")
    commit_on(repo, "t1", {"a.txt": "a\n"}, "t1", start="main")
    land(repo, "t1", INTEG, "land t1")
    commit_on(repo, "t2", {"b.txt": "b\n"}, "t2", start=INTEG)  # cut after its dependency
    land(repo, "t2", INTEG, "land t2")
    r = review(repo, base, INTEG, [TaskBranch(2, "two", "t2")])
    assert r["files"] == ["a.txt", "b.txt"]
    assert r["tasks"][0]["files"] == ["a.txt", "b.txt"]


def test_merge_in_order(repo):
    tasks = three_tasks(repo)
    out = merge(repo, "main", tasks)
    assert out == MergeOutcome(merged=[1, 2, 3], skipped=[], conflict=None)
    subjects = g(repo, "log", "--first-parent", "--format=%s", "-3").splitlines()
    assert subjects == ["Merge task 3: Add c", "Merge task 2: Add b", "Merge task 1: Add a"]
    assert g(repo, "log", "-1", "--format=%an", "HEAD") == "Baton"
    assert len(g(repo, "rev-list", "--parents", "-n1", "HEAD").split()) == 3  # --no-ff
    assert (repo / "c.txt").exists() and not (repo / "keep.txt").exists()
    assert not gitmod.is_dirty(repo)
    again = merge(repo, "main", tasks)
    assert again == MergeOutcome(merged=[], skipped=[1, 2, 3], conflict=None)


def test_merge_stops_at_first_conflict_then_resumes(repo):
    tasks = three_tasks(repo)
    # the person changed shared.txt on main meanwhile: task 2 conflicts
    write(repo, "shared.txt", "uno\n2\n3\n")
    g(repo, "commit", "-qam", "person edits shared")
    write(repo, "scratch.txt", "untracked, stays\n")
    out = merge(repo, "main", tasks)
    assert out.merged == [1] and out.skipped == []
    assert out.conflict == {"id": 2, "branch": "baton/p/2-b", "files": ["shared.txt"],
                            "command": "git merge --no-ff baton/p/2-b"}
    # tree untouched after task 1's merge; task 3 not merged
    head = g(repo, "rev-parse", "HEAD")
    assert g(repo, "log", "-1", "--format=%s") == "Merge task 1: Add a"
    assert not gitmod.is_dirty(repo)
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert (repo / "shared.txt").read_text() == "uno\n2\n3\n"
    assert not (repo / "c.txt").exists()
    proc = gitmod.run_git(repo, "merge-base", "--is-ancestor", "baton/p/3-c", "HEAD")
    assert proc.returncode == 1
    refs, files = all_refs(repo), snapshot_files(repo)
    assert merge(repo, "main", tasks).conflict["id"] == 2  # a rerun stops at the same place
    assert (all_refs(repo), snapshot_files(repo), g(repo, "rev-parse", "HEAD")) == \
        (refs, files, head)

    # the person finishes it by hand with the command given
    proc = g(repo, *out.conflict["command"].split()[1:], check=False)
    assert "CONFLICT" in proc
    write(repo, "shared.txt", "ONE uno\n2\n3\n")
    g(repo, "add", "shared.txt")
    g(repo, "commit", "-q", "--no-edit")
    out2 = merge(repo, "main", tasks)
    assert out2 == MergeOutcome(merged=[3], skipped=[1, 2], conflict=None)
    assert (repo / "c.txt").exists() and (repo / "scratch.txt").exists()


def test_merge_refuses_dirty_tree_but_not_untracked(repo):
    tasks = three_tasks(repo)
    write(repo, "notes.txt", "untracked\n")
    write(repo, "keep.txt", "edited\n")
    with pytest.raises(BatonError) as err:
        merge(repo, "main", tasks)
    assert err.value.code == 2
    assert err.value.message == \
        "uncommitted changes to tracked files: keep.txt; commit or stash them first"
    g(repo, "checkout", "--", "keep.txt")
    g(repo, "add", "shared.txt")  # staged (no change) is fine
    out = merge(repo, "main", tasks[:1])
    assert out.merged == [1]
    write(repo, "shared.txt", "staged\n")
    g(repo, "add", "shared.txt")
    with pytest.raises(BatonError):
        merge(repo, "main", tasks)


def test_merge_refuses_wrong_branch(repo):
    tasks = three_tasks(repo)
    g(repo, "switch", "-q", "-c", "feature")
    head = g(repo, "rev-parse", "HEAD")
    with pytest.raises(BatonError) as err:
        merge(repo, "main", tasks)
    assert err.value.code == 2
    assert err.value.message == ("wrong branch: feature is checked out; handoff merges onto "
                                 "main — run `git switch main`")
    g(repo, "switch", "-q", "--detach")
    with pytest.raises(BatonError, match="detached HEAD"):
        merge(repo, "main", tasks)
    assert g(repo, "rev-parse", "HEAD") == head


def test_merge_with_person_identity_and_missing_branch(repo):
    g(repo, "config", "user.name", "Person")
    g(repo, "config", "user.email", "p@example.com")
    tasks = three_tasks(repo)
    assert merge(repo, "main", tasks[:1]).merged == [1]
    assert g(repo, "log", "-1", "--format=%an", "HEAD") == "Person"
    with pytest.raises(BatonError):
        merge(repo, "main", [TaskBranch(9, "gone", "baton/p/9-gone")])


# -- a person working in the checkout while the merge runs (issue 28) --------------------------
def _merge_of(repo, branch: str) -> tuple[str, str]:
    """The commit a handoff would move main to (made in the object store), and main's tip."""
    from baton_tui.gitops.worktrees import _commit_tree

    tip = g(repo, "rev-parse", "main")
    tree = g(repo, "merge-tree", "--write-tree", tip, branch).splitlines()[0]
    return tip, _commit_tree(repo, tree, [tip, g(repo, "rev-parse", branch)], "merge")


def test_a_commit_of_yours_during_the_merge_stops_it_and_keeps_your_line(repo):
    """Baton read main and made the merge; then the person commits a line. Moving main
    and the checkout to the merge stops, with the person's commit and files untouched."""
    from baton_tui.gitops.advance import advance

    commit_on(repo, "baton/p/2-b", {"b.txt": "b\n", "shared.txt": "ONE\n2\n3\n"}, "task 2",
              start="main")
    tip, merged = _merge_of(repo, "baton/p/2-b")
    write(repo, "keep.txt", "k\nthe person's line\n")
    g(repo, "commit", "-qam", "the person's commit")
    mine = g(repo, "rev-parse", "HEAD")
    before = snapshot_files(repo)
    with pytest.raises(BatonError) as err:
        advance(repo, "refs/heads/main", tip, merged, "handoff")
    assert err.value.code == 1 and "moved while merging" in err.value.message
    assert g(repo, "rev-parse", "main") == mine
    assert snapshot_files(repo) == before and not gitmod.is_dirty(repo)
    assert (repo / "keep.txt").read_text() == "k\nthe person's line\n"
    assert not (repo / ".git" / "index.lock").exists()


def test_a_git_command_of_yours_running_stops_the_merge_untouched(repo):
    """The person's git holds the checkout's lock (index.lock): nothing is merged or written."""
    tasks = three_tasks(repo)
    (repo / ".git" / "index.lock").write_text("")
    before, refs_before = snapshot_files(repo), all_refs(repo)
    with pytest.raises(BatonError) as err:
        merge(repo, "main", tasks)
    assert err.value.code == 1 and "index.lock" in err.value.message
    assert snapshot_files(repo) == before and all_refs(repo) == refs_before
    (repo / ".git" / "index.lock").unlink()
    assert merge(repo, "main", tasks).merged == [1, 2, 3]


def test_an_edit_of_yours_during_the_merge_stops_it_untouched(repo):
    from baton_tui.gitops.advance import advance

    commit_on(repo, "baton/p/2-b", {"b.txt": "b\n", "shared.txt": "ONE\n2\n3\n"}, "task 2",
              start="main")
    tip, merged = _merge_of(repo, "baton/p/2-b")
    write(repo, "shared.txt", "1\n2\n3\nmy edit\n")
    before = snapshot_files(repo)
    with pytest.raises(BatonError) as err:
        advance(repo, "refs/heads/main", tip, merged, "handoff")
    assert err.value.code == 2
    assert snapshot_files(repo) == before and g(repo, "rev-parse", "main") == tip
