"""Pilot tests: the chat (slash commands, a scripted planner), live cards, task detail."""

from __future__ import annotations

from helpers.tui_support import (
    drive, make, plan_doc, planned, run, settle, wait_for, ws,
)

from baton_tui.plan.current import current
from baton_tui.tui import bindings, messages as msg
from baton_tui import api
from baton_tui.tui.conversation import NO_PLANNER
from baton_tui.tui.planner_port import (
    DraftPlan, PlannerQuestion, ResearchStep, ScriptedPlanner,
)
from baton_tui.tui.screens.approve import ApproveModal
from baton_tui.tui.screens.task_detail import TaskDetail
from baton_tui.tui.widgets.task_card import card_text

__all__ = ["ws", "planned"]


def chat_text(app) -> str:
    """The chat log's words, wrapping undone."""
    return " ".join(" ".join(line.text for line in app.query_one("#chat-log").lines).split())


async def say(pilot, app, text: str) -> None:
    app.query_one("#chat-input").focus()
    await pilot.pause()
    if text:
        await pilot.press(*text)
    await pilot.press("enter")
    await settle(pilot)


class TestChat:
    """Slash commands run against the engine; the planner speaks through its port."""

    def test_no_planner_says_so_plainly(self, ws):
        async def script(pilot, app, seen):
            await say(pilot, app, "Rate-limit the API")
            assert NO_PLANNER in chat_text(app)

        drive(ws, script)

    def test_help_players_plan_status(self, planned):
        async def script(pilot, app, seen):
            for line in ("/help", "/players", "/plan", "/status", "/nope"):
                await say(pilot, app, line)
            text = chat_text(app)
            assert "/approve" in text and "ready: " in text and "demo" in text
            assert "#2 Add a token bucket" in text
            assert "conductor: not running" in text
            assert "unknown command /nope" in text

        drive(planned, script)

    def test_approve_and_run_commands(self, planned):
        async def script(pilot, app, seen):
            await say(pilot, app, "/run")
            assert "not approved" in chat_text(app)
            await say(pilot, app, "/approve")
            await wait_for(pilot, lambda: isinstance(app.screen, ApproveModal))
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.board.approved)

        drive(planned, script)
        assert current(planned).row.approved

    def test_plan_file_loads_through_the_engine(self, ws):
        import json

        (ws.root / "plan.json").write_text(json.dumps(plan_doc()))

        async def script(pilot, app, seen):
            await say(pilot, app, "/plan plan.json")
            await wait_for(pilot, lambda: not app.board.empty)
            await wait_for(pilot, lambda: app.focused is app.plan_pane)

        drive(ws, script)
        assert len(current(ws).doc.tasks) == 4

    def test_scripted_planner_question_recommendation_and_draft(self, ws):
        planner = ScriptedPlanner([
            [ResearchStep("reading src/limiter.py"),
             PlannerQuestion("Limit per user or per key?", "per API key")],
            [ResearchStep("drafting tasks"), DraftPlan(plan_doc())],
        ])

        async def script(pilot, app, seen):
            await say(pilot, app, "Rate-limit the API")
            assert "reading src/limiter.py" in chat_text(app)
            assert "recommended: per API key" in chat_text(app)
            await say(pilot, app, "")  # enter on an empty line takes the recommendation
            await wait_for(pilot, lambda: not app.board.empty)
            await wait_for(pilot, lambda: app.focused is app.plan_pane)

        app, seen = drive(ws, script, planner=planner)
        assert planner.received == ["Rate-limit the API", "per API key"]
        assert any(isinstance(m, msg.PlanStored) for m in seen)
        assert current(ws).doc.goal == "Rate-limit the API"

    def test_a_bad_draft_is_refused_visibly(self, ws):
        planner = ScriptedPlanner([[DraftPlan({"version": 1, "goal": "g", "tasks": [
            {"id": 1, "title": "t", "player": "nobody"}]})]])

        async def script(pilot, app, seen):
            await say(pilot, app, "go")
            assert app.board.empty

        app, seen = drive(ws, script, planner=planner)
        assert any("unknown player" in n.message for n in app._notifications)


class TestLiveCards:
    """Events appended by another connection show up on the cards, in plain words."""

    def test_running_paused_failed_blocked(self, planned, monkeypatch):
        monkeypatch.setenv("TZ", "UTC")
        import time

        time.tzset()
        plan_id = current(planned).row.id
        store = planned.store

        async def script(pilot, app, seen):
            store.append(plan_id, 1, "task.started", {})
            store.append(plan_id, 1, "task.progress", {"message": "reading the limiter"})
            store.append(plan_id, 2, "task.started", {})
            store.append(plan_id, 2, "task.paused", {"until": 1_767_229_200.0})
            store.append(plan_id, 3, "task.started", {})
            store.append(plan_id, 3, "task.failed", {"reason": "migration check failed"})
            await wait_for(pilot, lambda: app.board.task(3).state == "failed")
            rows = {t.id: t for t in app.board.tasks}
            assert rows[1].words == "running" and rows[1].progress == "reading the limiter"
            assert rows[2].words == "paused until 01:00"
            assert rows[3].words == "failed: migration check failed"
            assert rows[4].words == "blocked by #3"
            assert "blocked by #3" in card_text(rows[4]).plain
            assert "reading the limiter" in card_text(rows[1]).plain
            assert app.board.state == "failed"

        drive(planned, script)

    def test_elapsed_comes_from_the_injected_clock(self, planned):
        plan_id = current(planned).row.id
        planned.store.append(plan_id, 1, "task.started", {})
        started = planned.store.events(plan_id)[-1].ts
        app = make(planned, clock=lambda: started + 83)

        async def main():
            async with app.run_test(size=(100, 32)) as pilot:
                await wait_for(pilot, lambda: app.board.task(1) is not None
                               and app.board.task(1).state == "running")
                assert int(app.board.task(1).wall) == 83
                assert "1m23s" in card_text(app.board.task(1)).plain

        run(main())


class TestTaskDetail:
    """Fields, live output (batched, capped), report and check, diff."""

    def test_output_tail_report_and_check(self, planned):
        plan_id = current(planned).row.id
        store = planned.store
        log = planned.root.parent / "attempt.log"
        log.write_text("".join(f"line {i}\n" for i in range(3000)))
        attempt = store.new_attempt(plan_id, 1, "nonce", "demo", {}, str(log))
        store.update_attempt(attempt, report={"status": "done", "summary": "found 3 hot paths"},
                             exit_status=0)
        store.append(plan_id, 1, "task.started", {})
        store.append(plan_id, 1, "task.check", {"command": "true", "exit": 0, "output": "ok!"})

        async def script(pilot, app, seen):
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TaskDetail))
            widget = app.screen.query_one("Log")
            await wait_for(pilot, lambda: widget.line_count > 0)
            with log.open("a") as fh:
                fh.write("the newest line\n")
            await wait_for(pilot, lambda: "the newest line" in widget.lines[-1])
            assert widget.line_count <= 1000
            await pilot.press("2")
            await pilot.pause(0.2)
            report = str(app.screen.query_one("#report-text").render())
            assert "found 3 hot paths" in report and "ok!" in report
            assert any(isinstance(m, msg.OutputRead) for m in seen)

        drive(planned, script)

    def test_diff_of_the_task_branch(self, planned):
        from helpers.tui_support import task  # noqa: F401
        import subprocess

        from baton_tui.plan.current import approve

        approve(planned)
        row = current(planned).row
        branch = "baton/rate-limit-the-api/2-add-a-token-bucket"
        root = planned.root
        subprocess.run(["git", "checkout", "-q", "-b", branch], cwd=root, check=True)
        (root / "limiter.py").write_text("BUCKET = 10\n")
        subprocess.run(["git", "add", "limiter.py"], cwd=root, check=True)
        subprocess.run(["git", "commit", "-qm", "bucket"], cwd=root, check=True)
        subprocess.run(["git", "checkout", "-q", "main"], cwd=root, check=True)
        assert row.base_commit

        async def script(pilot, app, seen):
            app.plan_pane.select(2)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TaskDetail))
            await pilot.press("3")
            await wait_for(pilot, lambda: app.screen.data is not None)
            assert "+BUCKET = 10" in app.screen.data.diff

        drive(planned, script)


class TestAvailabilityTable:
    """The rules without a UI."""

    def test_no_plan(self):
        assert "no plan yet" in api.why_not(api.Action.APPROVE, api.snapshot_empty())
        assert "help" not in bindings.RULE_OF  # keys outside the rule book always apply
