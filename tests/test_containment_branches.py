"""Other tasks' branches held to Baton's record: a landed task's branch must hold the commit
that landed. An agent moving or deleting a landed sibling's branch has it put back (and is
flagged); a branch moved behind Baton's back is never merged home unseen. Hostile agents are
real programs (tests/agents/ref_mover.py) in real git repositories with the real `baton`.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from baton_tui.core.events import EventKind
from baton_tui.core.slug import integration_branch, task_branch
from baton_tui.gitops import refs
from baton_tui.plan.model import PlanDocument
from baton_tui.run.finish import Finisher
from baton_tui.workspace import Workspace
from helpers.containment_kit import DETECT_ONLY, assert_put_back, branch_ref, integration_ref
from helpers.run_kit import (
    events, git, load_plan, program, script_agent, task, task_status, write_config,
)

def _landed_tip(baton, task_id: int) -> str | None:
    landed = [e for e in events(baton) if e["kind"] == "task.landed" and e["task"] == task_id]
    return landed[-1]["data"].get("tip") if landed else None


def _sibling_mover(repo, baton, tmp_path, step: str) -> None:
    """Task 1 lands; task 2 (after it) moves task 1's branch with `step`, then lands."""
    plain = script_agent(tmp_path, "plain", {"1": [
        {"write": "one.txt", "content": "task one\n"}, {"report": "done", "summary": "one"}]})
    write_config(repo, {"plain": plain, "mover": program("ref_mover.py", "main", step)},
                 extra=DETECT_ONLY)
    load_plan(baton, [task(1, "One", player="plain"),
                      task(2, "Moves one", player="mover", deps=[1])])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [task_status(baton, n)["state"] for n in (1, 2)] == ["landed"] * 2


@pytest.mark.parametrize("step, how", [("rewind-task:1", "was moved to"),
                                       ("advance-task:1", "was moved to"),
                                       ("delete-task:1", "was deleted")])
def test_an_agent_moving_a_landed_siblings_branch_has_it_put_back_and_is_flagged(
        repo, baton, tmp_path, step, how):
    """Task 2's agent rewinds, advances or deletes landed task 1's branch: after task 2's
    attempt it is back at the commit `task.landed` recorded (made again when deleted), task 2
    is flagged naming the branch, and task 1 is not."""
    _sibling_mover(repo, baton, tmp_path, step)
    branch = branch_ref(baton, 1)
    tip = _landed_tip(baton, 1)
    assert tip and "one.txt" in git(repo, "ls-tree", "--name-only", tip).splitlines()
    assert_put_back(repo, baton, branch, tip, how)


def test_a_landed_branch_moved_before_a_landing_pass_is_put_back(repo, baton, tmp_path):
    """The landing pass checks the landed branches too: task 1 landed, its branch is moved
    (here by hand, as an agent still running would), and landing task 2 puts it back."""
    write_config(repo, {"agent": script_agent(tmp_path, "a", {})})
    load_plan(baton, [task(1, "One"), task(2, "Two")], approve=True)
    ws = Workspace(repo)
    plan = ws.store.current_plan()
    doc = PlanDocument.model_validate(plan.doc)
    git(repo, "branch", integration_branch(plan.slug), plan.base_commit)
    tips = {}
    for t in doc.tasks:
        branch = task_branch(plan.slug, t.id, t.title)
        git(repo, "branch", branch, plan.base_commit)
        (repo / f"t{t.id}.txt").write_text(f"{t.id}\n")
        git(repo, "add", f"t{t.id}.txt")
        tree = git(repo, "write-tree")
        git(repo, "reset", "-q")
        (repo / f"t{t.id}.txt").unlink()
        tips[t.id] = git(repo, "commit-tree", tree, "-p", plan.base_commit, "-m", f"t{t.id}")
        git(repo, "update-ref", f"refs/heads/{branch}", tips[t.id])
        ws.store.append(plan.id, t.id, EventKind.TASK_STARTED, {
            "player": "agent", "branch": branch, "base": plan.base_commit})
        ws.store.append(plan.id, t.id, EventKind.TASK_DONE, {"summary": f"task {t.id}"})
    one = f"refs/heads/{task_branch(plan.slug, 1, 'One')}"
    Finisher(ws, plan, doc).land(doc.tasks[0], None)
    assert _landed_tip(baton, 1) == tips[1]
    git(repo, "update-ref", one, plan.base_commit)  # task 1's work dropped off its branch
    Finisher(ws, plan, doc).land(doc.tasks[1], None)
    assert git(repo, "rev-parse", one) == tips[1]
    repaired = [e["data"] for e in events(baton) if e["kind"] == "run.repaired"]
    assert [(r["ref"], r["commit"]) for r in repaired] == [(one, tips[1])]


def test_an_older_store_without_landed_tips_checks_nothing(repo, baton, tmp_path):
    """A `task.landed` without `tip` (an older Baton's): its branch is not held."""
    write_config(repo, {"agent": script_agent(tmp_path, "a", {})})
    load_plan(baton, [task(1, "One")], approve=True)
    ws = Workspace(repo)
    plan = ws.store.current_plan()
    branch = task_branch(plan.slug, 1, "One")
    git(repo, "branch", branch, plan.base_commit)
    ws.store.append(plan.id, 1, EventKind.TASK_STARTED, {
        "player": "agent", "branch": branch, "base": plan.base_commit})
    ws.store.append(plan.id, 1, EventKind.TASK_LANDED, {"commit": plan.base_commit})
    git(repo, "branch", "-D", branch)
    from baton_tui.run import refguard

    assert refguard.hold_branches(ws, plan) == []
    assert git(repo, "branch", "--list", branch) == ""


def test_read_refs_answers_as_git_and_sees_every_kind_of_change(repo, monkeypatch):
    """`read_refs` trusts a ref file's stamp only while it holds: a git update, a deletion,
    a packed ref and even a write in place (same size, same inode) are all seen."""
    monkeypatch.setattr(refs, "RACY_NS", -10**12)  # trust every stamp at once
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    two = git(repo, "rev-parse", "HEAD")
    names = [f"refs/heads/baton/p/{n}-t" for n in range(1, 5)]
    for name in names:
        git(repo, "update-ref", name, head)
    assert refs.read_refs(repo, names) == {n: head for n in names}
    git(repo, "update-ref", names[0], two)
    git(repo, "update-ref", "-d", names[1])
    path = repo / ".git" / names[2]
    with open(path, "r+") as fh:  # in place: the inode stays
        fh.write(two + "\n")
    git(repo, "pack-refs", "--all")  # names[3] now only in packed-refs
    assert not (repo / ".git" / names[3]).exists()
    assert refs.read_refs(repo, names) == {names[0]: two, names[1]: None, names[2]: two,
                                           names[3]: head}
    assert refs.read_refs(repo, names) == dict(zip(names, refs.resolve(repo, *names)))


def test_read_refs_reads_no_file_whose_stamp_held(repo, monkeypatch):
    """Thousands of landed branches, checked after every attempt: once read, a ref whose
    file is as it was costs a `stat`, not an open."""
    monkeypatch.setattr(refs, "RACY_NS", -10**12)
    head = git(repo, "rev-parse", "HEAD")
    names = [f"refs/heads/baton/p/{n}-t" for n in range(1, 301)]
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, check=True, text=True,
                   input="".join(f"create {n} {head}\n" for n in names))
    assert set(refs.read_refs(repo, names).values()) == {head}
    opened: list[str] = []
    monkeypatch.setattr(refs, "open", lambda path, *a, **k: opened.append(str(path))
                        or open(path, *a, **k), raising=False)
    assert set(refs.read_refs(repo, names).values()) == {head}
    assert opened == []
    os.utime(repo / ".git" / names[7])  # its change time moves: read again
    refs.read_refs(repo, names)
    assert opened == [f"{repo / '.git'}/{names[7]}"]


# -- handoff: a branch moved behind Baton's back is never merged unseen -------------------------
def _two_landed(repo, baton, tmp_path) -> None:
    agent = script_agent(tmp_path, "a", {
        str(n): [{"write": f"t{n}.txt", "content": f"task {n}\n"},
                 {"report": "done", "summary": f"task {n}"}] for n in (1, 2)})
    write_config(repo, {"agent": agent})
    git(repo, "add", "baton.toml")
    git(repo, "commit", "-q", "-m", "baton.toml")
    load_plan(baton, [task(1, "One"), task(2, "Two")])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [task_status(baton, n)["state"] for n in (1, 2)] == ["landed"] * 2


def _review(baton) -> dict:
    import json

    result = baton("handoff", "review", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    return {t["id"]: t for t in json.loads(result.stdout)["tasks"]}


def test_handoff_stops_before_a_landed_branch_rewound_behind_batons_back(repo, baton, tmp_path):
    """After the run, task 2's branch is rewound to the approved commit (its work gone):
    review warns with the command that puts it back; merge merges task 1, stops before task 2
    with exit 1 naming the branch, the commit that landed and that command — and after the
    command, merges it."""
    _two_landed(repo, baton, tmp_path)
    two, tip = branch_ref(baton, 2), _landed_tip(baton, 2)
    base = git(repo, "rev-parse", "main")
    git(repo, "update-ref", two, base)
    moved = _review(baton)[2]["moved"]
    command = f"git update-ref {two} {tip}"
    assert (moved["from"], moved["to"], moved["descends"]) == (tip, base, False)
    assert moved["command"] == command and command in moved["said"]
    assert "moved" not in _review(baton)[1]
    text = baton("handoff", "review", "--stat").stdout
    assert f"⚠ its branch {two.removeprefix('refs/heads/')} was moved off" in text, text
    result = baton("handoff", "merge")
    assert result.returncode == 1, result.stdout + result.stderr
    said = (result.stdout + result.stderr).strip().splitlines()
    assert said[0] == "merged task 1 onto main", said
    stop = [line for line in said if line.startswith("baton: stopped at task 2")]
    assert len(stop) == 1 and tip in stop[0] and f"`{command}`" in stop[0], said
    files = git(repo, "ls-tree", "--name-only", "main").splitlines()
    assert "t1.txt" in files and "t2.txt" not in files
    assert task_status(baton, 2)["state"] == "landed"
    git(repo, *command.split()[1:])
    result = baton("handoff", "merge")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "t2.txt" in git(repo, "ls-tree", "--name-only", "main").splitlines()


def test_handoff_merges_commits_added_by_hand_on_a_landed_branch_and_says_so(
        repo, baton, tmp_path):
    """The person adds a commit on task 1's landed branch: review says so per task (`--json`
    and text), and merge brings that commit home with the task."""
    _two_landed(repo, baton, tmp_path)
    one, tip = branch_ref(baton, 1), _landed_tip(baton, 1)
    tree = git(repo, "rev-parse", f"{one}^{{tree}}")
    extra = git(repo, "commit-tree", tree, "-p", one, "-m", "by hand")
    git(repo, "update-ref", one, extra)
    moved = _review(baton)[1]["moved"]
    assert (moved["from"], moved["to"], moved["descends"]) == (tip, extra, True)
    assert "has commits added since it landed" in baton("handoff", "review", "--stat").stdout
    result = baton("handoff", "merge")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "note: task 1: its branch" in result.stdout
    assert subprocess.run(["git", "merge-base", "--is-ancestor", extra, "main"],
                          cwd=repo).returncode == 0


def test_the_apps_handoff_shows_a_moved_branch(repo, baton, tmp_path):
    """The app's handoff data carries the same warning, and its outline shows it."""
    from textual.widgets import Tree

    from baton_tui import api
    from baton_tui.tui.widgets.handoff_tree import fill

    _two_landed(repo, baton, tmp_path)
    git(repo, "update-ref", branch_ref(baton, 2), git(repo, "rev-parse", "main"))
    review = api.handoff_review(Workspace(repo))
    task2 = next(t for t in review.tasks if t.id == 2)
    assert task2.moved and task2.moved["descends"] is False
    assert next(t for t in review.tasks if t.id == 1).moved is None
    tree: Tree = Tree("handoff")
    fill(tree, review, {2})
    labels = [str(leaf.label) for node in tree.root.children for leaf in node.children]
    assert any(label.startswith("⚠ its branch") and "was moved off" in label
               for label in labels), labels


# -- prevented where the OS allows ----------------------------------------------------------
def test_an_agent_cannot_move_the_held_branches_where_the_os_allows(repo, baton, tmp_path):
    """In the agent's read-only view the integration branch, the person's branch and a
    landed sibling's branch are read-only files: its `git update-ref` of each is refused,
    while its own commit (the same folder, another file) goes through, and it lands."""
    from baton_tui.runners import readonly

    if why := readonly.available():
        pytest.skip(f"no read-only view here ({why}): detection only")
    before = git(repo, "rev-parse", "refs/heads/main")
    plain = script_agent(tmp_path, "plain", {"1": [
        {"write": "one.txt", "content": "task one\n"}, {"report": "done", "summary": "one"}]})
    steps = ["rewind-integration", "rewind-task:1", "delete-task:1", "person-new-tree",
             "commit:mine.txt"]
    write_config(repo, {"plain": plain, "mover": program("ref_mover.py", "main", *steps)})
    load_plan(baton, [task(1, "One", player="plain"),
                      task(2, "Moves them", player="mover", deps=[1])])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    log = baton("logs", "2").stdout
    for step in steps[:-1]:
        assert f"{step}: refused" in log, log
    assert "commit:mine.txt: committed" in log, log
    assert [task_status(baton, n)["state"] for n in (1, 2)] == ["landed"] * 2
    assert not task_status(baton, 2)["flags"], task_status(baton, 2)
    assert git(repo, "rev-parse", branch_ref(baton, 1)) == _landed_tip(baton, 1)
    assert git(repo, "rev-parse", "refs/heads/main") == before
    integration = git(repo, "for-each-ref", "--format=%(refname)",
                      "refs/heads/baton/*/integration")
    files = git(repo, "ls-tree", "-r", "--name-only", integration).splitlines()
    assert "one.txt" in files and "mine.txt" in files
    assert not [e for e in events(baton) if e["kind"] == "run.repaired"]


def test_the_read_only_ref_files_are_bounded_and_loose_only(repo):
    """At most HELD_MAX ref files are mounted (beyond, detection alone); a packed ref and a
    missing one have no file to mount."""
    from baton_tui.runners import readonly

    head = git(repo, "rev-parse", "HEAD")
    names = [f"refs/heads/baton/p/{n}-t" for n in range(readonly.HELD_MAX + 5)]
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, check=True, text=True,
                   input="".join(f"create {n} {head}\n" for n in names))
    git(repo, "branch", "packed")
    git(repo, "pack-refs", "--all", "--no-prune")
    (repo / ".git" / "refs" / "heads" / "packed").unlink()
    ws = Workspace(repo)
    worktree = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", "-b", "own", str(worktree))
    plan = readonly.layout(ws, worktree, None,
                           ["refs/heads/packed", "refs/heads/gone", "refs/heads/main", *names])
    assert plan is not None
    common = (repo / ".git").resolve()
    assert plan["files"][0] == str(common / "refs" / "heads" / "main")
    assert len(plan["files"]) == readonly.HELD_MAX
    assert plan["files"][1:] == [str(common / n) for n in names[:readonly.HELD_MAX - 1]]


def test_a_tag_named_like_a_branch_is_never_landed_reviewed_or_merged_in_its_place(
        repo, baton, tmp_path):
    """git's name lookup takes `refs/tags/X` before `refs/heads/X`. Task 1's agent tags a
    commit planting planted.txt under task 2's branch name and under the integration
    branch's: task 2 still lands its own branch, the review shows what landed, and the
    handoff merges the branches — planted.txt reaches nothing."""
    plain = script_agent(tmp_path, "plain", {"2": [
        {"write": "two.txt", "content": "task two\n"}, {"report": "done", "summary": "two"}]})
    write_config(repo, {"plain": plain, "tagger": program(
        "ref_mover.py", "main", "tag-branch:2-two", "tag-branch:integration")})
    load_plan(baton, [task(1, "Tags", player="tagger"), task(2, "Two", player="plain",
                                                             deps=[1])])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [task_status(baton, n)["state"] for n in (1, 2)] == ["landed"] * 2
    tags = git(repo, "tag", "--list", "baton/*").splitlines()
    assert sorted(t.rsplit("/", 1)[1] for t in tags) == ["2-two", "integration"], tags
    landed = git(repo, "ls-tree", "-r", "--name-only", integration_ref(repo)).splitlines()
    assert "two.txt" in landed and "planted.txt" not in landed, landed

    review = baton("handoff", "review", "--json")
    assert review.returncode == 0, review.stdout + review.stderr
    data = json.loads(review.stdout)
    assert "planted.txt" not in data["files"] and "two.txt" in data["files"], data["files"]
    two = next(t for t in data["tasks"] if t["id"] == 2)
    assert two["files"] == ["two.txt"] and "moved" not in two, two

    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    on_main = git(repo, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert "two.txt" in on_main and "planted.txt" not in on_main, on_main
