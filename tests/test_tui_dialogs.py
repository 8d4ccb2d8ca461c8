"""Dialogs wrap their text at the dialog's width: the discard confirm, the player picker's
"not offered" line, the new-plan confirm — every word on screen, inside the frame, at 80×24."""

from __future__ import annotations

import pytest
from helpers.handoff_kit import FILES, TASKS, landed_plan
from helpers.tui_support import drive, planned, wait_for, ws
from test_tui_chat import say
from test_tui_handoff import open_handoff

from textual.geometry import Region
from textual.widgets import Label

from baton_tui.tui.screens.pickers import ChoiceModal, ConfirmModal

__all__ = ["planned", "ws"]


@pytest.fixture
def landed(repo):
    ws = landed_plan(repo, TASKS, FILES)
    yield ws
    ws.close()


def words(text: str) -> str:
    return " ".join(text.split())


def shown(label: Label) -> str:
    """The label's text as it is drawn, line by line."""
    lines = label.render_lines(Region(0, 0, label.size.width, label.size.height))
    return words(" ".join(strip.text for strip in lines))


def whole(screen, text: str) -> None:
    """`text` is drawn in full by one label that stays inside the dialog's frame."""
    box = screen.query_one(".dialog")
    labels = [label for label in screen.query(Label) if words(text) in shown(label)]
    assert labels, [shown(label) for label in screen.query(Label)]
    label = labels[0]
    assert box.content_region.contains_region(label.region), (label.region, box.content_region)
    assert label.size.height > 1  # too long for one line at 80 columns: it wrapped


class TestWrapping:
    def test_the_discard_confirm(self, landed):
        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)
            await pilot.press("down")  # task 2: task 3 was built on it
            assert screen.selected_task().id == 2
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.pause()
            whole(app.screen, app.screen.question)
            assert "its branch stays" in app.screen.question
            await pilot.press("n")

        drive(landed, script, size=(80, 24))

    def test_the_player_pickers_not_offered_line(self, planned):
        async def script(pilot, app, seen):
            app.plan_pane.focus()
            await pilot.press("j", "R")
            await wait_for(pilot, lambda: isinstance(app.screen, ChoiceModal), timeout=30)
            await wait_for(pilot, lambda: app.screen.load_choices is None, timeout=30)
            await pilot.pause()
            note = app.screen.note.split("\n")[0]
            assert note.startswith("not offered (not ready): ") and len(note) > 80, note
            whole(app.screen, note)
            await pilot.press("escape")

        drive(planned, script, size=(80, 24))

    def test_the_new_plan_confirm(self, planned):
        async def script(pilot, app, seen):
            await say(pilot, app, "/new Document the limiter and the whole of its configuration")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.pause()
            whole(app.screen, app.screen.question)
            await pilot.press("n")

        drive(planned, script, size=(80, 24))


def test_the_merge_question_names_a_few_tasks_and_counts_the_rest():
    from types import SimpleNamespace

    from baton_tui.tui.screens.handoff import NAMED, merge_question

    tasks = [SimpleNamespace(id=i, title=f"Task {i}", state="landed", branch=f"baton/p/{i}-t")
             for i in range(1, 21)]
    review = SimpleNamespace(tasks=tasks, onto="main")
    question = merge_question(review, None)
    assert question.startswith("Merge 20 tasks onto main")
    assert f"#{NAMED} Task {NAMED} (baton/p/{NAMED}-t)" in question
    assert f"#{NAMED + 1} " not in question
    assert f"… and {20 - NAMED} more, up to #20 Task 20" in question
    assert merge_question(review, 2).startswith("Merge 2 tasks onto main")
