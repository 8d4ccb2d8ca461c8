"""A fallback chain approved with the plan: task field `fallback` (players in order) and
`[limits] fallback_after`. A usage limit whose reset is further away moves the task to its
next fallback player with its brief and progress (as a reassignment), and its card says why;
a nearer reset is waited for. The field is shown, edited and validated like every other."""

from __future__ import annotations

from conftest import write_plan
from test_limits_budget import agents
from test_run_modes import prompts

from helpers.run_kit import load_plan, task
from helpers.scripted_kit import Scripted


# On the real conductor with scripted agents (`helpers.scripted_kit`).
def two_players(repo, reset_in: float, after: str = "30m") -> tuple[Scripted, dict]:
    run = Scripted(repo)
    run.config(players=("a", "b"), limits={"fallback_after": after})
    script = {"a": [{"write": "half.txt", "content": "started\n"},
                    {"progress": "wrote the first half"},
                    {"report": "limited", "in": reset_in, "reason": "quota"},
                    {"write": "a-after.txt", "content": "a again\n"},
                    {"report": "done", "summary": "a finished it"}],
              "b": [{"write": "finished.txt", "content": "b\n"},
                    {"report": "done", "summary": "b finished it"}]}
    return run, script


def test_a_far_reset_moves_the_task_to_its_next_fallback_player(repo):
    run, script = two_players(repo, reset_in=7200)
    run.plan([task(1, player="a", fallback=["b"])], approve=True)
    # Its first attempt is a's, its next b's (a fresh session, briefed).
    assert run.run({"1@a": script["a"], "1@b": script["b"]}, approve=False) == 0
    t1 = run.task(1)
    assert t1["state"] == "landed" and t1["player"] == "b"
    [flag] = [f for f in t1["flags"] if f["kind"] == "fallback"]
    assert flag["detail"].startswith("moved from a to b: a's usage limit resets at ")
    assert "more than 30m00s away" in flag["detail"]
    [moved] = [e["data"] for e in run.events() if e["kind"] == "task.reassigned"]
    assert moved["from"] == "a" and moved["to"] == "b" and moved["by"] == "fallback"
    seen = prompts(1)[-1]  # briefed on the work so far, as a reassignment is
    for needle in ("started by a", "wrote the first half", "half.txt", "Continue from here"):
        assert needle in seen, needle
    assert run.status()["plan"]["approved"] is True  # a fallback never voids approval


def test_a_reset_sooner_than_fallback_after_is_waited_for(repo):
    run, script = two_players(repo, reset_in=2)
    run.plan([task(1, player="a", fallback=["b"])], approve=True)
    assert run.run({"1@a": script["a"], "1@b": script["b"]}, approve=False) == 0
    t1 = run.task(1)
    assert t1["state"] == "landed" and t1["player"] == "a"
    assert not [e for e in run.events() if e["kind"] == "task.reassigned"]
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
