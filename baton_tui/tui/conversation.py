"""The chat's brain: slash commands against the engine, and the planner conversation.

A goal typed over a plan that has open work does not dead-end in "pass --new": the app asks
whether to archive the plan (saying what is kept where), then plans the new goal.
"""

from __future__ import annotations

from pathlib import Path
import shlex
from typing import Any

from baton_tui import api
from baton_tui.api import Action, BatonError
from baton_tui.tui.actions import ready_players
from baton_tui.tui.host import Host
from baton_tui.tui.messages import AttentionNeeded, PlanStored
from baton_tui.tui.planner_port import (
    DraftPlan, PlannerFailed, PlannerQuestion, PlannerSpec, ResearchStep,
)
from baton_tui.tui.screens.pickers import ConfirmModal
from baton_tui.tui.words import fmt_tokens

NO_PLANNER = ("the planner is not available yet — load a plan with `baton plan --from FILE` "
              "(or /plan FILE here)")
HELP = """commands:
  /new GOAL        plan a new goal (archives a plan with open work, after asking)
  /grilling GOAL   the planner interrogates the goal before planning
  /to-spec GOAL    the planner writes a spec first; the plan is built against it
  /plan            the current plan, task by task (/plan FILE loads a v1 plan file)
  /approve · /run  approve the whole plan · run it (the conductor goes on after you quit)
  /handoff         review and merge what landed
  /autonomy [L]    show or set guarded, watch or autopilot
  /budget [--tokens N] [--cost X] [--time D]   show or set the run's budget
  /trust           show what this repository's baton.toml would run; trust it on a yes
  /players         detect the players again: which are ready, and why not
  /status · /help
keys: tab moves between chat and plan · ? lists every key"""


def _store_draft(ws: api.Workspace, raw: dict, source: str, new: bool = False) -> str:
    return api.store_plan(ws, raw, source, new=new).slug


def _load_file(ws: api.Workspace, path: str) -> str:
    file = Path(path).expanduser()
    if not file.is_absolute():
        file = ws.root / file
    try:
        text = file.read_text()
    except OSError as exc:
        raise api.BatonError(f"{path}: cannot read it ({exc.strerror})") from None
    return api.load_plan(ws, text, path).slug


def _status_text(ws: api.Workspace) -> str:
    return api.status_text(api.snapshot(ws.store).as_json())


async def may_replace(app: Host) -> bool | None:
    """Whether a new goal may replace the current plan: False (no), True (archive it), or
    None (nothing to archive). Asks when work would be archived or a draft replaced."""
    board = app.board
    if board.empty:
        return None
    busy = api.why_not(Action.ARCHIVE_PLAN, board)
    if busy:
        app.chat.say("baton", busy)
        return False
    if api.why_not(Action.NEW_PLAN, board) is None:
        if not any(t.started for t in board.tasks):
            question = (f"Replace the plan {board.slug} (nothing of it has run) with a new one "
                        "for this goal?")
        else:  # it ran: nothing of it is open, and it is archived, not lost
            done = ("is merged" if board.state == api.State.MERGED else
                    "has no open work (what of it ran is merged, discarded or read-only)")
            question = (f"Plan {board.slug} {done}. Plan this goal as a new plan? "
                        f"{board.slug} stays in the store as archived.")
        sure = await app.push_screen_wait(ConfirmModal("new plan", question))
        return None if sure else False
    branches = f"baton/{board.slug}/…"
    sure = await app.push_screen_wait(ConfirmModal(
        "archive the plan?", f"Plan {board.slug} has work that is neither merged nor discarded. "
        f"Archive it and plan the new goal? Its branches ({branches}) and worktrees stay where "
        "they are, and the plan stays in the store as archived — nothing is deleted."))
    return True if sure else False


async def plan_goal(app: Host, goal: str, skill: str | None = None) -> None:
    if not goal:
        app.chat.say("baton", "say the goal after the command, e.g. /new add a rate limiter")
        return
    new = await may_replace(app)
    if new is False:
        return
    app.pending_question = None
    await converse(app, goal, new=bool(new), skill=skill, fresh=True)


def budget_words(amounts: dict[str, Any]) -> str | None:
    """`200k tokens · $5.00 · 1h of run time` — the limits (or the use) that are set."""
    shown = {"tokens": lambda v: f"{fmt_tokens(v)} tokens", "cost": lambda v: f"${v:.2f}",
             "time": lambda v: f"{api.fmt_duration(v)} of run time"}
    words = [fmt(amounts[key]) for key, fmt in shown.items() if amounts.get(key) is not None]
    return " · ".join(words) or None


def _budget_lines(budget: dict[str, Any]) -> list[str]:
    limits = budget.get("limits") or {}
    shown = budget_words(limits)
    if shown is None:
        return ["no budget is set (/budget --tokens N --cost X --time D sets one)"]
    lines = [f"budget: {shown}"]
    used = budget_words({k: v for k, v in (budget.get("used") or {}).items() if v})
    if used:
        lines.append(f"  used so far: {used}")
    if budget.get("hard"):
        lines.append("  hard: at the budget, running tasks pause in their saved sessions")
    return lines


async def budget(app: Host, arg: str) -> None:
    chat = app.chat
    if not arg:
        shown = getattr(app.board, "budget", None)
        for line in _budget_lines(shown) if isinstance(shown, dict) else ["no budget is set"]:
            chat.lines(line)
        return
    try:
        words = shlex.split(arg)
        given = dict(zip(words[::2], words[1::2]))
        unknown = set(given) - {"--tokens", "--cost", "--time"}
        if unknown or len(words) % 2:
            raise ValueError
        tokens = int(given["--tokens"]) if "--tokens" in given else None
        cost = float(given["--cost"]) if "--cost" in given else None
    except ValueError:
        chat.say("baton", "usage: /budget [--tokens N] [--cost X] [--time D]")
        return
    try:  # a string to seconds: no engine needed (its thread passes the workspace first)
        seconds = api.parse_duration(given["--time"]) if "--time" in given else None
    except BatonError as exc:
        chat.say("baton", f"--time {exc.message} — nothing was changed")
        return
    ok, result = await app.engine_call("budget", api.set_budget, tokens, cost, seconds)
    if ok:
        chat.lines(f"budget set: {budget_words(result) or 'no limits'}")


async def trust(app: Host) -> None:
    ok, found = await app.engine_call("trust", api.trust_preview)
    if not ok:
        return
    path, commands, trusted = found
    app.chat.lines(f"{path} would run:" if commands else f"{path} names no commands")
    for key, value in commands:
        app.chat.lines(f"  {key} = {value}")
    if trusted:
        app.chat.say("baton", "it is trusted as it is")
        return
    if not await app.push_screen_wait(ConfirmModal(
            "trust baton.toml?", f"Trust {path.name} as it is now? Its commands above may then "
            "run (a changed file must be trusted again).")):
        return
    ok, _ = await app.engine_call("trust", api.trust)
    if ok:
        app.chat.say("baton", "trusted")
        app.detections = None
        await ready_players(app)
        app.refresh_player_facts()


async def slash(app: Host, line: str) -> None:
    """Run one /command; the answer goes into the chat."""
    chat = app.chat
    name, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    chat.say("you", line)
    if name == "help":
        chat.lines(HELP)
    elif name in ("new", "grilling", "to-spec"):
        await plan_goal(app, arg, None if name == "new" else name)
    elif name == "players":
        app.detections = None
        ready, missing = await ready_players(app)
        app.refresh_player_facts()
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
    elif name == "autonomy" and arg:
        ok, _ = await app.engine_call("autonomy", api.set_autonomy, arg)
        if ok:
            chat.say("baton", f"autonomy {arg} — applies from the next decision on")
    elif name in ("approve", "run", "handoff", "autonomy"):
        action = {"run": "run_plan", "autonomy": "pick_autonomy"}.get(name, name)
        reason = app.why_not(action)
        if reason:
            chat.say("baton", reason)
        else:
            await app.run_action(action)
    elif name == "budget":
        await budget(app, arg)
    elif name == "trust":
        await trust(app)
    else:
        chat.say("baton", f"unknown command /{name} — /help lists them")


async def converse(app: Host, text: str, new: bool = False, skill: str | None = None,
                   fresh: bool = False) -> None:
    """Send a goal or an answer to the planner and show what it does."""
    chat = app.chat
    question = app.pending_question
    if not text and question is not None and question.recommendation:
        text = question.recommendation
        chat.say("you", f"{text} (recommended)")
    elif text and not fresh:
        chat.say("you", text)
    elif not text:
        return
    if app.planner is None:
        chat.say("baton", NO_PLANNER)
        return
    if question is None and not fresh:  # a goal, not an answer: may it replace the plan?
        replace = await may_replace(app)
        if replace is False:
            return
        new = bool(replace)
    app.pending_question = None
    try:
        async for event in app.planner.ask(text, new=new, skill=skill):
            await _show(app, event, new)
    except BatonError as exc:
        chat.say("planner", exc.message)


async def _show(app: Host, event: Any, new: bool = False) -> None:
    chat = app.chat
    if isinstance(event, ResearchStep):
        chat.step(event.text)
    elif isinstance(event, PlannerSpec):
        chat.spec(event.text)
    elif isinstance(event, PlannerQuestion):
        app.pending_question = event
        chat.question(event.question, event.recommendation)
        app.bell()
        app.post_message(AttentionNeeded("question"))
    elif isinstance(event, DraftPlan):
        if event.stored_slug:
            ok, slug = True, event.stored_slug
        else:
            ok, slug = await app.engine_call("draft plan", _store_draft, event.document,
                                             "planner", new)
        if ok:
            n = len(event.document.get("tasks", []))
            chat.say("planner", f"drafted plan {slug} with {n} task{'s' * (n != 1)} — "
                     "review and edit it on the right; nothing builds until you approve (a)")
            app.post_message(PlanStored(slug))
    elif isinstance(event, PlannerFailed):
        chat.say("planner", event.message)
