"""The planner on a native API route, against the scripted model server over HTTP.

The route runs read-only (no write tools and no shell are offered: the planner reads the
person's own checkout); the model's final message holds the
JSON answer. The session continues after the person's answers.
"""

from __future__ import annotations

import json

import pytest


PLAN = {"version": 1, "goal": "Add a limiter", "tasks": [
    {"id": 1, "title": "Limiter", "prompt": "Write src/limiter.py", "player": "anthropic",
     "scope": ["src/limiter.py"], "skills": ["tdd"]},
    {"id": 2, "title": "Docs", "prompt": "Document it", "player": "anthropic", "depends_on": [1],
     "scope": ["README.md"]}]}


@pytest.mark.parametrize("route", ["anthropic", "openai"])
def test_native_planner_asks_then_plans_without_writing(repo, baton, model_server, monkeypatch,
                                                       route):
    plan = json.loads(json.dumps(PLAN).replace('"anthropic"', f'"{route}"'))
    srv = model_server([
        {"tool": "read_file", "input": {"path": "README.md"}},
        {"tool": "write_file", "input": {"path": "planner-wrote.txt", "content": "no"}},
        {"text": json.dumps({"questions": [{"question": "Reuse the Redis pool?",
                                            "recommendation": "reuse it"}]})},
        {"text": "Here is the plan:\n" + json.dumps(plan)},
    ])
    monkeypatch.setenv("BATON_PLANNER", route)
    asked = baton("plan", "--goal", "add a limiter")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert "Reuse the Redis pool?" in asked.stdout
    done = baton("plan", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    doc = baton.json("plan", "--json")
    assert [t["title"] for t in doc["tasks"]] == ["Limiter", "Docs"]
    assert doc["questions"][0]["answer"] == "reuse it"
    assert not (repo / "planner-wrote.txt").exists()  # the write did not happen
    requests = [r for r in srv.requests if not r.get("side")]
    first = json.dumps(requests[0].get("json") or requests[0].get("body"))
    assert '"read_file"' in first and '"run_command"' not in first and '"write_file"' not in first
    # The answer went back into the same conversation: the last request carries the history.
    last = json.dumps(requests[-1].get("json") or requests[-1].get("body"))
    assert "reuse it" in last and "README.md" in last
