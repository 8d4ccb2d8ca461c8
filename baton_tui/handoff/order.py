"""Merge order with carried work first, in O(n log n) for n landed tasks.

A landed task's branch carries every task that landed on the integration branch before the
branch was cut, so handoff merges those first: each merge then brings only its own task
and a conflict is named after the task causing it. Listing, per task, every task it carries
is quadratic (a 10,000-task chain carries 50 million pairs). But what a branch carries is a
prefix of the landing order — every task whose landing event precedes its cut — so one
question answers it: "the next task, in plan position, still to place whose landing came
before this cut". A minimum tree over landing events, in plan-position order, answers that
in O(log n), and each task is placed once. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

_NEVER = float("inf")


class _MinTree:
    """Landing event ids by position; a taken position reads as never landed."""

    def __init__(self, values: Sequence[float]):
        self.n = len(values)
        self.size = 1 << max(0, (self.n - 1).bit_length())
        self.tree = [_NEVER] * (2 * self.size)
        self.tree[self.size:self.size + self.n] = values
        for i in range(self.size - 1, 0, -1):
            self.tree[i] = min(self.tree[2 * i], self.tree[2 * i + 1])

    def take(self, at: int) -> None:
        i = at + self.size
        self.tree[i] = _NEVER
        while i > 1:
            i >>= 1
            self.tree[i] = min(self.tree[2 * i], self.tree[2 * i + 1])

    def first_below(self, start: int, limit: float) -> int:
        """The first position >= `start` whose value is below `limit`, or -1."""
        if start >= self.n:
            return -1
        tree, i = self.tree, start + self.size
        while True:
            if tree[i] < limit:
                while i < self.size:  # down to the leftmost such leaf
                    i = 2 * i if tree[2 * i] < limit else 2 * i + 1
                return i - self.size
            while i & 1:  # a right child: up until there is a right sibling
                i >>= 1
            if i == 0:
                return -1
            i += 1


def carried_first(base_order: Sequence[int], position: Mapping[int, int],
                  landed: Mapping[int, int], cut: Mapping[int, int]) -> list[int]:
    """`base_order`, each task preceded by the tasks its branch carries (those in `landed`,
    by landing event id, that landed before its `cut` event), carried work in plan
    position, depth first. Each task appears once."""
    keyed = sorted(landed, key=lambda t: position.get(t, t))
    at = {task_id: i for i, task_id in enumerate(keyed)}
    tree = _MinTree([landed[t] for t in keyed])
    order: list[int] = []
    claimed: set[int] = set()

    def claim(task_id: int) -> list:
        claimed.add(task_id)
        if task_id in at:
            tree.take(at[task_id])
        return [task_id, 0]  # a frame: the task, where its search for carried work goes on

    for root in base_order:
        if root in claimed:
            continue
        stack = [claim(root)]
        while stack:
            frame = stack[-1]
            task_id = frame[0]
            limit = cut.get(task_id, 0) if task_id in landed else 0
            found = tree.first_below(frame[1], limit) if limit else -1
            if found < 0:
                stack.pop()
                order.append(task_id)
                continue
            frame[1] = found + 1
            stack.append(claim(keyed[found]))
    return order
