"""Every real agent CLI can plan: named by AI_PROVIDER (as on the product page), each of the
five pinned CLIs reads the repository read-only against Baton's scripted model server and its
final message becomes the stored plan. The planner runs in the person's own checkout, so it
is offered no editing tool and no shell (Codex: only a shell in its read-only OS sandbox), and
nothing of it stays there — Aider's tag cache included (a player's own cache is not the
planner changing the repository).
"""

from __future__ import annotations

import json

import pytest

from conftest import git
from helpers.real_players import PLAYERS, tool_names


@pytest.fixture(params=PLAYERS, ids=lambda p: p.name)
def player(request):
    request.param.require()
    return request.param


def test_each_real_cli_plans_read_only(player, repo, baton, server):
    plan = {"version": 1, "goal": "Add a limiter", "tasks": [
        {"id": 1, "title": "Limiter", "prompt": "Write src/limiter.py", "player": player.name,
         "scope": ["src/limiter.py"]},
        {"id": 2, "title": "Survey callers", "prompt": "Find the callers",
         "player": player.name, "mode": "research", "depends_on": [1]}]}
    answer = {"text": "The plan:\n" + json.dumps(plan)}
    # Aider has no tools: its one reply is the answer (the README is in its repository map).
    server.add_turns([answer] if player.name == "aider" else
                     player.conversation(player.read(repo / "README.md"), answer))
    env = {**player.env(server), "AI_PROVIDER": player.name}
    result = baton("plan", "--goal", "add a limiter", env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    doc = baton.json("plan", "--json")
    assert [(t["title"], t["player"]) for t in doc["tasks"]] == [
        ("Limiter", player.name), ("Survey callers", player.name)]
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    calls = [r for r in server.requests if r.get("protocol") == player.protocol
             and r.get("turn") is not None]
    assert calls, "the planner never asked the scripted model"
    offered = {name.lower() for name in tool_names(calls[0]["json"])}
    assert not offered & {"write", "edit", "bash", "write_file", "replace", "run_shell_command"}
