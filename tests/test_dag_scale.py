"""DAG queries at scale (no recursion on the plan's shape, linear work) and against brute force.

Shapes of 10,000 tasks would overflow Python's recursion limit in any recursive walk; the
work each query does is counted through a graph that tallies every dependency it hands out,
so a quadratic walk fails here deterministically, however fast or slow the machine is.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton_tui.core.dag import (
    blocked_by, children, dependents, find_cycle, levels, remaining_path, topo_order,
)


# ---- shapes -------------------------------------------------------------------------------

def chain(n: int, descending: bool = False) -> dict[int, list[int]]:
    """Task i depends on i - 1 (or, descending, on i + 1: a walk from the first id listed
    then has the whole chain beneath it)."""
    if descending:
        return {i: [i + 1] if i < n else [] for i in range(1, n + 1)}
    return {i: [i - 1] if i > 1 else [] for i in range(1, n + 1)}


def wide(n: int) -> dict[int, list[int]]:
    """One root, n - 2 tasks on it side by side, and one task depending on all of them."""
    deps = {1: []}
    deps.update({i: [1] for i in range(2, n)})
    deps[n] = list(range(2, n))
    return deps


def layered(layers: int, width: int, fan_in: int = 3) -> dict[int, list[int]]:
    """`layers` rows of `width` tasks; each depends on `fan_in` tasks of the row above."""
    deps: dict[int, list[int]] = {}
    for row in range(layers):
        for col in range(width):
            node = row * width + col + 1
            if row == 0:
                deps[node] = []
            else:
                above = (row - 1) * width + 1
                deps[node] = sorted({above + (col * 7 + k * 13) % width for k in range(fan_in)})
    return deps


SHAPES = {
    "chain-10000": chain(10_000),
    "chain-10000-descending": chain(10_000, descending=True),
    "chain-5000": chain(5_000),
    "wide-10000": wide(10_000),
    "layered-100x100": layered(100, 100),
}


class Counting(Mapping):
    """A dependency map that counts what a query reads: lookups and dependency ids yielded."""

    def __init__(self, deps: dict[int, list[int]]):
        self.deps = deps
        self.reads = 0

    def __getitem__(self, key):
        self.reads += 1
        return _CountingList(self, self.deps[key])

    def __iter__(self):
        for key in self.deps:
            self.reads += 1
            yield key

    def __len__(self):
        return len(self.deps)

    def __contains__(self, key):
        self.reads += 1
        return key in self.deps

    def items(self):
        for key in self.deps:
            yield key, self[key]

    def get(self, key, default=None):
        return self[key] if key in self.deps else default


class _CountingList:
    def __init__(self, owner: Counting, items: list[int]):
        self.owner, self.items = owner, items

    def __iter__(self):
        for item in self.items:
            self.owner.reads += 1
            yield item

    def __len__(self):
        return len(self.items)

    def __contains__(self, item):
        self.owner.reads += len(self.items)
        return item in self.items


def size(deps: dict[int, list[int]]) -> int:
    return len(deps) + sum(len(d) for d in deps.values())


# Reads allowed per task and per dependency: generous for a linear walk, far below what a
# quadratic one needs on 5,000+ tasks.
LINEAR = 12


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("query", ["find_cycle", "levels", "topo_order", "dependents",
                                   "remaining_path", "blocked_by", "children"])
def test_every_query_is_iterative_and_linear(shape, query):
    deps = SHAPES[shape]
    n = len(deps)
    counted = Counting(deps)
    if query == "find_cycle":
        assert find_cycle(counted) is None
    elif query == "levels":
        lv = levels(counted)
        if shape.startswith("chain"):
            assert sorted(lv.values()) == list(range(n))
    elif query == "topo_order":
        order = topo_order(counted, list(deps))
        position = {node: i for i, node in enumerate(order)}
        assert len(order) == n
        assert all(position[d] < position[node] for node, ds in deps.items() for d in ds)
    elif query == "dependents":
        below: dict[int, list[int]] = {}
        for node, ds in deps.items():
            for d in ds:
                below.setdefault(d, []).append(node)
        expected: set[int] = set()
        frontier = [1]
        while frontier:
            for node in below.get(frontier.pop(), []):
                if node not in expected:
                    expected.add(node)
                    frontier.append(node)
        assert dependents(counted, 1) == expected
    elif query == "remaining_path":
        path = remaining_path(counted, {})
        if shape.startswith("chain"):
            assert max(path.values()) == float(n)
    elif query == "blocked_by":
        states = {1: "failed"}
        blocked = blocked_by(counted, lambda t: states.get(t, "queued"))
        assert blocked == {node: 1 for node in dependents(deps, 1)}
    elif query == "children":
        below = children(counted)
        assert sum(map(len, below.values())) == size(deps) - n
    assert counted.reads <= LINEAR * size(deps), (query, shape, counted.reads, size(deps))


def test_blocked_by_on_a_long_chain_with_the_failure_at_the_far_end():
    deps = chain(10_000)
    # Only the last task is pending: the search walks all the way down, once.
    states = {i: "done" for i in deps}
    states[1] = "failed"
    states[10_000] = "queued"
    assert blocked_by(deps, states) == {10_000: 1}


def test_blocked_by_matches_the_store_semantics():
    # A chain, a diamond, a dependency that failed "through" a done task.
    assert blocked_by({1: [], 2: [1], 3: [2]}, {1: "failed"}) == {2: 1, 3: 1}
    assert blocked_by({1: [], 2: [1], 3: [1], 4: [2, 3]}, {1: "failed"}) == {2: 1, 3: 1, 4: 1}
    assert blocked_by({1: [], 2: [1], 3: [2]}, {1: "parked", 2: "done"}) == {3: 1}
    # Dependencies are searched in their listed order, depth first.
    assert blocked_by({1: [], 2: [1], 3: [], 4: [2, 3]}, {1: "failed", 3: "failed"}) == \
        {2: 1, 4: 1}
    # Only pending tasks are reported; running or failed ones are not "blocked".
    assert blocked_by({1: [], 2: [1], 3: [1]}, {1: "discarded", 3: "running"}) == {2: 1}
    # Custom state sets; a callable works as well as a mapping.
    assert blocked_by({1: [], 2: [1]}, lambda t: {1: "gone"}.get(t, "waiting"),
                      failed_states={"gone"}, pending_states={"waiting"}) == {2: 1}


def test_blocked_by_accepts_views_with_a_state_attribute():
    class View:
        def __init__(self, state):
            self.state = state

    assert blocked_by({1: [], 2: [1], 3: [2]}, {1: View("failed"), 2: View("queued")}) == \
        {2: 1, 3: 1}


def test_queries_end_on_cycles():
    deps = {1: [3], 2: [1], 3: [2], 4: [3]}
    assert set(levels(deps)) == {1, 2, 3, 4}
    assert sorted(topo_order(deps)) == [1, 2, 3, 4]
    assert set(remaining_path(deps, {})) == {1, 2, 3, 4}
    assert blocked_by(deps, {1: "failed"}) == {2: 1, 3: 1, 4: 1}
    assert dependents(deps, 1) == {1, 2, 3, 4}


# ---- brute force on small random graphs ---------------------------------------------------

def reference_blocked_by(task_deps, states):
    """The recursive definition from the store (baton_tui/core/events.py), as an oracle."""
    result = {}

    def state(t):
        return states.get(t, "draft")

    def blocker(task_id, seen):
        for dep in task_deps.get(task_id, []):
            if dep in seen:
                continue
            if state(dep) in ("failed", "parked", "discarded"):
                return dep
            found = blocker(dep, seen | {dep})
            if found is not None:
                return found
        return None

    for task_id in task_deps:
        if state(task_id) in ("draft", "queued"):
            found = blocker(task_id, frozenset({task_id}))
            if found is not None:
                result[task_id] = found
    return result


def reach(deps) -> dict[int, set[int]]:
    """Transitive dependencies of each task (brute force)."""
    out = {n: {d for d in deps[n] if d in deps} for n in deps}
    changed = True
    while changed:
        changed = False
        for n in deps:
            grown = set(out[n])
            for d in out[n]:
                grown |= out[d]
            if grown != out[n]:
                out[n] = grown
                changed = True
    return out


def brute_levels(deps):
    lv = {n: 0 for n in deps}
    for _ in range(len(deps)):
        for n, ds in deps.items():
            inner = [lv[d] + 1 for d in ds if d in deps]
            lv[n] = max(inner, default=0)
    return lv


def brute_remaining(deps, weight):
    # Longest weighted path from n along dependents, by enumerating paths (tiny graphs only).
    below = {n: [m for m in deps if n in deps[m]] for n in deps}

    def longest(n, depth=0):
        return weight.get(n, 1.0) + max((longest(c, depth + 1) for c in below[n]), default=0.0)

    return {n: longest(n) for n in deps}


@st.composite
def dags(draw, max_nodes: int = 9, unknown: bool = False):
    n = draw(st.integers(0, max_nodes))
    ids = draw(st.permutations(list(range(1, n + 1))))
    rank = {node: i for i, node in enumerate(ids)}
    deps: dict[int, list[int]] = {}
    for node in draw(st.permutations(ids)):
        earlier = [m for m in ids if rank[m] < rank[node]]
        chosen = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=4)) if earlier else []
        if unknown and draw(st.booleans()):
            chosen.append(100 + draw(st.integers(0, 3)))
        deps[node] = chosen
    return deps


@st.composite
def graphs(draw, max_nodes: int = 7):
    n = draw(st.integers(1, max_nodes))
    nodes = list(range(1, n + 1))
    return {node: draw(st.lists(st.sampled_from(nodes), unique=True, max_size=3))
            for node in nodes}


STATES = ["draft", "queued", "running", "done", "landed", "failed", "parked", "discarded"]


@settings(max_examples=300, deadline=None)
@given(dags(unknown=True), st.data())
def test_blocked_by_agrees_with_the_recursive_definition(deps, data):
    ids = sorted(set(deps) | {d for ds in deps.values() for d in ds})
    states = {i: data.draw(st.sampled_from(STATES)) for i in ids if data.draw(st.booleans())}
    assert blocked_by(deps, states) == reference_blocked_by(deps, states)


@settings(max_examples=300, deadline=None)
@given(dags(unknown=True))
def test_levels_topo_dependents_against_brute_force(deps):
    assert levels(deps) == brute_levels(deps)
    order_hint = list(deps)
    order = topo_order(deps, order_hint)
    lv = brute_levels(deps)
    assert order == sorted(deps, key=lambda n: (lv[n], order_hint.index(n)))
    assert topo_order(deps) == sorted(deps, key=lambda n: (lv[n], n))
    closure = reach(deps)
    for node in deps:
        assert dependents(deps, node) == {m for m in deps if node in closure[m]}
    assert find_cycle(deps) is None


@settings(max_examples=200, deadline=None)
@given(dags(unknown=True), st.data())
def test_remaining_path_against_brute_force(deps, data):
    weight = {n: float(data.draw(st.integers(1, 5))) for n in deps if data.draw(st.booleans())}
    assert remaining_path(deps, weight) == brute_remaining(deps, weight)


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_find_cycle_iff_cyclic(deps):
    closure = reach(deps)
    cyclic = any(node in closure[node] for node in deps)
    cycle = find_cycle(deps)
    assert (cycle is not None) == cyclic
    if cycle:
        assert cycle[0] == cycle[-1]
        assert len(set(cycle[:-1])) == len(cycle) - 1
        for a, b in itertools.pairwise(cycle):
            assert b in deps[a]
