"""Each request's handler: its validated params in, a JSON-ready result out, on the session.

Handlers run on worker threads (the engine is synchronous); `emit` carries the planner's live
steps back to the hub, which sends them to every client. `events/subscribe` is the hub's own.
"""

from __future__ import annotations

from typing import Any, Callable

from baton_tui import api
from baton_tui.serve import wire

Emit = Callable[[str, dict[str, Any]], None]
Handler = Callable[["api.Session", Any, Emit], Any]

# A research step's tool -> the kind of step an editor shows (ACP's tool kinds).
_STEP_KINDS = {
    "read": "read", "read_file": "read", "view": "read", "cat": "read", "ls": "read",
    "list": "read", "list_directory": "read", "readmanyfiles": "read", "read_many_files": "read",
    "grep": "search", "glob": "search", "search": "search", "find": "search",
    "search_file_content": "search", "codebase_search": "search", "rg": "search",
    "webfetch": "fetch", "web_fetch": "fetch", "fetch": "fetch", "websearch": "fetch",
    "google_web_search": "fetch", "think": "think", "todowrite": "think", "task": "think",
}


def planner_listener(emit: Emit) -> Callable[[Any], None]:
    """The planner's events as notifications: steps (with their kind and path), its words as
    text deltas, its thinking, and its questions."""
    def listen(event: Any) -> None:
        if event.kind == "thinking":
            emit("planner/thinking", {"delta": event.text})
        elif event.kind == "step":
            step = event.data
            if step is not None and step.kind == "said":
                emit("planner/text", {"delta": event.text})
            else:
                emit("planner/step", step_note(event.text, step))
        elif event.kind == "repair":
            emit("planner/step", {"kind": "other", "tool": None, "text": f"fixing the draft: {event.text}",
                                  "detail": "", "path": None})
        elif event.kind == "spec":
            emit("planner/text", {"delta": f"spec:\n{event.text}\n"})
    return listen


def step_note(text: str, step: Any) -> dict[str, Any]:
    """A research step as `planner/step`: read/search/execute/edit/fetch/think/other, with the
    path or pattern it names."""
    if step is None:
        return {"kind": "other", "tool": None, "text": text, "detail": "", "path": None}
    if step.kind in ("command", "result"):
        command = step.text.removeprefix("$ ").split(" → exit", 1)[0]
        return {"kind": "execute", "tool": "shell", "text": text, "detail": step.detail,
                "path": command}
    tool, _, rest = step.text.partition(" ")
    if step.kind == "file":
        return {"kind": "edit", "tool": tool, "text": text, "detail": step.detail,
                "path": rest or None}
    kind = _STEP_KINDS.get(tool.lower(), "other") if step.kind == "tool" else "other"
    return {"kind": kind, "tool": tool if step.kind == "tool" else None, "text": text,
            "detail": step.detail, "path": rest or None}


def _draft(s: api.Session, p: wire.DraftParams, emit: Emit) -> Any:
    out = s.draft(p.goal, skill=p.skill, new=p.new, emit=planner_listener(emit))
    if out["status"] == "questions":
        emit("question", {"questions": out["questions"]})
    return out


def _answer(s: api.Session, p: wire.AnswerParams, emit: Emit) -> Any:
    out = s.answer(p.answer, number=p.number, recommended=p.recommended,
                   emit=planner_listener(emit))
    if out["status"] == "questions":
        emit("question", {"questions": out["questions"]})
    return out


def _players(s: api.Session, p: wire.PlayersParams, emit: Emit) -> Any:
    return {"players": s.players(p.refresh)}


def _log(s: api.Session, p: wire.LogParams, emit: Emit) -> Any:
    return s.read_log(p.task, p.cursor)


def _ok(action: Callable[[], object]) -> dict[str, Any]:
    action()
    return {"ok": True}


HANDLERS: dict[str, Handler] = {
    "plan/draft": _draft,
    "plan/answer": _answer,
    "plan/get": lambda s, p, emit: s.plan(),
    "plan/new": lambda s, p, emit: {"archived": s.new_plan()},
    "task/edit": lambda s, p, emit: s.edit(p.id, p.field, p.value),
    "task/add": lambda s, p, emit: s.add(p.title, p.player, p.mode, p.depends_on, p.prompt, p.check),
    "task/remove": lambda s, p, emit: s.remove(p.id),
    "plan/approve": lambda s, p, emit: s.approve(),
    "run/start": lambda s, p, emit: s.start(p.until_failures, p.deadline),
    "run/stop": lambda s, p, emit: s.stop(),
    "task/retry": lambda s, p, emit: s.retry(p.id, p.feedback),
    "task/done": lambda s, p, emit: _ok(lambda: s.done(p.id)),
    "task/stop": lambda s, p, emit: _ok(lambda: s.stop_task(p.id)),
    "task/discard": lambda s, p, emit: s.discard(p.id, p.with_dependents),
    "task/take": lambda s, p, emit: s.take(p.id),
    "checkpoint/answer": lambda s, p, emit: _ok(lambda: s.answer_checkpoint(p.id, p.answer == "yes")),
    "players/list": _players,
    "runners/list": lambda s, p, emit: {"runners": s.runners()},
    "status/get": lambda s, p, emit: s.status(),
    "handoff/review": lambda s, p, emit: s.review(p.task),
    "handoff/file": lambda s, p, emit: s.file_sides(p.path),
    "handoff/merge": lambda s, p, emit: s.merge(p.upTo),
    "log/read": _log,
}
