"""Watch mode's supervisor (loops, off-scope edits) and taking over a stopped task."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from baton_tui.run import supervisor


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


def _setup(repo: Path, baton, steps: list[dict], autonomy: str = "watch") -> None:
    script = repo.parent / "agent.json"
    script.write_text(json.dumps({"*": steps}))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script)]
    (repo / "baton.toml").write_text(f"[players.custom.a]\ncommand = {json.dumps(argv)}\n")
    plan = repo.parent / "plan.json"
    plan.write_text(json.dumps({"version": 1, "goal": "watch it", "autonomy": autonomy, "tasks": [
        {"id": 1, "title": "Edit", "player": "a", "scope": ["inside.txt"]}]}))
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "setup"], cwd=repo, check=True)
    assert baton("trust").returncode == 0
    assert baton("plan", "--from", str(plan)).returncode == 0


def _wait(baton, predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = baton.json("status", "--json")
        if predicate(status):
            return status
        time.sleep(0.3)
    raise AssertionError(f"timed out; last status: {status}")


def test_watch_mode_flags_loops_and_off_scope_edits_then_the_person_takes_over(repo, baton):
    steps = [{"write": "outside.txt", "content": "x"}] + [{"print": "same"}] * 6 + [{"hang": True}]
    _setup(repo, baton, steps)
    assert baton("run", "--approve", "--detach").returncode == 0
    status = _wait(baton, lambda s: len(s["tasks"][0]["flags"]) >= 2)
    flags = " | ".join(f["detail"] for f in status["tasks"][0]["flags"])
    assert "looping" in flags and "outside its scope: outside.txt" in flags
    assert baton("stop", "1").returncode == 0
    _wait(baton, lambda s: s["tasks"][0]["state"] == "failed")
    # The person finishes the work in the task's worktree and marks it done.
    events = [json.loads(line) for line in baton("log", "--json").stdout.splitlines()]
    worktree = Path(next(e for e in events if e["kind"] == "task.started")["data"]["workdir"])
    (worktree / "inside.txt").write_text("finished by hand\n")
    done = baton("done", "1")
    assert done.returncode == 0, done.stderr
    status = _wait(baton, lambda s: s["tasks"][0]["state"] == "landed")
    shown = subprocess.run(["git", "show", "baton/watch-it/integration:inside.txt"], cwd=repo,
                           capture_output=True, text=True)
    assert shown.stdout == "finished by hand\n"
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                          text=True).stdout == ""


def test_done_refuses_a_running_agent_task(repo, baton):
    _setup(repo, baton, [{"hang": True}], autonomy="guarded")
    assert baton("run", "--approve", "--detach").returncode == 0
    _wait(baton, lambda s: s["tasks"][0]["state"] == "running")
    refused = baton("done", "1")
    assert refused.returncode == 2
    assert "stop 1" in refused.stderr
    assert baton("stop", "1").returncode == 0
    _wait(baton, lambda s: s["tasks"][0]["state"] == "failed" and s["conductor"] is None)
