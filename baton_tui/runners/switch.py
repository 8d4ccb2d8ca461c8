"""`RunnerSwitch`: the conductor's one `Runner`, handing each task to the runner it names.

A task's `runner` field (`local`, or a `[runners.NAME]` of the configuration) chooses: the
local runner (`LocalRunner`) is made at once, a cluster runner only when a task names it —
so a run with no remote task never imports `distributed`. Each attempt stays with the runner
that started (or adopted) it. The switch is what knows which runner a name means: the
conductor asks it (`runs_here`) rather than comparing names itself.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Collection, Sequence

from baton_tui.plan.model import Task
from baton_tui.runners.base import AttemptHandle, Changes, Looked, Runner, StartFailed, StartRequest
from baton_tui.runners.local import LocalRunner
from baton_tui.runners_config import LOCAL
from baton_tui.store.rows import AttemptRow, PlanRow
from baton_tui.workspace import Workspace


class RunnerSwitch:
    """Implements `Runner` by handing each call to the runner of its task or attempt."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.local = LocalRunner(ws)
        self._runners: dict[str, Runner] = {LOCAL: self.local}
        self._of: dict[AttemptHandle, Runner] = {}

    def runner(self, name: str | None) -> Runner:
        """The runner named `name` (made on first use); StartFailed for an unknown one."""
        name = name or LOCAL
        found = self._runners.get(name)
        if found is not None:
            return found
        settings = self.ws.config.runners.get(name)
        if settings is None:
            raise StartFailed(f"unknown runner {name!r} (configured: "
                              f"{', '.join(self.ws.config.runners.names())})")
        from baton_tui.runners.dask.runner import DaskRunner  # lazy: imports `distributed` later

        made = self._runners[name] = DaskRunner(self.ws, name, settings)
        return made

    def connect_ahead(self, plan: PlanRow | None) -> None:
        """Start connecting now to the cluster runners the plan's tasks name (a Dask runner
        imports `distributed` and shakes hands for a second or more): the conductor's own
        start-up and its first worktrees go on meanwhile, instead of the first remote start
        waiting for it all. A runner that is not trusted is not contacted (its start says so)."""
        tasks = (plan.doc.get("tasks") or []) if plan is not None else []
        names = {task.get("runner") for task in tasks if isinstance(task, dict)}
        for name in sorted(str(name) for name in names - {None, LOCAL}):
            try:
                runner = self.runner(name)
            except StartFailed:
                continue  # its start says so
            connect = getattr(runner, "connect_soon", None)
            if connect is not None:
                connect()

    def runs_here(self, task: Task) -> bool:
        try:
            return self.runner(task.runner).runs_here(task)
        except StartFailed:
            return False  # an unknown runner: its start says so, nothing runs

    def _by(self, handle: AttemptHandle) -> Runner:
        return self._of.get(handle, self.local)

    async def start(self, request: StartRequest) -> AttemptHandle:
        runner = self.runner(request.task.runner)
        handle = await runner.start(request)
        self._of[handle] = runner
        return handle

    def adopt(self, attempt: AttemptRow) -> AttemptHandle:
        try:
            runner = self.runner(attempt.spec.get("runner"))
        except StartFailed:
            runner = self.local  # its runner is gone from the configuration: its shim's end
        handle = runner.adopt(attempt)
        self._of[handle] = runner
        return handle

    def on_its_way(self, attempt: AttemptRow) -> bool:
        try:
            return self.runner(attempt.spec.get("runner")).on_its_way(attempt)
        except StartFailed:
            return False

    def look(self, handles: Collection[AttemptHandle]) -> Looked:
        looked = Looked()
        groups: dict[int, tuple[Runner, list[AttemptHandle]]] = {}
        for handle in handles:
            runner = self._by(handle)
            groups.setdefault(id(runner), (runner, []))[1].append(handle)
        for runner, mine in groups.values():
            found = runner.look(mine)
            looked.ended |= found.ended
            looked.lost |= found.lost
        for handle in looked.lost:
            self._of.pop(handle, None)
        return looked

    def exited(self, handle: AttemptHandle) -> asyncio.Future[object] | None:
        return self._by(handle).exited(handle)

    def output(self, handle: AttemptHandle) -> bytes:
        return self._by(handle).output(handle)

    def activity(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
        found: dict[AttemptHandle, float] = {}
        groups: dict[int, tuple[Runner, list[AttemptHandle]]] = {}
        for handle in handles:
            runner = self._by(handle)
            groups.setdefault(id(runner), (runner, []))[1].append(handle)
        for runner, mine in groups.values():
            found.update(runner.activity(mine))
        return found

    def changed_files(self, handle: AttemptHandle) -> asyncio.Future[Changes] | None:
        return self._by(handle).changed_files(handle)

    def stop(self, handle: AttemptHandle, sig: signal.Signals) -> bool:
        return self._by(handle).stop(handle, sig)

    async def collect(self, handle: AttemptHandle) -> AttemptRow:
        runner = self._of.pop(handle, self.local)
        return await runner.collect(handle)

    def close(self) -> None:
        for runner in self._runners.values():
            runner.close()
