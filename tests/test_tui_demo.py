"""`baton demo --tui`: the real command builds the sample, the scripted planner and players;
the app it opens is driven with keys from a typed goal to a merged handoff."""

from __future__ import annotations

import asyncio
import subprocess
from argparse import Namespace

import pytest

from helpers.tui_support import wait_for

from baton_tui.tui.screens.approve import ApproveModal
from baton_tui.tui.screens.handoff import HandoffScreen
from baton_tui.tui.screens.pickers import ConfirmModal

pytestmark = pytest.mark.slow


def chat_text(app) -> str:
    return " ".join(" ".join(line.text for line in app.query_one("#chat-log").lines).split())


def test_demo_tui_from_a_typed_goal_to_a_merged_handoff(tmp_path, monkeypatch):
    from baton_tui import cli
    from baton_tui.commands import demo
    from baton_tui.tui import launch

    seen: dict = {}

    def drive_app(leaving: str | None = None) -> int:
        from baton_tui import api
        from baton_tui.tui.engine_planner import EnginePlanner

        ws = api.open_workspace()
        app = launch.make_app(ws, planner=EnginePlanner(ws.root), blink=False,
                              detect_players=False, leaving=leaving)
        seen["leaving"] = leaving

        async def main():
            async with app.run_test(size=(120, 40)) as pilot:
                await wait_for(pilot, lambda: app.board_count > 0)
                await pilot.press(*"Add word and line counts", "enter")
                await wait_for(pilot, lambda: app.pending_question is not None, timeout=60)
                assert "words and lines" in chat_text(app)
                assert '{"questions"' not in chat_text(app)
                await pilot.press("enter")  # take the recommendation
                await wait_for(pilot, lambda: len(app.board.tasks) == 6, timeout=60)
                await wait_for(pilot, lambda: app.focused is app.plan_pane)
                await pilot.press("a")
                await wait_for(pilot, lambda: isinstance(app.screen, ApproveModal))
                await pilot.press("enter")
                await wait_for(pilot, lambda: app.board.approved, timeout=20)
                await pilot.press("E")
                await wait_for(pilot, lambda: isinstance(app.screen, HandoffScreen),
                               timeout=240)
                await wait_for(pilot, lambda: app.screen.review is not None, timeout=30)
                await pilot.press("M")
                await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
                await pilot.press("y")
                await wait_for(pilot, lambda: app.board.state == "merged", timeout=60)
                seen["goal"] = app.board.goal
                seen["root"] = ws.root

        asyncio.run(main())
        ws.close()
        return 0

    monkeypatch.setattr(launch, "run_app", drive_app)
    code = demo.cmd_demo(Namespace(tui=True, dir=str(tmp_path / "demo"), keep=True, baton=cli.main))
    assert code == 0
    assert seen["goal"] == "Add word and line counts"
    # quitting mid-run would ask first, saying the demo's run pauses and how to go on
    assert "quitting pauses them" in seen["leaving"] and "--dir" in seen["leaving"]
    root = seen["root"]
    log = subprocess.run(["git", "log", "--oneline", "--first-parent", "main"], cwd=root,
                         capture_output=True, text=True).stdout
    assert "Merge task 5: Tests" in log
    tests = subprocess.run(["python3", "-m", "unittest", "-q"], cwd=root, capture_output=True,
                           text=True)
    assert tests.returncode == 0, tests.stderr
