"""The chat driving the engine's real planner (a scripted planner program as a custom player)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from baton_tui.plan.current import current
from baton_tui.tui.engine_planner import EnginePlanner
from baton_tui.tui.launch import make_app
from baton_tui.workspace import Workspace

PLANNER = Path(__file__).parent / "planners" / "scripted_planner.py"


def _configure(repo: Path, outputs: list[dict]) -> Workspace:
    script = repo.parent / "planner.json"
    script.write_text(json.dumps(outputs))
    argv = [sys.executable, str(PLANNER), str(script)]
    (repo / "baton.toml").write_text('planner = "mine"\n[players.custom.mine]\n'
                                     f"command = {json.dumps(argv)}\n"
                                     f"research_command = {json.dumps(argv)}\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "planner"], cwd=repo, check=True)
    ws = Workspace(repo)
    from baton_tui.config_files import file_hash

    ws.store.set_trust(str(ws.paths.project_config), file_hash(ws.paths.project_config))
    return ws


async def _wait(pilot, predicate, timeout=30.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("timed out")
        await pilot.pause(0.1)


def _chat(app) -> str:
    return " ".join(" ".join(line.text for line in app.query_one("#chat-log").lines).split())


def test_goal_questions_one_at_a_time_then_a_stored_plan(repo):
    ws = _configure(repo, [
        {"questions": [{"question": "Per user or per key?", "recommendation": "per key"},
                       {"question": "Keep Redis?", "recommendation": "keep it"}]},
        {"version": 1, "goal": "Rate-limit the API", "tasks": [
            {"id": 1, "title": "Token bucket", "prompt": "p", "player": "mine"}]},
    ])
    app = make_app(ws, planner=EnginePlanner(repo), detect_players=False, blink=False)

    async def main():
        async with app.run_test(size=(110, 34)) as pilot:
            box = app.query_one("#chat-input")
            box.focus()
            await pilot.press(*"Rate-limit the API", "enter")
            await _wait(pilot, lambda: "Per user or per key?" in _chat(app))
            assert "Keep Redis?" not in _chat(app)  # one question at a time
            await pilot.press("enter")  # take the recommendation
            await _wait(pilot, lambda: "Keep Redis?" in _chat(app))
            await pilot.press(*"drop it", "enter")
            await _wait(pilot, lambda: not app.board.empty, timeout=45)

    asyncio.run(main())
    cur = current(Workspace(repo))
    assert [t.title for t in cur.doc.tasks] == ["Token bucket"]
    assert [q.answer for q in cur.doc.questions] == ["per key", "drop it"]
    assert len([r for r in cur.row.transcript if r["role"] == "planner"]) == 2
