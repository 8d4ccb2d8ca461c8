"""A 10,000-task plan from end to end: load, show, approve, run, hand off.

Half the plan is one chain of 5,000 tasks (any walk that recursed along it would pass
Python's recursion limit five times over, and nothing here raises that limit); the other
half is rows of fifty tasks, each depending on two of the row above, hanging off a wide
root. Every task is the trivial agent — the `script` player with check `true` — so what is
measured is Baton itself: worktrees, shims, landings, the conductor's queue, the store.
`BATON_SCALE_TASKS` runs the same test at another size (it must be even, at least 200).
Slow: 75 minutes on a two-core machine at full size, most of it git's: `git worktree add`
reads every registered worktree, so with thousands of them each add takes most of a second.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.core import write_plan
from helpers.scale_plans import chain_and_rows

pytestmark = [pytest.mark.slow, pytest.mark.timeout(4 * 3600)]

N = int(os.environ.get("BATON_SCALE_TASKS", "10000"))


def test_sources_never_raise_the_recursion_limit():
    root = Path(__file__).resolve().parents[1] / "baton_tui"
    assert not [p for p in root.rglob("*.py") if "setrecursionlimit" in p.read_text()]


def test_a_10000_task_plan_loads_shows_approves_runs_and_hands_off(repo, baton):
    assert N % 2 == 0 and N >= 200
    plan = write_plan(repo.parent / "plan.json", chain_and_rows(N), goal="Scale")

    loaded = baton("plan", "--from", str(plan), timeout=600)
    assert loaded.returncode == 0, loaded.stderr
    status = baton.json("status", "--json")
    assert len(status["tasks"]) == N and status["plan"]["state"] == "draft"
    assert status["tasks"][N // 2 - 1]["depends_on"] == [N // 2 - 1]
    text = baton("status", timeout=600)
    assert text.returncode == 0 and f"#{N}" in text.stdout

    approved = baton("approve", timeout=600)
    assert approved.returncode == 0, approved.stderr
    ran = baton("run", timeout=4 * 3600)
    assert ran.returncode == 0, (ran.stdout[-3000:], ran.stderr[-3000:])

    status = baton.json("status", "--json")
    states = {t["state"] for t in status["tasks"]}
    assert states == {"landed"}, status["summary"]["counts"]
    assert status["summary"]["counts"] == {"landed": N}

    review = baton("handoff", "review", "--json", timeout=3600)
    assert review.returncode == 0, review.stderr
    assert len(json.loads(review.stdout)["tasks"]) == N
    merged = baton("handoff", "merge", timeout=3600)
    assert merged.returncode == 0, (merged.stdout[-2000:], merged.stderr[-2000:])
    final = baton.json("status", "--json")
    assert {t["state"] for t in final["tasks"]} == {"merged"}
    assert final["plan"]["state"] == "merged"
