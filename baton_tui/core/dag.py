"""Dependency-graph checks and orders (standard library only).

A plan's graph is ``deps``: task id -> the ids it depends on. Every query here is iterative
(an explicit stack, never recursion on the plan's shape, so a 10,000-task chain is as safe as
a 3-task one) and linear in tasks + dependencies, O(V+E), apart from sorting ids where an
order has to be invented. Ids a task depends on that are not keys of ``deps`` (a plan being
edited may name a task that is gone) are ignored unless a function says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "blocked_by",
    "children",
    "dependents",
    "find_cycle",
    "levels",
    "remaining_path",
    "topo_order",
]

FAILED_STATES = frozenset({"failed", "parked", "discarded"})
PENDING_STATES = frozenset({"draft", "queued"})


def children(deps: Mapping[int, Sequence[int]]) -> dict[int, list[int]]:
    """The reverse graph: task id -> the tasks that depend on it directly (in ``deps`` order).

    Only ids that are keys of ``deps`` appear, as keys and as values.
    """
    out: dict[int, list[int]] = {node: [] for node in deps}
    for node, node_deps in deps.items():
        for dep in node_deps:
            below = out.get(dep)
            if below is not None:
                below.append(node)
    return out


def find_cycle(deps: Mapping[int, Sequence[int]]) -> list[int] | None:
    """One cycle as a path `[a, b, …, a]` (each task depends on the next), or None.

    Depth-first from the smallest id, following dependencies in their listed order; unknown
    dependency ids are ignored here (validation names them separately).
    """
    WHITE, GREY, BLACK = 0, 1, 2
    color = {node: WHITE for node in deps}
    for start in sorted(deps):
        if color[start] != WHITE:
            continue
        color[start] = GREY
        path = [start]
        at = {start: 0}  # position on the current path, for slicing the cycle out
        pending: list[Iterator[int]] = [iter(deps.get(start, ()))]
        while pending:
            for dep in pending[-1]:
                state = color.get(dep)
                if state is None or state == BLACK:
                    continue
                if state == GREY:
                    return path[at[dep]:] + [dep]
                color[dep] = GREY
                at[dep] = len(path)
                path.append(dep)
                pending.append(iter(deps.get(dep, ())))
                break
            else:
                done = path.pop()
                pending.pop()
                del at[done]
                color[done] = BLACK
    return None


def _post_order(deps: Mapping[int, Sequence[int]], roots: Sequence[int],
                edges: Callable[[int], Sequence[int]],
                finish: Callable[[int, list[int]], None],
                known: set[int]) -> None:
    """Depth-first over ``edges`` from each root, calling ``finish(node, done_children)``
    once per node after every child reachable from it is finished (or on the stack, in a
    cycle: such a child is left out, as a recursive walk's in-progress guard would)."""
    for root in roots:
        if root in known:
            continue
        known.add(root)
        stack: list[tuple[int, Iterator[int], list[int]]] = [(root, iter(edges(root)), [])]
        while stack:
            node, it, done = stack[-1]
            for nxt in it:
                if nxt not in deps:
                    continue
                if nxt in known:
                    done.append(nxt)
                    continue
                known.add(nxt)
                stack.append((nxt, iter(edges(nxt)), []))
                break
            else:
                stack.pop()
                finish(node, done)
                if stack:
                    stack[-1][2].append(node)


def levels(deps: Mapping[int, Sequence[int]]) -> dict[int, int]:
    """Level of each task: 0 without dependencies, else 1 + the deepest dependency's level.

    Callers check for cycles first; on a cycle this still ends, and a dependency found on the
    stack counts as level 0.
    """
    memo: dict[int, int] = {}
    for node, node_deps in deps.items():  # plans list dependencies first: one pass then
        level = 0
        for dep in node_deps:
            if dep in deps:
                below = memo.get(dep)
                if below is None:
                    break  # listed after a task depending on it: walk the graph instead
                if below >= level:
                    level = below + 1
        else:
            memo[node] = level
            continue
        break
    else:
        return memo
    memo.clear()

    def finish(node: int, done: list[int]) -> None:
        memo[node] = 1 + max(memo.get(d, 0) for d in done) if done else 0

    _post_order(deps, list(deps), lambda n: deps.get(n, ()), finish, set())
    return {node: memo[node] for node in deps}


def topo_order(deps: Mapping[int, Sequence[int]], order: Sequence[int] | None = None,
               level_of: Mapping[int, int] | None = None) -> list[int]:
    """Dependencies before dependents, level by level; ties keep the plan's own order.

    ``order`` is the plan's order (sorted ids when omitted); ids missing from it sort after
    the ones it names, by id. ``level_of`` is ``levels(deps)`` when the caller has it already.
    """
    lv = levels(deps) if level_of is None else level_of
    listed = list(order) if order is not None else sorted(deps)
    buckets: list[list[int]] = [[] for _ in range(max(lv.values(), default=-1) + 1)]
    seen: set[int] = set()
    for node in listed:
        if node in lv and node not in seen:
            seen.add(node)
            buckets[lv[node]].append(node)
    if len(seen) < len(lv):
        for node in sorted(n for n in lv if n not in seen):
            buckets[lv[node]].append(node)
    return [node for bucket in buckets for node in bucket]


def dependents(deps: Mapping[int, Sequence[int]], root: int,
               below: Mapping[int, Sequence[int]] | None = None) -> set[int]:
    """Every task that depends on `root`, directly or through others. ``below`` is
    ``children(deps)`` when the caller asks for many roots (build it once, not per root)."""
    below = children(deps) if below is None else below
    found: set[int] = set()
    frontier = [root]
    while frontier:
        for node in below.get(frontier.pop(), ()):
            if node not in found:
                found.add(node)
                frontier.append(node)
    return found


def remaining_path(deps: Mapping[int, Sequence[int]], weight: Mapping[int, float]) -> dict[int, float]:
    """Longest remaining path from each task to the end of the DAG (its own weight included).

    The scheduler starts the ready task with the longest remaining path first. A missing
    weight counts 1.0.
    """
    below = children(deps)
    memo: dict[int, float] = {}

    def finish(node: int, done: list[int]) -> None:
        own = weight.get(node, 1.0)
        memo[node] = own + (max(memo.get(c, 0.0) for c in done) if done else 0.0)

    _post_order(deps, list(deps), below.__getitem__, finish, set())
    return {node: memo[node] for node in deps}


def _state_reader(state_of: Callable[[int], str] | Mapping[int, Any]) -> Callable[[int], str]:
    if not isinstance(state_of, Mapping):
        return state_of

    def read(task_id: int) -> str:
        value = state_of.get(task_id)
        if value is None:
            return "draft"  # a task with no events yet
        if isinstance(value, str):
            return value
        state: str = getattr(value, "state", "draft")
        return state

    return read


def blocked_by(deps: Mapping[int, Sequence[int]],
               state_of: Callable[[int], str] | Mapping[int, Any],
               failed_states: frozenset[str] | set[str] = FAILED_STATES,
               pending_states: frozenset[str] | set[str] = PENDING_STATES) -> dict[int, int]:
    """Pending tasks whose dependency failed, directly or through others: id -> one blocker.

    ``state_of`` is a function from task id to state, or a mapping whose values are states
    or objects with a ``state`` (a task missing from it is a draft). For each pending task,
    its dependencies are searched depth-first in their listed order, and the first failed
    one met is its blocker (a failed dependency is reported before looking beneath it):
    a chain 1 <- 2 <- 3 with 1 failed gives {2: 1, 3: 1}. Each task's answer is computed
    once, dependencies first, so the whole map costs O(V+E). Ids unknown to ``deps`` have
    no dependencies; on a cycle the search still ends (a dependency on the stack is skipped).
    """
    state = _state_reader(state_of)
    failed_memo: dict[int, bool] = {}

    def is_failed(task_id: int) -> bool:
        known = failed_memo.get(task_id)
        if known is None:
            known = failed_memo[task_id] = state(task_id) in failed_states
        return known

    blocker: dict[int, int | None] = {}
    on_stack: set[int] = set()
    result: dict[int, int] = {}
    for root in deps:
        if state(root) not in pending_states:
            continue
        if root not in blocker:
            # Frames are [task, iterator over its deps, answer]. A task is answered by its
            # first failed dependency, or the first dependency that has a blocker itself; it
            # is unblocked when its dependencies run out.
            on_stack.add(root)
            stack: list[list[Any]] = [[root, iter(deps.get(root, ())), None]]
            while stack:
                frame = stack[-1]
                if frame[2] is None:
                    for dep in frame[1]:
                        if dep in on_stack:
                            continue
                        if is_failed(dep):
                            frame[2] = dep
                            break
                        if dep in blocker:
                            if blocker[dep] is not None:
                                frame[2] = blocker[dep]
                                break
                            continue
                        on_stack.add(dep)
                        stack.append([dep, iter(deps.get(dep, ())), None])
                        break
                    if stack[-1] is not frame:
                        continue  # descended into a dependency
                stack.pop()
                node, _, answer = frame
                on_stack.discard(node)
                blocker[node] = answer
                if stack and answer is not None:
                    stack[-1][2] = answer
        found = blocker[root]
        if found is not None:
            result[root] = found
    return result
