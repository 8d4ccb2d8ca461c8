"""Shared pieces of the TUI tests: a workspace with a plan, an app factory, waits.

Imported by the `test_tui_*` modules. Plans use the `script` player (it needs a check) and a
custom player from baton.toml, so no real agent CLI is needed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from baton_tui.plan.current import current, store_new_plan
from baton_tui.plan.model import parse_document
from baton_tui.workspace import Workspace

FIXED_NOW = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC

BATON_TOML = """\
[players.custom.demo]
command = ["python3", "agent.py"]
research_command = ["python3", "agent.py", "--read-only"]

[players.custom.other]
command = ["python3", "other.py"]
"""

TASKS = [
    {"id": 1, "title": "Study the rate limiter", "prompt": "Read src/limiter.py and report.",
     "player": "demo", "mode": "research", "skills": ["grilling"]},
    {"id": 2, "title": "Add a token bucket", "prompt": "Implement a token bucket.",
     "player": "demo", "model": "fast-1", "effort": "high", "depends_on": [1],
     "skills": ["tdd"], "scope": ["src/limiter.py"], "check": "python3 -m pytest -q"},
    {"id": 3, "title": "Migrate the config", "prompt": "Move settings to TOML.",
     "player": "other", "depends_on": [1], "checkpoint": True},
    {"id": 4, "title": "Run the suite", "prompt": "", "player": "script",
     "depends_on": [2, 3], "check": "python3 -c 'print(1)'"},
]


def plan_doc(tasks: list[dict] | None = None, goal: str = "Rate-limit the API") -> dict:
    return {"version": 1, "goal": goal, "autonomy": "guarded", "tasks": tasks or TASKS}


@pytest.fixture
def ws(repo: Path) -> Workspace:
    """A workspace on the conftest repo, with custom players configured."""
    (repo / "baton.toml").write_text(BATON_TOML)
    workspace = Workspace(repo)
    trust(workspace)  # as after `baton trust`: its custom players may start
    yield workspace
    workspace.close()


@pytest.fixture
def planned(ws: Workspace) -> Workspace:
    store_new_plan(ws, parse_document(plan_doc()))
    return ws


@pytest.fixture
def trusted(planned: Workspace) -> Workspace:
    """The planned workspace with its baton.toml trusted (its players may start)."""
    trust(planned)
    return planned


def trust(ws: Workspace) -> None:
    from baton_tui.config_files import file_hash

    path = ws.paths.project_config
    ws.store.set_trust(str(path), file_hash(path))
    try:  # readiness recorded while the file was untrusted is read again
        from baton_tui import readiness
    except ImportError:
        return
    readiness.detect(ws)


def make(ws: Workspace, **kwargs: Any):
    from baton_tui.tui.launch import make_app

    kwargs.setdefault("clock", lambda: FIXED_NOW)
    kwargs.setdefault("blink", False)
    kwargs.setdefault("poll_interval", 0.05)
    kwargs.setdefault("follow_logs", True)
    return make_app(ws, **kwargs)


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    """Until `predicate` holds. The timeout is generous — a loaded CI machine runs other
    tests' conductors beside this app — and costs nothing when the app keeps up."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.02)


async def settle(pilot) -> None:
    """Wait for action/chat workers to finish, then for the board to show the store as it is
    now: read here, on the app's clock, and compared whole — so it returns at once when
    nothing changed and waits as long as a loaded machine needs when something did."""
    from baton_tui.store import snapshot as snapshots
    from baton_tui.store.db import Store

    app = pilot.app
    try:
        await wait_for(pilot, lambda: not any(w.group in ("action", "chat") and not w.is_finished
                                              for w in app.workers), timeout=5.0)
    except AssertionError:
        pass  # one waits for a dialog's answer: the board is what the test looks at
    with Store(app.ws.paths.store_path) as store:
        expected = snapshots.read(store, app.clock())
    app.poke()
    try:
        await wait_for(pilot, lambda: app.board == expected, timeout=10.0)
    except AssertionError:
        pass  # a board that moves with the clock (a live task) is never equal: as it is
    await pilot.pause()


async def ready(pilot) -> None:
    """The first board has arrived (and with it the initial focus)."""
    await wait_for(pilot, lambda: pilot.app.board_count > 0)
    await pilot.pause()


def shown_lines(widget) -> list[str]:
    """The lines a Line API widget (the card list, the graph) has on screen, as text."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def task(ws: Workspace, task_id: int):
    return current(ws).doc.task(task_id)


def approved(ws: Workspace) -> bool:
    return current(ws).row.approved


def run(coro) -> Any:
    return asyncio.run(coro)


def drive(ws, script, size=(100, 32), **kwargs):
    """Run `script(pilot, app, seen)` against a fresh app; returns the messages seen."""
    app = make(ws, **kwargs)
    seen: list = []

    async def main():
        async with app.run_test(size=size, message_hook=seen.append) as pilot:
            await ready(pilot)
            await script(pilot, app, seen)

    run(main())
    return app, seen
