"""`baton demo --tui` quit mid-run: the run is paused and the demo says so, and how to go on;
`baton demo --tui --dir D` then opens the kept sample again on the demo's own home and model
and the run continues, and so do a plain `baton retry` and `baton resume` in the sample, to
the end, its worktrees where they were made."""

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


def quitting_mid_run(base: Path, repo: Path):
    """The app's stand-in for the demo in `base`: the person approves and runs its plan,
    then quits while tasks are running."""
    from baton_tui import cli

    def quit_mid_run(leaving: str | None = None) -> int:  # (what the app says as it quits)
        assert cli.main(["plan", "--from", str(base / "demo-plan.json")]) == 0
        assert cli.main(["run", "--approve", "--detach"]) == 0
        wait_until(lambda: any(t["state"] == "running" for t in tasks_now(repo).values()),
                   120, "a running task")
        return 0

    return quit_mid_run


def test_quit_mid_run_pauses_says_so_and_the_kept_demo_continues(tmp_path, monkeypatch, capsys):
    from baton_tui import cli
    from baton_tui.commands import demo
    from baton_tui.tui import launch

    base = tmp_path / "demo"
    repo = base / "textstats"
    home_before = os.environ["BATON_HOME"]
    seen: dict = {}

    monkeypatch.setattr(launch, "run_app", quitting_mid_run(base, repo))
    args = Namespace(tui=True, dir=str(base), keep=False, baton=cli.main)
    assert demo.cmd_demo(args) == 0
    out = capsys.readouterr().out
    assert "the run is paused, not finished" in out
    assert f"baton demo --tui --dir {base}" in out
    assert os.environ["BATON_HOME"] == home_before  # the demo's home was its own only
    after_quit = tasks_now(repo)
    assert not any(t["state"] == "running" for t in after_quit.values()), after_quit
    assert any(t["state"] == "paused" for t in after_quit.values()), after_quit

    # From a plain shell (the person's own BATON_HOME) a detached run cannot work: the
    # demo's model lives only as long as the command. One line names what does continue it.
    detached = plain(repo, "run", "--detach")
    assert detached.returncode == 2, (detached.stdout, detached.stderr)
    assert detached.stderr.splitlines() == [
        "baton: this is a sample kept by `baton demo --tui`: its run needs the demo's scripted "
        "model, which lives only as long as the command — run `baton resume` here without "
        f"--detach, or `baton demo --tui --dir {base}`"]
    assert tasks_now(repo) == after_quit  # nothing started, nothing changed

    def run_then_quit_again(leaving: str | None = None) -> int:
        seen["home"] = os.environ["BATON_HOME"]
        wait_until(lambda: any(t["state"] == "running" for t in tasks_now(repo).values()),
                   120, "a running task again")
        return 0

    monkeypatch.setattr(launch, "run_app", run_then_quit_again)
    assert demo.cmd_demo(args) == 0
    out = capsys.readouterr().out
    assert f"continuing the paused run of the sample at {repo}" in out
    assert f"`baton demo --tui --dir {base}` (or `baton resume` in {repo}) continues it" in out
    assert seen["home"] == str(base / "baton-home")
    paused = [i for i, t in tasks_now(repo).items() if t["state"] == "paused"]
    assert paused, tasks_now(repo)

    # A plain `baton retry` of a paused task, then a plain `baton resume`, bring the demo's
    # home and model along and stay in the foreground: the run ends with every task landed,
    # its worktrees where the demo made them.
    notice = ("baton: a sample kept by `baton demo --tui`: running on the demo's home "
              f"({base / 'baton-home'}) and its scripted model")
    retried = plain(repo, "retry", str(paused[0]))
    assert retried.returncode != 2, (retried.stdout, retried.stderr)
    assert retried.stderr.startswith(notice), retried.stderr
    assert f"task {paused[0]} queued again — following the run" in retried.stdout
    assert tasks_now(repo)[paused[0]]["state"] in ("landed", "done"), tasks_now(repo)

    resumed = plain(repo, "resume")
    assert resumed.returncode == 0, (resumed.stdout, resumed.stderr)
    assert resumed.stderr.startswith(notice), resumed.stderr
    final = tasks_now(repo)
    assert all(t["state"] == "landed" for t in final.values() if t["mode"] == "build"), final
    worktrees = [t["worktree"] for t in final.values() if t["worktree"]]
    assert worktrees and all(Path(w).is_relative_to(base / "baton-home") for w in worktrees)
    assert os.environ["BATON_HOME"] == home_before


def test_a_plain_resume_of_a_paused_kept_demo_runs_its_agents_on_the_demos_home_and_model(
        tmp_path, monkeypatch, capsys):
    # `baton resume` starts its conductor before it even parses its arguments, and a kept
    # sample sets the demo's home and model only afterwards: the paused agents must still
    # run on those (on the person's own home there is no scripted model to reach).
    from baton_tui import cli
    from baton_tui.commands import demo
    from baton_tui.tui import launch

    base = tmp_path / "demo"
    repo = base / "textstats"

    monkeypatch.setattr(launch, "run_app", quitting_mid_run(base, repo))
    assert demo.cmd_demo(Namespace(tui=True, dir=str(base), keep=False, baton=cli.main)) == 0
    capsys.readouterr()
    paused = [i for i, t in tasks_now(repo).items() if t["state"] == "paused"]
    assert paused, tasks_now(repo)

    resumed = plain(repo, "resume")
    assert resumed.returncode == 0, (resumed.stdout, resumed.stderr)
    final = tasks_now(repo)
    assert all(final[i]["state"] == ("landed" if final[i]["mode"] == "build" else "done")
               for i in paused), {i: (t["state"], t["mode"]) for i, t in final.items()}
    worktrees = [final[i]["worktree"] for i in paused if final[i]["worktree"]]
    assert worktrees and all(Path(w).is_relative_to(base / "baton-home") for w in worktrees)


def plain(repo: Path, *argv: str) -> subprocess.CompletedProcess:
    """`baton …` from a plain shell in the sample: the person's own environment."""
    return subprocess.run([sys.executable, "-m", "baton_tui", *argv], cwd=repo,
                          capture_output=True, text=True, timeout=400)


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


@pytest.mark.parametrize("tui", [False, True])
def test_a_dir_that_cannot_be_a_folder_is_one_line(tmp_path, tui):
    """`baton demo [--tui] --dir F` with F a file, or under one, was a traceback."""
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    for given, why in ((afile, "that is a file, not a folder"),
                       (afile / "sub", "cannot make that folder")):
        result = subprocess.run([sys.executable, "-m", "baton_tui", "demo", *(["--tui"] * tui),
                                 "--dir", str(given)], cwd=tmp_path, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 2, (result.stdout, result.stderr)
        assert result.stderr.splitlines() == [f"baton: --dir {given}: {why}" + (
            ": name a folder for the demo (it is made if need be)" if given == afile
            else ": Not a directory")], result.stderr
    assert afile.read_text() == "mine\n"
