"""The main screen at 80×24: a key bar that offers the keys that apply now (approve, then
run, then the handoff) whichever pane has focus, a header that keeps the state, progress,
autonomy and budget, a help screen grouped by what keys change, a palette of Baton's own
commands."""

from __future__ import annotations

import io
import time

import pytest

from helpers.handoff_kit import FILES, TASKS, landed_plan
from helpers.tui_support import FIXED_NOW, drive, planned, settle, trusted, wait_for, ws

from baton_tui import api
from baton_tui.plan.current import current
from baton_tui.tui.screens.help import HelpScreen
from baton_tui.tui.widgets.header import header_text

__all__ = ["ws", "planned", "trusted"]


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def remapped(ws):
    """A planned workspace whose baton.toml moves approve to ctrl+a and mode to ctrl+y."""
    from baton_tui.plan.current import store_new_plan
    from baton_tui.plan.model import parse_document
    from baton_tui.workspace import Workspace
    from helpers.tui_support import plan_doc, trust

    (ws.root / "baton.toml").write_text((ws.root / "baton.toml").read_text()
                                        + '\n[keys]\napprove = "ctrl+a"\nmode = "ctrl+y"\n')
    fresh = Workspace(ws.root)
    trust(fresh)
    store_new_plan(fresh, parse_document(plan_doc()))
    yield fresh
    fresh.close()


def bar(app) -> str:
    return app.key_bar.plain


async def on_plan(pilot, app) -> None:
    await wait_for(pilot, lambda: app.focused is app.plan_pane)
    await pilot.pause()


def fits(app, width: int = 80) -> None:
    assert len(bar(app).rstrip()) <= width and len(app.header.render().plain) <= width


def test_the_bar_offers_approve_then_run_then_the_handoff_at_80x24(trusted, repo):
    async def draft(pilot, app, seen):
        await on_plan(pilot, app)
        assert "a approve" in bar(app) and "E run" not in bar(app)
        assert bar(app).rstrip().endswith("? help  q quit")
        fits(app)
        api.approve(trusted)
        await settle(pilot)
        await wait_for(pilot, lambda: "E run" in bar(app))
        assert "a approve" not in bar(app)
        fits(app)

    drive(trusted, draft, size=(80, 24))

    landed = landed_plan(repo, TASKS, FILES)
    try:
        async def handoff(pilot, app, seen):
            await on_plan(pilot, app)
            await wait_for(pilot, lambda: "H handoff" in bar(app))
            fits(app)

        drive(landed, handoff, size=(80, 24), auto_handoff=False)
    finally:
        landed.close()


def test_first_open_says_how_to_start_from_the_chat(ws):
    async def empty(pilot, app, seen):
        await pilot.pause()
        assert app.focused is not app.plan_pane  # first open: the chat
        assert "type a goal, enter sends" in bar(app) and "tab plan" in bar(app)
        assert "^p palette" in bar(app)

    drive(ws, empty, size=(80, 24))


def test_keys_show_whichever_pane_has_focus_and_follow_remapping(remapped):
    async def script(pilot, app, seen):
        await on_plan(pilot, app)
        assert "^a approve" in bar(app)
        await pilot.press("tab")  # into the chat: the plan's keys stay in view, behind tab
        await wait_for(pilot, lambda: bar(app).startswith(" tab plan:"))
        assert "^a approve" in bar(app) and "^q quit" in bar(app)
        await pilot.press("a", "tab")  # typed in the chat, then back: the key still works
        await wait_for(pilot, lambda: "^a approve" in bar(app) and "? help" in bar(app))

    drive(remapped, script, size=(80, 24))


def test_the_header_keeps_state_progress_autonomy_and_budget_at_80_columns(planned):
    plan_id = current(planned).row.id
    api.approve(planned)
    api.set_budget(planned, tokens=200_000)
    planned.store.append(plan_id, 1, "task.started", {})
    planned.store.append(plan_id, 1, "task.done", {"summary": "ok"})
    planned.store.append(plan_id, 2, "task.started", {})
    board = api.snapshot(planned.store, now=FIXED_NOW)
    full = header_text("a-repository-with-a-long-name", board).plain
    for width in (80, 120):
        text = header_text("a-repository-with-a-long-name", board, width).plain
        assert len(text) <= width, text
        for words in ("autonomy guarded", "1/4 done", "budget ", board.state):
            assert words in text, (width, text)
    assert len(full) > 80  # so something was left out at 80


def test_help_groups_keys_by_what_they_change_and_says_why_each_letter(remapped):
    async def script(pilot, app, seen):
        await on_plan(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        from rich.console import Console

        console = Console(width=120, record=True, file=io.StringIO())
        for static in app.screen.query("Static"):
            console.print(static.content)
        text = " ".join(console.export_text().split())
        for group in ("the selected task's fields", "the selected task's run", "the plan"):
            assert group in text
        assert "Shift" in text and "player — who Runs it" in text
        assert "mode — Mode" not in text  # remapped: the letter's reason no longer holds
        await pilot.press("escape")

    drive(remapped, script, size=(120, 40))


def test_the_palette_lists_batons_commands_only_and_opens_the_keys(trusted):
    async def script(pilot, app, seen):
        await on_plan(pilot, app)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "keys" in titles and "plan: approve" in titles
        helps = [c.help for c in app.get_system_commands(app.screen)]
        assert not any("as soon as possible" in h or "help panel" in h for h in helps)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"keys", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))

    drive(trusted, script, size=(80, 24))


def test_moving_between_a_running_and_a_waiting_task_rebuilds_no_footer(trusted):
    """The key bar changes with the task (x stop on the running one) without Textual's
    bindings refresh, and is not redrawn between two tasks that allow the same keys."""
    plan_id = current(trusted).row.id
    api.approve(trusted)
    trusted.store.append(plan_id, 1, "task.started", {"base": "0" * 40})

    async def script(pilot, app, seen):
        await on_plan(pilot, app)
        await wait_for(pilot, lambda: app.board.task(1).state == "running")
        rebuilt, redrawn = [], []
        app.refresh_bindings = lambda: rebuilt.append(1)
        real = app.key_bar.refresh
        app.key_bar.refresh = lambda *a, **k: (redrawn.append(1), real(*a, **k))[1]
        app.plan_pane.select(1)
        await pilot.pause()
        assert "x stop" in bar(app)
        for task_id in (2, 1, 2):
            app.plan_pane.select(task_id)
            await pilot.pause()
            assert ("x stop" in bar(app)) == (task_id == 1)
        assert rebuilt == []
        before = len(redrawn)
        app.plan_pane.select(3)  # waiting like #2: the same keys, no redraw
        await pilot.pause()
        assert len(redrawn) == before

    drive(trusted, script, size=(80, 24))


def test_going_back_to_a_task_draws_the_bar_from_the_lines_it_kept(trusted):
    """The field line names the selected task, so every cursor move changes the bar: each
    line drawn is kept by what it says, and going back to a task draws nothing new."""
    plan_id = current(trusted).row.id
    api.approve(trusted)
    for task_id in (1, 2):
        trusted.store.append(plan_id, task_id, "task.started", {"base": "0" * 40})

    async def script(pilot, app, seen):
        await on_plan(pilot, app)
        await wait_for(pilot, lambda: app.board.task(2).state == "running")
        said = {}
        for task_id in (1, 2):
            app.plan_pane.select(task_id)
            await pilot.pause()
            said[task_id] = app.key_bar.render_line(0).text
        assert "task 1" in said[1] and "task 2" in said[2]
        drawn = []
        real = app.key_bar.render
        app.key_bar.render = lambda: (drawn.append(1), real())[1]
        for task_id in (1, 2, 1):
            app.plan_pane.select(task_id)
            await pilot.pause()
            assert app.key_bar.render_line(0).text == said[task_id]
        assert drawn == []

    drive(trusted, script, size=(80, 24))
