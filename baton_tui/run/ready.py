"""The conductor's ready queue: which tasks are worth a look, kept from new events only.

A 10,000-task plan cannot be scanned every 50 ms tick: choosing what to start, deciding
whether the run is over and landing taken-over tasks each walked every task, and the
conductor spent its time on that instead of its agents. `Ready` keeps, per task, its state,
whether it satisfies its dependents and how many of its own dependencies are unmet (a
dependents index carries a landing or failure to exactly the tasks it unblocks), and a heap
of the tasks the scheduler may start, most urgent first: paused sessions, then the longest
remaining path, then the most direct dependents (among equals, the one that unblocks more keeps
more slots busy later: about 2 % off the makespan of the 200-task benchmark DAG at
max_parallel 32, in simulation). `touch(ids)` re-reads only the tasks whose events just
arrived.

What changes with time or with the conductor's own bookkeeping (a usage limit's reset, a
`not_before`, tasks being started or collected, player caps) is still judged when a task
is looked at (`decide.choose`); the queue only decides who is looked at. Standard
library only.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from baton_tui.core.dag import children, remaining_path
from baton_tui.core.events import BROKEN, LANDED, State
from baton_tui.core.views import Folder, TaskView
from baton_tui.core.words import Mode

_BLANK = TaskView()  # the view of a task without events (read, never written)
_Key = tuple[bool, tuple[float, int], int]  # (not paused, rank, task id): a heap entry


def start_ranks(deps: Mapping[int, Sequence[int]],
                below: Mapping[int, Sequence[int]] | None = None) -> dict[int, tuple[float, int]]:
    """Each task's place in the start order, lower first (the task id breaks ties): the
    longest remaining path, counted in tasks — Baton cannot know how long an agent will take
    — then the most direct dependents. `below` is the dependents index, when at hand."""
    below = children(deps) if below is None else below
    longest = remaining_path(deps, {t: 1.0 for t in deps})
    return {t: (-longest[t], -len(below[t])) for t in deps}


class Ready:
    """Task states by group, unmet-dependency counts and the start heap of one plan."""

    def __init__(self, doc: Any, folder: Folder, git_mode: bool, approved: bool):
        self.folder = folder
        self.git_mode = git_mode
        self.rebuild(doc, approved)

    # building ----------------------------------------------------------------------------
    def rebuild(self, doc: Any, approved: bool) -> None:
        """Everything from scratch: a new plan revision (tasks, dependencies) or a new run."""
        self.approved = approved
        self.by_id = {t.id: t for t in doc.tasks}
        deps = {t.id: [d for d in t.depends_on if d in self.by_id] for t in doc.tasks}
        self.deps = deps
        self.below = children(deps)                          # dependents index
        self.rank = start_ranks(deps, self.below)            # lower starts first
        self.state: dict[int, str] = {}
        self.by_state: dict[str, set[int]] = {s: set() for s in State}
        self.satisfies: dict[int, bool] = {}
        self.tokens, self.cost, self.costed = 0, 0.0, 0      # usage of every task, summed
        self._usage: dict[int, tuple[int, float, bool]] = {}
        for task_id in self.by_id:
            view = self._view(task_id)
            self.state[task_id] = view.state
            self.by_state.setdefault(view.state, set()).add(task_id)
            self.satisfies[task_id] = self._satisfies(task_id, view.state)
            self._count_usage(task_id, view)
        self.unmet = {t: sum(1 for d in ds if not self.satisfies[d]) for t, ds in deps.items()}
        self.key: dict[int, _Key] = {}
        self.heap: list[_Key] = []
        self.urgent: set[int] = set()    # looked at every tick: checkpoints, manual tasks
        self.delayed: set[int] = set()   # queued with a not-before time
        for task_id in self.by_id:
            self._place(task_id)

    def set_approved(self, approved: bool) -> None:
        if approved != self.approved:
            self.approved = approved
            self.touch_all()

    def touch_all(self) -> None:
        """Re-read every task (a plan-level event may change who can start)."""
        self.touch(self.by_id)

    def touch(self, task_ids: Iterable[int]) -> None:
        """Re-read these tasks' views: their events just arrived."""
        for task_id in task_ids:
            if task_id in self.by_id:
                self._update(task_id)

    # queries -------------------------------------------------------------------------------
    def ids(self, *states: str) -> set[int]:
        """Tasks now in any of `states`."""
        if len(states) == 1:
            return self.by_state.get(states[0], set())
        found: set[int] = set()
        for state in states:
            found |= self.by_state.get(state, set())
        return found

    def deps_ready(self, task_id: int) -> bool:
        return self.unmet.get(task_id, 0) == 0

    def walk(self, room: Callable[[], int]) -> Iterator[int]:
        """Tasks worth a look, each once: the urgent ones, then the start heap in priority
        order while `room()` says more can start. What was looked at stays queued (a task
        leaves when its state says so, through `touch`)."""
        seen: set[int] = set()
        for task_id in sorted(self.urgent):
            seen.add(task_id)
            yield task_id
        popped: list[_Key] = []
        try:
            while self.heap and room() > 0:
                entry = heapq.heappop(self.heap)
                task_id = entry[2]
                if self.key.get(task_id) != entry or task_id in seen:
                    continue  # stale, or a duplicate of an entry already looked at
                seen.add(task_id)
                popped.append(entry)
                yield task_id
        finally:
            for entry in popped:
                heapq.heappush(self.heap, entry)

    # keeping it current --------------------------------------------------------------------
    def _view(self, task_id: int) -> TaskView:
        return self.folder.tasks.get(task_id) or _BLANK

    def _satisfies(self, task_id: int, state: str) -> bool:
        """Whether a dependent of this task may start (a build lands first under git)."""
        if self.by_id[task_id].mode == Mode.BUILD and self.git_mode:
            return state in LANDED
        return state == State.DONE or state in LANDED

    def _count_usage(self, task_id: int, view: TaskView) -> None:
        now = (view.tokens, view.cost if view.cost_known else 0.0, view.cost_known)
        before = self._usage.get(task_id, (0, 0.0, False))
        if now != before:
            self.tokens += now[0] - before[0]
            self.cost += now[1] - before[1]
            self.costed += int(now[2]) - int(before[2])
            self._usage[task_id] = now

    def _update(self, task_id: int) -> None:
        view = self._view(task_id)
        state = view.state
        old = self.state[task_id]
        if state != old:
            self.by_state[old].discard(task_id)
            self.by_state.setdefault(state, set()).add(task_id)
            self.state[task_id] = state
        self._count_usage(task_id, view)
        satisfies = self._satisfies(task_id, state)
        if satisfies != self.satisfies[task_id]:
            self.satisfies[task_id] = satisfies
            step = -1 if satisfies else 1
            for dependent in self.below[task_id]:  # exactly the tasks this one (un)blocks
                self.unmet[dependent] += step
                self._place(dependent)
        self._place(task_id)

    def _place(self, task_id: int) -> None:
        """Put the task where its state says: the start heap, the urgent set, or nowhere."""
        view = self._view(task_id)
        state, task = view.state, self.by_id[task_id]
        key: _Key | None = None
        self.urgent.discard(task_id)
        if state == State.QUEUED and view.not_before:
            self.delayed.add(task_id)
        else:
            self.delayed.discard(task_id)
        if state == State.QUEUED:
            if self.unmet[task_id] == 0 and not view.needs_approval:
                if task.mode == Mode.MANUAL:
                    self.urgent.add(task_id)  # announced once, then waits for `baton done`
                elif task.mode != Mode.BUILD or self.approved:
                    key = (True, self.rank[task_id], task_id)
        elif state in BROKEN:
            if view.reassigned:
                key = (True, self.rank[task_id], task_id)
        elif state == State.PAUSED:
            if not view.taken:
                key = (False, self.rank[task_id], task_id)
        elif state == State.CHECKPOINT:
            self.urgent.add(task_id)
        if key != self.key.get(task_id):
            if key is None:
                self.key.pop(task_id, None)
            else:
                self.key[task_id] = key
                heapq.heappush(self.heap, key)
