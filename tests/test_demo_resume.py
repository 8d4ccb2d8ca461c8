"""`baton demo --tui` quit mid-run: the run is paused and the demo says so, and how to go on;
`baton demo --tui --dir D` then opens the kept sample again on the demo's own home and model
and the run continues to the end, its worktrees where they were made."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def wait_until(condition, timeout: float, what: str):
    """Poll `condition` until it gives something true (no guessed sleeps)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def tasks_now(repo: Path) -> dict[int, dict]:
    from baton_tui import api

    ws = api.open_workspace(repo)
    try:
        snap = api.snapshot(ws.store).as_json()
    finally:
        ws.close()
    return {t["id"]: t for t in snap["tasks"]}


def test_quit_mid_run_pauses_says_so_and_the_kept_demo_continues(tmp_path, monkeypatch, capsys):
    from baton_tui import cli
    from baton_tui.commands import demo
    from baton_tui.tui import launch

    base = tmp_path / "demo"
    repo = base / "textstats"
    home_before = os.environ["BATON_HOME"]
    seen: dict = {}

    def quit_mid_run() -> int:
        """The person approves and runs, then quits while tasks are running."""
        assert cli.main(["plan", "--from", str(base / "demo-plan.json")]) == 0
        assert cli.main(["run", "--approve", "--detach"]) == 0
        wait_until(lambda: any(t["state"] == "running" for t in tasks_now(repo).values()),
                   120, "a running task")
        return 0

    monkeypatch.setattr(launch, "run_app", quit_mid_run)
    args = Namespace(tui=True, dir=str(base), keep=False, baton=cli.main)
    assert demo.cmd_demo(args) == 0
    out = capsys.readouterr().out
    assert "the run is paused, not finished" in out
    assert f"baton demo --tui --dir {base}" in out
    assert os.environ["BATON_HOME"] == home_before  # the demo's home was its own only
    after_quit = tasks_now(repo)
    assert not any(t["state"] == "running" for t in after_quit.values()), after_quit
    assert any(t["state"] == "paused" for t in after_quit.values()), after_quit

    # From a plain shell (the person's own BATON_HOME) the kept sample's run is not resumed
    # on the wrong home and a model that is gone: one line says which command continues it.
    for argv in (["resume"], ["run"], ["retry", "2"]):
        plain = subprocess.run([sys.executable, "-m", "baton_tui", *argv], cwd=repo,
                               capture_output=True, text=True, timeout=60)
        assert plain.returncode == 2, (argv, plain.stdout, plain.stderr)
        assert plain.stderr.splitlines() == [
            "baton: this is a sample kept by `baton demo --tui`: its run needs the demo's "
            f"scripted model and home — `baton demo --tui --dir {base}` continues it"]
    assert tasks_now(repo) == after_quit  # nothing started, nothing changed

    def watch_it_finish() -> int:
        seen["home"] = os.environ["BATON_HOME"]
        wait_until(lambda: all(t["state"] == "landed" for t in tasks_now(repo).values()
                               if t["mode"] == "build"), 240, "every build task landed")
        seen["tasks"] = tasks_now(repo)
        return 0

    monkeypatch.setattr(launch, "run_app", watch_it_finish)
    assert demo.cmd_demo(args) == 0
    out = capsys.readouterr().out
    assert f"continuing the paused run of the sample at {repo}" in out
    assert seen["home"] == str(base / "baton-home")
    worktrees = [t["worktree"] for t in seen["tasks"].values() if t["worktree"]]
    assert worktrees and all(Path(w).is_relative_to(base / "baton-home") for w in worktrees)
    assert not any(t["state"] == "failed" for t in seen["tasks"].values()), seen["tasks"]


def test_a_dir_holding_something_else_is_refused(tmp_path):
    from baton_tui import cli
    from baton_tui.commands import demo
    from baton_tui.core.errors import BatonError

    (tmp_path / "demo" / "textstats").mkdir(parents=True)
    with pytest.raises(BatonError, match="is not a kept demo"):
        demo.cmd_demo(Namespace(tui=True, dir=str(tmp_path / "demo"), keep=True,
                                baton=cli.main))


def test_the_scripted_planner_says_it_ignores_the_goal():
    from baton_tui.demo.tui_demo import planner_turns

    first = planner_turns()[0]["text"]
    assert "whatever the goal and the answer" in first and "same sample plan" in first
