"""The chat keeps a record of the run: when it started, when it ended with its totals (the
lines `baton status` ends with, from the same code) and when it was merged — a real
conductor running a real `script` task in a real repository."""

from __future__ import annotations

import subprocess

from helpers.tui_support import drive, wait_for, ws

from baton_tui import api
from baton_tui.plan.current import store_new_plan
from baton_tui.plan.model import parse_document

__all__ = ["ws"]


def chat_text(app) -> str:
    """The chat's words, as wrapped lines joined again."""
    return " ".join(" ".join(line.text for line in app.query_one("#chat-log").lines).split())


def test_run_started_ended_with_its_summary_and_merged(ws):
    (ws.root / "make_notes.sh").write_text("echo notes > NOTES.md && git add NOTES.md && "
                                           "git commit -qm notes\n")
    subprocess.run(["git", "add", "make_notes.sh"], cwd=ws.root, check=True)
    subprocess.run(["git", "commit", "-qm", "notes script"], cwd=ws.root, check=True)
    store_new_plan(ws, parse_document({"version": 1, "goal": "Notes", "tasks": [
        {"id": 1, "title": "Write notes", "prompt": "", "player": "script",
         "check": "sh make_notes.sh"}]}))
    api.approve(ws)

    async def script(pilot, app, seen):
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        await pilot.press("E")
        await wait_for(pilot, lambda: "run started" in chat_text(app), timeout=60)
        await wait_for(pilot, lambda: "run ended" in chat_text(app), timeout=120)
        text = chat_text(app)
        summary = api.summary_lines(app.board.summary)
        assert summary and summary[0].startswith("run: wall")
        for line in summary:  # the very lines `baton status` prints, under "run ended"
            assert " ".join(line.split()) in text
        assert "script: 1 task" in text
        ok, merged = await app.engine_call("merge", api.merge)
        assert ok and merged.merged == [1]
        await wait_for(pilot, lambda: "merged onto" in chat_text(app), timeout=60)

    drive(ws, script, size=(120, 40), auto_handoff=False)
