"""What the board shows: every dependency level, the selected task's inputs and dependents,
cards with elapsed time, flags, tokens and a limit countdown, and a header with progress and
the budget meter."""

from __future__ import annotations

import time

import pytest

from helpers.tui_support import FIXED_NOW, drive, shown_lines, wait_for, ws

from baton_tui import api
from baton_tui.plan.current import current, store_new_plan
from baton_tui.plan.model import parse_document
from baton_tui.tui.screens.dag import DagScreen
from baton_tui.tui.widgets.dag import dag_lines, line_text, neighbours_text, related
from baton_tui.tui.widgets.header import budget_meter, header_text
from baton_tui.tui.widgets.task_card import card_text

__all__ = ["ws"]

# Seven levels deep, with a side branch: the old view showed only the first three.
DEEP = [{"id": i, "title": f"Step {i}", "prompt": "p", "player": "demo",
         "depends_on": [i - 1] if i > 1 else []} for i in range(1, 8)] + [
    {"id": 8, "title": "Side", "prompt": "p", "player": "demo", "depends_on": [2]}]


@pytest.fixture
def deep(ws):
    store_new_plan(ws, parse_document({"version": 1, "goal": "Deep", "tasks": DEEP}))
    return ws


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def board(ws, now=FIXED_NOW):
    return api.snapshot(ws.store, now=now)


def test_every_level_and_the_selected_tasks_neighbours(deep):
    snap = board(deep)
    lines, line_of = dag_lines(snap, 80)
    texts = [line_text(pieces, 2, *related(snap, 2)) for pieces in lines]
    assert [text.plain.split()[0] for text in texts] == [f"L{i}" for i in range(7)]
    assert line_of[8] == line_of[3] == 2
    assert neighbours_text(snap, 2).plain == "#2: needs #1 · feeds #3 #8"
    styles = {text.plain[s.start:s.end]: str(s.style) for text in texts for s in text.spans}
    assert styles["#2"] == "bold reverse" and styles["#1"] == "bold underline"
    assert styles["#8"] == "bold italic" and styles["#5"] == "bold"


def test_a_wide_level_wraps_under_its_first_task(ws):
    tasks = [{"id": 1, "title": "Root", "prompt": "p", "player": "demo"}] + [
        {"id": i, "title": f"T{i}", "prompt": "p", "player": "demo", "depends_on": [1]}
        for i in range(2, 40)]
    store_new_plan(ws, parse_document({"version": 1, "goal": "Wide", "tasks": tasks}))
    lines, line_of = dag_lines(board(ws), 30)
    plain = ["".join(p.text for p in line) for line in lines]
    assert plain[0] == "L0 #1" and plain[1].startswith("L1 #2←1  #3←1")
    assert all(len(text) <= 30 for text in plain) and len(plain) > 3
    assert all(text.startswith("   #") for text in plain[2:])
    assert sorted(line_of) == list(range(1, 40)) and line_of[39] == len(plain) - 1


def test_the_plan_pane_shows_the_deepest_level_and_g_opens_the_full_view(deep):
    async def script(pilot, app, seen):
        graph = app.query_one("#dag-lines")
        assert graph.virtual_size.height == 7 and graph.size.height < 7  # it scrolls
        assert "L0 #1" in shown_lines(graph)[0]
        await pilot.press("end")
        await pilot.pause()
        assert app.plan_pane.selected_task.id == 7
        assert any("L6 #7←6" in line for line in shown_lines(graph))  # followed the cursor
        await pilot.press("home", "j")
        await pilot.pause()
        assert "#2: needs #1 · feeds #3 #8" in str(app.query_one("#dag-neighbours").render())
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, DagScreen))
        full = app.screen.query_one("#dag-lines")
        await pilot.pause()
        assert [line.split()[0] for line in shown_lines(full)[:7]] == [f"L{i}" for i in range(7)]
        await pilot.press("j", "j")
        await pilot.press("escape")
        await pilot.pause()
        assert app.plan_pane.selected_task.id == app.board.rows[3].id

    drive(deep, script, size=(80, 24))


def test_cards_say_flags_tokens_and_when_a_limit_resets(deep):
    plan_id = current(deep).row.id
    store = deep.store
    store.append(plan_id, 1, "task.started", {})
    store.append(plan_id, 1, "task.usage", {"tokens": 12_345})
    store.append(plan_id, 1, "task.flagged", {"flag": "stall", "message": "quiet for 5m"})
    store.append(plan_id, 1, "task.flagged", {"flag": "loop", "message": "same line 5 times"})
    store.append(plan_id, 1, "task.paused", {"until": FIXED_NOW + 3900})
    task = board(deep).task(1)
    text = card_text(task, now=FIXED_NOW).plain
    assert "12.3k tokens" in text
    assert "resets 01:05 (in 1h05m)" in text
    assert "⚑ loop: same line 5 times (+1 more)" in text


def test_header_progress_budget_and_stop():
    snap = api.snapshot_empty()
    assert "no plan yet" in header_text("repo", snap).plain
    assert budget_meter({"limits": {"tokens": 1000, "cost": None, "time": 600},
                         "used": {"tokens": 400, "cost": None, "time": 60}}) \
        == ("budget ▰▰▰▱▱▱▱▱ 40% tokens", False)
    assert budget_meter({"limits": {"tokens": 100}, "used": {"tokens": 150}})[1] is True
    assert budget_meter(None) is None and budget_meter({"limits": {}}) is None


def test_header_counts_what_is_done(deep):
    plan_id = current(deep).row.id
    deep.store.append(plan_id, 1, "task.started", {})
    deep.store.append(plan_id, 1, "task.done", {"summary": "ok"})
    words = header_text("repo", board(deep)).plain
    assert "1/8 done" in words and "autonomy guarded" in words


class TestTerminalSurface:
    """80×24 keeps ? and q in the footer; the mouse picks cards; light and dark themes."""

    def test_footer_keeps_help_and_quit_at_80x24(self, deep):
        async def script(pilot, app, seen):
            await pilot.pause(0.2)
            words = app.key_bar.plain
            assert app.key_bar.region.right <= 80 and len(words.rstrip()) <= 80
            for label in ("? help", "q quit"):
                assert label in words, label

        drive(deep, script, size=(80, 24))

    def test_clicking_a_card_selects_it_and_ctrl_t_switches_the_theme(self, deep):
        async def script(pilot, app, seen):
            cards = app.query_one("#cards")
            await pilot.click(cards, offset=(4, cards.tops[2] + 1))
            assert app.plan_pane.selected_task.id == cards.rows[2].id
            assert "▶" in shown_lines(cards)[cards.tops[2]]
            assert app.focused is app.plan_pane
            before = app.theme
            await pilot.press("ctrl+t")
            assert app.theme != before and app.theme in ("textual-light", "textual-dark")

        drive(deep, script, size=(120, 40))


def test_a_card_names_an_agentless_player_from_the_players_facts(ws):
    """`script` runs no agent (PlayerFacts.check_is_task): its card says the check is the
    task once the facts are read; an agent's card names its model instead."""
    store_new_plan(ws, parse_document({"version": 1, "goal": "Facts", "tasks": [
        {"id": 1, "title": "Lint", "prompt": "", "player": "script", "check": "true"},
        {"id": 2, "title": "Write", "prompt": "p", "player": "demo"}]}))

    async def script(pilot, app, seen):
        await wait_for(pilot, lambda: app.player_facts is not None)
        await pilot.pause()
        lines = " ".join(shown_lines(app.query_one("#cards")))
        assert app.player_facts.check_is_task("script")
        assert "script (its check is the task)" in lines
        assert "demo (its check is the task)" not in lines and "demo · default model" in lines

    drive(ws, script, size=(120, 40))
