"""The app with a 10,000-task plan: it opens on the plan, draws only the cards on screen, moves
end to end along a 5,000-task chain, and a new board redraws only the tasks that changed.

Speed itself is measured in `benchmarks/bench_tui_scale.py`; these tests hold the behaviour
that makes it possible (and would fail if a card per widget, a whole-plan text or a
recursive walk came back).
"""

from __future__ import annotations

import pytest
from textual.geometry import Region

from helpers.scale_plans import chain_and_rows
from helpers.tui_support import drive, shown_lines, wait_for, ws

from baton_tui import api
from baton_tui.plan.current import current, store_new_plan
from baton_tui.plan.model import parse_document
from baton_tui.tui.poller import changed_tasks
from baton_tui.tui.screens.dag import DagScreen
from baton_tui.tui.widgets.task_card import card_height, card_text
from baton_tui.tui.widgets.task_list import TaskList

__all__ = ["ws"]

N = 10_000


@pytest.fixture(scope="module")
def big_doc():
    return parse_document({"version": 1, "goal": "Scale", "tasks": chain_and_rows(N)})


@pytest.fixture
def big(ws, big_doc):
    store_new_plan(ws, big_doc)
    return ws


def test_a_10000_task_plan_opens_on_its_cards_and_the_cursor_crosses_the_chain(big):
    async def script(pilot, app, seen):
        cards = app.query_one(TaskList)
        assert len(cards.rows) == N and app.board.task(N // 2).level == N // 2 - 1
        assert "#1 Step 1" in "\n".join(shown_lines(cards))
        on_screen = cards.size.height // min(cards.heights) + 1
        ahead = 3  # and the cards a cursor move shows next, drawn ahead after each frame
        assert len(cards._cards) <= on_screen + ahead  # only what is on screen was drawn
        await pilot.press("end")
        await pilot.pause()
        last = app.board.rows[-1]
        assert app.plan_pane.selected_task is last
        assert f"▶ ○ #{last.id} Step {last.id}" in "\n".join(shown_lines(cards))
        graph = app.query_one("#dag-lines")
        assert any(f"#{last.id}←" in line for line in shown_lines(graph))  # followed it
        await pilot.press("home", "pagedown")
        await pilot.pause()
        assert 0 < app.plan_pane.cursor < 50
        assert len(cards._cards) <= 2 * on_screen + 2 + 4 * ahead  # the cursor stood at four
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, DagScreen))
        await pilot.press("j")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, DagScreen))

    drive(big, script, size=(120, 40))


def test_a_new_board_redraws_only_the_cards_whose_tasks_changed(big):
    async def script(pilot, app, seen):
        cards = app.query_one(TaskList)
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        await pilot.pause(0.2)
        drawn: list[int] = []
        draw = cards._render_card

        def spy(at, width, *look):
            drawn.append(cards.rows[at].id)
            return draw(at, width, *look)

        cards._render_card = spy
        plan_id = current(big).row.id
        count = app.board_count
        big.store.append(plan_id, 2, "task.flagged", {"flag": "stall", "message": "quiet"})
        app.poke()
        await wait_for(pilot, lambda: app.board_count > count, timeout=10)
        await pilot.pause()
        assert drawn == [2]  # of the cards on screen, only task 2's
        assert any("⚑ stall: quiet" in line for line in shown_lines(cards))

    drive(big, script, size=(120, 40))


def test_a_running_cards_new_words_redraw_only_the_line_that_says_them(big):
    """An agent's last words change a card's state line only: that line is redrawn, not the
    card (eight talking agents would redraw every card on screen each second)."""
    async def script(pilot, app, seen):
        cards = app.query_one(TaskList)
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        plan_id = current(big).row.id
        big.store.append(plan_id, 2, "task.started", {})
        app.poke()
        await wait_for(pilot, lambda: app.board.task(2).state == "running", timeout=10)
        await pilot.pause(0.2)
        redrawn: list[Region] = []
        real = cards.refresh

        def spy(*regions, **kwargs):
            redrawn.extend(regions)
            return real(*regions, **kwargs)

        cards.refresh = spy
        count = app.board_count
        big.store.append(plan_id, 2, "task.progress", {"message": "reading the tests"})
        app.poke()
        await wait_for(pilot, lambda: app.board_count > count, timeout=10)
        await pilot.pause()
        at = cards.index[2]
        state_line = card_height(app.board.task(2)) - 1  # the card's last text line
        assert redrawn and all(region.height == 1 for region in redrawn)
        assert {region.y + cards.scroll_offset.y for region in redrawn} == {
            cards.tops[at] + state_line}
        assert any("running" in line and "reading the tests" in line
                   for line in shown_lines(cards))

    drive(big, script, size=(120, 40))


def test_a_cursor_move_redraws_the_two_cards_text_not_their_margins(big):
    async def script(pilot, app, seen):
        cards = app.query_one(TaskList)
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        await pilot.pause(0.2)
        redrawn: list[Region] = []
        real = cards.refresh
        cards.refresh = lambda *regions, **kw: (redrawn.extend(regions), real(*regions, **kw))[1]
        await pilot.press("j")
        await pilot.pause()
        assert sorted((r.y + cards.scroll_offset.y, r.height) for r in redrawn) == [
            (cards.tops[at], cards.heights[at] - 1) for at in (0, 1)]

    drive(big, script, size=(120, 40))


def test_the_frame_a_cursor_move_paints_draws_no_card_they_were_drawn_ahead(big):
    """Running cards change every second; a key must not wait for two of them to be drawn.
    After each frame the cards beside the cursor are drawn selected and the cursor's own card
    plain, so the frame j asks for only copies lines out of the cache."""
    async def script(pilot, app, seen):
        cards = app.query_one(TaskList)
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        await pilot.pause(0.2)
        assert {(1, True), (0, False)} <= set(cards._cards)  # ahead of the first j
        in_paint: list[int] = []
        painting = [False]
        draw, paint = cards._render_card, cards.render_line

        def spy_draw(at, width, *look):
            if painting[0]:
                in_paint.append(at)
            return draw(at, width, *look)

        def spy_paint(y):
            painting[0] = True
            try:
                return paint(y)
            finally:
                painting[0] = False

        cards._render_card, cards.render_line = spy_draw, spy_paint
        for key, at in (("j", 1), ("j", 2), ("k", 1)):
            await pilot.press(key)
            await pilot.pause()
            assert cards.cursor == at
            selected = [line for line in shown_lines(cards) if line.startswith("▌▶")]
            assert len(selected) == 1 and f" #{cards.rows[at].id} " in selected[0]
            assert {(at + 1, True), (at - 1, True), (at, False)} <= set(cards._cards)
        assert in_paint == []

    drive(big, script, size=(120, 40))


def test_changed_tasks_names_the_rows_that_differ_or_none_when_the_list_changed(big):
    before = api.snapshot(big.store)
    plan_id = current(big).row.id
    big.store.append(plan_id, 7, "task.progress", {"message": "going"})
    after = api.snapshot(big.store)
    assert changed_tasks(before, after) == frozenset({7})
    assert changed_tasks(after, after) == frozenset()
    assert changed_tasks(None, after) is None
    assert changed_tasks(api.snapshot_empty(), after) is None


def test_a_card_is_as_tall_as_its_text(ws):
    from helpers.tui_support import plan_doc

    store_new_plan(ws, parse_document(plan_doc()))
    plan_id = current(ws).row.id
    store = ws.store
    store.append(plan_id, 2, "task.started", {})
    store.append(plan_id, 2, "task.flagged", {"flag": "stall", "message": "quiet"})
    store.append(plan_id, 3, "task.started", {})
    store.append(plan_id, 3, "task.paused", {"until": 4_000_000_000})
    store.append(plan_id, 2, "task.told", {"id": 1, "text": "use the other table"})
    board = api.snapshot(store)
    assert board.task(2).told  # its card says so, on a line of its own
    heights = {t.id: card_height(t) for t in board.tasks}
    assert len(set(heights.values())) > 1  # the tasks differ in what their cards say
    for task in board.tasks:
        for selected in (False, True):
            assert card_height(task) == len(card_text(task, selected, 0.0).plain.splitlines())


def test_the_poller_shows_agents_chatter_at_most_once_a_tick_and_a_change_of_state_at_once(ws):
    """Real store, real poller thread: eight agents' progress lines coalesce into one board a
    TICK; a task that starts (a change of substance) is posted on the next poll."""
    import threading
    import time

    from helpers.tui_support import plan_doc

    from baton_tui.tui.poller import TICK, first_board, only_chatter, poll_store

    store_new_plan(ws, parse_document(plan_doc()))
    plan_id = current(ws).row.id
    ws.store.append(plan_id, 1, "task.started", {})
    reader = api.snapshot_reader()
    start = first_board(ws.paths.store_path, reader, time.time())
    posts: list[tuple[float, object, frozenset[int] | None]] = []
    stop, wake = threading.Event(), threading.Event()
    poller = threading.Thread(target=poll_store, args=(
        ws.paths.store_path, time.time, lambda b, old, ch: posts.append((time.monotonic(), b, ch)),
        stop.is_set, wake), kwargs={"interval": 0.05, "reader": reader, "after": start})
    poller.start()
    try:
        began = time.monotonic()
        i = 0
        while time.monotonic() - began < 3 * TICK:  # chatter, 20 a second
            ws.store.append(plan_id, 1, "task.progress", {"message": f"step {i}"})
            i += 1
            time.sleep(0.05)
        chatter = list(posts)
        assert chatter, "chatter never showed"
        assert len(chatter) <= 4, [round(t - began, 2) for t, _, _ in chatter]
        assert chatter[-1][1].task(1).progress.startswith("step")
        ws.store.append(plan_id, 2, "task.started", {})
        deadline = time.monotonic() + 30
        while not any(b.task(2).state == "running" for _, b, _ in posts[len(chatter):]):
            assert time.monotonic() < deadline, "the start never showed"
            time.sleep(0.02)
        shown = next(t for t, b, _ in posts[len(chatter):] if b.task(2).state == "running")
        assert shown - chatter[-1][0] < TICK or len(posts) == len(chatter) + 1
    finally:
        stop.set()
        wake.set()
        poller.join(10)
    before = api.snapshot(ws.store)
    ws.store.append(plan_id, 1, "task.progress", {"message": "more"})
    after = api.snapshot(ws.store)
    assert only_chatter(before, after, changed_tasks(before, after))
    ws.store.append(plan_id, 2, "task.progress", {"message": "x"})
    ws.store.append(plan_id, 3, "task.started", {})
    started = api.snapshot(ws.store)
    assert not only_chatter(after, started, changed_tasks(after, started))
