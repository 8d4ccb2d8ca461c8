"""A fallback chain approved with the plan: task field `fallback` (players in order) and
`[limits] fallback_after`. A usage limit whose reset is further away moves the task to its
next fallback player with its brief and progress (as a reassignment), and its card says why;
a nearer reset is waited for. The field is shown, edited and validated like every other."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import write_plan
from test_limits_budget import AGENTS, agents

from helpers.run_kit import events, load_plan, status, task, task_status


def two_players(repo, tmp_path, reset_in: float, after: str = "30m") -> Path:
    dump = tmp_path / "prompt-seen.md"
    agents(repo, {"a": {"*": [{"write": "half.txt", "content": "started\n"},
                              {"progress": "wrote the first half"},
                              {"report": "limited", "in": reset_in, "reason": "quota"},
                              {"write": "a-after.txt", "content": "a again\n"},
                              {"report": "done", "summary": "a finished it"}]}},
           limits=f'fallback_after = "{after}"\n')
    (repo / "baton.toml").write_text((repo / "baton.toml").read_text() + (
        f"\n[players.custom.b]\ncommand = "
        f"{json.dumps([sys.executable, str(AGENTS / 'prompt_copier.py'), str(dump)])}\n"))
    return dump


def test_a_far_reset_moves_the_task_to_its_next_fallback_player(repo, baton, tmp_path):
    dump = two_players(repo, tmp_path, reset_in=7200)
    load_plan(baton, [task(1, player="a", fallback=["b"])], approve=True)
    result = baton("run", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    t1 = task_status(baton, 1)
    assert t1["state"] == "landed" and t1["player"] == "b"
    [flag] = [f for f in t1["flags"] if f["kind"] == "fallback"]
    assert flag["detail"].startswith("moved from a to b: a's usage limit resets at ")
    assert "more than 30m00s away" in flag["detail"]
    [moved] = [e["data"] for e in events(baton) if e["kind"] == "task.reassigned"]
    assert moved["from"] == "a" and moved["to"] == "b" and moved["by"] == "fallback"
    seen = dump.read_text()  # briefed on the work so far, as a reassignment is
    for needle in ("started by a", "wrote the first half", "half.txt", "Continue from here"):
        assert needle in seen, needle
    assert status(baton)["plan"]["approved"] is True  # a fallback never voids approval


def test_a_reset_sooner_than_fallback_after_is_waited_for(repo, baton, tmp_path):
    two_players(repo, tmp_path, reset_in=2)
    load_plan(baton, [task(1, player="a", fallback=["b"])], approve=True)
    result = baton("run", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    t1 = task_status(baton, 1)
    assert t1["state"] == "landed" and t1["player"] == "a"
    assert not [e for e in events(baton) if e["kind"] == "task.reassigned"]
    assert not [f for f in t1["flags"] if f["kind"] == "fallback"]


def test_fallback_is_shown_edited_and_validated_like_every_field(repo, baton, tmp_path):
    agents(repo, {"a": {"*": []}, "b": {"*": []}})
    load_plan(baton, [task(1, player="a")])
    assert baton.json("plan", "--json")["tasks"][0]["fallback"] == []  # empty by default
    out = baton("task-fallback", "1", "b,claude-code:sonnet")
    assert out.returncode == 0, out.stderr
    assert baton.json("plan", "--json")["tasks"][0]["fallback"] == ["b", "claude-code:sonnet"]
    assert "fallback b → claude-code:sonnet" in baton("plan").stdout
    out = baton("task-fallback", "1", "nobody")
    assert out.returncode == 2 and "fallback 'nobody': unknown player 'nobody'" in out.stderr
    assert baton("task-fallback", "1", "").returncode == 0
    assert baton.json("plan", "--json")["tasks"][0]["fallback"] == []
    bad = write_plan(tmp_path / "bad.json", [task(1, player="a", fallback=["b", "b"])])
    out = baton("plan", "--from", str(bad))
    assert out.returncode == 2 and "fallback lists a player twice" in out.stderr
    typo = write_plan(tmp_path / "typo.json", [task(1, player="a", fallbacks=["b"])])
    out = baton("plan", "--from", str(typo))
    assert out.returncode == 2 and "fallbacks" in out.stderr  # unknown keys stay refused
