"""Limits pause the music: a declared limit with and without a reset, probing, a player at its
limit waited for, reassignment with the work so far, and the budget guard — one end-to-end run
each for limits and the budget through the real CLI with the demo agent (custom players that
`baton report limited`), the rest on the real conductor with scripted agents."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from baton_tui.api import plans, reading, running
from helpers.run_kit import DEMO_AGENT, events, git, load_plan, status, task, wait_state
from helpers.scripted_kit import Scripted

AGENTS = Path(__file__).resolve().parent / "agents"
SAMPLE_CONFIG = Path(__file__).resolve().parent / "data" / "product_page_baton.toml"


def agents(repo, scripts: dict[str, dict], limits: str = "", top: str = "") -> None:
    lines = [top] if top else []
    for name, script in scripts.items():
        path = repo.parent / f"{name}.json"
        path.write_text(json.dumps(script))
        lines += [f"[players.custom.{name}]", f"command = {json.dumps([*DEMO_AGENT, str(path)])}",
                  ""]
    (repo / "baton.toml").write_text("\n".join(lines) + "[limits]\nstall = \"60s\"\n" + limits)


def finished_code(baton) -> int:
    return [e for e in events(baton) if e["kind"] == "run.finished"][-1]["data"]["code"]


@pytest.mark.slow
def test_a_declared_limit_with_a_reset_pauses_then_resumes_the_same_task(repo, baton):
    agents(repo, {"a": {"*": [{"write": "one.txt", "content": "1"},
                              {"report": "limited", "in": 3, "reason": "quota"},
                              {"write": "two.txt", "content": "2"},
                              {"report": "done", "summary": "both"}]}})
    load_plan(baton, [task(1, player="a")], approve=True)
    assert baton("run", "--detach").returncode == 0
    paused = wait_state(baton, 1, "paused")
    assert paused["until"] > time.time() - 1 and "paused until" in paused["words"]
    landed = wait_state(baton, 1, "landed", timeout=40)
    assert landed["attempts"] == 1  # resumed in its session, not started over
    resumed = [e for e in events(baton) if e["kind"] == "task.resumed"]
    assert len(resumed) == 1
    files = git(repo, "ls-tree", "-r", "--name-only", status(baton)["plan"]["integration_branch"])
    assert "one.txt" in files and "two.txt" in files


@pytest.mark.slow
def test_budget_by_tokens_stops_new_tasks_and_raising_it_goes_on(repo, baton):
    agents(repo, {"a": {"*": [{"report": "done", "summary": "ok", "tokens": 600}]}},
           limits="max_parallel = 1\nbudget_tokens = 1000\n")
    load_plan(baton, [task(i, player="a") for i in (1, 2, 3)], approve=True)
    run = baton("run")
    assert run.returncode == 3, run.stdout + run.stderr
    plan = status(baton)["plan"]
    assert plan["stopped_by"] == "budget"
    assert plan["budget"]["limits"]["tokens"] == 1000 and plan["budget"]["used"]["tokens"] == 1200
    assert [t["state"] for t in status(baton)["tasks"]] == ["landed", "landed", "queued"]
    assert "budget: tokens 1200 of 1000" in baton("status").stdout
    assert baton("budget", "--tokens", "5000").returncode == 0
    assert "5000" in baton("budget").stdout
    assert baton("resume").returncode == 0
    assert status(baton)["plan"]["stopped_by"] is None


# On the real conductor with scripted agents (`helpers.scripted_kit`) ----------------------
def paused_events(run: Scripted, task_id: int) -> list[dict]:
    return [e["data"] for e in run.events() if e["kind"] == "task.paused" and e["task"] == task_id]


def test_an_unknown_reset_pauses_and_probes_never_failing(repo):
    run = Scripted(repo)
    run.config(players=("a",), limits={"probe": ["1s", "1h"]})
    run.plan([task(1, player="a")])
    code = run.run({"*": [{"report": "limited"}, {"write": "x.txt", "content": "x"},
                          {"report": "done", "summary": "after the probe"}]})
    assert code == 0
    [paused] = paused_events(run, 1)
    assert "reset unknown" in paused["reason"]
    assert (paused["limit"], paused["probe"]) == ("unknown", 1)
    assert run.task(1)["state"] == "landed"
    assert "task.failed" not in [e["kind"] for e in run.events()]


def test_an_unknown_reset_reads_probing_at_while_it_waits(repo):
    run = Scripted(repo)
    run.config(players=("a",), limits={"probe": ["2h"]})
    run.plan([task(1, player="a")])
    assert run.run({"*": [{"report": "limited"}]}) == 3  # the probe is past `max_wait` (1h)
    paused = run.task(1)
    assert paused["state"] == "paused"
    assert "reset unknown" in paused["reason"] and "probing at" in paused["words"]


def test_pause_on_usage_limit_off_fails_at_once(repo):
    run = Scripted(repo)
    run.config(players=("a",), limits={"pause_on_usage_limit": False})
    run.plan([task(1, player="a")])
    assert run.run({"*": [{"report": "limited"}]}) == 1
    assert "pause_on_usage_limit" in run.task(1)["reason"]


def test_a_player_at_its_limit_is_waited_for_while_others_go_on(repo):
    run = Scripted(repo)
    run.config(players=("a", "b"), player_lines={"a": "max_parallel = 1"})
    run.plan([task(1, player="a"), task(2, player="a"), task(3, player="b")])
    seen: list[str] = []

    def waiting_for_a(ws) -> bool:
        words = next(t for t in json.loads(reading.snapshot_json(ws.store))["tasks"]
                     if t["id"] == 2)["words"]
        seen.append(words)
        return "waiting for a's limit, resets" in words

    # Task 3 (another player's) reports only once task 2 waits for a's limit.
    code = run.run({"1": [{"report": "limited", "in": 3},
                          {"report": "done", "summary": "resumed"}],
                    "2": [{"report": "done", "summary": "two"}],
                    "3": [{"until": waiting_for_a}, {"report": "done", "summary": "b"}]})
    assert code == 0, seen[-3:]
    assert run.states() == {1: "landed", 2: "landed", 3: "landed"}
    evs = run.events()
    landed3 = next(e["id"] for e in evs if e["kind"] == "task.landed" and e["task"] == 3)
    started2 = next(e["id"] for e in evs if e["kind"] == "task.started" and e["task"] == 2)
    assert landed3 < started2  # another player's task went on meanwhile
    order = [e["task"] for e in evs if e["kind"] in ("task.resumed", "task.started")]
    assert order.index(1, 1) < order.index(2)  # the paused session resumed first


def test_a_paused_task_moved_to_another_player_gets_the_work_so_far(repo):
    run = Scripted(repo)
    run.config(players=("a", "b"))
    run.plan([task(1, player="a")])
    assert run.run({"*": [{"write": "half.txt", "content": "started\n"},
                          {"progress": "wrote the first half"},
                          {"report": "limited", "in": 7200}]}) == 3  # a reset an hour away
    plans.edit_task(run.ws, 1, "player", "b")
    assert run.status()["plan"]["approved"] is True
    assert [e["data"] for e in run.events() if e["kind"] == "task.reassigned"] == \
        [{"from": "a", "to": "b", "model": None, "effort": None}]
    assert run.resume({"*": [{"write": "finished.txt", "content": "done\n"},
                             {"report": "done", "summary": "finished"}]}) == 0
    assert run.task(1)["state"] == "landed"
    prompts = sorted(Path(os.environ["BATON_HOME"]).rglob("prompt.md"), key=os.path.getmtime)
    seen = prompts[-1].read_text()
    for needle in ("Handoff", "started by a", "wrote the first half", "half.txt",
                   "Continue from here"):
        assert needle in seen, needle
    files = git(repo, "ls-tree", "-r", "--name-only", run.status()["plan"]["integration_branch"])
    assert "half.txt" in files and "finished.txt" in files


def test_budget_by_cost_counts_only_reported_costs(repo):
    run = Scripted(repo)
    run.config(players=("a",), limits={"max_parallel": 1})
    run.plan([task(i, player="a") for i in (1, 2, 3)], approve=True)
    running.set_budget(run.ws, cost=1.0)
    code = run.run({"1": [{"report": "done", "summary": "ok", "cost": 0.75}],
                    "2": [{"report": "done", "summary": "ok", "cost": 0.5}],
                    "3": [{"report": "done", "summary": "ok"}]}, approve=False)
    assert code == 3
    final = run.status()
    assert final["plan"]["budget"]["used"]["cost"] == 1.25
    assert final["tasks"][2]["state"] == "queued" and final["tasks"][2]["cost"] is None


def test_budget_by_time_and_a_hard_budget_pauses_running_tasks(repo):
    run = Scripted(repo)
    run.config(players=("a",), limits={"budget_time": "2s", "budget_hard": True})
    run.plan([task(1, player="a")])
    assert run.run({"*": [{"hang": True}, {"report": "done", "summary": "late"}]}) == 3
    final = run.status()
    assert final["plan"]["stopped_by"] == "budget"
    assert final["tasks"][0]["state"] == "paused"  # in its saved session


def test_a_player_without_costs_reads_cost_unknown_never_zero(repo):
    run = Scripted(repo)
    run.config(players=("a",))
    run.plan([task(1, player="a")])
    assert run.run({"*": [{"report": "done", "summary": "ok", "tokens": 42}]}) == 0
    final = run.status()
    assert final["tasks"][0]["cost"] is None and final["tasks"][0]["tokens"] == 42
    assert final["summary"]["cost"] is None
    assert final["summary"]["players"]["a"]["tokens"] == 42
    text = reading.status_text(final)
    assert "cost unknown" in text and "$0.0000" not in text


def test_the_product_pages_sample_config_loads_verbatim(repo):
    """tests/data/product_page_baton.toml is the product page's sample `baton.toml` as published
    (a copy: CI runs on a checkout of this repository alone), loaded as a repository's own."""
    from baton_tui.config import load_config

    (repo / "baton.toml").write_bytes(SAMPLE_CONFIG.read_bytes())
    config = load_config(repo).config
    assert config.planner == "claude-code" and config.autonomy == "guarded"
    assert config.players.default == "claude-code" and config.players.research == "opencode"
    assert config.limits.max_parallel == 3 and config.limits.pause_on_usage_limit


def test_ai_provider_names_the_planner_and_baton_planner_wins(repo, monkeypatch):
    from baton_tui.config import load_config

    monkeypatch.setenv("AI_PROVIDER", "codex")
    assert load_config(repo).config.planner == "codex"
    monkeypatch.setenv("BATON_PLANNER", "anthropic")
    assert load_config(repo).config.planner == "anthropic"


def test_doctor_says_which_planner_is_in_effect_and_where_it_came_from(repo, baton):
    import os
    import subprocess
    import sys

    def doctor(**env: str) -> str:
        return subprocess.run([sys.executable, "-m", "baton_tui", "doctor"], cwd=repo,
                              capture_output=True, text=True, env={**os.environ, **env}).stdout

    assert "planner: codex (from AI_PROVIDER)" in doctor(AI_PROVIDER="codex")
    assert "planner: openai (from BATON_PLANNER)" in doctor(AI_PROVIDER="codex",
                                                             BATON_PLANNER="openai")
    assert "(from the default)" in doctor()
