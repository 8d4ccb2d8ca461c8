"""The façade: every operation a front end may call — the CLI, the TUI and `baton mcp`.

Front ends import this package and nothing else of the engine (an import-linter
contract in pyproject.toml holds them to it). Each function takes the workspace
first, so the TUI can run any of them on its engine thread as `fn(ws, …)`. The
operations live in one module per area (reading, plans, running, handoff, agents);
`_PROVIDERS` below is their list, with the few engine names front ends use.

Nothing is imported until it is used: a name is looked up in `_PROVIDERS` on first
access (a module `__getattr__`, PEP 562) and kept in this module from then on. Every
agent runs `baton report` at the end of every task, and it needs agents.py and the
report channel only, not the rules, the snapshot or the other areas. In the modules those
fast paths load (reading, running, agents), engine modules they do without are imported
inside the functions for the same reason, each marked `# lazy:`: `baton status`, `baton
report` and `baton --help` must not pay for pydantic, git or the player SDKs.

Checkers never run that look-up: they read the same names as explicit re-exports in the
`if TYPE_CHECKING:` block below, each with its real type (tests/test_layers.py holds the
block and `_PROVIDERS` to the same list). The vocabularies (`Autonomy`, `Mode`,
`ReportStatus`, `State`: standard library enums) and `LOCAL_RUNNER` are imported at once.
"""

from __future__ import annotations

from importlib import import_module

from baton_tui.core.events import State as State
from baton_tui.core.words import (
    LOCAL_RUNNER as LOCAL_RUNNER, Autonomy as Autonomy, Mode as Mode, ReportStatus as ReportStatus,
)

TYPE_CHECKING = False  # `typing` stays unimported on the report and status paths
if TYPE_CHECKING:
    from typing import Any

    # The lazy names as checkers see them, with their real types: `_PROVIDERS`, spelled out.
    from baton_tui.core.errors import BatonError as BatonError
    from baton_tui.core.rules import (
        TASK_ACTIONS as TASK_ACTIONS, Action as Action, PlayerFacts as PlayerFacts, why_not as why_not,
    )
    from baton_tui.core.events import ACTIVE as ACTIVE, EventKind as EventKind
    from baton_tui.core.snapshot import NO_PLAN as NO_PLAN, Snapshot as Snapshot, TaskSnap as TaskSnap
    from baton_tui.workspace import Workspace as Workspace
    from baton_tui.api.reading import (
        open_workspace as open_workspace, open_store as open_store, state_dir as state_dir,
        folder_notice as folder_notice, sibling as sibling,
        check_config as check_config, store_at as store_at, snapshot as snapshot,
        snapshot_json as snapshot_json,
        live_conductor as live_conductor, snapshot_reader as snapshot_reader,
        snapshot_empty as snapshot_empty, terminal_text as terminal_text,
        output_text as output_text, fmt_duration as fmt_duration,
        status_text as status_text, status_json as status_json, events as events,
        summary_lines as summary_lines,
        last_event_id as last_event_id, attempts as attempts, attempt as attempt,
        latest_log_path as latest_log_path, latest_output as latest_output, read_log as read_log,
        log_size as log_size, step_reader as step_reader, task_detail as task_detail,
    )
    from baton_tui.api.plans import (
        current_doc as current_doc, current_plan as current_plan, read_plan_text as read_plan_text,
        load_plan as load_plan, store_plan as store_plan, edit_task as edit_task, add_task as add_task,
        remove_task as remove_task, set_autonomy as set_autonomy, approve as approve, parse_ids as parse_ids,
        parse_list as parse_list, dependents as dependents, player_facts as player_facts,
        known_player_facts as known_player_facts, refusal as refusal, plan_goal as plan_goal,
        trust_preview as trust_preview, plan_answer as plan_answer, planner_session as planner_session,
        model_notes as model_notes,
    )
    from baton_tui.api.running import (
        conductor_ahead as conductor_ahead, start_run as start_run, resume_run as resume_run,
        pause_run as pause_run, ensure_trusted as ensure_trusted, start_task as start_task,
        take_task as take_task, wait_stopped as wait_stopped, interactive_argv as interactive_argv,
        set_budget as set_budget, parse_duration as parse_duration, stop_task as stop_task,
        retry_task as retry_task, mark_done as mark_done, answer_checkpoint as answer_checkpoint,
        last_run_code as last_run_code, conductor_alive as conductor_alive, wait_conductor as wait_conductor,
        process_token as process_token, tell as tell,
    )
    from baton_tui.api.handoff import (
        git_supports_worktrees as git_supports_worktrees, git_handoff as git_handoff, review as review,
        merge as merge, handoff_review as handoff_review, discard_victims as discard_victims,
        resolve_begin as resolve_begin, resolve_status as resolve_status, resolve_abort as resolve_abort,
        open_shell as open_shell, discard as discard, gc as gc, publish as publish,
        shown_call as shown_call, comment as comment,
    )
    from baton_tui.api.agents import (
        detect_players as detect_players, player_catalog as player_catalog, player_efforts as player_efforts,
        default_player as default_player, skills as skills, trust as trust, doctor as doctor,
        report as report, checkpoint as checkpoint, inbox as inbox, run_attempt as run_attempt,
        conduct as conduct, serve_mcp as serve_mcp, serve_mcp_tools as serve_mcp_tools,
    )
    from baton_tui.api.session import Session as Session
    from baton_tui.api.runners import (
        runner_names as runner_names, default_runner as default_runner, runners as runners,
        runner_lines as runner_lines,
    )

AUTONOMIES = tuple(level.value for level in Autonomy)  # plain words, for choices and messages
MODES = tuple(mode.value for mode in Mode)

# Each module and the names this package takes from it.
_PROVIDERS = {
    "baton_tui.core.errors": ("BatonError",),
    "baton_tui.core.rules": ("TASK_ACTIONS", "Action", "PlayerFacts", "why_not"),
    "baton_tui.core.events": ("ACTIVE", "EventKind"),
    "baton_tui.core.snapshot": ("NO_PLAN", "Snapshot", "TaskSnap"),
    "baton_tui.workspace": ("Workspace",),
    "baton_tui.api.reading": (
        "open_workspace", "open_store", "state_dir", "folder_notice", "sibling", "check_config",
        "store_at", "snapshot", "snapshot_json",
        "live_conductor", "snapshot_reader", "snapshot_empty", "terminal_text", "output_text",
        "fmt_duration", "status_text", "status_json", "events", "summary_lines", "last_event_id",
        "attempts", "attempt",
        "latest_log_path", "latest_output", "read_log", "log_size", "step_reader", "task_detail",
    ),
    "baton_tui.api.plans": (
        "current_doc", "current_plan", "read_plan_text", "load_plan", "store_plan",
        "edit_task", "add_task", "remove_task", "set_autonomy", "approve", "parse_ids",
        "parse_list", "dependents", "player_facts", "known_player_facts", "refusal",
        "plan_goal", "trust_preview", "plan_answer", "planner_session", "model_notes",
    ),
    "baton_tui.api.running": (
        "conductor_ahead", "start_run", "resume_run", "pause_run", "ensure_trusted",
        "start_task", "take_task", "wait_stopped", "interactive_argv", "set_budget",
        "parse_duration", "stop_task", "retry_task", "mark_done", "answer_checkpoint",
        "last_run_code", "conductor_alive", "wait_conductor", "process_token", "tell",
    ),
    "baton_tui.api.handoff": (
        "git_supports_worktrees", "git_handoff", "review", "merge", "handoff_review",
        "discard_victims", "resolve_begin", "resolve_status", "resolve_abort", "open_shell",
        "discard", "gc", "publish", "shown_call", "comment",
    ),
    "baton_tui.api.agents": (
        "detect_players", "player_catalog", "player_efforts", "default_player", "skills",
        "trust", "doctor", "report", "checkpoint", "inbox", "run_attempt", "conduct", "serve_mcp",
        "serve_mcp_tools",
    ),
    "baton_tui.api.runners": ("runner_names", "default_runner", "runners", "runner_lines"),
    "baton_tui.api.session": ("Session",),
}
_SOURCE = {name: module for module, names in _PROVIDERS.items() for name in names}

__all__ = sorted([*_SOURCE, "AUTONOMIES", "LOCAL_RUNNER", "MODES", "Autonomy", "Mode", "ReportStatus",
                  "State"])

if not TYPE_CHECKING:  # (to a checker every name is declared above: an unknown one is an error)
    def __getattr__(name: str) -> Any:
        """Import the module that provides `name` and keep the name here (the next look-up
        finds it in this module's globals and never comes back)."""
        module = _SOURCE.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = globals()[name] = getattr(import_module(module), name)
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
