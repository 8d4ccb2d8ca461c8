"""`baton take N` in a real terminal (a pty): the agent stops with its session saved, the
player's interactive session opens in the task's worktree, and a yes at Baton's question lands
the task while the run goes on. Also the supervisor's stall, idle and overlap flags."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baton_tui.api import reading
from helpers.run_kit import DEMO_AGENT, git, load_plan, status, task, task_status, wait_state
from helpers.scripted_kit import Scripted

AGENTS = Path(__file__).resolve().parent / "agents"


def players(repo, scripts: dict[str, dict], extra: str = "", limits: str = "") -> None:
    lines = []
    for name, script in scripts.items():
        path = repo.parent / f"{name}.json"
        path.write_text(json.dumps(script))
        lines += [f"[players.custom.{name}]", f"command = {json.dumps([*DEMO_AGENT, str(path)])}"]
        if name == "a":
            lines.append("interactive_command = "
                         + json.dumps([sys.executable, str(AGENTS / "finish_by_hand.py")]))
        lines.append("")
    (repo / "baton.toml").write_text("\n".join(lines) + extra + "[limits]\n" + limits)


def run_in_pty(cwd: Path, argv: list[str], answers: dict[str, str], timeout: float = 60.0
               ) -> tuple[int, str]:
    """Run a command on a real terminal, typing an answer after each prompt it prints."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True)
    os.close(slave)
    seen, pending = "", dict(answers)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 4096).decode("utf-8", "replace")
        except OSError:  # the other side closed: the command ended
            break
        seen += chunk
        for prompt in list(pending):
            if prompt in seen:
                os.write(master, pending.pop(prompt).encode())
    proc.wait(timeout=10)
    os.close(master)
    return proc.returncode, seen


@pytest.mark.slow
def test_take_in_a_terminal_opens_the_session_then_lands_on_yes(repo, baton):
    players(repo, {"a": {"1": [{"write": "half.txt", "content": "started\n"}, {"hang": True}],
                         "2": [{"write": "after.txt", "content": "after"},
                               {"report": "done", "summary": "after"}]}})
    load_plan(baton, [task(1, player="a"), task(2, player="a", deps=[1])], approve=True)
    assert baton("run", "--detach").returncode == 0
    wait_state(baton, 1, "running")
    # Read while it runs: once it lands, task 2 may take its worktree over (`worktree` null).
    worktree = task_status(baton, 1)["worktree"]
    code, screen = run_in_pty(repo, [sys.executable, "-m", "baton_tui", "take", "1"],
                              {"Is task 1 done?": "y\n"})
    assert code == 0, screen
    assert worktree and f"worktree: {worktree}" in screen
    assert "interactive session: done, leaving" in screen
    wait_state(baton, 2, "landed", timeout=60)
    integration = status(baton)["plan"]["integration_branch"]
    assert git(repo, "show", f"{integration}:half.txt") == "started\nfinished by hand"
    assert "after.txt" in git(repo, "ls-tree", "-r", "--name-only", integration)


@pytest.mark.slow
def test_take_answered_no_leaves_the_task_taken_over(repo, baton):
    players(repo, {"a": {"*": [{"write": "half.txt", "content": "x"}, {"hang": True}]}})
    load_plan(baton, [task(1, player="a")], approve=True)
    assert baton("run", "--detach").returncode == 0
    wait_state(baton, 1, "running")
    code, screen = run_in_pty(repo, [sys.executable, "-m", "baton_tui", "take", "1"],
                              {"Is task 1 done?": "n\n"})
    assert code == 0 and "stays taken over" in screen
    paused = wait_state(baton, 1, "paused")
    assert paused["reason"] == "taken over by you"
    time.sleep(1)  # a taken-over task is not resumed behind the person's back
    assert task_status(baton, 1)["attempts"] == 1 and task_status(baton, 1)["state"] == "paused"


@pytest.mark.slow
def test_take_refuses_an_interactive_command_changed_since_the_person_trusted_it(repo, baton,
                                                                                 tmp_path):
    players(repo, {"a": {"*": [{"write": "half.txt", "content": "x"}, {"hang": True}]}})
    load_plan(baton, [task(1, player="a")], approve=True)
    assert baton("run", "--detach").returncode == 0
    wait_state(baton, 1, "running")
    ran = tmp_path / "ran"
    toml = (repo / "baton.toml").read_text()
    changed = toml.replace(json.dumps([sys.executable, str(AGENTS / "finish_by_hand.py")]),
                           json.dumps(["touch", str(ran)]))
    assert changed != toml
    (repo / "baton.toml").write_text(changed)
    code, screen = run_in_pty(repo, [sys.executable, "-m", "baton_tui", "take", "1"],
                              {"Is task 1 done?": "y\n"})
    assert code == 2, screen
    assert "baton.toml is changed since you trusted it" in screen
    assert "players.custom.a.interactive_command" in screen and "baton trust" in screen
    assert not ran.exists()
    assert task_status(baton, 1)["state"] == "running"  # refused before anything changed
    baton("stop", "1")


def flags(baton, task_id: int) -> list[dict]:
    return task_status(baton, task_id)["flags"]


@pytest.mark.slow
def test_a_quiet_agent_is_flagged_but_a_busy_one_is_not(repo, baton):
    players(repo, {"busy": {"*": [{"burn": 5}, {"write": "b.txt", "content": "b"},
                                  {"report": "done", "summary": "computed"}]},
                   "idle": {"*": [{"sleep": 30}]}}, limits='stall = "4s"\n')
    load_plan(baton, [task(1, player="busy"), task(2, player="idle")], approve=True)
    assert baton("run").returncode == 1
    assert task_status(baton, 1)["state"] == "landed"
    assert not [f for f in flags(baton, 1) if f["kind"] == "stall"]  # CPU time is activity
    idle = task_status(baton, 2)
    assert idle["state"] == "failed" and "silent" in idle["reason"]
    kinds = [f["detail"] for f in flags(baton, 2) if f["kind"] == "stall"]
    assert any(d.startswith("quiet for") for d in kinds) and any("stopping it" in d for d in kinds)


def test_steps_without_any_change_and_two_tasks_on_one_file_are_flagged(repo):
    """On the real conductor with scripted agents (`helpers.scripted_kit`)."""
    run = Scripted(repo)
    run.config(players=("a",), extra="[supervision]\nidle_turns = 3\n")
    run.plan([task(1, player="a"), task(2, player="a")], approve=True, autonomy="guarded")

    def both_flagged(ws) -> bool:
        found = [{f["kind"] for f in t["flags"]}
                 for t in json.loads(reading.snapshot_json(ws.store))["tasks"]]
        return all({"overlap", "loop"} <= kinds for kinds in found)

    steps = [{"write": "shared.txt", "content": "mine"},
             *[{"progress": f"thinking {i}"} for i in range(5)],
             {"until": both_flagged}, {"report": "done", "summary": "x"}]
    run.run({"*": steps}, approve=False)
    for task_id, other in ((1, 2), (2, 1)):
        found = {f["kind"]: f["detail"] for f in run.task(task_id)["flags"]}
        assert f"task {other} is changing the same files: shared.txt" == found.get("overlap")
        assert "steps without changing any file" in found.get("loop", "")
