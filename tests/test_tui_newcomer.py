"""What a newcomer tripped on (issue 52): the approve dialog opens at once with its counts
while the players are read, and an enter pressed meanwhile approves (it is held, never
lost); `q` asks first while agents run."""

from __future__ import annotations

import threading

import pytest
from helpers.tui_support import approved, drive, settle, trusted, planned, wait_for, ws

from baton_tui import api
from baton_tui.tui.screens.approve import ApproveModal

__all__ = ["planned", "trusted", "ws"]

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]


@pytest.fixture
def slow_players(monkeypatch):
    """Reading the players' facts waits until the test lets it go, as a CLI that takes
    seconds to answer `--version` does: the engine thread is held meanwhile."""
    gate = threading.Event()
    real = api.known_player_facts

    def held(ws, names):
        gate.wait(30)
        return real(ws, names)

    monkeypatch.setattr(api, "known_player_facts", held)
    yield gate
    gate.set()


@pytest.mark.parametrize("size", SIZES)
class TestApproveWhilePlayersAreRead:
    def test_counts_show_at_once_and_an_early_enter_approves(self, trusted, slow_players,
                                                             size):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            assert app.player_facts is None  # still being read
            await pilot.press("a", "enter")  # the enter right behind the a
            assert isinstance(app.screen, ApproveModal)
            modal = app.screen
            words = modal.summary.plain
            assert "3 build tasks on demo, other, script" in words
            assert "2 check commands" in words
            shown = str(modal.query_one("#approve-players").render())
            assert "reading the players" in shown
            assert "approving once the players are read" in str(
                modal.query_one("#approve-box").border_subtitle)
            assert not app.board.approved
            slow_players.set()
            await wait_for(pilot, lambda: app.board.approved)
            assert app.screen is not modal

        drive(trusted, script, size=size)
        assert approved(trusted)

    def test_escape_while_reading_cancels(self, trusted, slow_players, size):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            await pilot.press("a", "enter", "escape")
            slow_players.set()
            await settle(pilot)
            assert not isinstance(app.screen, ApproveModal)
            assert not app.board.approved

        drive(trusted, script, size=size)
        assert not approved(trusted)

    def test_readiness_fills_in(self, trusted, slow_players, size):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            await pilot.press("a")
            modal = app.screen
            slow_players.set()
            await wait_for(pilot, lambda: modal.reading is None)
            shown = str(modal.query_one("#approve-players").render())
            assert "players ready here: demo, other, script" in shown
            assert "#2 after the agent reports" in modal.summary.plain
            assert "#4 the whole task (no agent)" in modal.summary.plain
            await pilot.press("escape")

        drive(trusted, script, size=size)


STARTED = {"base": "0" * 40}


@pytest.fixture
def running(planned):
    """Task 2 started (as the launcher records it): an agent is running."""
    from baton_tui.plan.current import current

    plan_id = current(planned).row.id
    planned.store.append(plan_id, 1, "task.started", STARTED)
    planned.store.append(plan_id, 1, "task.done", {"summary": "mapped"})
    planned.store.append(plan_id, 2, "task.started", STARTED)
    return planned


@pytest.mark.parametrize("size", SIZES)
class TestQuitWhileAgentsRun:
    def test_q_asks_first_and_n_stays(self, running, size):
        from baton_tui.tui.screens.quit import QuitModal

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(2) is not None
                           and app.board.task(2).state == "running")
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitModal))
            assert "1 agent is running. They go on without the app" in app.screen.question
            await pilot.press("n")
            await wait_for(pilot, lambda: not isinstance(app.screen, QuitModal))
            assert app.return_code is None
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitModal))
            await pilot.press("q")  # q again quits
            await wait_for(pilot, lambda: app.return_code is not None)

        app, _ = drive(running, script, size=size)
        assert app.return_code == 0

    def test_the_demo_says_quitting_pauses(self, running, size):
        from baton_tui.tui.screens.quit import QuitModal

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(2) is not None
                           and app.board.task(2).state == "running")
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitModal))
            assert "quitting pauses them" in app.screen.question
            await pilot.press("y")

        app, _ = drive(running, script, size=size,
                       leaving="The demo's scripted model stops with the app, so quitting "
                               "pauses them.")
        assert app.return_code == 0


# The handoff ------------------------------------------------------------------------------
ORDERED = [  # task 2 builds on task 3: its branch carries 3's work, so 3 merges first
    {"id": 1, "title": "Count words", "prompt": "p", "player": "demo", "scope": ["words.py"]},
    {"id": 2, "title": "Command line", "prompt": "p", "player": "demo", "depends_on": [3],
     "scope": ["cli.py"]},
    {"id": 3, "title": "Count lines", "prompt": "p", "player": "demo", "scope": ["lines.py"]},
]
ORDERED_FILES = {
    1: {"words.py": "def count_words(text):\n    return len(text.split())\n"},
    2: {"cli.py": "from lines import count_lines\n"},
    3: {"lines.py": "def count_lines(text):\n    return text.count('\\n')\n"},
}


@pytest.fixture
def landed(repo):
    from helpers.handoff_kit import FILES, TASKS, landed_plan

    ws = landed_plan(repo, TASKS, FILES)
    yield ws
    ws.close()


@pytest.fixture
def carried(repo):
    from helpers.handoff_kit import landed_plan

    ws = landed_plan(repo, ORDERED, ORDERED_FILES, land_ids=[1, 3, 2])
    yield ws
    ws.close()


@pytest.mark.parametrize("size", SIZES)
class TestHandoffKeys:
    def test_question_mark_lists_the_handoffs_own_keys(self, landed, size):
        from test_tui_handoff import open_handoff

        from baton_tui.tui.screens.help import HelpScreen

        async def script(pilot, app, seen):
            await open_handoff(pilot, app)
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            ids = {row.id: row for row in app.screen.rows}
            assert {"merge-all", "merge-upto", "handoff-discard", "full-diff",
                    "resolve-shell", "handoff-retry"} <= set(ids)
            assert ids["merge-all"].keys == "M" and ids["merge-all"].reason is None
            assert "approve" not in ids and "prompt" not in ids  # not the plan's keys
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))

        drive(landed, script, size=size)

    def test_the_key_bar_keeps_help_and_back_and_the_log_says_what_will_appear(
            self, landed, size):
        from test_tui_handoff import open_handoff

        from baton_tui.tui.widgets.key_bar import KeyBar

        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)
            bar = screen.query_one(KeyBar).plain.rstrip()
            assert bar.endswith("? help  q back"), bar
            assert "M merge all" in bar
            def log() -> str:
                lines = screen.query_one("#merge-log").lines
                return " ".join(" ".join(strip.text for strip in lines).split())

            await wait_for(pilot, lambda: "The merge is written here" in log())
            assert "The merge is written here, a line per task, once you press M." in log()

        drive(landed, script, size=size)


class TestMergeOrder:
    def test_the_question_says_which_order_when_it_is_not_the_plans(self, carried):
        from test_tui_handoff import confirm_merge

        from baton_tui.tui.screens.handoff import HandoffScreen

        asked = []

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(2) is not None
                           and app.board.task(2).state == "landed")
            app.plan_pane.focus()
            await pilot.press("H")
            await wait_for(pilot, lambda: isinstance(app.screen, HandoffScreen)
                           and app.screen.review is not None)
            assert [t.id for t in app.screen.review.tasks] == [1, 3, 2]
            await pilot.press("M")
            asked.append(await confirm_merge(pilot, app))
            await wait_for(pilot, lambda: app.board.state == "merged", timeout=30)

        drive(carried, script, size=(120, 40))
        question = asked[0]
        assert "plan order, except that a task whose branch already carries another's work " \
               "comes after that work" in question
        assert question.index("#3 Count lines") < question.index("#2 Command line")


class TestOpeningLine:
    """Reopening a plan whose run is over points at the handoff, not at typing a goal."""

    @pytest.mark.parametrize("size", SIZES)
    def test_a_finished_run_points_at_H(self, landed, size):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: len(app.query_one("#chat-log").lines) > 0)
            first = " ".join(line.text for line in app.query_one("#chat-log").lines)
            assert "run is over and its landed work waits for you: press H for the " \
                   "handoff" in " ".join(first.split())
            assert "Say what you want built" not in first

        drive(landed, script, size=size, auto_handoff=False)

    def test_a_draft_still_gets_the_welcome(self, planned):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: len(app.query_one("#chat-log").lines) > 0)
            first = " ".join(line.text for line in app.query_one("#chat-log").lines)
            assert "Say what you want built" in first

        drive(planned, script)


class TestToasts:
    def test_f_on_a_research_task_says_it_is_starting_not_done(self, trusted, monkeypatch):
        """The real `start_task` (its rule, trust, the queued event); only the conductor it
        would spawn stays unstarted — the toast is what is looked at."""
        from test_tui_wording import noting

        from baton_tui.run import control

        monkeypatch.setattr(control, "spawn_conductor", lambda ws, checked=False: 0)
        said: list[str] = []

        async def script(pilot, app, seen):
            toasts = noting(app)
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            assert app.plan_pane.selected_task.mode == "research"
            await pilot.press("f")
            await wait_for(pilot, lambda: any("#1" in t for t in toasts))
            said.extend(toasts)

        drive(trusted, script)
        assert "#1 starting now" in said
        assert not any("done" in t for t in said)


# 80×24 cuts ----------------------------------------------------------------------------------
LONG_FILES = {
    1: {"words.py": "def count_words(text):\n    return len(text.split())  # "
                    + "a comment that runs far past the right edge of any pane " * 3 + "\n"},
    2: {"lines.py": "def count_lines(text):\n    return text.count('\\n')\n"},
    3: {"cli.py": "from words import count_words\nprint(count_words('a b'))\n",
        "README.md": "# sample\n\nRun cli.py.\n"},
}


@pytest.fixture
def wide(repo):
    from helpers.handoff_kit import TASKS, landed_plan

    tasks = [dict(TASKS[0], title="Count the words of each line of the whole text, "
                                  "carefully"), *TASKS[1:]]
    ws = landed_plan(repo, tasks, LONG_FILES)
    yield ws
    ws.close()


@pytest.mark.parametrize("size", SIZES)
class TestHandoffAt80x24:
    def test_counts_come_first_and_cut_lines_say_so(self, wide, size):
        from test_tui_handoff import open_handoff

        from baton_tui.tui.widgets.diff_view import DiffView

        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)
            tree = screen.query_one("#handoff-tree")
            rows = [tree.render_line(y).text for y in range(tree.size.height)]
            assert any("#1 +2 −0" in row for row in rows), rows
            view = screen.query_one(DiffView)
            await wait_for(pilot, lambda: "comment that runs far" in view.text)
            drawn = [view.render_line(y).text for y in range(view.size.height)]
            cut = [row for row in drawn if "# a comment" in row]
            assert cut and cut[0].rstrip().endswith("…"), drawn
            short = [row for row in drawn if "def count_words" in row]
            assert short and not short[0].rstrip().endswith("…")
            # the report's leaf is cut with a `…`; selected, it shows in full on the right
            await pilot.press("space", "down")
            assert screen.selected().kind == "info"
            rows = [tree.render_line(y).text.rstrip() for y in range(tree.size.height)]
            report = next(row for row in rows if "report:" in row)
            assert report.rstrip(" │▐▌▎▍▊").endswith("…"), rows
            await wait_for(pilot, lambda: "report:" in view.text)
            assert "of the whole text, carefully is in" in " ".join(view.text.split())
            assert "3 passed" in view.text

        drive(wide, script, size=size)


@pytest.mark.parametrize("size", SIZES)
class TestToastsAt80x24:
    def test_a_toast_never_covers_the_plan_pane(self, planned, size):
        from helpers.tui_support import make, run

        from textual.widgets._toast import Toast

        app = make(planned)

        async def main():  # toasts are drawn only with notifications on (run_test: off)
            async with app.run_test(size=size, notifications=True) as pilot:
                await wait_for(pilot, lambda: app.focused is app.plan_pane)
                app.notify("#2 prompt saved — approval voided: press a to approve again",
                           severity="warning")
                await wait_for(pilot, lambda: bool(app.screen.query(Toast)))
                await pilot.pause()
                toast = app.screen.query(Toast).first().region
                plan = app.plan_pane.region
                assert toast.width > 0 and not toast.overlaps(plan), (toast, plan)
                assert not toast.overlaps(app.query_one("#chat-input").region)

        run(main())


@pytest.mark.parametrize("size", SIZES)
class TestRunningInTheHeader:
    def test_the_header_names_running_tasks_wherever_the_cursor_is(self, running, size):
        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(2) is not None
                           and app.board.task(2).state == "running")
            app.plan_pane.select(4)
            await pilot.pause()
            header = app.header.shown.plain
            assert "running #2" in header and "1/4 done" in header, header

        drive(running, script, size=size)


@pytest.mark.parametrize("size", SIZES)
class TestBranchOnCards:
    def test_a_cards_branch_keeps_the_part_that_names_its_task(self, planned, size):
        from helpers.tui_support import shown_lines

        from baton_tui.tui.widgets.task_list import TaskList

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            await wait_for(pilot, lambda: app.player_facts is not None)
            await pilot.pause()
            branch = app.board.task(2).branch
            lines = shown_lines(app.query_one("#cards", TaskList))
            tail = branch.rsplit("/", 1)[-1]
            assert any(tail in line for line in lines), lines
            if not any(branch in line for line in lines):  # too narrow for all of it
                assert any(f"…/{tail}" in line for line in lines), lines

        drive(planned, script, size=size)


@pytest.mark.parametrize("size", SIZES)
class TestFieldKeysShow:
    """Every field key that applies shows above the key bar, at 80 columns too; a started
    task's line says why none do."""

    def test_the_field_line_lists_each_field_key_that_applies(self, planned, size):
        from baton_tui.tui.widgets.key_bar import KeyBar

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            await wait_for(pilot, lambda: app.player_facts is not None)
            await pilot.pause()
            bar = app.query_one(KeyBar)
            fields = bar.fields_plain
            first = ("e edit…", "p prompt", "R player", "o model", "^e effort", "M mode")
            wider = ("d deps", "t title", "c check", "C checkpoint", "S scope")
            for shown in first + (wider if size[0] >= 120 else ()):
                assert shown in fields, fields
            assert fields.rstrip().endswith("… ? all"), fields  # the rest: `e` and `?`
            assert fields.startswith(" fields:") and len(fields.rstrip()) <= size[0]
            assert "p prompt" not in bar.plain  # the lower line keeps the plan's steps
            assert bar.plain.rstrip().endswith("? help  q quit")

        drive(planned, script, size=size)

    def test_a_started_task_says_why_its_fields_are_frozen(self, running, size):
        from baton_tui.tui.widgets.key_bar import KeyBar

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(2) is not None
                           and app.board.task(2).state == "running")
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            app.plan_pane.select(2)
            await pilot.pause()
            bar = app.query_one(KeyBar)
            fields = bar.fields_plain
            assert fields.startswith(" fields:") and "started" in fields, fields
            assert "p prompt" not in fields
            # drawn: the reason is cut on its own line, the keys' line stays below it
            drawn = [bar.render_line(y).text for y in range(bar.size.height)]
            assert len(drawn) == 2 and "started" in drawn[0], drawn
            assert drawn[1].rstrip().endswith("? help  q quit"), drawn

        drive(running, script, size=size)


class TestHandoffRemapped:
    def test_handoff_keys_remap_by_id_like_the_plans(self, repo):
        from helpers.handoff_kit import FILES, TASKS, landed_plan
        from helpers.tui_support import trust
        from test_tui_handoff import open_handoff

        from baton_tui.tui.screens.pickers import ConfirmModal
        from baton_tui.tui.widgets.key_bar import KeyBar
        from baton_tui.workspace import Workspace

        ws = landed_plan(repo, TASKS, FILES)
        ws.close()
        toml = repo / "baton.toml"
        toml.write_text(toml.read_text() + '\n[keys]\nmerge-all = "ctrl+g"\n')
        fresh = Workspace(repo)
        trust(fresh)

        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)
            bar = screen.query_one(KeyBar).plain
            assert "^g merge all" in bar and "M merge all" not in bar, bar
            await pilot.press("ctrl+g")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.press("n")

        try:
            drive(fresh, script, size=(80, 24))
        finally:
            fresh.close()


@pytest.mark.parametrize("size", SIZES)
class TestEditMenu:
    """`e` lists every field that may change now, each with its key: one key to guess."""

    def test_e_lists_the_fields_and_a_fields_key_opens_it(self, planned, size):
        from helpers.tui_support import task

        from baton_tui.tui.screens.pickers import EditMenu, TextModal

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            await wait_for(pilot, lambda: app.player_facts is not None)
            await pilot.press("e")
            await wait_for(pilot, lambda: isinstance(app.screen, EditMenu))
            labels = [c.label for c in app.screen.choices]
            for shown in ("p   prompt", "t   title", "R   player", "o   model",
                          "^e  effort", "M   mode", "d   deps", "c   check"):
                assert shown in labels, labels
            await pilot.press("t")  # the title's own key, inside the menu
            await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
            assert app.screen.title_text == "title of #1"
            await pilot.press("ctrl+u", *"Study the limiter", "enter")
            await settle(pilot)
            await pilot.press("e")
            await wait_for(pilot, lambda: isinstance(app.screen, EditMenu))
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, EditMenu))

        drive(planned, script, size=size)
        assert task(planned, 1).title == "Study the limiter"

    def test_on_a_started_task_e_says_why_not(self, running, size):
        from baton_tui.tui import messages as msg

        async def script(pilot, app, seen):
            await wait_for(pilot, lambda: app.board.task(2) is not None
                           and app.board.task(2).state == "running")
            await wait_for(pilot, lambda: app.focused is app.plan_pane)
            app.plan_pane.select(2)
            await pilot.pause()
            await pilot.press("e")
            await pilot.pause()
            assert len(app.screen_stack) == 1

        app, seen = drive(running, script, size=size)
        refused = [m for m in seen if isinstance(m, msg.KeyRefused)]
        assert refused and "has started" in refused[0].reason
