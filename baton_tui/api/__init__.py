"""The façade: every operation a front end may call — the CLI, the TUI and `baton mcp`.

Front ends import this package and nothing else of the engine (an import-linter
contract in pyproject.toml holds them to it). Each function takes the workspace
first, so the TUI can run any of them on its engine thread as `fn(ws, …)`. The
operations live in one module per area (reading, plans, running, handoff, agents);
`_PROVIDERS` below is their list, with the few engine names front ends use.

Nothing is imported until it is used: a name is looked up in `_PROVIDERS` on first
access (a module `__getattr__`, PEP 562) and kept in this module from then on. Every
agent runs `baton report` at the end of every task, and it needs agents.py and the
report channel only, not the rules, the snapshot or the other areas. Engine modules are
imported inside the functions for the same reason: `baton status`, `baton report` and
`baton --help` must not pay for pydantic, git or the player SDKs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` stays unimported on the report and status paths
if TYPE_CHECKING:
    from typing import Any

AUTONOMIES = ("guarded", "watch", "autopilot")
MODES = ("build", "research", "manual")

# Each module and the names this package takes from it.
_PROVIDERS = {
    "baton_tui.core.errors": ("BatonError",),
    "baton_tui.core.rules": ("TASK_ACTIONS", "Action", "PlayerFacts", "why_not"),
    "baton_tui.core.events": ("ACTIVE", "EventKind", "State"),
    "baton_tui.core.snapshot": ("NO_PLAN", "Snapshot", "TaskSnap"),
    "baton_tui.api.reading": (
        "open_workspace", "open_store", "sibling", "check_config", "store_at", "snapshot",
        "live_conductor", "snapshot_reader", "snapshot_empty", "terminal_text", "fmt_duration",
        "status_text", "status_json", "events", "last_event_id", "attempts", "attempt",
        "latest_log_path", "latest_output", "read_log", "log_size", "step_reader", "task_detail",
    ),
    "baton_tui.api.plans": (
        "current_doc", "current_plan", "read_plan_text", "load_plan", "store_plan",
        "edit_task", "add_task", "remove_task", "set_autonomy", "approve", "parse_ids",
        "parse_list", "dependents", "player_facts", "known_player_facts", "refusal",
        "plan_goal", "trust_preview", "plan_answer", "planner_session",
    ),
    "baton_tui.api.running": (
        "conductor_ahead", "start_run", "resume_run", "pause_run", "ensure_trusted",
        "start_task", "take_task", "wait_stopped", "interactive_argv", "set_budget",
        "parse_duration", "stop_task", "retry_task", "mark_done", "answer_checkpoint",
        "last_run_code", "conductor_alive", "wait_conductor", "process_token",
    ),
    "baton_tui.api.handoff": (
        "git_supports_worktrees", "git_handoff", "review", "merge", "handoff_review",
        "discard_victims", "resolve_begin", "resolve_status", "resolve_abort", "open_shell",
        "discard", "gc",
    ),
    "baton_tui.api.agents": (
        "detect_players", "player_catalog", "player_efforts", "default_player", "skills",
        "trust", "doctor", "report", "checkpoint", "run_attempt", "conduct", "serve_mcp",
    ),
}
_SOURCE = {name: module for module, names in _PROVIDERS.items() for name in names}

__all__ = sorted([*_SOURCE, "AUTONOMIES", "MODES"])


def __getattr__(name: str) -> Any:
    """Import the module that provides `name` and keep the name here (the next look-up
    finds it in this module's globals and never comes back)."""
    module = _SOURCE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = globals()[name] = getattr(import_module(module), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
