"""Snapshots of the app's looks at 120×40 and 80×24 (fixed clock, no blink, fixed paths).

Update only after reading the report: `pytest tests/test_tui_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import time

import pytest

from helpers.handoff_kit import FILES, TASKS, landed_plan
from helpers.tui_support import FIXED_NOW, make, planned, trusted, wait_for, ws
from test_player_parsing import CLAUDE_OK

from baton_tui.plan.current import current
from baton_tui.tui.planner_port import PlannerQuestion, ResearchStep, ScriptedPlanner
from baton_tui.tui.screens.approve import ApproveModal
from baton_tui.tui.screens.checkpoint import CheckpointModal
from baton_tui.tui.screens.dag import DagScreen
from baton_tui.tui.screens.handoff import HandoffScreen
from baton_tui.tui.screens.add_task import AddTaskModal
from baton_tui.tui.screens.help import HelpScreen
from baton_tui.tui.screens.pickers import ConfirmModal, PickManyModal
from baton_tui.tui.screens.prompt_editor import PromptEditor
from baton_tui.tui.screens.task_detail import TaskDetail

__all__ = ["ws", "planned", "trusted"]

# A started attempt as the launcher records it: cut from a base commit (git mode, not folder).
STARTED = {"base": "0" * 40}
SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def loaded(pilot, plan: bool = True) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.board_count > 0)
    await wait_for(pilot, lambda: len(app.query_one("#chat-log").lines) > 0)
    if plan:
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        # the players' facts (read after the first frame) decide a `script` card's words
        await wait_for(pilot, lambda: app.player_facts is not None)
    await pilot.pause()


def backdate(ws, plan_id: int, stamps: list[float]) -> None:
    """Fix the events' timestamps (the test owns the store; the app never writes it)."""
    rows = ws.store.conn.execute("SELECT id FROM events WHERE plan_id = ? AND kind LIKE 'task.%' "
                                 "ORDER BY id", (plan_id,)).fetchall()
    for (event_id,), ts in zip(rows, stamps):
        ws.store.conn.execute("UPDATE events SET ts = ? WHERE id = ?", (ts, event_id))


@pytest.mark.parametrize("size", SIZES)
class TestStart:
    """Opening Baton: with no plan, and with a planner question in the chat."""

    def test_empty_start(self, ws, snap_compare, size):
        async def before(pilot):
            await loaded(pilot, plan=False)

        assert snap_compare(make(ws), terminal_size=size, run_before=before)

    def test_planner_question(self, ws, snap_compare, size):
        planner = ScriptedPlanner([[
            ResearchStep("reading src/limiter.py"),
            ResearchStep("checking how requests are authenticated"),
            PlannerQuestion("Should the limit apply per user or per API key?", "per API key"),
        ]])
        app = make(ws, planner=planner)

        async def before(pilot):
            await loaded(pilot, plan=False)
            await pilot.press(*"Rate-limit the API", "enter")
            await wait_for(pilot, lambda: app.pending_question is not None)
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES)
class TestPlan:
    """The plan pane: a draft, a task being edited, a run with a paused and a failed task."""

    def test_draft_plan(self, planned, snap_compare, size):
        async def before(pilot):
            await loaded(pilot)

        assert snap_compare(make(planned), terminal_size=size, run_before=before)

    def test_editing_a_prompt(self, planned, snap_compare, size):
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await pilot.press("j", "p")
            await wait_for(pilot, lambda: isinstance(app.screen, PromptEditor))
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)

    def test_running_with_paused_and_failed(self, planned, snap_compare, size):
        plan_id = current(planned).row.id
        store = planned.store
        store.append(plan_id, 1, "task.started", STARTED)
        store.append(plan_id, 1, "task.done", {"summary": "hot paths mapped"})
        store.append(plan_id, 2, "task.started", STARTED)
        store.append(plan_id, 2, "task.progress", {"message": "writing the bucket tests"})
        store.append(plan_id, 3, "task.started", STARTED)
        store.append(plan_id, 3, "task.paused", {"until": FIXED_NOW + 3 * 3600})
        backdate(planned, plan_id, [FIXED_NOW - 600, FIXED_NOW - 420, FIXED_NOW - 400,
                                    FIXED_NOW - 390, FIXED_NOW - 380, FIXED_NOW - 200])
        # A fourth task that failed, so one card says why.
        from baton_tui.plan.current import add_task

        add_task(planned, "Update the changelog", "demo", "build", [1])
        store.append(plan_id, 5, "task.started", STARTED)
        store.append(plan_id, 5, "task.failed", {"reason": "the agent exited without reporting"})
        rows = store.conn.execute("SELECT id FROM events WHERE task_id = 5 ORDER BY id").fetchall()
        for (event_id,), ts in zip(rows[-2:], [FIXED_NOW - 300, FIXED_NOW - 250]):
            store.conn.execute("UPDATE events SET ts = ? WHERE id = ?", (ts, event_id))

        async def before(pilot):
            await loaded(pilot)
            await wait_for(pilot, lambda: pilot.app.board.task(5) is not None
                           and pilot.app.board.task(5).state == "failed")
            await pilot.press("j")
            await pilot.pause()

        assert snap_compare(make(planned), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES)
class TestDetail:
    """The task detail screen with live agent output."""

    def test_task_detail(self, planned, snap_compare, size):
        plan_id = current(planned).row.id
        store = planned.store
        log = planned.root.parent / "attempt-1.log"
        log.write_text("".join(f"agent: step {i} — reading src/limiter.py\n" for i in range(40)))
        store.new_attempt(plan_id, 1, "nonce", "demo", {}, str(log))
        store.append(plan_id, 1, "task.started", STARTED)
        store.append(plan_id, 1, "task.progress", {"message": "step 39"})
        backdate(planned, plan_id, [FIXED_NOW - 95, FIXED_NOW - 5])
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TaskDetail))
            await wait_for(pilot, lambda: app.screen.query_one("Log").line_count >= 40)
            await wait_for(pilot, lambda: app.screen.data is not None)
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES)
class TestPart2:
    """The views added with the handoff: approval, a checkpoint, readable steps, the
    dependency overview and the handoff itself."""

    def test_approve_dialog(self, trusted, snap_compare, size):
        app = make(trusted)

        async def before(pilot):
            await loaded(pilot)
            await pilot.press("a")
            await wait_for(pilot, lambda: isinstance(app.screen, ApproveModal)
                           and app.screen.reading is None)  # the players read
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)

    def test_checkpoint_dialog(self, planned, snap_compare, size):
        plan_id = current(planned).row.id
        planned.store.append(plan_id, 3, "task.started", STARTED)
        planned.store.append(plan_id, 3, "task.checkpoint", {
            "what": "drop the legacy settings table",
            "evidence": "ALTER TABLE settings RENAME TO settings_old;\nDROP TABLE settings_old;"})
        backdate(planned, plan_id, [FIXED_NOW - 120, FIXED_NOW - 30])
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await wait_for(pilot, lambda: app.board.task(3).state == "checkpoint")
            app.plan_pane.select(3)
            await pilot.pause()
            await pilot.press("y")
            await wait_for(pilot, lambda: isinstance(app.screen, CheckpointModal))
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)

    def test_task_detail_with_readable_steps(self, planned, snap_compare, size):
        plan_id = current(planned).row.id
        log = planned.root.parent / "attempt-steps.log"
        log.write_text(CLAUDE_OK.strip().replace("/tmp/exp/repo/", "src/") + "\n")
        planned.store.new_attempt(plan_id, 1, "nonce", "claude-code", {}, str(log))
        planned.store.append(plan_id, 1, "task.started", STARTED)
        backdate(planned, plan_id, [FIXED_NOW - 95])
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TaskDetail))
            await wait_for(pilot, lambda: app.screen.query_one("#steps").count >= 5)
            await wait_for(pilot, lambda: app.screen.data is not None)
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)

    def test_dependency_overview(self, planned, snap_compare, size):
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await pilot.press("j", "g")
            await wait_for(pilot, lambda: isinstance(app.screen, DagScreen))
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)

    def test_handoff(self, repo, snap_compare, size):
        ws = landed_plan(repo, TASKS, FILES)
        app = make(ws)

        async def before(pilot):
            await loaded(pilot)
            await wait_for(pilot, lambda: app.board.task(3).state == "landed")
            await pilot.press("H")
            await wait_for(pilot, lambda: isinstance(app.screen, HandoffScreen))
            await wait_for(pilot, lambda: app.screen.review is not None, timeout=15)
            await pilot.press("space")
            await pilot.pause(0.2)

        try:
            assert snap_compare(app, terminal_size=size, run_before=before)
        finally:
            ws.close()


@pytest.mark.parametrize("size", SIZES)
class TestPart3:
    """Dialogs that ask before writing: their text wraps at the dialog's width."""

    def _handoff_dialog(self, repo, snap_compare, size, keys):
        ws = landed_plan(repo, TASKS, FILES)
        app = make(ws)

        async def before(pilot):
            await loaded(pilot)
            await wait_for(pilot, lambda: app.board.task(3).state == "landed")
            await pilot.press("H")
            await wait_for(pilot, lambda: isinstance(app.screen, HandoffScreen))
            await wait_for(pilot, lambda: app.screen.review is not None, timeout=15)
            await pilot.press(*keys)
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.pause(0.2)

        try:
            assert snap_compare(app, terminal_size=size, run_before=before)
        finally:
            ws.close()

    def test_merge_confirm(self, repo, snap_compare, size):
        self._handoff_dialog(repo, snap_compare, size, ["M"])

    def test_discard_confirm(self, repo, snap_compare, size):
        self._handoff_dialog(repo, snap_compare, size, ["down", "x"])


@pytest.mark.parametrize("size", SIZES)
class TestPart3Keys:
    """Issue 29's part 3: the keys grouped in help, the new-task form refusing in place, the
    dependency checklist's ticks as glyphs."""

    def test_help_keys(self, planned, snap_compare, size):
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)

    def test_add_task_refused_in_the_form(self, planned, snap_compare, size):
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, AddTaskModal))
            await pilot.pause()
            await pilot.press(*"Run the linter")
            app.screen.query_one("#prompt").value = "ruff over src"
            app.screen.query_one("#player").value = "script"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: "✗" in str(app.screen.query_one("#refused").render()))
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)

    def test_dependency_checklist(self, planned, snap_compare, size, monkeypatch):
        monkeypatch.setenv("NO_COLOR", "1")
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            app.plan_pane.select(4)
            await pilot.pause()
            await pilot.press("d")
            await wait_for(pilot, lambda: isinstance(app.screen, PickManyModal))
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES)
class TestNewcomer:
    """Issue 52: the approve dialog while the players are read, the question `q` asks while
    agents run, the handoff's own keys and a card's report shown in full."""

    def test_approve_dialog_while_the_players_are_read(self, trusted, snap_compare, size,
                                                       monkeypatch):
        import threading

        from baton_tui import api

        gate = threading.Event()
        real = api.known_player_facts
        monkeypatch.setattr(api, "known_player_facts",
                            lambda ws, names: (gate.wait(30), real(ws, names))[1])
        app = make(trusted)

        async def before(pilot):
            await loaded(pilot, plan=False)
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            await pilot.press("a", "enter")  # the enter is held until the players are read
            await wait_for(pilot, lambda: isinstance(app.screen, ApproveModal))
            await pilot.pause()

        try:
            assert snap_compare(app, terminal_size=size, run_before=before)
        finally:
            gate.set()

    def test_quit_while_agents_run(self, planned, snap_compare, size):
        from baton_tui.tui.screens.quit import QuitModal

        plan_id = current(planned).row.id
        planned.store.append(plan_id, 1, "task.started", STARTED)
        planned.store.append(plan_id, 1, "task.done", {"summary": "hot paths mapped"})
        planned.store.append(plan_id, 2, "task.started", STARTED)
        backdate(planned, plan_id, [FIXED_NOW - 600, FIXED_NOW - 420, FIXED_NOW - 400])
        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await wait_for(pilot, lambda: app.board.task(2).state == "running")
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitModal))
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)

    def test_handoff_help_and_a_report_in_full(self, repo, snap_compare, size):
        ws = landed_plan(repo, TASKS, FILES)
        app = make(ws)

        async def before(pilot):
            await loaded(pilot)
            await wait_for(pilot, lambda: app.board.task(3).state == "landed")
            await pilot.press("H")
            await wait_for(pilot, lambda: isinstance(app.screen, HandoffScreen))
            await wait_for(pilot, lambda: app.screen.review is not None, timeout=15)
            await pilot.press("space", "down")  # task 1's report: in full on the right
            await wait_for(pilot, lambda: "report:" in app.screen.query_one("#handoff-diff").text)
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.pause()

        try:
            assert snap_compare(app, terminal_size=size, run_before=before)
        finally:
            ws.close()

    def test_edit_menu(self, planned, snap_compare, size):
        from baton_tui.tui.screens.pickers import EditMenu

        app = make(planned)

        async def before(pilot):
            await loaded(pilot)
            await pilot.press("j", "e")
            await wait_for(pilot, lambda: isinstance(app.screen, EditMenu))
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=before)
