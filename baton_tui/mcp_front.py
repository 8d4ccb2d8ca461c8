"""`baton mcp --front`: Baton as MCP tools for an assistant that drives it from an editor.

An assistant (Claude Code, Cursor, VS Code's agent mode) may draft a plan, answer the
planner's questions, edit tasks and read the state, the diff and the logs — the work a person
would happily hand it. Approving, running, merging and discarding stay the person's: those
tools exist so the assistant can ask for them, and each answers with the exact command (or the
key in `baton`) the person uses, and does nothing. Built on the façade's `Session` handle,
as `baton serve` and `baton acp` are; the repository is the server's working directory
(`baton -C DIR mcp --front` for another).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from baton_tui import api
from baton_tui.core.errors import BatonError

_MAX_TEXT = 60_000   # characters of a diff or a log an assistant gets in one answer

_STRING = {"type": "string"}
_INTEGER = {"type": "integer"}


def _tool(name: str, description: str, required: dict[str, dict[str, Any]],
          optional: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    props = {key: {**spec, "title": key.replace("_", " ").capitalize()}
             for key, spec in {**required, **(optional or {})}.items()}
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": props, "required": list(required),
                            "title": f"{name}Arguments"},
            "outputSchema": {"type": "object", "title": f"{name}Output", "required": ["result"],
                             "properties": {"result": {"type": "string", "title": "Result"}}}}


# What the person does themselves: (the words, the command, the key in `baton`).
PERSONS = {
    "baton_approve": ("Approving the plan", "baton approve", "a on the plan"),
    "baton_run": ("Starting the run", "baton run", "E on the plan"),
    "baton_merge": ("Merging the landed work onto their branch", "baton handoff merge",
                    "M on the handoff screen"),
    "baton_discard": ("Discarding a task's work", "baton discard N", "x on the handoff screen"),
}

TOOLS = [
    _tool("baton_plan", "Draft a plan for a goal with Baton's planner (it studies the "
          "repository read-only). Answers with the planner's questions (answer them with "
          "baton_answer) or the drafted plan, not approved: the person approves it.",
          {"goal": _STRING}),
    _tool("baton_answer", "Answer one of the planner's open questions (number: 1-based; "
          "0 or none: the first open one). The plan is drafted once every question has an "
          "answer.", {"answer": _STRING}, {"number": _INTEGER}),
    _tool("baton_edit_task", "Change one field of a task that has not started: title, prompt, "
          "player, model, effort, mode, depends_on (comma-separated ids), skills, scope "
          "(comma-separated), checkpoint (on/off), check. Editing voids an approval.",
          {"id": _INTEGER, "field": _STRING, "value": _STRING}),
    _tool("baton_status", "The plan and every task's state, as `baton status --json`.", {}),
    _tool("baton_review", "The combined diff of the landed work (or one task's), as "
          "`baton handoff review`.", {}, {"task": _INTEGER}),
    _tool("baton_logs", "The end of a task's agent output (its newest attempt).",
          {"task": _INTEGER}, {"lines": _INTEGER}),
    *(_tool(name, f"{what} is the person's decision, never an assistant's: this answers with "
            f"the command they run (`{command}`) and does nothing.", {},
            {"task": _INTEGER} if name == "baton_discard" else None)
      for name, (what, command, _key) in PERSONS.items()),
]


def _plan_text(handle: "api.Session", head: str) -> str:
    shown = handle.plan()
    doc = shown["plan"]
    return (f"{head}\nplan {shown['slug']}: {len(doc['tasks'])} task(s), "
            f"{'approved' if shown['approved'] else 'not approved'}.\n"
            f"{json.dumps(doc, indent=2)}\n"
            f"The person reviews it and approves with `baton approve` (or a in `baton`).")


def _planned(handle: "api.Session", result: dict[str, Any]) -> tuple[str, bool]:
    if result["status"] == "failed":
        return f"The planner failed: {result['message']}", True
    if result["status"] == "questions":
        asked = api.planner_session(handle.ws).get("questions") or []
        lines = ["The planner has questions (answer each with baton_answer):"]
        for number, q in enumerate(asked, 1):
            if q.get("answer") is None:
                lines.append(f"{number}. {q['question']}")
                if q.get("recommendation"):
                    lines.append(f"   Recommendation: {q['recommendation']}")
        return "\n".join(lines), False
    return _plan_text(handle, "The plan is drafted."), False


def _plan(handle: "api.Session", goal: str) -> tuple[str, bool]:
    if not goal.strip():
        return "the goal is empty: say what should be built", True
    return _planned(handle, handle.draft(goal))


def _answer(handle: "api.Session", answer: str, number: int = 0) -> tuple[str, bool]:
    return _planned(handle, handle.answer(answer, number=number or None))


def _value(field: str, value: str) -> object:
    """A field's value from words, as the `baton task-*` commands read it."""
    if field == "depends_on":
        return api.parse_ids(value)
    if field in ("scope", "skills"):
        return api.parse_list(value)
    if field == "checkpoint":
        if value not in ("on", "off"):
            raise BatonError(f"checkpoint takes on or off, not {value!r}")
        return value == "on"
    if field in ("model", "check", "effort") and value.strip() in ("", "default", "none"):
        return None
    return value


def _edit(handle: "api.Session", id: int, field: str, value: str) -> tuple[str, bool]:
    shown = handle.edit(id, field, _value(field, value))
    now = next(t for t in shown["plan"]["tasks"] if t["id"] == id).get(field)
    note = "" if shown["approved"] else \
        " The plan is not approved: the person approves it with `baton approve`."
    return f"task {id}: {field} = {json.dumps(now)}.{note}", False


def _status(handle: "api.Session") -> tuple[str, bool]:
    if handle.plan_id() is None:
        return "no plan yet: draft one with baton_plan", False
    return api.snapshot_json(handle.ws.store), False


def _review(handle: "api.Session", task: int | None = None) -> tuple[str, bool]:
    data = handle.review(task)
    heads = [f"task {s['id']}: {s['title']} ({s['branch']}): {len(s['files'])} file(s), "
             f"+{s['added']} -{s['deleted']}" for s in data["tasks"]]
    return "\n".join([*heads, "", _capped(data["diff"])]) + \
        "\nThe person merges with `baton handoff merge` (or M on the handoff screen).", False


def _logs(handle: "api.Session", task: int, lines: int = 200) -> tuple[str, bool]:
    end = handle.log_end(task)
    if end == 0 and not handle.read_log(task, 0, 1)["lines"]:
        raise BatonError(f"task {task} has not run yet (or printed nothing)")
    shown = handle.read_log(task, max(0, end - 256 * 1024))["lines"]
    tail = shown[-max(1, min(lines, 2000)):]
    return _capped(f"task {task}:\n" + "\n".join(tail)), False


def _persons(name: str, task: int | None = None) -> tuple[str, bool]:
    what, command, key = PERSONS[name]
    if task is not None:
        command = command.replace("N", str(task))
    return (f"Refused: {what.lower()} is the person's decision, and Baton lets no assistant take "
            f"it. Nothing was done. Ask the person to run `{command}` in the repository (or "
            f"press {key} in `baton`)."), True


def _capped(text: str) -> str:
    if len(text) <= _MAX_TEXT:
        return text
    return text[:_MAX_TEXT] + f"\n[… {len(text) - _MAX_TEXT} more characters: see the terminal]"


_HANDLERS: dict[str, Callable[..., tuple[str, bool]]] = {
    "baton_plan": _plan, "baton_answer": _answer, "baton_edit_task": _edit,
    "baton_status": _status, "baton_review": _review, "baton_logs": _logs}


def call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """One tool call: (text, whether it is an error result). Refusals are error results."""
    if name in PERSONS:
        return _persons(name, arguments.get("task"))
    handle = None
    try:
        handle = api.Session()
        return _HANDLERS[name](handle, **arguments)
    except BatonError as exc:
        return "\n".join(exc.lines), True
    finally:
        if handle is not None:
            handle.close()


def serve() -> None:
    api.serve_mcp_tools("baton-front", TOOLS, call)
