"""Watch mode's supervisor (loops, off-scope edits) and taking over a stopped task."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from baton_tui.api import reading, running
from baton_tui.core.errors import BatonError
from baton_tui.run import supervisor
from helpers.scripted_kit import Scripted


def test_loop_is_noticed_after_repeats_only():
    watch = supervisor.Watch()
    assert [supervisor.loop_line(watch, "retrying") for _ in range(4)] == [None] * 4
    assert supervisor.loop_line(watch, "retrying") == "retrying"
    fresh = supervisor.Watch()
    lines = ["a", "b", "a", "b", "a", "b"]
    assert all(supervisor.loop_line(fresh, line) is None for line in lines)


def test_quiet_warning_starts_at_half_the_stall_limit():
    assert supervisor.quiet_for(100.0, stall=60, now=120.0) is None
    assert supervisor.quiet_for(100.0, stall=60, now=131.0) == 31.0
    assert supervisor.quiet_for(100.0, stall=0, now=1000.0) is None


def test_cpu_is_looked_at_only_as_a_silence_nears_the_stall_flag():
    # the flag at half of 900 s: the looks begin CPU_LEAD before it, and short limits always
    assert not supervisor.cpu_wanted(10.0, stall=900, flag=0.5)
    assert not supervisor.cpu_wanted(444.0, stall=900, flag=0.5)
    assert supervisor.cpu_wanted(445.0, stall=900, flag=0.5)
    assert supervisor.cpu_wanted(0.0, stall=4, flag=0.5)
    assert supervisor.cpu_wanted(895.0, stall=900, flag=2.0)  # a flag past the limit: the limit


def test_busy_means_busy_lately_never_long_ago():
    watch = supervisor.Watch()
    assert not supervisor.cpu_busy(watch, 7, now=100.0, total=1.0)   # the first look: a measure
    assert supervisor.cpu_busy(watch, 7, now=101.0, total=2.0)       # it grew in the last second
    assert not supervisor.cpu_busy(watch, 7, now=102.0, total=2.0)   # it did not
    # Looked at again after a pause: what it used meanwhile, long ago, does not count
    assert not supervisor.cpu_busy(watch, 7, now=500.0, total=9.0)
    assert supervisor.cpu_busy(watch, 7, now=501.0, total=9.5)


# On the real conductor with scripted agents (`helpers.scripted_kit`): the supervisor reads
# their output and looks at their worktrees as it does an agent's.
def _scripted(repo: Path, autonomy: str = "watch") -> Scripted:
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "setup"], cwd=repo, check=True)
    run = Scripted(repo)
    run.config(players=("a",))
    run.plan([{"id": 1, "title": "Edit", "prompt": "Edit.", "player": "a",
               "scope": ["inside.txt"]}], goal="watch it", autonomy=autonomy)
    return run


def _flags(ws) -> list[dict]:
    return json.loads(reading.snapshot_json(ws.store))["tasks"][0]["flags"]


def test_watch_mode_flags_loops_and_off_scope_edits_then_the_person_takes_over(repo):
    run = _scripted(repo)
    steps = [{"write": "outside.txt", "content": "x"}, *[{"print": "same"}] * 6,
             {"until": lambda ws: len(_flags(ws)) >= 2},
             {"call": lambda ws: running.stop_task(ws, 1)}, {"hang": True}]
    assert run.run({"*": steps}) == 1
    task = run.task(1)
    flags = " | ".join(f["detail"] for f in task["flags"])
    assert "looping" in flags and "outside its scope: outside.txt" in flags
    assert task["state"] == "failed"
    # The person finishes the work in the task's worktree and marks it done.
    worktree = Path(next(e for e in run.events() if e["kind"] == "task.started")["data"]["workdir"])
    (worktree / "inside.txt").write_text("finished by hand\n")
    assert run.conduct({}, lambda ws: running.mark_done(ws, 1)) == 0
    assert run.task(1)["state"] == "landed"
    shown = subprocess.run(["git", "show", "baton/watch-it/integration:inside.txt"], cwd=repo,
                           capture_output=True, text=True)
    assert shown.stdout == "finished by hand\n"
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                          text=True).stdout == "?? baton.toml\n"


def test_done_refuses_a_running_agent_task(repo):
    run = _scripted(repo, autonomy="guarded")
    refused: list[BatonError] = []

    def done_while_running(ws) -> None:
        with pytest.raises(BatonError) as caught:
            running.mark_done(ws, 1)
        refused.append(caught.value)

    steps = [{"call": done_while_running}, {"call": lambda ws: running.stop_task(ws, 1)},
             {"hang": True}]
    assert run.run({"*": steps}) == 1
    assert refused[0].code == 2 and "stop 1" in refused[0].message
    assert run.task(1)["state"] == "failed" and run.status()["conductor"] is None
