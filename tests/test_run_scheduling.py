"""End-to-end scheduling: parallelism caps and longest-remaining-path-first."""

from __future__ import annotations

from helpers.run_kit import events, first, load_plan, script_agent, states, task, write_config


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


def test_among_equal_paths_the_task_that_unblocks_more_starts_first(repo, baton, tmp_path):
    agent = script_agent(tmp_path, "p", {"*": quick("x", 0.1)})
    write_config(repo, {"agent": agent}, limits={"max_parallel": 1})
    load_plan(baton, [task(1, "Unblocks one"), task(2, "Unblocks two"),
                      task(3, "After one", deps=[1]), task(4, "After two", deps=[2]),
                      task(5, "Also after two", deps=[2])])
    result = baton("run", "--approve", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    order = [e["task"] for e in events(baton) if e["kind"] == "task.started"]
    assert order == [2, 1, 3, 4, 5], order  # (by id alone, 1 would have gone first)


def test_a_players_max_parallel_caps_only_its_own_tasks(repo, baton, tmp_path):
    capped = script_agent(tmp_path, "c", {"*": quick("c", 1.2), "1": quick("one", 1.2),
                                           "2": quick("two", 1.2)})
    free = script_agent(tmp_path, "f", {"3": quick("three", 1.2), "4": quick("four", 1.2)})
    write_config(repo, {"capped": capped, "free": free}, limits={"max_parallel": 4})
    # max_parallel for a custom player sits in its own table.
    config = (repo / "baton.toml").read_text().replace(
        "[players.custom.capped]\n", "[players.custom.capped]\nmax_parallel = 1\n")
    (repo / "baton.toml").write_text(config)
    load_plan(baton, [task(1, player="capped"), task(2, player="capped"),
                      task(3, player="free"), task(4, player="free")])
    result = baton("run", "--approve", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert set(states(baton).values()) == {"landed"}
    evs = events(baton)
    # The cap is on agents running at once (a finished agent's landing does not hold a slot).
    spans = intervals(evs, (1, 2, 3, 4), end="task.reported")
    assert not overlap(spans[1], spans[2]), spans
    assert overlap(spans[3], spans[4]), spans  # the uncapped player ran side by side
