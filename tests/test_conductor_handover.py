"""A conductor stepping down while a command asks for more: nothing asked for is lost.

A conductor exits once nothing moves without the person. A command that asks for more at
that moment (`done` after a take-over, here) either finds it still recorded — and its last
look, after it clears its record, must see the request — or finds none and starts a
successor, which must wait for the leaving one's lock instead of giving up. Each test holds
the conductor inside its window (`BATON_KILL_AT=POINT:hold:when=FILE`, baton_tui/killpoints.py),
so the race is met on every run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton_tui import layout
from baton_tui.workspace import Workspace
from helpers.run_kit import (
    DEMO_AGENT, events, git, kinds, load_plan, popen_baton, status, task, task_status, wait_for,
    wait_state,
)

pytestmark = pytest.mark.slow


def taken_over_and_held(repo: Path, baton, point: str, gate: Path) -> None:
    """Task 1 runs (its agent hangs), is taken over and pauses; task 2 waits on it, so the
    conductor steps down — and is held at `point` until `gate` exists."""
    scripts = {"1": [{"write": "half.txt", "content": "started\n"}, {"hang": True}],
               "2": [{"write": "after.txt", "content": "after\n"},
                     {"report": "done", "summary": "after"}]}
    script = repo.parent / "a.json"
    script.write_text(json.dumps(scripts))
    (repo / "baton.toml").write_text(
        f"[players.custom.a]\ncommand = {json.dumps([*DEMO_AGENT, str(script)])}\n")
    load_plan(baton, [task(1, player="a"), task(2, player="a", deps=[1])], approve=True)
    started = baton("run", "--detach", env={"BATON_KILL_AT": f"{point}:hold:when={gate}"})
    assert started.returncode == 0, started.stderr
    wait_state(baton, 1, "running")
    taken = baton("take", "1")
    assert taken.returncode == 0, taken.stderr
    wait_for(lambda: Path(f"{gate}.held").exists(), 60, what=f"the conductor held at {point}")
    assert task_status(baton, 1)["state"] == "paused"
    worktree = Path(task_status(baton, 1)["worktree"])
    with (worktree / "half.txt").open("a") as fh:
        fh.write("finished by hand\n")


def landed_both(repo: Path, baton) -> None:
    wait_state(baton, 2, "landed", timeout=60)
    integration = status(baton)["plan"]["integration_branch"]
    assert git(repo, "show", f"{integration}:half.txt") == "started\nfinished by hand"
    assert git(repo, "show", f"{integration}:after.txt") == "after"


def test_done_asked_while_the_conductor_decides_to_leave_is_seen_by_its_last_look(
        repo, baton, tmp_path):
    gate = tmp_path / "gate"
    taken_over_and_held(repo, baton, "leaving", gate)
    held = status(baton)["conductor"]
    assert held is not None  # still recorded: `done` counts on it and starts no other
    done = baton("done", "1")
    assert done.returncode == 0, done.stderr
    gate.touch()
    landed_both(repo, baton)
    assert kinds(events(baton)).count("conductor.started") == 1  # the held one did it all


def test_done_asked_after_the_conductor_stepped_down_starts_one_that_waits_for_it(
        repo, baton, tmp_path):
    gate = tmp_path / "gate"
    taken_over_and_held(repo, baton, "gone", gate)
    assert status(baton)["conductor"] is None  # stepped down: its record is cleared
    done = popen_baton(repo, "done", "1")
    log = layout.conductor_log(Workspace(repo).paths)
    wait_for(lambda: log.exists() and "waiting for the conductor that is leaving"
             in log.read_text(), 30, what="the successor to wait for the leaving conductor")
    gate.touch()
    out, err = done.communicate(timeout=60)
    assert done.returncode == 0, out + err
    landed_both(repo, baton)
    assert kinds(events(baton)).count("conductor.started") == 2
