"""`/budget` in the chat: it sets each limit it is given — `--time` too — and says the
budget as a person reads it, never as a Python dict."""

from __future__ import annotations

from helpers.tui_support import drive, planned, ws
from test_tui_chat import chat_text, say

from baton_tui.plan.current import current

__all__ = ["planned", "ws"]


def limits(ws) -> dict:
    return current(ws).row.options["budget"]


class TestBudget:
    def test_time_alone_is_saved_and_said_in_words(self, planned):
        said: list[str] = []

        async def script(pilot, app, seen):
            await say(pilot, app, "/budget --time 1h")
            await pilot.pause(0.3)
            said.append(chat_text(app))

        drive(planned, script)
        assert limits(planned)["time"] == 3600
        text = said[-1]
        assert "budget set: 1h00m of run time" in text, text
        assert "refused" not in text and "{" not in text

    def test_tokens_cost_and_time_together_are_all_saved(self, planned):
        said: list[str] = []

        async def script(pilot, app, seen):
            await say(pilot, app, "/budget --tokens 200000 --cost 5 --time 90m")
            await pilot.pause(0.3)
            await say(pilot, app, "/budget")
            await pilot.pause(0.3)
            said.append(chat_text(app))

        drive(planned, script)
        saved = limits(planned)
        assert (saved["tokens"], saved["cost"], saved["time"]) == (200000, 5.0, 5400)
        text = said[-1]
        assert "budget set: 200k tokens · $5.00 · 1h30m of run time" in text, text
        assert "budget: 200k tokens · $5.00 · 1h30m of run time" in text, text
        assert "{" not in text and "'limits'" not in text

    def test_a_bad_duration_says_why_and_saves_nothing(self, planned):
        said: list[str] = []

        async def script(pilot, app, seen):
            await say(pilot, app, "/budget --tokens 1000 --time soon")
            await pilot.pause(0.3)
            said.append(chat_text(app))

        drive(planned, script)
        assert "budget" not in current(planned).row.options
        assert "'soon'" in said[-1]

    def test_no_budget_says_so(self, planned):
        said: list[str] = []

        async def script(pilot, app, seen):
            await say(pilot, app, "/budget")
            await pilot.pause(0.3)
            said.append(chat_text(app))

        drive(planned, script)
        assert "no budget is set" in said[-1]
