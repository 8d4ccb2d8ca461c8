"""Dependency-graph checks and orders (standard library only)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def find_cycle(deps: Mapping[int, Sequence[int]]) -> list[int] | None:
    """One cycle as a path `[a, b, …, a]`, or None. Unknown dependency ids are ignored here."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = {node: WHITE for node in deps}
    stack: list[int] = []

    def visit(node: int) -> list[int] | None:
        color[node] = GREY
        stack.append(node)
        for dep in deps.get(node, ()):
            if dep not in color:
                continue
            if color[dep] == GREY:
                return stack[stack.index(dep):] + [dep]
            if color[dep] == WHITE:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        color[node] = BLACK
        return None

    for node in sorted(deps):
        if color[node] == WHITE:
            found = visit(node)
            if found:
                return found
    return None


def levels(deps: Mapping[int, Sequence[int]]) -> dict[int, int]:
    """Level of each task: 0 without dependencies, else 1 + the deepest dependency's level."""
    memo: dict[int, int] = {}

    def level(node: int) -> int:
        if node not in memo:
            memo[node] = 0  # guards against cycles; callers check for cycles first
            inner = [level(d) for d in deps.get(node, ()) if d in deps]
            memo[node] = 1 + max(inner) if inner else 0
        return memo[node]

    for node in deps:
        level(node)
    return memo


def topo_order(deps: Mapping[int, Sequence[int]], order: Sequence[int] | None = None) -> list[int]:
    """Dependencies before dependents; ties keep the plan's own order."""
    lv = levels(deps)
    position = {node: i for i, node in enumerate(order or sorted(deps))}
    return sorted(deps, key=lambda n: (lv[n], position.get(n, n)))


def dependents(deps: Mapping[int, Sequence[int]], root: int) -> set[int]:
    """Every task that depends on `root`, directly or through others."""
    found: set[int] = set()
    frontier = [root]
    while frontier:
        current = frontier.pop()
        for node, node_deps in deps.items():
            if current in node_deps and node not in found:
                found.add(node)
                frontier.append(node)
    return found


def remaining_path(deps: Mapping[int, Sequence[int]], weight: Mapping[int, float]) -> dict[int, float]:
    """Longest remaining path from each task to the end of the DAG (its own weight included).

    The scheduler starts the ready task with the longest remaining path first.
    """
    children: dict[int, list[int]] = {n: [] for n in deps}
    for node, node_deps in deps.items():
        for dep in node_deps:
            if dep in children:
                children[dep].append(node)
    memo: dict[int, float] = {}

    def longest(node: int) -> float:
        if node not in memo:
            memo[node] = weight.get(node, 1.0)
            tails = [longest(c) for c in children[node]]
            memo[node] = weight.get(node, 1.0) + (max(tails) if tails else 0.0)
        return memo[node]

    for node in deps:
        longest(node)
    return memo
