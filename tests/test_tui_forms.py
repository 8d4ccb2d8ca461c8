"""The new-task form (`n`): prompt and check fields, and a refusal shown inside the form with
what was typed kept — at 80×24; the dependency checklist under NO_COLOR; the graph's titles."""

from __future__ import annotations

import pytest

from helpers.tui_support import drive, planned, settle, shown_lines, task, wait_for, ws

from baton_tui.plan.current import current
from baton_tui.tui.screens.add_task import AddTaskModal
from baton_tui.tui.screens.dag import DagScreen
from baton_tui.tui.screens.pickers import ChoiceModal, PickManyModal, TickList

__all__ = ["ws", "planned"]


async def open_form(pilot, app) -> None:
    await wait_for(pilot, lambda: app.focused is app.plan_pane)
    await pilot.press("n")
    await wait_for(pilot, lambda: isinstance(app.screen, AddTaskModal))
    await pilot.pause()


def field(app, name: str):
    return app.screen.query_one(f"#{name}")


def test_the_form_takes_a_prompt_and_a_check(planned):
    async def script(pilot, app, seen):
        await open_form(pilot, app)
        await pilot.press(*"Write the docs")
        field(app, "prompt").value = "Document the limiter in docs/limits.md."
        field(app, "check").value = "test -f docs/limits.md"
        field(app, "deps").value = "2"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, AddTaskModal))
        await settle(pilot)
        assert app.plan_pane.selected_task.id == 5

    drive(planned, script, size=(80, 24))
    new = task(planned, 5)
    assert (new.title, new.prompt, new.check, new.depends_on) == (
        "Write the docs", "Document the limiter in docs/limits.md.", "test -f docs/limits.md",
        [2])


def test_a_refused_task_keeps_what_was_typed_and_says_why_in_the_form(planned):
    """A `script` task is its check: without one the engine refuses; the form stays open
    with the title and prompt, the reason under them; adding the check then succeeds."""
    async def script(pilot, app, seen):
        await open_form(pilot, app)
        await pilot.press(*"Run the linter")
        field(app, "prompt").value = "ruff over src"
        field(app, "player").value = "script"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "✗" in str(field(app, "refused").render()))
        assert isinstance(app.screen, AddTaskModal)
        assert "check" in str(field(app, "refused").render())
        assert field(app, "title").value == "Run the linter"
        assert field(app, "prompt").value == "ruff over src"
        assert len(current(planned).doc.tasks) == 4  # nothing added
        field(app, "check").value = "ruff check src"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, AddTaskModal))
        await settle(pilot)

    drive(planned, script, size=(80, 24))
    new = task(planned, 5)
    assert (new.title, new.player, new.check) == ("Run the linter", "script", "ruff check src")


def test_an_empty_title_is_refused_in_the_form(planned):
    async def script(pilot, app, seen):
        await open_form(pilot, app)
        field(app, "prompt").value = "typed first"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "needs a title" in str(field(app, "refused").render()))
        assert field(app, "prompt").value == "typed first"

    drive(planned, script, size=(80, 24))


def test_no_color_dependency_checklist_ticks_with_a_glyph(planned, monkeypatch):
    """Under NO_COLOR shade says nothing: a ticked row has ✓ in its box, an unticked none."""
    monkeypatch.setenv("NO_COLOR", "1")

    async def script(pilot, app, seen):
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        app.plan_pane.select(4)  # depends on #2 and #3, not on #1
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, PickManyModal))
        await pilot.pause()
        ticks = app.screen.query_one(TickList)
        rows = [line for line in shown_lines(ticks) if "#" in line]
        assert app.no_color and len(rows) == 3
        assert [row.split("#")[0].strip() for row in rows] == ["▐ ▌", "▐✓▌", "▐✓▌"], rows
        await pilot.press("space")  # tick #1: its box shows it at once
        await pilot.pause()
        assert "✓" in shown_lines(ticks)[0]

    drive(planned, script, size=(80, 24))


def test_the_graph_view_shows_titles_beside_ids(planned):
    async def script(pilot, app, seen):
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, DagScreen))
        await pilot.pause()
        text = " ".join(shown_lines(app.screen.query_one("#dag-lines")))
        assert "#1 Study the rate limiter" in text and "#4 Run the suite←2,3" in text

    drive(planned, script, size=(120, 40))


@pytest.fixture
def held_detection(monkeypatch):
    """The players' detection, held until the test sets the event it returns."""
    import threading

    from baton_tui import api

    gate = threading.Event()
    real = api.detect_players

    def slow(ws):
        gate.wait(30)
        return real(ws)

    monkeypatch.setattr(api, "detect_players", slow)
    return gate


def test_the_player_picker_opens_at_once_while_players_are_detected(planned, held_detection):
    """Detection held until the test lets it go: R opens the picker for the task selected
    then, saying it is detecting; keys typed meanwhile never move the plan's cursor."""
    gate = held_detection

    async def script(pilot, app, seen):
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        app.plan_pane.select(3)  # on `other`
        await pilot.pause()
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceModal))
        await pilot.pause()
        assert "detecting players" in str(app.screen.query_one("#note").render())
        await pilot.press("j", "k", "down")  # typed while it detects
        assert app.plan_pane.selected_task.id == 3
        gate.set()
        await wait_for(pilot, lambda: app.screen.query_one("#choices").option_count > 0)
        assert "model and effort reset" in str(app.screen.query_one("#note").render())
        options = app.screen.query_one("#choices")
        labels = [str(options.get_option_at_index(i).prompt).strip()
                  for i in range(options.option_count)]
        assert "● other" in labels
        options.highlighted = labels.index("demo")
        await pilot.press("enter")
        await settle(pilot)
        assert app.plan_pane.selected_task.id == 3

    drive(planned, script, size=(80, 24), detect_players=False)
    assert task(planned, 3).player == "demo"


def test_the_add_task_form_opens_at_once_while_players_are_detected(planned, held_detection):
    """Detection held until the test lets it go: `n` opens the form saying it is detecting;
    the title is typed and added meanwhile; the add waits for the players, then goes in
    with the selected task's player."""
    gate = held_detection

    async def script(pilot, app, seen):
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        app.plan_pane.select(3)  # on `other`
        await pilot.pause()
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, AddTaskModal))
        await pilot.pause()
        assert "detecting players" in str(field(app, "player-label").render())
        assert field(app, "player").disabled
        await pilot.press(*"Tidy up")
        await pilot.press("ctrl+s")  # asked before the players are found
        await pilot.pause(0.2)
        assert isinstance(app.screen, AddTaskModal) and len(current(planned).doc.tasks) == 4
        gate.set()
        await wait_for(pilot, lambda: not isinstance(app.screen, AddTaskModal))
        await settle(pilot)

    drive(planned, script, size=(80, 24), detect_players=False)
    new = task(planned, 5)
    assert (new.title, new.player) == ("Tidy up", "other")
