"""What the app says, said right: a finished plan is not one where "nothing has run", the
header names the approval once, `u` says what is still to merge, no "press H" on the handoff,
a check line shows the output's summary (not a rule of dashes), and a `script` task's check
is the whole task, not something run "after the agent reports"."""

from __future__ import annotations

import pytest
from helpers.handoff_kit import FILES, TASKS, landed_plan
from helpers.tui_support import drive, trusted, planned, settle, wait_for, ws
from test_tui_chat import say
from test_tui_handoff import confirm_merge, open_handoff, states

from baton_tui import api
from baton_tui.core.events import K
from baton_tui.plan.current import current
from baton_tui.tui import attention
from baton_tui.tui.screens.approve import ApproveModal
from baton_tui.tui.screens.handoff import HandoffScreen
from baton_tui.tui.screens.pickers import ConfirmModal

__all__ = ["planned", "trusted", "ws"]

UNITTEST = ("...\n" + "-" * 70 + "\nRan 3 tests in 0.001s\n\nOK\n")


@pytest.fixture
def landed(repo):
    ws = landed_plan(repo, TASKS, FILES)
    yield ws
    ws.close()


def merge_log(screen) -> str:
    return "\n".join(strip.text for strip in screen.query_one("#merge-log").lines)


def noting(app) -> list[str]:
    """Record the app's toasts as they are shown."""
    said: list[str] = []
    shown = app.notify

    def notify(message, **kwargs):
        said.append(message)
        return shown(message, **kwargs)

    app.notify = notify
    return said


class TestWording:
    def test_new_on_a_merged_plan_does_not_say_nothing_has_run(self, landed):
        cur = current(landed)
        for task in cur.doc.tasks:
            landed.store.append(cur.row.id, task.id, K.TASK_MERGED, {"onto": "main"})
        asked = []

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.state == api.State.MERGED)
            await say(pilot, app, "/new Document the counters")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            asked.append(app.screen.question)
            await pilot.press("n")

        drive(landed, script)
        assert "nothing of it has run" not in asked[0]
        assert asked[0].startswith("Plan handoff-goal is merged. Plan this goal as a new plan?"), \
            asked[0]

    def test_new_after_only_research_ran_says_no_work_is_open(self, planned):
        plan_id = current(planned).row.id
        planned.store.append(plan_id, 1, K.TASK_STARTED, {})
        planned.store.append(plan_id, 1, K.TASK_DONE, {"summary": "read it"})
        asked = []

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(1).state == api.State.DONE)
            await say(pilot, app, "/new Document the limiter")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            asked.append(app.screen.question)
            await pilot.press("n")

        drive(planned, script)
        assert asked[0].startswith("Plan rate-limit-the-api has no open work (what of it ran is "
                                   "merged, discarded or read-only)"), asked[0]

    def test_the_header_names_the_approval_once(self, trusted):
        header = []

        async def script(pilot, app, seen):
            app.plan_pane.focus()
            await pilot.press("a")
            await wait_for(pilot, lambda: isinstance(app.screen, ApproveModal))
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.board.approved)
            await settle(pilot)
            header.append(app.header.shown.plain)

        drive(trusted, script)
        assert "approved · approved" not in header[0]
        assert "· approved · autonomy guarded" in header[0], header[0]

    def test_u_says_what_is_still_to_merge(self, landed):
        said = []

        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)
            await pilot.press("down")  # task 2
            await pilot.press("u")
            await confirm_merge(pilot, app)
            await wait_for(pilot, lambda: "merged up to" in merge_log(screen), timeout=20)
            said.append(merge_log(screen))

        drive(landed, script, size=(120, 40))
        assert states(landed)[3] == "landed"
        assert "landed work is on main" not in said[0]
        assert "merged up to #2 onto main; still to merge: #3 (M merges the rest)" in said[0]

    def test_no_press_H_while_the_handoff_is_on_screen(self, landed):
        toasts: list[str] = []

        async def script(pilot, app, seen):
            said = noting(app)
            await open_handoff(pilot, app)
            app.call_attention(attention.Call("handoff", "the run ended — the handoff is "
                                                         "ready: press H"))
            await pilot.pause(0.2)
            assert isinstance(app.screen, HandoffScreen)
            toasts.extend(said)

        drive(landed, script, size=(120, 40))
        assert toasts and not any("press H" in text for text in toasts), toasts
        assert "review its landed work here" in toasts[-1]

    def test_the_check_line_shows_the_outputs_summary_not_dashes(self, landed):
        cur = current(landed)
        landed.store.append(cur.row.id, 3, K.TASK_CHECK, {"exit": 0, "output": UNITTEST})
        lines = []

        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)
            await pilot.press("down", "down", "space")  # fold open task 3
            await pilot.pause(0.2)
            tree = screen.query_one("#handoff-tree")
            lines.extend(str(node.label) for node in tree.root.children[2].children)

        drive(landed, script, size=(120, 40))
        check = [line for line in lines if line.startswith("check:")]
        assert check == ["check: exit 0 — OK"], lines

    def test_a_script_tasks_check_is_the_whole_task_in_the_approve_dialog(self, trusted):
        shown = []

        async def script(pilot, app, seen):
            app.plan_pane.focus()
            await pilot.press("a")
            await wait_for(pilot, lambda: isinstance(app.screen, ApproveModal))
            shown.append(app.screen.summary.plain)
            await pilot.press("escape")

        drive(trusted, script)
        text = shown[0]
        assert "#4 the whole task (no agent): python3 -c 'print(1)'" in text, text
        assert "#2 after the agent reports: python3 -m pytest -q" in text, text


def test_counts_read_as_a_person_writes_them():
    from baton_tui.tui.words import counted

    assert counted(1, "research task") == "1 research task"
    assert counted(3, "check command") == "3 check commands"
    assert counted(0, "checkpoint") == "no checkpoints"
    assert counted(0, "checkpoint", start=True) == "No checkpoints"
