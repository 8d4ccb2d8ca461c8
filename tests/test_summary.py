"""The run summary: per-task state and wall time, the run's wall time and its parallel speedup
(sum of task times ÷ wall), in `baton status --json`, in `baton status` and at the end of
`baton run`."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from conftest import git, write_plan

pytestmark = pytest.mark.slow

SLEEP = 1.5


def run_sleepers(repo: Path, baton, deps: dict[int, list[int]]):
    script = {str(i): [{"sleep": SLEEP}, {"write": f"t{i}.txt", "content": f"{i}\n"},
                       {"report": "done", "summary": f"task {i}"}] for i in deps}
    script_path = repo.parent / "agent-script.json"
    script_path.write_text(json.dumps(script))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script_path)]
    (repo / "baton.toml").write_text(f"[players.custom.bot]\ncommand = {json.dumps(argv)}\n"
                                     "\n[limits]\nmax_parallel = 4\n")
    git(repo, "add", "baton.toml")
    git(repo, "commit", "-q", "-m", "baton.toml")
    assert baton("trust").returncode == 0
    plan = write_plan(repo.parent / "plan.json",
                      [{"id": i, "title": f"Sleeper {i}", "prompt": "sleep", "player": "bot",
                        "depends_on": d} for i, d in deps.items()], goal="Summary goal")
    assert baton("plan", "--from", str(plan)).returncode == 0
    result = baton("run", "--approve")
    assert result.returncode == 0, result.stdout + result.stderr
    return result


SUMMARY_LINE = re.compile(r"run: wall (\d+)s · task time (\d+)s · speedup ([\d.]+)×")


def test_parallel_run_summary_reports_a_speedup(repo, baton):
    result = run_sleepers(repo, baton, {1: [], 2: [], 3: []})
    status = baton.json("status", "--json")
    summary = status["summary"]
    tasks = status["tasks"]

    assert [t["state"] for t in tasks] == ["landed"] * 3
    for t in tasks:
        assert SLEEP <= t["wall"] < SLEEP + 10, t
        assert t["attempts"] == 1
        assert "tokens" in t and "cost" in t
    assert summary["task_time"] == pytest.approx(sum(t["wall"] for t in tasks), abs=0.05)
    assert SLEEP <= summary["wall"] < summary["task_time"]
    assert summary["speedup"] > 1.2
    assert summary["speedup"] == pytest.approx(summary["task_time"] / summary["wall"], abs=0.02)
    assert summary["counts"] == {"landed": 3}
    assert summary["tokens"] == 0 and summary["cost"] is None  # no player reported a cost

    # the same summary ends the text output of `run`, and `baton status`
    match = SUMMARY_LINE.search(result.stdout)
    assert match, result.stdout
    assert float(match.group(3)) > 1.2
    tail = result.stdout.rstrip().splitlines()
    assert tail[-2].startswith("run: wall")  # the summary, then its use per player
    assert tail[-1] == "  bot: 3 tasks · " + tail[-1].split(" · ", 1)[1]
    assert tail[-1].endswith("0 tokens · cost unknown")
    for n in (1, 2, 3):
        assert re.search(rf"#{n}\s+Sleeper {n}\s+landed", result.stdout)
    text = baton("status")
    assert text.returncode == 0
    assert SUMMARY_LINE.search(text.stdout)

    # the summary is stable once the run is over (no conductor: wall stops at the last event)
    later = baton.json("status", "--json")["summary"]
    assert later["wall"] == summary["wall"] and later["task_time"] == summary["task_time"]


def test_a_chain_has_no_speedup(repo, baton):
    run_sleepers(repo, baton, {1: [], 2: [1], 3: [2]})
    summary = baton.json("status", "--json")["summary"]
    assert summary["wall"] >= 3 * SLEEP
    assert summary["speedup"] <= 1.05
