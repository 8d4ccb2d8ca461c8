"""Dependency-graph checks (cycles, missing deps, duplicate ids) and orders."""

from __future__ import annotations

import pytest

from baton_tui.config import Config
from baton_tui.core.dag import dependents, find_cycle, levels, remaining_path, topo_order
from baton_tui.plan.model import parse_document
from baton_tui.plan.validate import ensure_valid, plan_problems
from baton_tui.players.registry import Catalog
from baton_tui.core.errors import BatonError


def plan(*specs):
    """specs: (id, deps) pairs -> a parsed document on claude-code."""
    return parse_document({"version": 1, "goal": "g", "tasks": [
        {"id": i, "title": f"t{i}", "player": "claude-code", "depends_on": list(d)}
        for i, d in specs]})


CATALOG = Catalog.from_config(Config())


def test_find_cycle_none_on_a_dag():
    assert find_cycle({1: [], 2: [1], 3: [1, 2], 4: [3]}) is None


def test_find_cycle_reports_the_path():
    cycle = find_cycle({1: [3], 2: [1], 3: [2], 4: []})
    assert cycle is not None
    assert cycle[0] == cycle[-1]
    assert set(cycle) == {1, 2, 3}
    # every consecutive pair is a real edge (node depends on next)
    deps = {1: [3], 2: [1], 3: [2]}
    for a, b in zip(cycle, cycle[1:]):
        assert b in deps[a]


def test_find_cycle_self_dependency():
    assert find_cycle({1: [1]}) == [1, 1]


def test_find_cycle_ignores_unknown_ids():
    assert find_cycle({1: [99]}) is None


def test_problems_cycle_is_one_line():
    problems = plan_problems(plan((1, [2]), (2, [1]), (3, [])), CATALOG)
    assert len(problems) == 1
    assert "form a cycle" in problems[0] and "1" in problems[0] and "2" in problems[0]


def test_problems_self_dependency():
    problems = plan_problems(plan((1, [1]), (2, [1])), CATALOG)
    assert problems == ["task 1: depends on itself"]


def test_problems_missing_dependency():
    problems = plan_problems(plan((1, []), (2, [7])), CATALOG)
    assert problems == ["task 2: depends on task 7, which does not exist"]


def test_problems_duplicate_ids():
    problems = plan_problems(plan((1, []), (1, []), (2, [1])), CATALOG)
    assert problems == ["task 1: duplicate id (2 tasks use it)"]


def test_problems_every_problem_its_own_line():
    problems = plan_problems(plan((1, [1]), (2, [9]), (3, [4]), (4, [3])), CATALOG)
    assert len(problems) == 3
    assert all("\n" not in p for p in problems)


def test_ensure_valid_raises_exit_2_with_all_lines():
    with pytest.raises(BatonError) as info:
        ensure_valid(plan((1, [9]), (2, [8])), CATALOG, None, "p.json")
    assert info.value.code == 2
    assert info.value.lines == ["p.json: task 1: depends on task 9, which does not exist",
                                "p.json: task 2: depends on task 8, which does not exist"]


def test_ensure_valid_returns_valid_doc():
    doc = plan((1, []), (2, [1]))
    assert ensure_valid(doc, CATALOG) is doc


def test_levels():
    assert levels({1: [], 2: [1], 3: [], 4: [2, 3], 5: [4, 1]}) == {1: 0, 2: 1, 3: 0, 4: 2, 5: 3}


def test_topo_order_deps_first_ties_in_plan_order():
    deps = {3: [], 1: [3], 2: [], 4: [1, 2]}
    order = topo_order(deps, [3, 1, 2, 4])
    assert order == [3, 2, 1, 4]
    pos = {n: i for i, n in enumerate(order)}
    for node, ds in deps.items():
        assert all(pos[d] < pos[node] for d in ds)


def test_topo_order_default_order_is_sorted_ids():
    assert topo_order({2: [], 1: [], 3: [1]}) == [1, 2, 3]


def test_dependents_transitive():
    deps = {1: [], 2: [1], 3: [2], 4: [], 5: [4, 3]}
    assert dependents(deps, 1) == {2, 3, 5}
    assert dependents(deps, 4) == {5}
    assert dependents(deps, 5) == set()


def test_remaining_path_longest_tail():
    deps = {1: [], 2: [1], 3: [2], 4: [1]}
    weights = {1: 1.0, 2: 5.0, 3: 1.0, 4: 2.0}
    path = remaining_path(deps, weights)
    assert path == {1: 7.0, 2: 6.0, 3: 1.0, 4: 2.0}


def test_remaining_path_default_weight_is_one():
    assert remaining_path({1: [], 2: [1], 3: [2]}, {}) == {1: 3.0, 2: 2.0, 3: 1.0}
