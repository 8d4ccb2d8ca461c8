"""Scheduling: parallelism caps and longest-remaining-path-first — one end-to-end run, the rest
on the real conductor with scripted agents."""

from __future__ import annotations

from helpers.run_kit import events, first, load_plan, script_agent, task, write_config
from helpers.scripted_kit import Scripted, has_event


def quick(name: str, seconds: float = 0.3) -> list[dict]:
    return [{"sleep": seconds}, {"write": f"{name}.txt", "content": name},
            {"report": "done", "summary": name}]


def intervals(evs: list[dict], ids, end: str = "task.landed") -> dict[int, tuple[int, int]]:
    """Event-id intervals from start to `end` (landing, or the agent's report), per task."""
    return {t: (first(evs, "task.started", t)["id"], first(evs, end, t)["id"]) for t in ids}


def overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_max_parallel_one_runs_the_longest_remaining_path_first(repo, baton, tmp_path):
    agent = script_agent(tmp_path, "p", {"*": quick("x", 0.1), "1": quick("one"),
                                          "2": quick("two"), "3": quick("three")})
    write_config(repo, {"agent": agent}, limits={"max_parallel": 1})
    load_plan(baton, [task(1, "Alone"), task(2, "Head of a chain"), task(3, "Tail", deps=[2])])
    result = baton("run", "--approve", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    evs = events(baton)
    order = [e["task"] for e in evs if e["kind"] == "task.started"]
    assert order == [2, 1, 3], order
    spans = intervals(evs, (1, 2, 3))
    assert not any(overlap(spans[a], spans[b]) for a, b in ((1, 2), (1, 3), (2, 3))), spans


# The rest on the real conductor with scripted agents (`helpers.scripted_kit`): the same
# scheduling, without an agent process; the run above is the end-to-end one.
def done(name: str) -> list[dict]:
    return [{"write": f"{name}.txt", "content": name}, {"report": "done", "summary": name}]


def test_among_equal_paths_the_task_that_unblocks_more_starts_first(repo):
    run = Scripted(repo)
    run.config(limits={"max_parallel": 1})
    run.plan([task(1, "Unblocks one"), task(2, "Unblocks two"),
              task(3, "After one", deps=[1]), task(4, "After two", deps=[2]),
              task(5, "Also after two", deps=[2])])
    assert run.run({"*": done("x")}) == 0
    order = [e["task"] for e in run.events() if e["kind"] == "task.started"]
    assert order == [2, 1, 3, 4, 5], order  # (by id alone, 1 would have gone first)


def test_a_players_max_parallel_caps_only_its_own_tasks(repo):
    run = Scripted(repo)
    # max_parallel for a custom player sits in its own table.
    run.config(players=("capped", "free"), limits={"max_parallel": 4},
               player_lines={"capped": "max_parallel = 1"})
    run.plan([task(1, player="capped"), task(2, player="capped"),
              task(3, player="free"), task(4, player="free")])
    # The uncapped player's two run side by side: each waits until the other started.
    code = run.run({"1": done("one"), "2": done("two"),
                    "3": [{"until": has_event("task.started", 4)}, *done("three")],
                    "4": [{"until": has_event("task.started", 3)}, *done("four")]})
    assert code == 0
    assert set(run.states().values()) == {"landed"}
    evs = run.events()
    # The cap is on agents running at once (a finished agent's landing does not hold a slot).
    spans = intervals(evs, (1, 2, 3, 4), end="task.reported")
    assert not overlap(spans[1], spans[2]), spans
    assert overlap(spans[3], spans[4]), spans
