"""What a newcomer tripped on (issue 52): the approve dialog opens at once with its counts
while the players are read, and an enter pressed meanwhile approves (it is held, never
lost); `q` asks first while agents run."""

from __future__ import annotations

import threading

import pytest
from helpers.tui_support import approved, drive, settle, trusted, planned, wait_for, ws

from baton_tui import api
from baton_tui.tui.screens.approve import ApproveModal

__all__ = ["planned", "trusted", "ws"]

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]


@pytest.fixture
def slow_players(monkeypatch):
    """Reading the players' facts waits until the test lets it go, as a CLI that takes
    seconds to answer `--version` does: the engine thread is held meanwhile."""
    gate = threading.Event()
    real = api.known_player_facts

    def held(ws, names):
        gate.wait(30)
        return real(ws, names)

    monkeypatch.setattr(api, "known_player_facts", held)
    yield gate
    gate.set()


@pytest.mark.parametrize("size", SIZES)
class TestApproveWhilePlayersAreRead:
    def test_counts_show_at_once_and_an_early_enter_approves(self, trusted, slow_players,
                                                             size):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            assert app.player_facts is None  # still being read
            await pilot.press("a", "enter")  # the enter right behind the a
            assert isinstance(app.screen, ApproveModal)
            modal = app.screen
            words = modal.summary.plain
            assert "3 build tasks on demo, other, script" in words
            assert "2 check commands" in words
            shown = str(modal.query_one("#approve-players").render())
            assert "reading the players" in shown
            assert "approving once the players are read" in str(
                modal.query_one("#approve-box").border_subtitle)
            assert not app.board.approved
            slow_players.set()
            await wait_for(pilot, lambda: app.board.approved)
            assert app.screen is not modal

        drive(trusted, script, size=size)
        assert approved(trusted)

    def test_escape_while_reading_cancels(self, trusted, slow_players, size):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            await pilot.press("a", "enter", "escape")
            slow_players.set()
            await settle(pilot)
            assert not isinstance(app.screen, ApproveModal)
            assert not app.board.approved

        drive(trusted, script, size=size)
        assert not approved(trusted)

    def test_readiness_fills_in(self, trusted, slow_players, size):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            await pilot.press("a")
            modal = app.screen
            slow_players.set()
            await wait_for(pilot, lambda: modal.reading is None)
            shown = str(modal.query_one("#approve-players").render())
            assert "players ready here: demo, other, script" in shown
            assert "#2 after the agent reports" in modal.summary.plain
            assert "#4 the whole task (no agent)" in modal.summary.plain
            await pilot.press("escape")

        drive(trusted, script, size=size)


STARTED = {"base": "0" * 40}


@pytest.fixture
def running(planned):
    """Task 2 started (as the launcher records it): an agent is running."""
    from baton_tui.plan.current import current

    plan_id = current(planned).row.id
    planned.store.append(plan_id, 1, "task.started", STARTED)
    planned.store.append(plan_id, 1, "task.done", {"summary": "mapped"})
    planned.store.append(plan_id, 2, "task.started", STARTED)
    return planned


@pytest.mark.parametrize("size", SIZES)
class TestQuitWhileAgentsRun:
    def test_q_asks_first_and_n_stays(self, running, size):
        from baton_tui.tui.screens.quit import QuitModal

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(2) is not None
                           and app.board.task(2).state == "running")
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitModal))
            assert "1 agent is running. They go on without the app" in app.screen.question
            await pilot.press("n")
            await wait_for(pilot, lambda: not isinstance(app.screen, QuitModal))
            assert app.return_code is None
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitModal))
            await pilot.press("q")  # q again quits
            await wait_for(pilot, lambda: app.return_code is not None)

        app, _ = drive(running, script, size=size)
        assert app.return_code == 0

    def test_the_demo_says_quitting_pauses(self, running, size):
        from baton_tui.tui.screens.quit import QuitModal

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(2) is not None
                           and app.board.task(2).state == "running")
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitModal))
            assert "quitting pauses them" in app.screen.question
            await pilot.press("y")

        app, _ = drive(running, script, size=size,
                       leaving="The demo's scripted model stops with the app, so quitting "
                               "pauses them.")
        assert app.return_code == 0
