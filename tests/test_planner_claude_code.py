"""Claude Code as the real planner (the pinned npm build) against the scripted model server.

Read-only: the planner runs with Claude's research profile (Read, Grep, Glob only), so a
scripted Write does not happen. The final message holds the JSON; after the answers the same
Claude session continues (`--resume`).
"""

from __future__ import annotations

import json

from helpers.real_players import CLAUDE_CODE

PLAN = {"version": 1, "goal": "Add a limiter", "tasks": [
    {"id": 1, "title": "Limiter", "prompt": "Write src/limiter.py", "player": "claude-code",
     "model": "sonnet", "scope": ["src/limiter.py"], "skills": ["tdd"]},
    {"id": 2, "title": "Survey callers", "prompt": "Find the callers", "player": "claude-code",
     "mode": "research"}]}


def test_claude_code_plans_read_only_with_a_question(repo, baton, server):
    CLAUDE_CODE.require()
    stray = repo / "planner-wrote.txt"
    server.add_turns([
        {"tool": "Read", "input": {"file_path": str(repo / "README.md")}},
        {"tool": "Write", "input": {"file_path": str(stray), "content": "no"}},
        {"text": json.dumps({"questions": [{"question": "Per user or per key?",
                                            "recommendation": "per key"}]})},
        {"text": "The plan:\n" + json.dumps(PLAN)},
    ])
    env = {**CLAUDE_CODE.env(server), "BATON_PLANNER": "claude-code"}
    asked = baton("plan", "--goal", "add a limiter", env=env, timeout=180)
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert "Per user or per key?" in asked.stdout and "per key" in asked.stdout
    done = baton("plan", "--yes", env=env, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = baton.json("plan", "--json")
    assert [t["title"] for t in doc["tasks"]] == ["Limiter", "Survey callers"]
    assert doc["questions"][0]["answer"] == "per key"
    assert not stray.exists()
    model_calls = [r for r in server.requests if r.get("protocol") == "anthropic"
                   and not r.get("side")]
    offered = {t["name"] for t in (model_calls[0].get("json") or {}).get("tools", [])}
    assert "Write" not in offered and "Bash" not in offered and "Read" in offered
    # The answer continued the same conversation: the last call carries the earlier turns.
    last = json.dumps(model_calls[-1].get("json"))
    assert "per key" in last and "README.md" in last
