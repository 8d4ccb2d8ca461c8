"""The chat's commands: /new (archiving open work after asking), a goal typed over open work,
/trust, /autonomy, /grilling and /to-spec — and the planner skills behind the last two."""

from __future__ import annotations

import json

from helpers.tui_support import drive, plan_doc, planned, settle, wait_for, ws
from test_tui_engine_planner import _configure

from baton_tui import api
from baton_tui.plan.current import current
from baton_tui.tui.planner_port import DraftPlan, PlannerSpec, ScriptedPlanner
from baton_tui.tui.screens.pickers import ConfirmModal

__all__ = ["planned", "ws"]

NEXT = plan_doc([{"id": 1, "title": "Write the docs", "prompt": "Document the limiter.",
                  "player": "demo"}], goal="Document the limiter")


def chat_text(app) -> str:
    return " ".join(" ".join(line.text for line in app.query_one("#chat-log").lines).split())


async def say(pilot, app, text: str) -> None:
    app.query_one("#chat-input").focus()
    await pilot.pause()
    await pilot.press(*text, "enter")
    await pilot.pause(0.2)


def with_open_work(ws) -> None:
    plan_id = current(ws).row.id
    ws.store.append(plan_id, 2, "task.started", {})
    ws.store.append(plan_id, 2, "task.failed", {"reason": "tests failed"})


class TestNewGoals:
    def test_new_archives_open_work_after_saying_what_is_kept(self, planned):
        with_open_work(planned)
        planner = ScriptedPlanner([[DraftPlan(NEXT)]])

        async def script(pilot, app, seen):
            await say(pilot, app, "/new Document the limiter")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            question = app.screen.question
            assert "baton/rate-limit-the-api/…" in question and "nothing is deleted" in question
            await pilot.press("y")
            await wait_for(pilot, lambda: app.board.goal == "Document the limiter")
            await settle(pilot)

        drive(planned, script, planner=planner)
        assert planner.received == ["Document the limiter"]
        assert planner.options == [{"new": True, "skill": None}]
        assert current(planned).doc.goal == "Document the limiter"

    def test_a_goal_typed_over_open_work_asks_and_no_keeps_the_plan(self, planned):
        with_open_work(planned)
        planner = ScriptedPlanner([[DraftPlan(NEXT)]])

        async def script(pilot, app, seen):
            await say(pilot, app, "Document the limiter")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.press("n")
            await settle(pilot)

        drive(planned, script, planner=planner)
        assert planner.received == []
        assert current(planned).doc.goal == "Rate-limit the API"

    def test_grilling_and_to_spec_reach_the_planner_and_the_spec_is_shown(self, ws):
        planner = ScriptedPlanner([[PlannerSpec("## Spec\nA token bucket per API key.")],
                                   [DraftPlan(NEXT)]])

        async def script(pilot, app, seen):
            await say(pilot, app, "/to-spec Rate-limit the API")
            await wait_for(pilot, lambda: "A token bucket per API key." in chat_text(app))
            assert "planner wrote a spec:" in chat_text(app)
            await say(pilot, app, "/grilling Document the limiter")
            await wait_for(pilot, lambda: not app.board.empty)

        drive(ws, script, planner=planner)
        assert [o["skill"] for o in planner.options] == ["to-spec", "grilling"]


class TestCommands:
    def test_trust_shows_the_commands_then_trusts_on_yes(self, planned):
        config = planned.root / "baton.toml"
        config.write_text(config.read_text() + "# edited\n")

        async def script(pilot, app, seen):
            await say(pilot, app, "/trust")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            text = chat_text(app)
            assert 'players.custom.demo.command = ["python3", "agent.py"]' in text
            await pilot.press("y")
            await wait_for(pilot, lambda: "trusted" in chat_text(app))

        drive(planned, script)
        assert api.trust_preview(planned)[2] is True

    def test_autonomy_with_a_level(self, planned):
        async def script(pilot, app, seen):
            await say(pilot, app, "/autonomy watch")
            await wait_for(pilot, lambda: app.board.autonomy == "watch")

        drive(planned, script)


def test_to_spec_planner_writes_a_spec_kept_with_the_plan(repo):
    spec = "## Spec\n- a token bucket per API key\n- 429 with Retry-After"
    ws = _configure(repo, [
        {"spec": spec},
        {"version": 1, "goal": "Rate-limit the API", "tasks": [
            {"id": 1, "title": "Token bucket", "prompt": "Implement spec part 1", "player": "mine"}]},
    ])
    seen = []
    result = api.plan_goal(ws, "Rate-limit the API", emit=seen.append, skill="to-spec")
    assert result.status == "plan"
    assert [e.text for e in seen if e.kind == "spec"] == [spec]
    transcript = current(ws).row.transcript
    assert {"role": "spec", "text": spec} in transcript
    asked = [r["text"] for r in transcript if r["role"] == "baton"]
    assert "write a SPEC before the plan" in asked[0] and spec in asked[1]
    kinds = [e.kind for e in ws.store.events(None)]
    assert "planner.spec" in kinds
    ws.close()


def test_grilling_tells_the_planner_to_ask_first_and_unknown_skills_are_refused(repo):
    ws = _configure(repo, [{"questions": [{"question": "Per key?", "recommendation": "yes"}]}])
    result = api.plan_goal(ws, "Rate-limit the API", skill="grilling")
    assert result.status == "questions"
    prompt = json.dumps(api.planner_session(ws)["transcript"][0])
    assert "GRILL this goal" in prompt
    try:
        api.plan_goal(ws, "x", skill="yolo")
    except api.BatonError as exc:
        assert "unknown planner skill 'yolo'" in exc.message
    else:
        raise AssertionError("an unknown skill was accepted")
    ws.close()


class TestChatLog:
    def test_the_chat_wraps_again_at_its_new_width_after_a_resize(self, planned):
        from baton_tui.tui.run_record import WELCOME

        seen: dict = {}

        async def script(pilot, app, _seen):
            log = app.query_one("#chat-log")
            await wait_for(pilot, lambda: "Type /help" in chat_text(app))
            seen["wide"] = len(log.lines)
            await pilot.resize_terminal(80, 24)
            await settle(pilot)
            await pilot.pause(0.2)
            width = log.scrollable_content_region.width
            seen["narrow"] = len(log.lines)
            seen["widest"] = max(line.cell_length for line in log.lines)
            seen["width"] = width
            seen["scroll_x"] = log.max_scroll_x
            seen["text"] = chat_text(app)

        drive(planned, script, size=(160, 40))
        assert seen["widest"] <= seen["width"], seen
        assert seen["scroll_x"] == 0, seen
        assert seen["narrow"] > seen["wide"]  # wrapped again into more, shorter lines
        assert " ".join(WELCOME.split()) in seen["text"]  # nothing cut off
