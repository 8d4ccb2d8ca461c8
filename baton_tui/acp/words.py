"""What `baton acp` shows an editor, in ACP's shapes: the plan as plan entries, a task as a
tool call, a planner step as a read/search/execute tool call, and the edits a person types.

Pure functions of Baton's status (the `status --json` object) and of text, so the session
(agent.py) only decides when to send them.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from baton_tui.core.events import State
from baton_tui.core.words import Mode

# A task's state as an ACP plan entry's status and a tool call's status.
_ENTRY: dict[str, str] = {State.RUNNING: "in_progress", State.CHECKPOINT: "in_progress",
          State.PAUSED: "in_progress", State.DONE: "completed", State.LANDED: "completed",
          State.MERGED: "completed"}
_CALL: dict[str, str] = {State.QUEUED: "pending", State.DRAFT: "pending", State.RUNNING: "in_progress",
         State.CHECKPOINT: "in_progress", State.PAUSED: "pending", State.DONE: "in_progress",
         State.LANDED: "completed", State.MERGED: "completed", State.FAILED: "failed",
         State.PARKED: "failed", State.DISCARDED: "failed"}
_QUIET = frozenset({State.DRAFT, State.QUEUED, State.LANDED, State.MERGED})  # said by the status

# `/task-FIELD N VALUE`: the `baton task-*` commands, typed in the editor's chat.
FIELDS = {"player": "player", "model": "model", "effort": "effort", "mode": "mode",
          "title": "title", "prompt": "prompt", "deps": "depends_on", "scope": "scope",
          "check": "check", "checkpoint": "checkpoint", "skills": "skills"}
_USE = re.compile(r"^\s*(?:please\s+)?use\s+(?P<player>[\w.-]+)\s+for\s+task\s+#?(?P<id>\d+)\s*\.?\s*$",
                  re.IGNORECASE)


def entries(status: dict[str, Any]) -> list[dict[str, str]]:
    """The plan's tasks as ACP plan entries (content, priority, status)."""
    found = []
    for task in status.get("tasks") or []:
        state = task.get("state", State.DRAFT)
        tail = "" if state in _QUIET else f" ({state})"
        found.append({"content": f"#{task['id']} {task['title']} — {task['player']}{tail}",
                      "priority": "medium", "status": _ENTRY.get(state, "pending")})
    return found


def call_status(state: str) -> str:
    return _CALL.get(state, "pending")


def step_kind(text: str) -> str:
    """A planner step's ACP tool kind: it reads, it searches, or it runs something."""
    word = text.strip().split(" ", 1)[0].lower().rstrip(":")
    if word in ("read", "reading", "view", "open", "cat", "ls", "list"):
        return "read"
    if word in ("grep", "glob", "search", "searching", "find", "rg"):
        return "search"
    return "execute"


def step_paths(text: str) -> list[str]:
    """Path-looking words of a planner step (`read src/app.py` → `src/app.py`)."""
    return [w for w in text.split()[1:] if ("/" in w or "." in w) and len(w) < 300][:3]


def edit_of(text: str) -> tuple[int, str, str] | None:
    """`/task-player 2 codex` or `use codex for task 2`: (task id, field, value); None for
    anything else (a goal or an answer)."""
    used = _USE.match(text)
    if used:
        return int(used["id"]), "player", used["player"]
    if not text.startswith("/task-"):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    field = FIELDS.get(words[0][len("/task-"):])
    if field is None or len(words) < 2 or not words[1].isdigit():
        return None
    return int(words[1]), field, " ".join(words[2:])


def plan_summary(doc: dict[str, Any]) -> str:
    """The drafted plan as text: what approving it means."""
    lines = [f"Plan for: {doc.get('goal', '')}"]
    for t in doc.get("tasks") or []:
        deps = f" after {', '.join(map(str, t['depends_on']))}" if t.get("depends_on") else ""
        lines.append(f"{t['id']}. {t['title']} [{t.get('mode', Mode.BUILD)}] "
                     f"{t.get('player')}{deps}")
        if t.get("check"):
            lines.append(f"   check: {t['check']}")
    return "\n".join(lines)
