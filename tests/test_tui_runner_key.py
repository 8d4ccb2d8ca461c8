"""The plan pane's single key for a task's runner (issue 27): `w` offers `local` and every
configured `[runners.NAME]`, stores the choice through the façade like any field edit, and
the card shows where a task runs."""

from __future__ import annotations

from helpers.tui_support import drive, settle, task, wait_for, ws

from baton_tui.plan.current import store_new_plan
from baton_tui.plan.model import parse_document
from baton_tui.tui.screens.pickers import ChoiceModal
from baton_tui.workspace import Workspace

__all__ = ["ws"]

RUNNER = ('\n[runners.lab]\nkind = "dask"\naddress = "tcp://127.0.0.1:9"\n'
          'exchange = "/srv/git/project.git"\n')


def test_w_picks_the_runner_and_the_card_shows_it(ws):
    (ws.root / "baton.toml").write_text((ws.root / "baton.toml").read_text() + RUNNER)
    fresh = Workspace(ws.root)
    store_new_plan(fresh, parse_document({"version": 1, "goal": "g", "tasks": [
        {"id": 1, "title": "Build it", "player": "script", "prompt": "p", "check": "true"}]}))

    async def script(pilot, app, seen):
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceModal))
        await pilot.pause()
        values = [c.value for c in app.screen.choices]
        assert values == ["local", "lab"]
        app.screen.query_one("OptionList").highlighted = values.index("lab")
        await pilot.press("enter")
        await settle(pilot)
        await wait_for(pilot, lambda: app.board.tasks[0].runner == "lab")

    drive(fresh, script)
    assert task(fresh, 1).runner == "lab"
    fresh.close()


def test_the_card_names_a_remote_runner_and_its_node():
    from baton_tui.core.snapshot import TaskSnap
    from baton_tui.tui.widgets.task_card import card_text

    fields = dict.fromkeys(TaskSnap._fields)
    fields.update(id=1, title="Build it", prompt="", player="agent", mode="build",
                  depends_on=(), skills=(), scope=(), checkpoint=False, state="running",
                  words="running", level=0, wall=0.0, tokens=0, flags=(), attempts=1,
                  started=True, answerable=False, decisions=(), needs_approval=False,
                  reassigned=False, runner="lab", node="tcp://10.0.0.7:40123", job="baton-x")
    text = card_text(TaskSnap(**fields), selected=False).plain
    assert "agent · default model @ lab (tcp://10.0.0.7:40123)" in text
    local = TaskSnap(**{**fields, "runner": "local", "node": None, "job": None})
    assert "@" not in card_text(local, selected=False).plain
