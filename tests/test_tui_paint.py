"""What a key's frame costs besides the cards it moves: the work a cursor move asks for that
can wait until the move is on screen, and what the card list asks once per frame.

Speed itself is measured in `benchmarks/bench_tui.py --only pty`; these tests hold the
behaviour that makes it possible.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

from textual.geometry import Region

from helpers.tui_support import drive, planned, ready, shown_lines, wait_for, ws

from baton_tui.tui.widgets.task_list import TaskList

__all__ = ["ws", "planned"]


def test_a_frame_draws_the_list_where_it_is_scrolled_to_then_and_forgets_it(planned):
    """A frame asks where the list is scrolled to and how wide it is once, not per line;
    a line asked for after the frame (the list scrolled since) reads the list anew."""
    async def script(pilot, app, seen):
        await ready(pilot)
        cards = app.query_one(TaskList)
        await wait_for(pilot, lambda: len(cards.rows) == 4 and cards.size.width > 0)
        height = cards.size.height
        framed = [strip.text for strip in cards.render_lines(Region(0, 0, cards.size.width,
                                                                     height))]
        assert framed == shown_lines(cards)
        assert framed[0].startswith("▌") and " #1 " in framed[0]
        cards.scroll_to(y=cards.tops[1], animate=False, immediate=True)
        await pilot.pause()
        assert cards.scroll_offset.y == cards.tops[1]
        assert " #2 " in cards.render_line(0).text  # not the frame's offset, kept
        framed = [strip.text for strip in cards.render_lines(Region(0, 0, cards.size.width,
                                                                     height))]
        assert framed == shown_lines(cards) and " #2 " in framed[0]

    drive(planned, script, size=(120, 16))


def test_cursor_moves_within_a_frame_ask_for_the_keys_once_after_it(planned):
    """The key bar is drawn in the frame after the cards; working out its keys waits for
    that frame too, and three moves before it ask once — for the task the cursor ends on."""
    async def script(pilot, app, seen):
        await ready(pilot)
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        await pilot.pause()
        asked = []
        real = app.refresh_keys
        app.refresh_keys = lambda: (asked.append(app.plan_pane.selected_id), real())[1]
        for _ in range(3):
            app.plan_pane.action_cursor(1)
        assert asked == []  # nothing yet: the moves are not on screen
        await pilot.pause()
        assert asked == [4]
        shown = app.key_bar.shown
        real()  # asked again now: the bar already shows the keys of the task under the cursor
        assert app.key_bar.shown == shown
        selected = [line for line in shown_lines(app.query_one(TaskList))
                    if line.startswith("▌▶")]
        assert len(selected) == 1 and " #4 " in selected[0]

    drive(planned, script, size=(120, 40))


def test_the_app_runs_with_a_short_switch_interval_and_leaves_it_as_it_was(monkeypatch, tmp_path):
    """Textual's writer thread needs the interpreter's lock to put a frame on the terminal;
    `baton` shortens the time it may wait for it while the app runs, and only then."""
    from baton_tui.tui import launch

    during = []

    class App:
        config_error = None
        return_code = 0
        ws = SimpleNamespace(close=lambda: None)

        def run(self):
            during.append(sys.getswitchinterval())
            return 0

    monkeypatch.setattr(launch.api, "open_workspace", lambda: SimpleNamespace(root=tmp_path))
    monkeypatch.setattr(launch, "EnginePlanner", lambda root: None)
    monkeypatch.setattr(launch, "make_app", lambda ws, **kwargs: App())
    kept = sys.getswitchinterval()  # (this process's own, whatever another test left)
    sys.setswitchinterval(0.005)    # Python's default
    try:
        before = sys.getswitchinterval()
        assert launch.run_app() == 0
    finally:
        after = sys.getswitchinterval()
        sys.setswitchinterval(kept)
    assert during == [launch.FRAME_HANDOFF] and launch.FRAME_HANDOFF < before
    assert after == before


def test_the_card_lists_scrollbar_draws_what_textuals_draws(planned):
    """The list's scrollbar makes its lines without the console; at every position, hovered
    or not, they are the lines Textual's own `ScrollBar` draws for it, segment for segment,
    and a move of the list moves the bar."""
    from textual.scrollbar import ScrollBar

    from baton_tui.tui.widgets.light_scrollbar import LightScrollBar

    async def script(pilot, app, seen):
        await ready(pilot)
        cards = app.query_one(TaskList)
        await wait_for(pilot, lambda: len(cards.rows) == 4 and cards.size.width > 0)
        bar = cards.vertical_scrollbar
        assert isinstance(bar, LightScrollBar)
        await wait_for(pilot, lambda: bar.display and bar.size.height > 0)
        crop = Region(0, 0, bar.size.width, bar.size.height)

        def textuals() -> list:
            bar._styles_cache.clear()
            return [list(line) for line in ScrollBar.render_lines(bar, crop)]

        def ours() -> list:
            return [list(line) for line in bar.render_lines(crop)]

        top = ours()
        assert top == textuals()
        cards.scroll_to(y=cards.tops[2], animate=False, immediate=True)
        await pilot.pause()
        assert ours() != top and ours() == textuals()
        for over in (False, True):
            bar.mouse_over = over
            for eighths in range(0, 8 * (bar.window_virtual_size - bar.window_size) + 1):
                bar.position = eighths / 8
                assert ours() == textuals(), (over, eighths)
        assert ours()[1:3] == textuals()[1:3] == [list(line) for line in
                                                   bar.render_lines(Region(0, 1, 1, 2))]

    drive(planned, script, size=(120, 16))


def test_lines_finished_once_are_the_lines_textual_finishes(planned):
    """The card list and the graph keep each finished line by the line it was made from;
    after scrolls, cursor moves (back and forth) and a change of theme, every row they give is
    the row Textual's styles cache draws for it, segment for segment."""
    from textual.widget import Widget

    from baton_tui.tui.widgets.dag import DagLines, NeighboursLine
    from baton_tui.tui.widgets.finished_lines import FinishedLines

    async def script(pilot, app, seen):
        await ready(pilot)
        cards = app.query_one(TaskList)
        await wait_for(pilot, lambda: len(cards.rows) == 4 and cards.size.width > 0)
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        widgets = [cards, app.query_one(DagLines), app.query_one(NeighboursLine)]
        assert all(isinstance(widget, FinishedLines) for widget in widgets)

        def compare() -> None:
            for widget in widgets:
                crop = Region(0, 0, widget.size.width, widget.size.height)
                ours = [list(line) for line in widget.render_lines(crop)]
                widget._styles_cache.clear()
                textuals = [list(line) for line in Widget.render_lines(widget, crop)]
                assert ours == textuals, type(widget).__name__
                part = Region(2, 1, widget.size.width - 3, max(0, widget.size.height - 1))
                assert [list(line) for line in widget.render_lines(part)] == \
                    [list(line) for line in Widget.render_lines(widget, part)]

        compare()
        for step in (1, 1, 1, -1, -1, 1):
            app.plan_pane.action_cursor(step)
            await pilot.pause()
            compare()
        kept = len(cards._finished)
        app.plan_pane.action_cursor(-1)
        app.plan_pane.action_cursor(1)
        await pilot.pause()
        compare()
        assert len(cards._finished) == kept  # back and forth: nothing finished anew
        app.action_toggle_theme()
        await pilot.pause()
        compare()

    drive(planned, script, size=(120, 16))


def test_a_cursor_key_is_painted_when_ready_not_at_the_frame_timers_tick(planned):
    """Textual paints on a 60-a-second timer; a cursor key's change is painted as soon as the
    screen has taken it in. With the timer held back entirely, a key's move still reaches
    the terminal, and other changes (a card refreshed by a board) still wait for the timer.
    (Pilot's own pauses paint as the timer would: this waits with plain sleeps.)"""
    import asyncio
    import time

    from baton_tui.tui.paint import PromptScreen

    async def until(predicate, timeout: float = 15.0) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return predicate()

    async def script(pilot, app, seen):
        await ready(pilot)
        cards = app.query_one(TaskList)
        await wait_for(pilot, lambda: len(cards.rows) == 4 and cards.size.width > 0)
        await wait_for(pilot, lambda: app.focused is app.plan_pane)
        screen = app.screen
        assert isinstance(screen, PromptScreen)
        await pilot.pause()
        painted = []
        real = app._display
        app._display = lambda on, update: (painted.append(update), real(on, update))[1]
        screen._update_timer.pause()
        held = []
        screen._update_timer.resume = lambda: held.append(True)  # the timer never ticks
        cards.refresh_lines(cards.tops[2], 2)  # a change no key asked for: it waits
        assert await until(lambda: bool(held))
        await asyncio.sleep(0.1)
        assert not [update for update in painted if update is not None]
        app.simulate_key("j")
        assert await until(lambda: app.plan_pane.cursor == 1)
        assert await until(lambda: any(update is not None for update in painted))
        selected = [line for line in shown_lines(cards) if line.startswith("▌▶")]
        assert len(selected) == 1 and " #2 " in selected[0]

    drive(planned, script, size=(120, 40))
