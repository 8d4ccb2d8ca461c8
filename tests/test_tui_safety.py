"""Keys that are safe: approval asks once and counts what will run, one modal at a time
however fast keys come, keys typed into a text field never reach the plan, and no
crash when keys beat a dialog's mount (the prompt editor's NoMatches at 80×24)."""

from __future__ import annotations

from helpers.tui_support import approved, drive, planned, settle, task, trusted, wait_for, ws

from baton_tui.tui.messages import PlanStored
from baton_tui.tui.screens.approve import ApproveModal
from baton_tui.tui.screens.pickers import ChoiceModal, TextModal
from baton_tui.tui.screens.prompt_editor import PromptEditor

__all__ = ["planned", "trusted", "ws"]


def modals(app) -> int:
    return sum(1 for s in app.screen_stack[1:])


class TestApproval:
    """`a` opens a dialog that counts what will run; enter approves, escape does not."""

    def test_the_dialog_counts_tasks_players_checks_checkpoints_and_autonomy(self, trusted):
        async def script(pilot, app, seen):
            await pilot.press("a")
            await wait_for(pilot, lambda: isinstance(app.screen, ApproveModal)
                           and app.screen.reading is None)  # the players read
            words = app.screen.summary.plain
            assert "3 build tasks on demo, other, script" in words
            assert "1 research task on demo (read-only)" in words
            assert "2 check commands" in words
            assert "#2 after the agent reports: python3 -m pytest -q" in words
            assert "1 checkpoint · autonomy guarded" in words
            await pilot.press("escape")
            await settle(pilot)
            assert not app.board.approved and modals(app) == 0
            await pilot.press("a")
            await wait_for(pilot, lambda: isinstance(app.screen, ApproveModal))
            await pilot.press("enter")
            await settle(pilot)
            assert app.board.approved

        drive(trusted, script, size=(80, 24))
        assert approved(trusted)


class TestOneModalAtATime:
    """Keys arriving faster than dialogs open never stack them."""

    def test_a_burst_of_plan_keys_opens_one_dialog(self, planned):
        async def script(pilot, app, seen):
            deepest = 0
            for key in ("t", "t", "R", "o", "e", "a", "d"):
                app.simulate_key(key)
            for _ in range(40):
                deepest = max(deepest, modals(app))
                await pilot.pause(0.02)
            assert deepest == 1 and isinstance(app.screen, TextModal)
            await pilot.press("escape")
            await settle(pilot)
            assert modals(app) == 0
            await pilot.press("R")  # keys work again once the dialog is gone
            await wait_for(pilot, lambda: isinstance(app.screen, ChoiceModal))

        drive(planned, script, size=(80, 24))

    def test_keys_beating_the_prompt_editor_do_not_crash_it(self, planned):
        """ctrl+s and escape posted in the same breath as `p` (the 80×24 NoMatches)."""
        async def script(pilot, app, seen):
            for keys in (("p", "ctrl+s"), ("p", "escape"), ("p", "x", "ctrl+s")):
                for key in keys:
                    app.simulate_key(key)
                await pilot.pause(0.3)
                await settle(pilot)
                if isinstance(app.screen, PromptEditor):
                    await pilot.press("escape")
                    await settle(pilot)
                assert modals(app) == 0

        drive(planned, script, size=(80, 24))
        assert task(planned, 1).prompt.startswith("Read src/limiter.py")


class TestTextFieldsKeepTheirKeys:
    """Typing in the chat never edits, approves or quits the plan."""

    def test_typing_plan_keys_into_the_chat(self, planned):
        async def script(pilot, app, seen):
            box = app.query_one("#chat-input")
            box.focus()
            await pilot.press(*"aEDq?xe")
            await settle(pilot)
            assert box.value == "aEDq?xe" and modals(app) == 0
            assert app.is_running

        drive(planned, script, size=(80, 24))
        assert not approved(planned) and len([1 for t in range(1, 5) if task(planned, t)]) == 4

    def test_a_new_draft_does_not_steal_focus_from_words_being_typed(self, planned):
        async def script(pilot, app, seen):
            box = app.query_one("#chat-input")
            box.focus()
            await pilot.press(*"also th")
            app.post_message(PlanStored("rate-limit-the-api"))
            await settle(pilot)
            assert app.focused is box
            await pilot.press(*"e docs")
            assert box.value == "also the docs"

        drive(planned, script, size=(80, 24))


class TestAttention:
    """Something waiting for the person rings the bell and says so, once."""

    def test_a_checkpoint_and_a_limit_ring_the_bell(self, planned):
        from baton_tui.plan.current import current
        from baton_tui.tui.messages import AttentionNeeded

        plan_id = current(planned).row.id

        async def script(pilot, app, seen):
            rings = []
            app.bell = lambda: rings.append(1)
            store = planned.store
            store.append(plan_id, 3, "task.started", {})
            store.append(plan_id, 3, "task.checkpoint", {"what": "drop the old table"})
            await wait_for(pilot, lambda: any(isinstance(m, AttentionNeeded) for m in seen))
            store.append(plan_id, 1, "task.started", {})
            store.append(plan_id, 1, "task.paused", {"until": 1_767_229_200.0})
            await wait_for(pilot, lambda: len(rings) >= 2)
            await pilot.pause(0.3)
            calls = [m.what for m in seen if isinstance(m, AttentionNeeded)]
            assert list(dict.fromkeys(calls)) == ["checkpoint", "limit"] and len(rings) == 2
            assert any("drop the old table" in n.message for n in app._notifications)

        drive(planned, script)
