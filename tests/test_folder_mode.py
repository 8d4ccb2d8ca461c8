"""Folder mode: without git (or with git older than 2.38) tasks run in the folder itself, one
at a time, and the handoff has nothing to merge."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import BatonCLI, git, write_plan

pytestmark = pytest.mark.slow

SCRIPT = {
    "1": [{"sleep": 0.7}, {"write": "one.txt", "content": "1\n"},
          {"report": "done", "summary": "one"}],
    "2": [{"sleep": 0.7}, {"write": "two.txt", "content": "2\n"},
          {"report": "done", "summary": "two"}],
    "3": [{"append": "one.txt", "content": "after\n"}, {"report": "done", "summary": "three"}],
}


def setup_folder(folder: Path, baton: BatonCLI) -> None:
    script = folder.parent / "agent-script.json"
    script.write_text(json.dumps(SCRIPT))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script)]
    (folder / "baton.toml").write_text(f"[players.custom.bot]\ncommand = {json.dumps(argv)}\n")
    assert baton("trust").returncode == 0
    plan = write_plan(folder.parent / "plan.json", [
        {"id": 1, "title": "One", "prompt": "one", "player": "bot"},
        {"id": 2, "title": "Two", "prompt": "two", "player": "bot"},
        {"id": 3, "title": "Three", "prompt": "three", "player": "bot", "depends_on": [1]},
    ], goal="Folder goal")
    loaded = baton("plan", "--from", str(plan))
    assert loaded.returncode == 0, loaded.stderr


def log_events(baton: BatonCLI) -> list[dict]:
    out = baton("log", "--json")
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def assert_one_at_a_time_in(folder: Path, baton: BatonCLI) -> None:
    events = log_events(baton)
    started = [e for e in events if e["kind"] == "task.started"]
    assert sorted(e["task"] for e in started) == [1, 2, 3]
    for e in started:
        assert Path(e["data"]["workdir"]).resolve() == folder.resolve()
        assert e["data"]["branch"] is None
    # one at a time: each task starts only after the previous one finished
    ends = {e["task"]: e["id"] for e in events if e["kind"] in ("task.done", "task.failed")}
    order = [e["task"] for e in started]
    for before, after in zip(order, order[1:]):
        start_of_after = next(e["id"] for e in started if e["task"] == after)
        assert ends[before] < start_of_after, (before, after)
    assert [e for e in events if e["kind"] == "task.landed"] == []


def assert_nothing_to_merge(baton: BatonCLI) -> None:
    for args in (("handoff", "merge"), ("handoff", "review")):
        result = baton(*args)
        assert result.returncode == 0, result.stderr
        assert "nothing to merge" in result.stdout


def test_a_plain_folder_runs_tasks_in_place_one_at_a_time(tmp_path, monkeypatch):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    monkeypatch.chdir(folder)
    baton = BatonCLI(folder)
    setup_folder(folder, baton)

    result = baton("run", "--approve")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "speedup" in result.stdout
    status = baton.json("status", "--json")
    assert [t["state"] for t in status["tasks"]] == ["done", "done", "done"]
    assert status["plan"]["base_branch"] is None
    assert status["plan"]["integration_branch"] is None
    assert [t["branch"] for t in status["tasks"]] == [None, None, None]
    assert (folder / "one.txt").read_text() == "1\nafter\n"
    assert (folder / "two.txt").read_text() == "2\n"
    assert (folder / "notes.txt").read_text() == "mine\n"
    assert (folder / ".baton" / "state" / "baton.db").is_file()
    assert not (folder / ".git").exists()
    assert_one_at_a_time_in(folder, baton)
    assert_nothing_to_merge(baton)
    gc = baton("gc")
    assert gc.returncode == 0 and "nothing to collect" in gc.stdout


def test_git_older_than_2_38_runs_in_the_checkout_itself(repo, tmp_path):
    """A `git` on PATH that reports 2.30: Baton falls back to folder mode in the repository."""
    real = shutil.which("git")
    assert real
    fake = tmp_path / "old-git"
    fake.mkdir()
    (fake / "git").write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ] || [ "$1" = "version" ]; then\n'
        "  echo 'git version 2.30.2'; exit 0\nfi\n"
        f'exec "{real}" "$@"\n')
    (fake / "git").chmod(0o755)
    env = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}

    class OldGit(BatonCLI):
        def __call__(self, *args, **kwargs):
            return super().__call__(*args, env={**env, **(kwargs.pop("env", None) or {})},
                                    **kwargs)

    baton = OldGit(repo)
    setup_folder(repo, baton)
    head = git(repo, "rev-parse", "HEAD")
    result = baton("run", "--approve")
    assert result.returncode == 0, result.stdout + result.stderr
    old_git_status = baton.json("status", "--json")
    assert [t["state"] for t in old_git_status["tasks"]] == ["done"] * 3
    assert [t["branch"] for t in old_git_status["tasks"]] == [None] * 3
    assert (repo / "one.txt").read_text() == "1\nafter\n"
    # the checkout is the tasks' own folder here: what they write in it is their work
    assert [t["flags"] for t in old_git_status["tasks"]] == [[]] * 3
    assert_one_at_a_time_in(repo, baton)
    # no worktree, no task branch, nothing committed: the work is in the person's checkout
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "worktree", "list").count("\n") == 0
    assert git(repo, "branch", "--list", "baton/*") == ""
    assert "?? one.txt" in git(repo, "status", "--porcelain")
    assert_nothing_to_merge(baton)
