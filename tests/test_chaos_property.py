"""A property of every run: killed at any event boundary, then resumed, it loses nothing.

A 12-task plan (independent tasks, chains, a diamond, a join) runs on four slots; the
conductor SIGKILLs itself — alone, or with its whole process group (the git it runs dies
too) — right after the N-th event it writes, N drawn from a seeded generator. `baton resume`
must then finish the run with every promise of helpers/chaos_kit.check_after_crash kept.
CI runs a few seeds; BATON_CHAOS_SEEDS=N runs N of them (BATON_CHAOS_SEED=S only seed S).
"""

from __future__ import annotations

import os
import random

import pytest

from helpers.chaos_kit import check_after_crash, start_killed
from helpers.run_kit import events, load_plan, script_agent, status, task, write_config

pytestmark = pytest.mark.slow

DEPS = {1: [], 2: [], 3: [], 4: [1], 5: [1, 2], 6: [3], 7: [4], 8: [5, 6], 9: [],
        10: [7, 8], 11: [9], 12: [10, 11]}
SEEDS = ([int(os.environ["BATON_CHAOS_SEED"])] if os.environ.get("BATON_CHAOS_SEED")
         else list(range(int(os.environ.get("BATON_CHAOS_SEEDS", "3")))))
# A conductor writes at least conductor.started, then queued, started, done and landed for
# each task (12 x 4): a boundary up to this one is always reached before the run ends.
LAST_BOUNDARY = 48


@pytest.mark.parametrize("seed", SEEDS)
def test_a_kill_at_any_event_boundary_of_a_12_task_run_loses_nothing(repo, baton, tmp_path,
                                                                    seed):
    rng = random.Random(seed)
    boundary = rng.randint(1, LAST_BOUNDARY)
    how = rng.choice(["", ":group"])
    script = {str(i): [{"sleep": rng.choice([0, 0.1, 0.3])},
                       {"write": f"t{i}.txt", "content": f"{i}\n"},
                       {"report": "done", "summary": f"task {i}"}] for i in DEPS}
    write_config(repo, {"agent": script_agent(tmp_path, "p", script)},
                 limits={"max_parallel": 4})
    load_plan(baton, [task(i, deps=deps) for i, deps in DEPS.items()])

    start_killed(baton, f"event@{boundary}{how}")
    written = sum(1 for e in events(baton) if e["kind"] != "run.started")
    assert written >= boundary, (boundary, written)  # it died there, not before
    result = baton("resume", timeout=180)
    assert result.returncode == 0, (seed, boundary, how, result.stdout[-3000:], result.stderr)
    check_after_crash(repo, baton, {i: f"t{i}.txt" for i in DEPS})
    assert status(baton)["conductor"] is None
