"""The façade: every operation a front end may call — the CLI, the TUI and `baton mcp`.

Front ends import this package and nothing else of the engine (an import-linter
contract in pyproject.toml holds them to it). Each function takes the workspace
first, so the TUI can run any of them on its engine thread as `fn(ws, …)`. Engine
modules are imported inside the functions: `baton status`, `baton report` and
`baton --help` must not pay for pydantic, git or the player SDKs. The operations live
in one module per area (reading, plans, running, handoff, agents); this is their list.
"""

from __future__ import annotations

from baton_tui.errors import BatonError
from baton_tui.run.rules import TASK_ACTIONS, Action, PlayerFacts, why_not
from baton_tui.store.events import ACTIVE, EventKind, State
from baton_tui.store.snapshot import NO_PLAN, Snapshot, TaskSnap

from baton_tui.api.reading import (
    open_workspace, open_store, sibling, store_at, snapshot, snapshot_reader, snapshot_empty,
    terminal_text, fmt_duration, status_text, status_json, events, last_event_id, attempts,
    attempt,
    latest_log_path, latest_output, read_log, log_size, step_reader, task_detail,
)
from baton_tui.api.plans import (
    current_doc, current_plan, read_plan_text, load_plan, store_plan, edit_task, add_task,
    remove_task, set_autonomy, approve, parse_ids, parse_list, dependents, player_facts,
    known_player_facts, refusal, plan_goal, trust_preview, plan_answer, planner_session,
)
from baton_tui.api.running import (
    start_run, resume_run, pause_run, ensure_trusted, start_task, take_task, wait_stopped,
    interactive_argv, set_budget, parse_duration, stop_task, retry_task, mark_done,
    answer_checkpoint, last_run_code, conductor_alive, process_token,
)
from baton_tui.api.handoff import (
    git_supports_worktrees, git_handoff, review, merge, handoff_review, discard_victims,
    resolve_begin, resolve_status, resolve_abort, open_shell, discard, gc,
)
from baton_tui.api.agents import (
    detect_players, player_catalog, player_efforts, default_player, skills, trust, doctor,
    report, checkpoint, run_attempt, conduct, serve_mcp,
)

AUTONOMIES = ("guarded", "watch", "autopilot")
MODES = ("build", "research", "manual")

__all__ = [
    "ACTIVE", "AUTONOMIES", "Action", "BatonError", "EventKind", "MODES", "NO_PLAN",
    "PlayerFacts", "Snapshot", "State", "TASK_ACTIONS", "TaskSnap", "add_task",
    "answer_checkpoint", "approve", "attempt", "attempts", "checkpoint", "conduct",
    "conductor_alive", "current_doc", "current_plan", "default_player", "dependents",
    "detect_players", "discard", "discard_victims", "doctor", "edit_task", "ensure_trusted",
    "events", "fmt_duration", "gc", "git_handoff", "git_supports_worktrees", "handoff_review",
    "interactive_argv", "known_player_facts", "last_event_id", "last_run_code", "latest_log_path", "latest_output",
    "load_plan", "log_size", "mark_done", "merge", "open_shell", "open_store", "open_workspace",
    "parse_duration", "parse_ids", "parse_list", "pause_run", "plan_answer", "plan_goal",
    "planner_session", "player_catalog", "player_efforts", "player_facts", "process_token", "read_log", "read_plan_text", "refusal", "remove_task", "report", "resolve_abort",
    "resolve_begin", "resolve_status", "resume_run", "retry_task", "review", "run_attempt",
    "serve_mcp", "set_autonomy", "set_budget", "sibling", "skills", "snapshot", "snapshot_empty",
    "snapshot_reader", "start_run", "start_task", "status_json", "status_text", "step_reader",
    "stop_task", "store_at", "store_plan", "take_task", "task_detail", "terminal_text", "trust",
    "trust_preview", "wait_stopped", "why_not",
]
