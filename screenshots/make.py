"""Make the README's screenshots from the real app: fixed size (120×40), fixed clock, UTC,
a throwaway HOME and repository, the states written through the engine as a run would.

    .venv/bin/python screenshots/make.py          # rewrites screenshots/*.svg
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests")]
SIZE = (120, 40)


def setup_env(base: Path) -> Path:
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Shots\n\temail = s@x\n")
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), TZ="UTC",
                      XDG_DATA_HOME=str(home / ".local/share"), BATON_HOME=str(home / "bh"),
                      GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    time.tzset()
    repo = base / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# sample\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


async def shoot(ws, name: str, steps, size: tuple[int, int] = SIZE, **kwargs) -> None:
    from helpers.tui_support import make, wait_for

    app = make(ws, detect_players=False, **kwargs)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.board_count > 0)
        await wait_for(pilot, lambda: len(app.query_one("#chat-log").lines) > 0)
        await pilot.pause(0.2)
        await steps(pilot, app)
        await pilot.pause(0.3)
        app.save_screenshot(filename=f"{name}.svg", path=str(HERE))
    print(f"screenshots/{name}.svg")


def main() -> int:
    from helpers.handoff_kit import FILES, TASKS, landed_plan
    from helpers.tui_support import FIXED_NOW, plan_doc, trust, wait_for
    from test_player_parsing import CLAUDE_OK

    from baton_tui.plan.current import current, store_new_plan
    from baton_tui.plan.model import parse_document
    from baton_tui.tui.planner_port import PlannerQuestion, ResearchStep, ScriptedPlanner
    from baton_tui.tui.screens.checkpoint import CheckpointModal
    from baton_tui.tui.screens.handoff import HandoffScreen
    from baton_tui.tui.screens.task_detail import TaskDetail
    from baton_tui.workspace import Workspace
    from helpers.tui_support import BATON_TOML

    started = {"base": "0" * 40}
    with tempfile.TemporaryDirectory() as tmp:
        repo = setup_env(Path(tmp))
        (repo / "baton.toml").write_text(BATON_TOML)
        ws = Workspace(repo)
        trust(ws)
        store_new_plan(ws, parse_document(plan_doc()))
        plan_id = current(ws).row.id

        async def nothing(pilot, app):
            return None

        asyncio.run(shoot(ws, "draft-plan", nothing))
        asyncio.run(shoot(ws, "draft-plan-80x24", nothing, size=(80, 24)))

        async def help_keys(pilot, app):
            await pilot.press("question_mark")

        asyncio.run(shoot(ws, "help", help_keys))

        async def question(pilot, app):
            app.query_one("#chat-input").focus()
            await pilot.press(*"/new Rate-limit the API per key", "enter")
            await wait_for(pilot, lambda: app.pending_question is not None
                           or app.screen is not app.screen_stack[0])
            if app.pending_question is None:
                await pilot.press("y")
                await wait_for(pilot, lambda: app.pending_question is not None)

        planner = ScriptedPlanner([[
            ResearchStep("Read src/limiter.py"), ResearchStep("$ grep -rn 'api_key' src/"),
            PlannerQuestion("Should the limit apply per user or per API key?", "per API key")]])
        asyncio.run(shoot(ws, "planner-question", question, planner=planner))
        store = ws.store
        log = Path(tmp) / "attempt.log"
        log.write_text(CLAUDE_OK.strip().replace("/tmp/exp/repo/", "src/") + "\n")
        store.new_attempt(plan_id, 1, "n", "claude-code", {}, str(log))
        for task_id, kind, data in [
                (1, "task.started", started), (1, "task.progress", {"message": "reading"}),
                (2, "task.started", started), (2, "task.usage", {"tokens": 18_400}),
                (2, "task.progress", {"message": "writing the bucket tests"}),
                (3, "task.started", started),
                (3, "task.checkpoint", {"what": "drop the legacy settings table",
                                        "evidence": "DROP TABLE settings_old;"})]:
            store.append(plan_id, task_id, kind, data)
        rows = store.conn.execute("SELECT id FROM events WHERE plan_id = ? AND kind LIKE "
                                  "'task.%' ORDER BY id", (plan_id,)).fetchall()
        for i, (event_id,) in enumerate(rows):
            store.conn.execute("UPDATE events SET ts = ? WHERE id = ?",
                               (FIXED_NOW - 600 + 30 * i, event_id))

        async def running(pilot, app):
            await pilot.press("j")

        async def checkpoint(pilot, app):
            app.plan_pane.select(3)
            await pilot.pause()
            await pilot.press("y")
            await wait_for(pilot, lambda: isinstance(app.screen, CheckpointModal))

        async def detail(pilot, app):
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TaskDetail))
            await wait_for(pilot, lambda: app.screen.query_one("#steps").count >= 5)

        asyncio.run(shoot(ws, "running", running))
        asyncio.run(shoot(ws, "checkpoint", checkpoint))
        asyncio.run(shoot(ws, "task-detail-steps", detail))
        ws.close()

        other = Path(tmp) / "other"
        other.mkdir()
        repo2 = other / "repo"
        repo2.mkdir()
        (repo2 / "README.md").write_text("# sample\n")
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "initial"]):
            subprocess.run(["git", *args], cwd=repo2, check=True)
        landed = landed_plan(repo2, TASKS, FILES)

        async def handoff(pilot, app):
            await wait_for(pilot, lambda: app.board.task(3) is not None
                           and app.board.task(3).state == "landed")
            await pilot.press("H")
            await wait_for(pilot, lambda: isinstance(app.screen, HandoffScreen)
                           and app.screen.review is not None, timeout=20)
            await pilot.press("space")

        asyncio.run(shoot(landed, "handoff", handoff))
        landed.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
