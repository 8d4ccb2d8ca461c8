"""`baton handoff pr`: landed work pushed to a real bare remote on disk, pull requests opened
through the forge's CLI — here a stand-in `gh` (tests/agents/gh_standin.py) that records its
argv and answers as gh does; the flags it was given are checked against the real `gh`'s
`--help` (Debian's package) where it is installed.

The remote's URL is GitHub's (`https://github.com/acme/widgets.git`), which git rewrites to
the bare repository (`url.<path>.insteadOf`): the forge is told from the host, the pushes
land on disk.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from helpers.run_kit import AGENTS, git, load_plan, script_agent, status, task, write_config
from helpers.scripted_kit import Scripted

URL = "https://github.com/acme/widgets.git"


@pytest.fixture
def forge(repo, tmp_path, monkeypatch):
    """A bare remote `origin` holding main, and the stand-in `gh` first on PATH."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(repo, "remote", "add", "origin", URL)
    git(repo, "config", f"url.{remote}.insteadOf", URL)
    git(repo, "push", "-q", "origin", "main")
    bin_dir = tmp_path / "forge-bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(f"#!/bin/sh\nexec {sys.executable} {AGENTS / 'gh_standin.py'} \"$@\"\n")
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    state = tmp_path / "gh-state"
    monkeypatch.setenv("GH_STANDIN_DIR", str(state))
    monkeypatch.setenv("GH_STANDIN_REMOTE", str(remote))
    monkeypatch.setenv("GH_STANDIN_SIGNED_IN", "1")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    class Forge:
        path = remote
        standin = bin_dir

        @staticmethod
        def calls() -> list[list[str]]:
            log = state / "calls.jsonl"
            return [json.loads(line)["argv"] for line in log.read_text().splitlines()] \
                if log.exists() else []

        @staticmethod
        def prs() -> list[dict]:
            path = state / "prs.json"
            return json.loads(path.read_text()) if path.exists() else []

        @staticmethod
        def heads() -> dict[str, str]:
            out = git(remote, "for-each-ref", "--format=%(refname:short) %(objectname)",
                      "refs/heads/")
            return dict(line.split() for line in out.splitlines())

        @staticmethod
        def files(ref: str) -> set[str]:
            proc = subprocess.run(["git", "ls-tree", "-r", "--name-only", ref], cwd=remote,
                                  capture_output=True, text=True)
            assert proc.returncode == 0, (proc.stderr, Forge.heads())
            return set(proc.stdout.split())

    return Forge


def writes(n: int) -> list[dict]:
    return [{"write": f"t{n}.txt", "content": f"task {n}\n"},
            {"report": "done", "summary": f"wrote t{n}.txt (SUMMARY-{n})"}]


def run_dag(repo, baton, tmp_path, tasks: list[dict], *, real: bool = False) -> None:
    """Run `tasks` to their landing. The run is the set-up, not what is tested: the real
    conductor in this process, the agents' scripts played by the scripted runner (the same
    branches, landings and store); `real`: `baton run` with the demo agent as a process."""
    scripts = {str(t["id"]): writes(t["id"]) for t in tasks}
    write_config(repo, {"agent": script_agent(tmp_path, "pr", scripts)})
    load_plan(baton, tasks, goal="Publish GOAL-77 as pull requests")
    if real:
        result = baton("run", "--approve", timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
    else:
        assert Scripted(repo).run(scripts, timeout=120) == 0


FIVE = [task(1, "Base module"), task(2, "Parser", deps=[1]), task(3, "Printer", deps=[1]),
        task(4, "Wire both", deps=[2, 3]), task(5, "Docs")]


def test_single_pr_pushes_one_branch_and_updates_the_same_pr(repo, baton, tmp_path, forge):
    run_dag(repo, baton, tmp_path, FIVE[:3])
    out = baton("handoff", "pr")
    assert out.returncode == 0, out.stdout + out.stderr
    slug = status(baton)["plan"]["slug"]
    branch = f"baton/{slug}/pr/all"
    assert forge.files(branch) == {"README.md", "t1.txt", "t2.txt", "t3.txt"}, (out.stdout, forge.heads())
    assert f"opened #1 https://github.com/acme/widgets/pull/1  ({branch} → main)" in out.stdout
    [pr] = forge.prs()
    assert (pr["head"], pr["base"], pr["title"]) == (branch, "main",
                                                     "Publish GOAL-77 as pull requests")
    body = pr["body"]
    assert "## Goal" in body and "GOAL-77" in body and "| 2 | Parser | agent |" in body
    assert "SUMMARY-1" in body and "SUMMARY-3" in body and "## Run" in body
    calls = forge.calls()
    assert [c[:3] for c in calls] == [["auth", "status", "--hostname"],
                                      ["pr", "list", "--repo"], ["pr", "create", "--repo"]]
    assert calls[2][calls[2].index("--repo") + 1] == "acme/widgets"
    st = status(baton)
    assert st["plan"]["pr"]["number"] == 1 and st["plan"]["pr"]["branch"] == branch
    assert st["plan"]["pr"]["url"] == "https://github.com/acme/widgets/pull/1"
    review = baton.json("handoff", "review", "--json")
    assert review["pr"]["number"] == 1

    tip = forge.heads()[branch]
    again = baton("handoff", "pr", "--json")
    assert again.returncode == 0, again.stderr
    done = json.loads(again.stdout)
    assert done["pushes"] == [] and [p["action"] for p in done["prs"]] == ["updated"]
    assert forge.heads()[branch] == tip  # the same landed work makes the same commit
    assert len(forge.prs()) == 1
    assert forge.calls()[-1][:3] == ["pr", "edit", "1"]


def test_stack_of_a_five_task_dag_published_twice(repo, baton, tmp_path, forge):
    run_dag(repo, baton, tmp_path, FIVE, real=True)  # this file's run end to end
    out = baton("handoff", "pr", "--stack", "--draft", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    first = json.loads(out.stdout)
    prs = first["prs"]
    # Plan order, dependencies first, with work a task's branch carries (cut after another
    # landed) before it — the order `handoff merge` uses: each pull request shows only its task.
    order = [p["task"] for p in prs]
    assert sorted(order) == [1, 2, 3, 4, 5]
    assert all(order.index(d) < order.index(t["id"]) for t in FIVE for d in t["depends_on"])
    assert [p["action"] for p in prs] == ["opened"] * 5
    assert prs[0]["base"] == "main"
    assert [p["base"] for p in prs[1:]] == [p["branch"] for p in prs[:-1]]  # each on the one before
    heads = forge.heads()
    for k, pr in enumerate(prs, start=1):  # branch k holds the first k tasks, nothing after
        assert forge.files(pr["branch"]) == {"README.md", *(f"t{n}.txt" for n in order[:k])}
        assert heads[pr["branch"]] == pr["commit"]
    made = forge.prs()
    assert len(made) == 5 and all(p["draft"] for p in made)
    number = {p["task"]: p["number"] for p in prs}
    four = made[number[4] - 1]["body"]
    assert f"Part {order.index(4) + 1} of 5" in four and "SUMMARY-4" in four
    assert f"Depends on: task 2 (#{number[2]}), task 3 (#{number[3]})" in four
    assert {t["id"]: t["pr"]["number"] for t in status(baton)["tasks"]} == number
    review = baton.json("handoff", "review", "--json")
    assert {t["id"]: t["pr"]["number"] for t in review["tasks"]} == number

    # Opened from the bottom up, each body then names the ones above it by number too.
    assert f"5. task {prs[-1]['task']}:" in made[0]["body"] and "— #5" in made[0]["body"]
    assert "`baton/" not in "".join(p["body"].split("## The stack")[1] for p in made)
    calls_before = len(forge.calls())
    out = baton("handoff", "pr", "--stack", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    second = json.loads(out.stdout)
    assert second["pushes"] == []  # unchanged work: the same commits are already there
    assert [p["action"] for p in second["prs"]] == ["updated"] * 5
    assert [p["number"] for p in second["prs"]] == [1, 2, 3, 4, 5]  # the same, in order
    assert len(forge.prs()) == 5  # updated, not duplicated
    assert forge.heads() == heads
    creates = [c for c in forge.calls() if c[:2] == ["pr", "create"]]
    edits = [c for c in forge.calls()[calls_before:] if c[:2] == ["pr", "edit"]]
    assert len(creates) == 5 and [e[2] for e in edits] == ["1", "2", "3", "4", "5"]
    last = prs[-1]
    assert f"5. task {last['task']}: {last['title'].split(': ', 1)[1]} — #5" \
        in forge.prs()[0]["body"]


def test_a_branch_baton_did_not_push_is_never_overwritten(repo, baton, tmp_path, forge):
    run_dag(repo, baton, tmp_path, FIVE[:1])
    slug = status(baton)["plan"]["slug"]
    git(repo, "push", "-q", "origin", f"main:refs/heads/baton/{slug}/pr/all")
    before = forge.heads()
    out = baton("handoff", "pr")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "which Baton did not push" in out.stderr and "nothing was pushed" in out.stderr
    assert forge.heads() == before and forge.prs() == []


def test_a_missing_or_signed_out_forge_cli_is_one_line_and_nothing_is_pushed(
        repo, baton, tmp_path, forge, monkeypatch):
    run_dag(repo, baton, tmp_path, FIVE[:1])
    before = forge.heads()
    monkeypatch.setenv("GH_STANDIN_SIGNED_IN", "0")
    out = baton("handoff", "pr")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "baton: gh is not signed in to github.com: run `gh auth login --hostname github.com` "
        "— nothing was pushed"]
    no_gh = tmp_path / "no-gh-bin"
    no_gh.mkdir()
    (no_gh / "git").symlink_to(shutil.which("git"))
    out = baton("handoff", "pr", "--stack", env={"PATH": str(no_gh)})
    assert out.returncode == 2
    [line] = out.stderr.strip().splitlines()
    assert "gh is not installed" in line and "gh auth login" in line
    assert forge.heads() == before and forge.prs() == []


def test_dry_run_prints_the_pushes_and_calls_and_does_none(repo, baton, tmp_path, forge):
    run_dag(repo, baton, tmp_path, FIVE[:2])
    before = forge.heads()
    out = baton("handoff", "pr", "--stack", "--dry-run")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("dry run: nothing is pushed")
    assert lines[1].startswith("would run: git push --atomic --porcelain --force-with-lease=")
    assert sum(line.startswith("would run: gh pr create --repo acme/widgets --head")
               for line in lines) == 2
    assert forge.heads() == before and forge.calls() == []


def test_the_calls_have_the_shape_real_gh_takes(repo, baton, tmp_path, forge):
    """Every flag Baton gave the stand-in is one the real `gh` lists for that command."""
    real = shutil.which("gh", path=os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if p != str(forge.standin)))
    if real is None:
        if os.environ.get("CI"):
            pytest.fail("the real gh is not installed (.ci/run installs Debian's gh)")
        pytest.skip("the real gh is not installed here (apt install gh)")
    run_dag(repo, baton, tmp_path, FIVE[:2])
    assert baton("handoff", "pr", "--stack").returncode == 0
    assert baton("handoff", "pr", "--stack").returncode == 0
    seen = {tuple(c[:2]) for c in forge.calls()}
    assert seen == {("auth", "status"), ("pr", "list"), ("pr", "create"), ("pr", "edit")}
    helps: dict[tuple, str] = {}
    for call in forge.calls():
        command = tuple(call[:2])
        if command not in helps:
            helps[command] = subprocess.run([real, *command, "--help"], capture_output=True,
                                            text=True, env={**os.environ, "GH_NO_UPDATE_NOTIFIER": "1"}
                                            ).stdout
        for arg in call[2:]:
            if arg.startswith("--"):
                assert f"{arg} " in helps[command], f"gh {' '.join(command)} has no {arg}"


def test_the_forge_is_told_from_the_remote_or_the_config(tmp_path):
    from baton_tui.core.errors import BatonError
    from baton_tui.handoff.forge import choose, where

    assert where("git@github.com:acme/widgets.git").path == "acme/widgets"
    assert where("ssh://git@gitlab.example.com:2222/group/sub/app").host == "gitlab.example.com"
    assert where("https://github.com/acme/widgets").path == "acme/widgets"
    assert where("/srv/git/app.git").host is None
    assert choose("git@github.com:acme/widgets.git", None, tmp_path).cli == "gh"
    lab = choose("https://gitlab.example.com/group/app.git", None, tmp_path)
    assert lab.cli == "glab" and lab.repo_args == ["--repo", "https://gitlab.example.com/group/app"]
    assert lab.create_argv("b", "main", "T", tmp_path / "body", "BODY", draft=True) == [
        "glab", "mr", "create", "--repo", "https://gitlab.example.com/group/app",
        "--source-branch", "b", "--target-branch", "main", "--title", "T",
        "--description", "BODY", "--yes", "--draft"]
    assert choose("/srv/git/app.git", "gitlab", tmp_path).repo_args == []
    with pytest.raises(BatonError, match=r'set \[handoff\] forge = "github" or "gitlab"'):
        choose("/srv/git/app.git", None, tmp_path)


def test_new_work_is_pushed_over_batons_own_branch_only(repo, baton, tmp_path, forge):
    """Work that moved (a commit added on a task's branch) is pushed over the branch Baton
    left, leased to that commit, and the same pull request is updated; a branch someone else
    moved since is refused, and nothing is pushed."""
    run_dag(repo, baton, tmp_path, FIVE[:2])
    assert baton("handoff", "pr").returncode == 0
    slug = status(baton)["plan"]["slug"]
    branch = f"baton/{slug}/pr/all"
    first = forge.heads()[branch]
    task_branch = next(t["branch"] for t in status(baton)["tasks"] if t["id"] == 2)
    tip = git(repo, "rev-parse", task_branch)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, text=True,
                          input="more by hand\n", capture_output=True, check=True).stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=repo, capture_output=True, text=True,
                          check=True, input=git(repo, "ls-tree", tip) +
                          f"\n100644 blob {blob}\textra.txt\n").stdout.strip()
    added = git(repo, "commit-tree", tree, "-p", tip, "-m", "a commit added by hand")
    git(repo, "update-ref", f"refs/heads/{task_branch}", added, tip)

    out = baton("handoff", "pr", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    done = json.loads(out.stdout)
    assert [(p["branch"], p["expect"]) for p in done["pushes"]] == [(branch, first)]
    assert "extra.txt" in forge.files(branch) and forge.heads()[branch] != first
    assert [p["action"] for p in done["prs"]] == ["updated"] and len(forge.prs()) == 1

    # Someone pushes to Baton's branch: the next run refuses rather than overwrite it.
    git(repo, "push", "-q", "--force", "origin", f"main:refs/heads/{branch}")
    theirs = forge.heads()[branch]
    git(repo, "update-ref", f"refs/heads/{task_branch}", tip, added)  # the work moves back
    out = baton("handoff", "pr")
    assert out.returncode == 2 and "which Baton did not push" in out.stderr
    assert forge.heads()[branch] == theirs
