"""Pilot tests: the handoff screen on real landed branches — review, merge all, merge up to a
task, a conflict resolved in a (scripted) shell, discarding with dependents."""

from __future__ import annotations

import subprocess

import pytest

from helpers.handoff_kit import FILES, TASKS, git, landed_plan
from helpers.tui_support import drive, planned, settle, wait_for, ws
from test_handoff_pr import forge

__all__ = ["forge", "planned", "ws"]

from baton_tui.plan.current import current
from baton_tui.tui import messages as msg
from baton_tui.tui.screens.file_diff import FileDiffScreen
from baton_tui.tui.screens.handoff import HandoffScreen
from baton_tui.tui.screens.pickers import ConfirmModal
from baton_tui.tui.widgets.key_bar import KeyBar


@pytest.fixture
def landed(repo):
    ws = landed_plan(repo, TASKS, FILES)
    yield ws
    ws.close()


async def open_handoff(pilot, app):
    await wait_for(pilot, lambda: app.board.task(3) is not None
                   and app.board.task(3).state == "landed")
    app.plan_pane.focus()
    await pilot.press("H")
    await wait_for(pilot, lambda: isinstance(app.screen, HandoffScreen))
    await wait_for(pilot, lambda: app.screen.review is not None, timeout=15)
    await pilot.pause()
    return app.screen


async def confirm_merge(pilot, app) -> str:
    """`M` and `u` ask first; yes. Returns the question asked."""
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
    question = app.screen.question
    await pilot.press("y")
    return question


def states(ws) -> dict[int, str]:
    cur = current(ws)
    return {t.id: str(cur.view(t.id).state) for t in cur.doc.tasks}


def of(seen, kind):
    return [m for m in seen if isinstance(m, kind)]


class TestReview:
    """What the screen shows before anything is merged."""

    def test_tasks_files_reports_and_a_full_screen_file_diff(self, landed):
        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)
            review = screen.review
            assert [t.id for t in review.tasks] == [1, 2, 3]
            assert {f.path for f in review.files} == {"words.py", "lines.py", "cli.py",
                                                      "README.md"}
            assert review.tasks[2].summary == "Command line is in"
            assert review.tasks[2].check == {"exit": 0, "output": "3 passed"}
            assert str(screen.query_one("#handoff-summary").render()).startswith(
                " 3 landed tasks · 4 files")
            await pilot.press("space")  # fold open task 1
            await pilot.press("down", "down", "down")  # report, check, then its file
            assert screen.selected().kind == "file"
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, FileDiffScreen))
            assert "+def count_words(text):" in app.screen.diff
            await pilot.press("escape")
            await pilot.press("escape")
            await pilot.pause()
            assert len(app.screen_stack) == 1

        drive(landed, script, size=(120, 40))

    def test_H_is_dimmed_before_anything_ran(self, planned):
        async def script(pilot, app, seen):
            await pilot.press("H")
            await pilot.pause()
            assert len(app.screen_stack) == 1

        app, seen = drive(planned, script)
        assert "has not run yet" in of(seen, msg.KeyRefused)[0].reason


class TestMerge:
    """M merges all in plan order with a line per task; u stops at the selected task. Both
    ask first, naming the tasks and the branch they go onto."""

    def test_merge_all_asks_naming_the_tasks_and_the_branch(self, landed):
        asked = []

        async def script(pilot, app, seen):
            await open_handoff(pilot, app)
            await pilot.press("M")
            asked.append(await confirm_merge(pilot, app))
            await wait_for(pilot, lambda: of(seen, msg.MergeFinished), timeout=20)
            await wait_for(pilot, lambda: app.board.state == "merged")

        app, seen = drive(landed, script, size=(120, 40))
        assert list(dict.fromkeys(m.task_id for m in of(seen, msg.MergeProgressed))) == [1, 2, 3]
        assert states(landed) == {1: "merged", 2: "merged", 3: "merged"}
        assert (landed.root / "cli.py").exists()
        assert git(landed.root, "status", "--porcelain", "--untracked-files=no") == ""
        question = asked[0]
        assert question.startswith("Merge 3 tasks onto main, each as its own merge commit, "
                                   "in this order?"), question
        for task in TASKS:
            assert f"#{task['id']} {task['title']}" in question

    def test_no_at_the_question_merges_nothing(self, landed):
        async def script(pilot, app, seen):
            await open_handoff(pilot, app)
            await pilot.press("M")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            assert app.screen.title_text == "merge onto main?"
            await pilot.press("n")
            await pilot.pause(0.3)
            assert isinstance(app.screen, HandoffScreen)
            await settle(pilot)

        app, seen = drive(landed, script, size=(120, 40))
        assert not of(seen, msg.MergeProgressed) and not of(seen, msg.MergeFinished)
        assert states(landed) == {1: "landed", 2: "landed", 3: "landed"}
        assert not (landed.root / "words.py").exists()

    def test_merge_up_to_the_selected_task(self, landed):
        async def script(pilot, app, seen):
            await open_handoff(pilot, app)
            await pilot.press("down")  # task 2
            assert app.screen.selected_task().id == 2
            await pilot.press("u")
            question = await confirm_merge(pilot, app)
            assert "Merge 2 tasks onto main" in question and "#3" not in question
            await wait_for(pilot, lambda: of(seen, msg.MergeFinished), timeout=20)

        app, seen = drive(landed, script, size=(120, 40))
        assert states(landed) == {1: "merged", 2: "merged", 3: "landed"}
        assert not (landed.root / "cli.py").exists()


    def test_a_landed_change_undone_on_the_branch_is_named_not_called_merged(self, landed):
        from baton_tui.handoff.actions import merge

        merge(landed, upto=1)
        git(landed.root, "rm", "-q", "words.py")  # task 1's change, undone by a commit
        git(landed.root, "commit", "-q", "-m", "oops")

        async def script(pilot, app, seen):
            await open_handoff(pilot, app)
            await pilot.press("M")
            await confirm_merge(pilot, app)
            await wait_for(pilot, lambda: of(seen, msg.MergeFinished), timeout=20)
            await settle(pilot)
            log = "\n".join(line.text for line in app.screen.query_one("#merge-log").lines)
            assert "main does not hold all the landed work" in log, log
            assert "#1's change is not in main's tree: words.py" in log
            assert "landed work is on main" not in log.replace("not hold all the landed", "")

        app, seen = drive(landed, script, size=(120, 40))
        assert of(seen, msg.MergeFinished)[0].missing == {1: ["words.py"]}


class TestConflict:
    """A conflict stops the merge, names the task and files, leaves the tree clean; the
    shell resolves it and the merge goes on."""

    def test_conflict_resolved_in_the_shell_then_merged(self, landed):
        root = landed.root
        (root / "README.md").write_text("# sample\n\nMine, not the agent's.\n")
        git(root, "commit", "-qam", "my own README")
        shells = []

        def shell(where, banner):
            shells.append(banner)
            assert "README.md" in banner
            (where / "README.md").write_text("# sample\n\nBoth, resolved.\n")
            subprocess.run(["git", "add", "README.md"], cwd=where, check=True)
            subprocess.run(["git", "commit", "-q", "--no-edit"], cwd=where, check=True)
            return 0

        async def script(pilot, app, seen):
            await open_handoff(pilot, app)
            await pilot.press("M")
            await confirm_merge(pilot, app)
            await wait_for(pilot, lambda: of(seen, msg.MergeStopped), timeout=20)
            stop = of(seen, msg.MergeStopped)[0].conflict
            assert (stop["id"], stop["files"]) == (3, ["README.md"])
            assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
            status = str(app.screen.query_one("#handoff-status").render())
            assert "stopped at task 3" in status and "untouched" in status
            await pilot.press("s")
            await wait_for(pilot, lambda: of(seen, msg.MergeFinished), timeout=20)
            await wait_for(pilot, lambda: app.board.state == "merged")

        app, seen = drive(landed, script, size=(120, 40), shell=shell)
        assert len(shells) == 1
        assert states(landed) == {1: "merged", 2: "merged", 3: "merged"}
        assert (root / "README.md").read_text() == "# sample\n\nBoth, resolved.\n"


    def test_at_80x24_the_key_bar_leads_with_the_step_the_merge_waits_on(self, landed):
        """Textual's footer cut `s` off at 80 columns while the merge waited on it; the key
        bar shows the keys that apply now, the one the stop waits on first."""
        root = landed.root
        (root / "README.md").write_text("# sample\n\nMine, not the agent's.\n")
        git(root, "commit", "-qam", "my own README")

        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)

            def bar() -> str:
                return screen.query_one(KeyBar).plain

            await wait_for(pilot, lambda: bar().startswith(" M merge all"))
            assert "resolve in a shell" not in bar() and bar().rstrip().endswith("? help  q back")
            await pilot.press("M")
            await confirm_merge(pilot, app)
            await wait_for(pilot, lambda: of(seen, msg.MergeStopped), timeout=20)
            await wait_for(pilot, lambda: bar().startswith(" s resolve in a shell"))
            assert len(bar().rstrip()) <= 80 and bar().rstrip().endswith("? help  q back")

        drive(landed, script, size=(80, 24))


class TestDiscard:
    """x asks first, names what goes with it (dependents rule as in the CLI)."""

    def test_discard_takes_its_dependents_after_asking(self, landed):
        async def script(pilot, app, seen):
            await open_handoff(pilot, app)
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            assert "Task 3 was built on it and is discarded too" in app.screen.question
            await pilot.press("y")
            await wait_for(pilot, lambda: app.board.task(3).state == "discarded")
            await settle(pilot)

        drive(landed, script, size=(120, 40))
        assert states(landed) == {1: "discarded", 2: "landed", 3: "discarded"}

    def test_no_keeps_everything(self, landed):
        async def script(pilot, app, seen):
            await open_handoff(pilot, app)
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.press("n")
            await pilot.pause(0.2)

        drive(landed, script, size=(120, 40))
        assert states(landed) == {1: "landed", 2: "landed", 3: "landed"}


def test_split_diff_counts_per_file_for_new_deleted_renamed_and_binary_files():
    from baton_tui.handoff.view import split_diff

    patch = "\n".join([
        "diff --git a/new.py b/new.py", "new file mode 100644", "index 0000000..1111111",
        "--- /dev/null", "+++ b/new.py", "@@ -0,0 +1,2 @@", "+a = 1", "+b = 2",
        "diff --git a/gone.py b/gone.py", "deleted file mode 100644", "--- a/gone.py",
        "+++ /dev/null", "@@ -1,3 +0,0 @@", "-x", "--- not a header inside a hunk", "-z",
        "diff --git a/old name.py b/new name.py", "similarity index 100%",
        "rename from old name.py", "rename to new name.py",
        "diff --git a/logo.png b/logo.png", "Binary files a/logo.png and b/logo.png differ"])
    files = split_diff(patch)
    assert [(f.path, f.added, f.deleted) for f in files] == [
        ("new.py", 2, 0), ("gone.py", 0, 3), ("new name.py", 0, 0), ("logo.png", 0, 0)]
    assert files[0].diff.startswith("diff --git a/new.py") and "+b = 2" in files[0].diff
    assert split_diff("") == []


class TestPullRequest:
    """P at the handoff publishes the landed work as one pull request — only when asked, after
    a yes — through the forge's CLI (the stand-in `gh` of tests/test_handoff_pr.py)."""

    def test_P_asks_then_pushes_and_opens_one_pull_request(self, landed, forge):
        async def script(pilot, app, seen):
            screen = await open_handoff(pilot, app)
            await pilot.press("P")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            assert "open (or update) one pull request" in app.screen.question
            await pilot.press("y")
            await wait_for(pilot, lambda: forge.prs(), timeout=20)
            await wait_for(pilot, lambda: any(
                "opened #1 https://github.com/acme/widgets/pull/1" in str(line)
                for line in screen.query_one("#merge-log").lines))

        drive(landed, script, size=(120, 40))
        [pr] = forge.prs()
        assert pr["base"] == "main" and pr["head"].endswith("/pr/all")
        assert forge.files(pr["head"]) >= {"words.py", "lines.py", "cli.py"}
        assert states(landed) == {1: "landed", 2: "landed", 3: "landed"}  # nothing merged
