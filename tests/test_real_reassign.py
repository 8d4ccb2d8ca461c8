"""Reassignment with progress on the real CLIs: a Codex task paused at its usage limit (reset an
hour or two away) moves to Claude Code, which continues in the same worktree, from a prompt that
carries the work so far, and lands — against Baton's scripted model server only."""

from __future__ import annotations

import json
import time

import pytest

from conftest import git, write_plan
from helpers.real_cli_kit import attempt_logs, events_of, task_of, worktree
from helpers.real_players import CLAUDE_CODE, CODEX_PLAYER

pytestmark = pytest.mark.slow


def test_a_codex_task_at_its_limit_moves_to_claude_code_and_lands(server, baton, repo,
                                                                  tmp_path):
    CODEX_PLAYER.require()
    CLAUDE_CODE.require()
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Two parts", "prompt": "Create part1.txt, then part2.txt.",
         "player": "codex", "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1)
    env = {**CODEX_PLAYER.env(server), **CLAUDE_CODE.env(server)}
    resets_at = int(time.time()) + 7200  # past [limits] max_wait: the run stops waiting
    server.add_turns([
        CODEX_PLAYER.shell("printf 'first half\\n' > part1.txt"),
        {"error": 429, "body": {"error": {
            "type": "usage_limit_reached", "message": "The usage limit has been reached",
            "plan_type": "plus", "resets_at": resets_at, "resets_in_seconds": 7200}}},
    ])
    first = baton("run", "--approve", env=env, timeout=240)
    assert first.returncode == 3, first.stdout + first.stderr + attempt_logs(repo)[-3000:]
    paused = task_of(baton, 1)
    assert paused["state"] == "paused" and paused["until"] >= resets_at - 60

    moved = baton("task-player", "1", "claude-code", env=env)
    assert moved.returncode == 0, moved.stderr
    assert baton.json("status", "--json")["plan"]["approved"] is True
    server.add_turns([
        CLAUDE_CODE.write(wt / "part2.txt", "second half\n"),
        CLAUDE_CODE.report("done", "finished the second half after codex"),
        {"text": "Done."},
    ])
    resumed = baton("resume", env=env, timeout=240)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr + attempt_logs(repo)[-3000:]

    landed = task_of(baton, 1)
    assert landed["state"] == "landed" and landed["player"] == "claude-code"
    reassigned = [e["data"] for e in events_of(baton, 1) if e["kind"] == "task.reassigned"]
    assert reassigned[0]["from"] == "codex" and reassigned[0]["to"] == "claude-code"
    branch = baton.json("status", "--json")["plan"]["integration_branch"]
    assert git(repo, "show", f"{branch}:part1.txt") == "first half"
    assert git(repo, "show", f"{branch}:part2.txt") == "second half"
    claude_asked = [r for r in server.requests if r.get("protocol") == "anthropic"
                    and r.get("turn") is not None]
    prompt = json.dumps(claude_asked[0].get("json", {}).get("messages", [])[:1])
    for needle in ("Handoff", "codex", "part1.txt", "Continue from here"):
        assert needle in prompt, needle
