"""The chat's brain: slash commands against the engine, and the planner conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton_tui import api
from baton_tui.tui.messages import PlanStored
from baton_tui.tui.planner_port import DraftPlan, PlannerFailed, PlannerQuestion, ResearchStep

if TYPE_CHECKING:
    from baton_tui.tui.app import BatonApp

NO_PLANNER = ("the planner is not available yet — load a plan with `baton plan --from FILE` "
              "(or /plan FILE here)")
HELP = """commands:
  /players      which players are ready, and why not
  /plan         the current plan, task by task (/plan FILE loads a v1 plan file)
  /approve      approve the whole plan
  /run          run the approved plan (the conductor goes on after you quit)
  /status       plan, conductor and task states
  /help         this list
keys: tab moves between chat and plan · ? lists every key"""


def _store_draft(ws: Any, raw: dict, source: str) -> str:
    return api.store_plan(ws, raw, source).slug


def _load_file(ws: Any, path: str) -> str:
    from pathlib import Path

    file = Path(path).expanduser()
    if not file.is_absolute():
        file = ws.root / file
    try:
        text = file.read_text()
    except OSError as exc:
        raise api.BatonError(f"{path}: cannot read it ({exc.strerror})") from None
    return api.load_plan(ws, text, path).slug


def _status_text(ws: Any) -> str:
    return api.status_text(api.snapshot(ws.store).as_json())


async def slash(app: "BatonApp", line: str) -> None:
    """Run one /command; the answer goes into the chat."""
    chat = app.chat
    name, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    chat.say("you", line)
    if name == "help":
        chat.lines(HELP)
    elif name == "players":
        app.detections = None
        ready, missing = await app.ready_players()
        chat.lines("ready: " + (", ".join(ready) or "none"))
        for entry in missing:
            chat.lines(f"  not ready: {entry}")
    elif name == "status":
        ok, text = await app.engine_call("status", _status_text)
        if ok:
            chat.lines(text)
    elif name == "plan" and arg:
        ok, slug = await app.engine_call("load plan", _load_file, arg)
        if ok:
            chat.say("baton", f"loaded {arg} as plan {slug}")
            app.post_message(PlanStored(slug))
    elif name == "plan":
        board = app.board
        if board.empty:
            chat.say("baton", "no plan yet")
        else:
            chat.lines(f"{board.slug} · {board.state} · goal: {board.goal}")
            for task in board.rows:
                chat.lines(f"  #{task.id} {task.title} — {task.player} · {task.mode} · "
                           f"{task.words}")
    elif name in ("approve", "run"):
        action = "approve" if name == "approve" else "run_plan"
        reason = app.why_not(action)
        if reason:
            chat.say("baton", reason)
        else:
            await app.run_action(action)
    else:
        chat.say("baton", f"unknown command /{name} — /help lists them")


async def converse(app: "BatonApp", text: str) -> None:
    """Send a goal or an answer to the planner and show what it does."""
    chat = app.chat
    question = app.pending_question
    if not text and question is not None and question.recommendation:
        text = question.recommendation
        chat.say("you", f"{text} (recommended)")
    elif text:
        chat.say("you", text)
    else:
        return
    if app.planner is None:
        chat.say("baton", NO_PLANNER)
        return
    app.pending_question = None
    async for event in app.planner.ask(text):
        if isinstance(event, ResearchStep):
            chat.step(event.text)
        elif isinstance(event, PlannerQuestion):
            app.pending_question = event
            chat.question(event.question, event.recommendation)
        elif isinstance(event, DraftPlan):
            if event.stored_slug:
                ok, slug = True, event.stored_slug
            else:
                ok, slug = await app.engine_call("draft plan", _store_draft, event.document,
                                                 "planner")
            if ok:
                n = len(event.document.get("tasks", []))
                chat.say("planner", f"drafted plan {slug} with {n} task{'s' * (n != 1)} — "
                         "review and edit it on the right; nothing builds until you approve (a)")
                app.post_message(PlanStored(slug))
        elif isinstance(event, PlannerFailed):
            chat.say("planner", event.message)
