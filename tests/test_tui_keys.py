"""Pilot tests: every key of the plan pane, asserting on the engine's state and messages."""

from __future__ import annotations

import pytest

from helpers.tui_support import (
    approved, drive, planned, settle, task, wait_for, ws,
)

from baton_tui.plan.current import approve, current
from baton_tui.run import control
from baton_tui.tui import messages as msg
from baton_tui.tui.screens.add_task import AddTaskModal
from baton_tui.tui.screens.approve import ApproveModal
from baton_tui.tui.screens.checkpoint import CheckpointModal
from baton_tui.tui.screens.help import HelpScreen
from baton_tui.tui.screens.pickers import (
    ChoiceModal, ConfirmModal, PickManyModal, TextModal,
)
from baton_tui.tui.screens.prompt_editor import PromptEditor
from baton_tui.tui.screens.task_detail import TaskDetail

__all__ = ["ws", "planned"]


async def open_modal(pilot, app, key, kind):
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, kind))
    await pilot.pause()


async def goto(pilot, app, task_id):
    app.plan_pane.select(task_id)
    await pilot.pause()
    assert app.plan_pane.selected_task.id == task_id


def notes(app) -> list[str]:
    return [n.message for n in app._notifications]


def refused(seen) -> list[msg.KeyRefused]:
    return [m for m in seen if isinstance(m, msg.KeyRefused)]


class TestLayout:
    """Both panes at 80×24, focus, tab, j/k."""

    def test_plan_focused_and_both_panes_visible_at_80x24(self, planned):
        async def script(pilot, app, seen):
            assert app.focused is app.plan_pane
            chat, plan = app.query_one("#chat"), app.query_one("#plan")
            assert chat.region.width >= 28 and plan.region.width >= 40
            assert chat.region.right <= plan.region.x <= 80
            assert [t.id for t in app.board.tasks] == [1, 2, 3, 4]

        drive(planned, script, size=(80, 24))

    def test_empty_start_focuses_the_chat(self, ws):
        async def script(pilot, app, seen):
            assert app.board.empty
            assert app.focused.id == "chat-input"
            assert app.check_action("approve", ()) is None

        drive(ws, script, size=(80, 24))

    def test_tab_swaps_between_chat_and_plan(self, planned):
        async def script(pilot, app, seen):
            await pilot.press("tab")
            assert app.focused.id == "chat-input"
            await pilot.press("tab")
            assert app.focused is app.plan_pane

        drive(planned, script)

    def test_j_k_and_arrows_move_the_cursor(self, planned):
        async def script(pilot, app, seen):
            pane = app.plan_pane
            await pilot.press("j", "j")
            assert pane.selected_task.id == 3
            await pilot.press("k")
            assert pane.selected_task.id == 2
            await pilot.press("down", "down", "down", "down")
            assert pane.selected_task.id == 4
            await pilot.press("up")
            assert pane.selected_task.id == 3
            assert any(isinstance(m, pane.CursorMoved) for m in seen)

        drive(planned, script)


class TestFieldEdits:
    """Each field key opens a typed modal; the engine applies the result."""

    def test_e_edits_the_prompt_in_a_text_area(self, planned):
        async def script(pilot, app, seen):
            await open_modal(pilot, app, "p", PromptEditor)
            area = app.screen.query_one("TextArea")
            area.text = "Read src/limiter.py.\nThen report the hot paths."
            await pilot.press("ctrl+s")
            await settle(pilot)

        app, seen = drive(planned, script)
        assert task(planned, 1).prompt == "Read src/limiter.py.\nThen report the hot paths."
        assert any(isinstance(m, msg.PlanEdited) and m.what == "prompt" for m in seen)

    def test_escape_cancels_without_an_edit(self, planned):
        async def script(pilot, app, seen):
            await open_modal(pilot, app, "p", PromptEditor)
            await pilot.press("escape")
            await settle(pilot)
            assert len(app.screen_stack) == 1

        app, seen = drive(planned, script)
        assert task(planned, 1).prompt == "Read src/limiter.py and report."
        assert not any(isinstance(m, msg.PlanEdited) for m in seen)

    def test_t_title(self, planned):
        async def script(pilot, app, seen):
            await open_modal(pilot, app, "t", TextModal)
            await pilot.press("ctrl+u", *"Map the limiter", "enter")
            await settle(pilot)
            assert app.board.task(1).title == "Map the limiter"

        drive(planned, script)
        assert task(planned, 1).title == "Map the limiter"

    def test_R_offers_only_ready_players_and_resets_model(self, planned):
        async def script(pilot, app, seen):
            await goto(pilot, app, 2)
            await open_modal(pilot, app, "R", ChoiceModal)
            await wait_for(pilot, lambda: app.screen.load_choices is None)  # detected
            offered = [c.value for c in app.screen.choices]
            assert {"demo", "other", "script"} <= set(offered)
            for name, found in app.detections.items():
                assert (name in offered) == found.ready
            options = app.screen.query_one("OptionList")
            options.highlighted = offered.index("other")
            await pilot.press("enter")
            await settle(pilot)

        drive(planned, script)
        assert task(planned, 2).player == "other"
        assert task(planned, 2).model is None and task(planned, 2).effort is None

    def test_o_free_model_input_for_an_open_catalog(self, planned):
        async def script(pilot, app, seen):
            await open_modal(pilot, app, "o", TextModal)
            await pilot.press(*"big-model-2", "enter")
            await settle(pilot)

        drive(planned, script)
        assert task(planned, 1).model == "big-model-2"

    def test_o_offers_only_the_players_catalog(self, ws):
        (ws.root / "baton.toml").write_text(
            (ws.root / "baton.toml").read_text() + '\n[players.openai]\nmodels = ["x-2"]\n')
        from baton_tui.workspace import Workspace

        fresh = Workspace(ws.root)
        from baton_tui.plan.current import store_new_plan
        from baton_tui.plan.model import parse_document

        store_new_plan(fresh, parse_document({"version": 1, "goal": "g", "tasks": [
            {"id": 1, "title": "t", "player": "openai", "prompt": "p"}]}))
        player = fresh.catalog.players["openai"]

        async def script(pilot, app, seen):
            await open_modal(pilot, app, "o", ChoiceModal)
            values = [c.value for c in app.screen.choices]
            assert values[1:] == list(player.catalog())
            app.screen.query_one("OptionList").highlighted = values.index("x-2")
            await pilot.press("enter")
            await settle(pilot)

        drive(fresh, script)
        assert task(fresh, 1).model == "x-2"
        fresh.close()

    def test_o_is_dimmed_for_script(self, planned):
        async def script(pilot, app, seen):
            await goto(pilot, app, 4)
            assert app.check_action("pick_model", ()) is None
            await pilot.press("o")
            await pilot.pause()
            assert len(app.screen_stack) == 1

        app, seen = drive(planned, script)
        assert refused(seen)[0].reason == "player 'script' runs no model"
        assert "player 'script' runs no model" in notes(app)

    def test_ctrl_e_effort(self, planned):
        async def script(pilot, app, seen):
            await goto(pilot, app, 2)
            await open_modal(pilot, app, "ctrl+e", ChoiceModal)
            values = [c.value for c in app.screen.choices]
            app.screen.query_one("OptionList").highlighted = values.index("low")
            await pilot.press("enter")
            await settle(pilot)

        drive(planned, script)
        assert task(planned, 2).effort == "low"

    def test_M_mode(self, planned):
        async def script(pilot, app, seen):
            await goto(pilot, app, 3)
            await open_modal(pilot, app, "M", ChoiceModal)
            values = [c.value for c in app.screen.choices]
            app.screen.query_one("OptionList").highlighted = values.index("manual")
            await pilot.press("enter")
            await settle(pilot)

        drive(planned, script)
        assert task(planned, 3).mode == "manual"

    def test_d_dependencies_never_offer_a_cycle(self, planned):
        async def script(pilot, app, seen):
            await goto(pilot, app, 3)
            await open_modal(pilot, app, "d", PickManyModal)
            values = [c.value for c in app.screen.choices]
            assert 4 not in values and 3 not in values  # 4 depends on 3
            selection = app.screen.query_one("SelectionList")
            selection.select(values.index(2))
            await pilot.press("enter")
            await settle(pilot)

        drive(planned, script)
        assert task(planned, 3).depends_on == [1, 2]

    def test_s_skills(self, planned):
        async def script(pilot, app, seen):
            await goto(pilot, app, 2)
            await open_modal(pilot, app, "s", PickManyModal)
            values = [c.value for c in app.screen.choices]
            selection = app.screen.query_one("SelectionList")
            selection.deselect(values.index("tdd"))
            selection.select(values.index("verify"))
            await pilot.press("enter")
            await settle(pilot)

        drive(planned, script)
        assert task(planned, 2).skills == ["verify"]

    def test_S_scope_c_check_C_checkpoint(self, planned):
        async def script(pilot, app, seen):
            await goto(pilot, app, 3)
            await open_modal(pilot, app, "S", TextModal)
            await pilot.press(*"conf/*.toml, src/settings.py", "enter")
            await settle(pilot)
            await open_modal(pilot, app, "c", TextModal)
            await pilot.press(*"true", "enter")
            await settle(pilot)
            await pilot.press("C")
            await settle(pilot)

        drive(planned, script)
        third = task(planned, 3)
        assert third.scope == ["conf/*.toml", "src/settings.py"]
        assert third.check == "true"
        assert third.checkpoint is False

    def test_n_adds_a_task(self, planned):
        async def script(pilot, app, seen):
            await open_modal(pilot, app, "n", AddTaskModal)
            await pilot.press(*"Write the docs")
            app.screen.query_one("#deps").value = "2"
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert app.plan_pane.selected_task.id == 5

        drive(planned, script)
        new = task(planned, 5)
        assert (new.title, new.depends_on) == ("Write the docs", [2])

    def test_D_removes_after_confirmation(self, planned):
        async def script(pilot, app, seen):
            await goto(pilot, app, 4)
            await open_modal(pilot, app, "D", ConfirmModal)
            await pilot.press("y")
            await settle(pilot)
            assert [t.id for t in app.board.tasks] == [1, 2, 3]

        drive(planned, script)
        assert [t.id for t in current(planned).doc.tasks] == [1, 2, 3]

    def test_D_is_dimmed_with_a_reason_when_others_depend(self, planned):
        async def script(pilot, app, seen):
            await pilot.press("D")
            await pilot.pause()
            assert len(app.screen_stack) == 1

        app, seen = drive(planned, script)
        assert "depend on it" in refused(seen)[0].reason
        assert len(current(planned).doc.tasks) == 4

    def test_engine_refusal_is_shown(self, planned):
        """script needs a check: the engine refuses, and the reason is on screen."""
        async def script(pilot, app, seen):
            await goto(pilot, app, 4)
            await open_modal(pilot, app, "c", TextModal)
            await pilot.press("ctrl+u", "enter")
            await settle(pilot)

        app, seen = drive(planned, script)
        assert any("needs a check command" in n for n in notes(app))
        assert task(planned, 4).check == "python3 -c 'print(1)'"

    def test_A_autonomy(self, planned):
        async def script(pilot, app, seen):
            await open_modal(pilot, app, "A", ChoiceModal)
            values = [c.value for c in app.screen.choices]
            app.screen.query_one("OptionList").highlighted = values.index("watch")
            await pilot.press("enter")
            await settle(pilot)
            assert app.board.autonomy == "watch"

        drive(planned, script)
        assert current(planned).doc.autonomy == "watch"


class TestApproval:
    """a approves; editing a task that has not started voids the approval visibly."""

    def test_a_approves_then_an_edit_voids_it(self, planned):
        async def script(pilot, app, seen):
            await open_modal(pilot, app, "a", ApproveModal)
            await pilot.press("enter")
            await settle(pilot)
            assert app.board.approved
            assert app.check_action("approve", ()) is True  # approving again is harmless
            await pilot.press("C")
            await settle(pilot)
            assert not app.board.approved

        app, seen = drive(planned, script)
        assert not approved(planned)
        assert any(isinstance(m, msg.PlanApproved) for m in seen)
        assert [m.voided for m in seen if isinstance(m, msg.PlanEdited)] == [True]
        assert any("approval voided" in n for n in notes(app))

    def test_started_task_fields_are_frozen(self, planned):
        plan_id = current(planned).row.id
        planned.store.append(plan_id, 1, "task.started", {})

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(1).state == "running")
            for key in ("t", "e", "R", "d"):
                await pilot.press(key)
            await pilot.pause()
            assert len(app.screen_stack) == 1

        app, seen = drive(planned, script)
        reasons = [m.reason for m in refused(seen)]
        assert len(reasons) == 4 and all("has started" in r for r in reasons)

    def test_failed_task_may_be_reassigned(self, planned):
        plan_id = current(planned).row.id
        planned.store.append(plan_id, 1, "task.started", {})
        planned.store.append(plan_id, 1, "task.failed", {"reason": "tests failed"})

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(1).state == "failed")
            assert app.check_action("pick_player", ()) is True
            assert app.check_action("edit_title", ()) is None

        drive(planned, script)


class TestRunControl:
    """E f x r y m p call `baton_tui.run.control`; refusals and gaps are shown."""

    @pytest.fixture
    def calls(self, monkeypatch):
        seen: list = []

        def fake(name, result=None):
            def record(ws, *args, **_options):  # the façade passes start_run's by keyword
                seen.append((name, *args))
                return result
            return record

        for name, result in [("start_run", 4242), ("start_task", 1), ("stop_task", None),
                             ("retry_task", 2), ("answer_checkpoint", None),
                             ("mark_done", None), ("pause_run", None)]:
            monkeypatch.setattr(control, name, fake(name, result))
        return seen

    def test_E_runs_an_approved_plan(self, planned, calls):
        approve(planned)

        async def script(pilot, app, seen):
            await pilot.press("E")
            await settle(pilot)

        app, seen = drive(planned, script)
        assert calls == [("start_run",)]
        assert any(isinstance(m, msg.RunCommanded) and m.result == 4242 for m in seen)
        assert any("pid 4242" in n for n in notes(app))

    def test_E_is_dimmed_before_approval(self, planned, calls):
        async def script(pilot, app, seen):
            await pilot.press("E")
            await pilot.pause()

        app, seen = drive(planned, script)
        assert calls == []
        assert "not approved" in refused(seen)[0].reason

    def test_f_starts_research_before_approval(self, planned, calls):
        async def script(pilot, app, seen):
            await pilot.press("f")
            await settle(pilot)
            await goto(pilot, app, 2)
            await pilot.press("f")
            await pilot.pause()

        app, seen = drive(planned, script)
        assert calls == [("start_task", 1)]
        assert "only after approval" in refused(seen)[0].reason

    def test_x_stop_r_retry_y_answer(self, planned, calls):
        approve(planned)  # a build task is retried only under an approved plan
        plan_id = current(planned).row.id
        store = planned.store
        store.append(plan_id, 1, "task.started", {})
        store.append(plan_id, 2, "task.started", {})
        store.append(plan_id, 2, "task.failed", {"reason": "check failed"})
        store.append(plan_id, 3, "task.started", {})
        store.append(plan_id, 3, "task.checkpoint", {"what": "drop the old table"})

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(3).state == "checkpoint")
            await pilot.press("x")
            await settle(pilot)
            await goto(pilot, app, 2)
            await open_modal(pilot, app, "r", TextModal)
            await pilot.press(*"use a deque", "enter")
            await settle(pilot)
            await goto(pilot, app, 3)
            await open_modal(pilot, app, "y", CheckpointModal)
            assert app.screen.what == "drop the old table"
            await pilot.press("y")
            await settle(pilot)

        drive(planned, script)
        assert calls == [("stop_task", 1), ("retry_task", 2, "use a deque"),
                         ("answer_checkpoint", 3, True)]

    def test_m_marks_a_manual_task_done_and_p_pauses(self, planned, calls, monkeypatch):
        from baton_tui.plan.current import edit_task

        edit_task(planned, 3, "mode", "manual")
        monkeypatch.setattr("baton_tui.store.snapshot.conductor_info",
                            lambda store: {"pid": 99, "started": 0, "plan": 1})

        async def script(pilot, app, seen):
            await goto(pilot, app, 3)
            await pilot.press("m")
            await settle(pilot)
            await pilot.press("P")
            await settle(pilot)

        drive(planned, script)
        assert calls == [("mark_done", 3), ("pause_run",)]

    def test_real_engine_refusal_on_run_is_visible(self, planned):
        """The repo's baton.toml defines custom players and changed since it was trusted:
        run refuses, and the app shows why."""
        approve(planned)
        config = planned.root / "baton.toml"
        config.write_text(config.read_text() + "# changed after trust\n")

        async def script(pilot, app, seen):
            await pilot.press("E")
            await settle(pilot)
            await wait_for(pilot, lambda: any(n.severity == "error" for n in app._notifications))

        app, seen = drive(planned, script)
        errors = [n for n in app._notifications if n.severity == "error"]
        assert errors and "trust" in errors[0].message


class TestScreens:
    """enter, ?, ctrl+p, q."""

    def test_enter_opens_task_detail_and_escape_returns(self, planned):
        async def script(pilot, app, seen):
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TaskDetail))
            assert app.screen.row.id == 1
            await pilot.press("escape")
            await pilot.pause()
            assert len(app.screen_stack) == 1

        drive(planned, script)

    def test_question_mark_lists_every_key_with_reasons(self, planned):
        async def script(pilot, app, seen):
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            rows = {r.id: r for r in app.screen.rows}
            assert {"prompt", "player", "model", "effort", "mode", "deps", "skills", "title",
                    "add", "remove", "approve", "run", "start", "stop", "retry", "autonomy",
                    "help", "quit", "detail", "down", "up", "swap"} <= set(rows)
            assert rows["run"].reason and "not approved" in rows["run"].reason
            assert rows["prompt"].reason is None
            await pilot.press("escape")

        drive(planned, script)

    def test_ctrl_p_opens_the_command_palette_with_plan_commands(self, planned):
        async def script(pilot, app, seen):
            from textual.command import CommandPalette

            await pilot.press("ctrl+p")
            await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert "plan: approve" in titles and "plan: prompt" in titles
            await pilot.press("escape")

        drive(planned, script)

    def test_q_quits_and_leaves_the_run(self, planned, monkeypatch):
        calls = []
        monkeypatch.setattr(control, "pause_run", lambda ws: calls.append("pause"))

        async def script(pilot, app, seen):
            await pilot.press("q")
            await pilot.pause()

        app, _ = drive(planned, script)
        assert app.return_code == 0 and calls == []


class TestConfig:
    """Keys remap by id from [keys]; NO_COLOR is respected."""

    def test_keymap_from_config(self, ws):
        (ws.root / "baton.toml").write_text((ws.root / "baton.toml").read_text()
                                            + '\n[keys]\napprove = "ctrl+a"\n')
        from baton_tui.plan.current import store_new_plan
        from baton_tui.plan.model import parse_document
        from baton_tui.workspace import Workspace
        from helpers.tui_support import plan_doc, trust

        fresh = Workspace(ws.root)
        trust(fresh)  # the file changed: trusted again, as `baton trust` would
        store_new_plan(fresh, parse_document(plan_doc()))

        async def script(pilot, app, seen):
            await pilot.press("a")
            await settle(pilot)
            assert not app.board.approved
            await open_modal(pilot, app, "ctrl+a", ApproveModal)
            await pilot.press("enter")
            await settle(pilot)
            assert app.board.approved
            assert [r.keys for r in app.key_rows() if r.id == "approve"] == ["^a"]

        drive(fresh, script)
        fresh.close()

    def test_no_color(self, planned, monkeypatch):
        monkeypatch.setenv("NO_COLOR", "1")

        async def script(pilot, app, seen):
            assert app.no_color

        drive(planned, script)


class TestWiring:
    """Bindings name actions on the App; the App hands each plan key to its `TaskActions`,
    and the pickers and the approve dialog describe each level and mode in the same words."""

    def test_every_binding_names_an_app_action_and_each_plan_key_a_task_action(self):
        from baton_tui.tui import bindings
        from baton_tui.tui.actions import TaskActions
        from baton_tui.tui.app import BatonApp

        for binding in [*bindings.all_bindings(), *bindings.CHAT]:
            if binding.action.startswith("app."):
                assert callable(getattr(BatonApp, f"action_{binding.action[4:]}", None)), binding
        assert all(callable(getattr(TaskActions, name, None)) for name in bindings.PLAN_ACTIONS)

    def test_one_description_per_autonomy_level_and_mode(self):
        from baton_tui.core.words import Autonomy, Mode
        from baton_tui.tui.words import AUTONOMY_NOTES, MODE_NOTES

        assert set(AUTONOMY_NOTES) == set(Autonomy) and set(MODE_NOTES) == set(Mode)

    def test_the_approve_dialog_and_the_autonomy_picker_agree(self, planned):
        from baton_tui.tui.words import AUTONOMY_NOTES

        async def script(pilot, app, seen):
            await open_modal(pilot, app, "A", ChoiceModal)
            shown = [c.label for c in app.screen.choices]
            assert shown == [f"{level} — {note}" for level, note in AUTONOMY_NOTES.items()]
            await pilot.press("escape")
            await settle(pilot)
            from baton_tui.tui.screens.approve import approval_text

            assert AUTONOMY_NOTES[app.board.autonomy] in approval_text(app.board).plain

        drive(planned, script)
