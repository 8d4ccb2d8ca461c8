"""The real conductor in this process, its agents scripted (`baton_tui.runners.scripted`).

`Scripted(repo)` writes the repository's baton.toml (custom players whose command is never
run), loads and trusts a plan, and runs the real `Conductor` over a `ScriptedRunner` on a
thread of this process: scheduling, supervision, stop conditions, finishing and landing are
the product's, against the real store and real git in the test's temporary repository. The
run is started as a person starts one — `control.start_run`, `resume_run`, `retry_task` —
with this process recorded as the live conductor, so those commands record their requests and
find the conductor running instead of starting one. Make such requests inside `conduct`'s
`ask` (or a script's `call` step): made between runs, with no conductor recorded, they start a
real one. Every wait is on a condition.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from baton_tui import procs
from baton_tui.api import agents, plans, reading
from baton_tui.core.views import Folder
from baton_tui.run import control
from baton_tui.run.conductor import Conductor
from baton_tui.runners.scripted import ScriptedRunner, Step
from baton_tui.workspace import Workspace
from helpers.core import write_plan

NEVER_RUN = [sys.executable, "-c", "raise SystemExit('a scripted player is never run')"]


class _Recorded:
    """The `early` handed to `start_run`: this process is recorded as the live conductor, so
    a conductor is never cued (`spawn_conductor` finds the record first)."""

    def cue(self, root: Path) -> None:
        raise AssertionError("a conductor was about to be started: the scripted one runs here")


class Scripted:
    """One repository driven through the real conductor with scripted agents (`runner_type`:
    the runner that plays them, a `ScriptedRunner` or one made from it)."""

    runner_type: type[ScriptedRunner] = ScriptedRunner

    def __init__(self, repo: Path):
        self.repo = repo
        self.ws = Workspace(repo)
        self.runner: ScriptedRunner | None = None  # the last run's
        self.conductor: Conductor | None = None   # the last run's (what it has read)

    # set-up -------------------------------------------------------------------------------
    def config(self, players: Sequence[str] = ("agent",), limits: Mapping[str, Any] | None
               = None, extra: str = "", player_lines: Mapping[str, str] | None = None) -> None:
        """baton.toml: custom players (their command is never run), `[limits]`, then `extra`."""
        lines: list[str] = []
        for name in players:
            lines += [f"[players.custom.{name}]", f"command = {json.dumps(NEVER_RUN)}",
                      f"research_command = {json.dumps(NEVER_RUN)}",
                      *([(player_lines or {})[name]] if name in (player_lines or {}) else []), ""]
        lines.append("[limits]")
        for key, value in {"stall": "60s", "checkpoint_wait": "1s", **(limits or {})}.items():
            lines.append(f"{key} = {json.dumps(value)}")
        (self.repo / "baton.toml").write_text("\n".join(lines) + "\n" + extra)
        self.ws = Workspace(self.repo)  # the new file read afresh

    def plan(self, tasks: list[dict], *, approve: bool = False, trust: bool = True,
             **extra: Any) -> None:
        """Load a v1 plan as the current one (and trust baton.toml, approve it, if asked)."""
        plans.store_plan(self.ws, {"version": 1, "goal": "Sample goal", "tasks": tasks,
                                   **extra}, "plan.json")
        if trust:
            agents.trust(self.ws)
        if approve:
            plans.approve(self.ws)

    # running ------------------------------------------------------------------------------
    def run(self, scripts: Mapping[int | str, Sequence[Step]], *, approve: bool = True,
            until_failures: int | None = None, deadline: str | None = None,
            timeout: float = 60.0, meanwhile: Callable[[Workspace], object] | None = None
            ) -> int:
        """`baton run [--approve]` to its end: the exit code."""
        return self.conduct(scripts, lambda ws: control.start_run(
            ws, approve=approve, until_failures=until_failures, deadline=deadline,
            early=_Recorded()), timeout, meanwhile)  # type: ignore[arg-type]

    def resume(self, scripts: Mapping[int | str, Sequence[Step]], timeout: float = 60.0,
               before: Callable[[Workspace], object] | None = None) -> int:
        """`baton resume` to the run's end; `before`: the person's requests made first
        (a retry, an approval), while this process is recorded as the conductor."""
        def ask(ws: Workspace) -> None:
            if before is not None:
                before(ws)
            control.resume_run(ws, _Recorded())  # type: ignore[arg-type]

        return self.conduct(scripts, ask, timeout)

    def conduct(self, scripts: Mapping[int | str, Sequence[Step]],
                ask: Callable[[Workspace], object] | None = None, timeout: float = 60.0,
                meanwhile: Callable[[Workspace], object] | None = None) -> int:
        """Record this process as the live conductor, let `ask` make the person's request,
        then run the conductor until nothing can move without the person; `meanwhile`: what
        the person does while it runs (on this thread: it waits on conditions itself)."""
        ws = Workspace(self.repo)
        plan = ws.store.current_plan()
        ws.store.set_conductor(os.getpid(), procs.start_token(os.getpid()),
                               plan.id if plan else 0)
        try:
            if ask is not None:
                ask(ws)
        except BaseException:
            ws.store.clear_conductor(os.getpid())
            ws.close()
            raise
        ws.close()
        outcome: dict[str, Any] = {}

        def main() -> None:
            own = Workspace(self.repo)  # the conductor's: its loop's thread owns its store
            runner = self.runner = self.runner_type(own, scripts)

            async def loop() -> int:
                try:
                    self.conductor = Conductor(own, runner)
                    return await self.conductor.loop()
                finally:
                    runner.close()
                    await asyncio.sleep(0)  # the scripts cancelled record their ends

            try:
                outcome["code"] = asyncio.run(loop())
            except BaseException as exc:
                outcome["error"] = exc
            finally:
                gc.unfreeze()  # the conductor froze what it had, for its own run's sake
                own.store.clear_conductor(os.getpid())
                own.close()

        thread = threading.Thread(target=main, name="scripted-conductor", daemon=True)
        thread.start()
        if meanwhile is not None:
            person = Workspace(self.repo)
            try:
                meanwhile(person)
            finally:
                person.close()
        thread.join(timeout)
        if thread.is_alive():
            where = [(t["id"], t["state"], t.get("reason")) for t in self.status()["tasks"]]
            raise AssertionError(f"the run did not end in {timeout}s; tasks {where}")
        if "error" in outcome:
            raise outcome["error"]
        return int(outcome["code"])

    # reading ------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """What `baton status --json` prints."""
        ws = Workspace(self.repo)
        try:
            return json.loads(reading.snapshot_json(ws.store))
        finally:
            ws.close()

    def task(self, task_id: int) -> dict[str, Any]:
        return next(t for t in self.status()["tasks"] if t["id"] == task_id)

    def states(self) -> dict[int, str]:
        return {t["id"]: t["state"] for t in self.status()["tasks"]}

    def events(self) -> list[dict[str, Any]]:
        """What `baton log --json` prints, one dict an event."""
        ws = Workspace(self.repo)
        try:
            plan = ws.store.current_plan()
            return [e.as_json() for e in ws.store.events(plan.id if plan else None)]
        finally:
            ws.close()


    def printed(self) -> str:
        """The lines a foreground `baton run` prints for the run's events, as it words them."""
        from baton_tui.commands.run import _line

        ws = Workspace(self.repo)
        try:
            plan = ws.store.current_plan()
            assert plan is not None
            titles = {t["id"]: t["title"] for t in plan.doc["tasks"]}
            lines = (_line(e, titles) for e in ws.store.events(plan.id))
            return "\n".join(line for line in lines if line)
        finally:
            ws.close()


def state_of(ws: Workspace, task_id: int) -> str:
    """A task's state now (for `until` steps: cheap enough to ask every few milliseconds)."""
    plan = ws.store.current_plan()
    assert plan is not None
    return str(Folder().feed(ws.store.events(plan.id, task_id=task_id)).view(task_id).state)


def wait_until(ws: Workspace, condition: Callable[[Workspace], bool], timeout: float = 60.0,
               what: str = "a condition") -> None:
    """Wait (on the test's thread) until `condition(ws)` holds."""
    deadline = time.monotonic() + timeout
    while not condition(ws):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def reached(task_id: int, *states: str) -> Callable[[Workspace], bool]:
    """An `until` condition: the task is in one of `states`."""
    return lambda ws: state_of(ws, task_id) in states


def has_event(kind: str, task_id: int | None = None) -> Callable[[Workspace], bool]:
    """An `until` condition: an event of `kind` (for `task_id`) was recorded."""
    def found(ws: Workspace) -> bool:
        plan = ws.store.current_plan()
        assert plan is not None
        return any(e.kind == kind for e in ws.store.events(plan.id, task_id=task_id))
    return found


def run_plan(repo: Path, baton: Any, tasks: list[dict[str, Any]], expect: int = 0, *,
             real: bool = False, goal: str = "Sample goal") -> None:
    """Load `tasks` and run them to the end, when the run is a test's set-up, not what it
    tests: the real conductor runs in this process with the agents' scripts (the repository's
    `agent-script.json`, beside it) played by the scripted runner — the same worktrees,
    commits, landings and store. `real`: `baton run --approve` in a subprocess, with the
    agent program of baton.toml."""
    plan = write_plan(repo.parent / "plan.json", tasks, goal=goal)
    loaded = baton("plan", "--from", str(plan))
    assert loaded.returncode == 0, loaded.stderr
    if real:
        result = baton("run", "--approve")
        assert result.returncode == expect, result.stdout + result.stderr
        return
    script = json.loads((repo.parent / "agent-script.json").read_text())
    assert Scripted(repo).run(script, timeout=120) == expect
