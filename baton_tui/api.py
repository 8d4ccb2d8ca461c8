"""The façade: every operation a front end may call — the CLI, the TUI and `baton mcp`.

Front ends import this module and nothing else of the engine (an import-linter
contract in pyproject.toml holds them to it). Each function takes the workspace
first, so the TUI can run any of them on its engine thread as `fn(ws, …)`. Engine
modules are imported inside the functions: `baton status`, `baton report` and
`baton --help` must not pay for pydantic, git or the player SDKs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from baton_tui.errors import BatonError
from baton_tui.run.rules import TASK_ACTIONS, Action, PlayerFacts, why_not
from baton_tui.store.events import ACTIVE, EventKind, State
from baton_tui.store.snapshot import NO_PLAN, Snapshot, TaskSnap

if TYPE_CHECKING:
    from baton_tui.plan.model import PlanDocument
    from baton_tui.store.db import Store
    from baton_tui.workspace import Workspace

__all__ = [
    "ACTIVE", "Action", "BatonError", "EventKind", "NO_PLAN", "PlayerFacts", "Snapshot", "State",
    "TASK_ACTIONS", "TaskSnap", "why_not",
]

AUTONOMIES = ("guarded", "watch", "autopilot")
MODES = ("build", "research", "manual")


# workspace and store ---------------------------------------------------------------------
def open_workspace(start: Path | str | None = None) -> "Workspace":
    """The repository containing `start` (default: the working directory)."""
    from baton_tui.workspace import Workspace

    return Workspace(start)


def open_store(create: bool = False) -> "Store | None":
    """This repository's store for reading, or None when Baton never ran here."""
    from baton_tui.paths import find_repo
    from baton_tui.store.db import Store

    paths = find_repo()
    if not paths.store_path.exists() and not create:
        return None
    try:
        store = Store(paths.store_path, create=create)
        store.check_readable()
        return store
    except Exception as exc:  # sqlite3.DatabaseError and friends
        raise BatonError(f"{paths.store_path}: cannot read Baton's store: {exc}") from None


def sibling(ws: "Workspace") -> "Workspace":
    """The same repository and settings with a store connection of its own (for a thread)."""
    return ws.sibling()


def store_at(path: Path | str) -> "Store":
    """A connection of its own (SQLite connections belong to the thread that opened them)."""
    from baton_tui.store.db import Store

    return Store(path)


# status -------------------------------------------------------------------------------------
def snapshot(store: "Store", now: float | None = None) -> Snapshot:
    """The current plan's status snapshot (standard library only)."""
    from baton_tui.store import snapshot as snapshots

    return snapshots.read(store, now)


def snapshot_reader() -> Any:
    """A reader that folds only new events on each `read(store, now)` (for pollers)."""
    from baton_tui.store.snapshot import Reader

    return Reader()


def snapshot_empty() -> Snapshot:
    from baton_tui.store import snapshot as snapshots

    return snapshots.empty()


def terminal_text(text: str) -> str:
    """Agent text as a terminal may show it: secrets redacted (the configured ones too, read
    once from this repository's and the person's config files), control characters escaped."""
    from baton_tui import redact

    global _configured_read
    if not _configured_read:
        from baton_tui.paths import find_repo, personal_config_path

        redact.remember_configured([find_repo().project_config, personal_config_path()])
        _configured_read = True
    return redact.escape_controls(redact.redact(text))


_configured_read = False


def status_text(status: dict) -> str:
    """`baton status` as a person reads it, from the snapshot's JSON."""
    from baton_tui.store.render import render_status

    return render_status(status)


def status_json(status: dict) -> str:
    """`baton status --json`'s text: one task to a line."""
    from baton_tui.store.render import status_json as text

    return text(status)


def events(store: "Store", plan_id: int | None = None, after: int = 0) -> list:
    return store.events(plan_id, after=after)


def last_event_id(store: "Store") -> int:
    return store.last_event_id()


def attempts(store: "Store", plan_id: int, task_id: int) -> list:
    return store.attempts(plan_id, task_id)


def attempt(store: "Store", attempt_id: int) -> Any:
    return store.attempt(attempt_id)


def latest_log_path(store_path: Path | str, plan_id: int, task_id: int) -> str | None:
    """The newest attempt's log file for a task (its own short-lived connection)."""
    with store_at(store_path) as store:
        latest = store.latest_attempt(plan_id, task_id)
    return latest.log_path if latest else None


def latest_output(store_path: Path | str, plan_id: int, task_id: int
                  ) -> tuple[str | None, str | None]:
    """The newest attempt's log file and the player that wrote it (a reassigned task's
    earlier attempts were another player's)."""
    with store_at(store_path) as store:
        latest = store.latest_attempt(plan_id, task_id)
    return (latest.log_path, latest.player) if latest else (None, None)


def read_log(path: str | None, offset: int, limit: int = 1 << 20) -> tuple[bytes, int, int]:
    """Up to `limit` bytes of an attempt's output from `offset` (bytes the agent printed):
    (data, the offset after it, bytes cut from the log before it that were never read).
    A log keeps its head and tail only; nothing reads a whole one into memory."""
    from baton_tui.run import logcap

    return logcap.read_from(path, offset, limit)


def log_size(path: str | None) -> int:
    """How many bytes an attempt's agent printed so far (cut ones included)."""
    from baton_tui.run import logcap

    return logcap.logical_size(path)


def step_reader(player: str) -> Any:
    """A reader turning `player`'s raw output lines into readable steps (`feed(line)`)."""
    from baton_tui.players.steps import reader

    return reader(player)


def task_detail(store_path: Path | str, root: Path, plan_id: int, task_id: int,
                base: str | None, branch: str | None) -> Any:
    """Report, check output and diff of one task (runs git: call it off the UI loop)."""
    from baton_tui.run.detail import load_detail

    return load_detail(store_path, root, plan_id, task_id, base, branch)


# plans and edits ----------------------------------------------------------------------------
def current_doc(ws: "Workspace") -> "PlanDocument":
    from baton_tui.plan.current import current

    cur = current(ws)
    assert cur is not None
    return cur.doc


def current_plan(ws: "Workspace", required: bool = True) -> Any:
    from baton_tui.plan.current import current

    return current(ws, required=required)


def read_plan_text(name: str) -> tuple[str, str]:
    """A plan file's text (`-`: stdin) and its name, read only up to the size limit."""
    from baton_tui.plan.model import read_source

    return read_source(name)


def load_plan(ws: "Workspace", text: str, source: str, new: bool = False) -> Any:
    """Parse a v1 plan document and make it the current plan; returns the plan row."""
    from baton_tui.plan.current import store_new_plan
    from baton_tui.plan.model import parse_text

    return store_new_plan(ws, parse_text(text, source), new=new, source=source)


def store_plan(ws: "Workspace", raw: dict, source: str, new: bool = False) -> Any:
    """Make an already-decoded v1 document the current plan; returns the plan row."""
    from baton_tui.plan.current import store_new_plan
    from baton_tui.plan.model import parse_document

    return store_new_plan(ws, parse_document(raw, source), new=new, source=source)


def edit_task(ws: "Workspace", task_id: int, field: str, value: Any) -> "PlanDocument":
    from baton_tui.plan.current import edit_task as edit

    return edit(ws, task_id, field, value)


def add_task(ws: "Workspace", title: str, player: str, mode: str = "build",
             deps: list[int] | None = None, prompt: str = "") -> int:
    from baton_tui.plan.current import add_task as add

    return add(ws, title, player, mode, deps, prompt)


def remove_task(ws: "Workspace", task_id: int) -> None:
    from baton_tui.plan.current import remove_task as remove

    remove(ws, task_id)


def set_autonomy(ws: "Workspace", level: str) -> None:
    from baton_tui.plan.current import set_autonomy as change

    change(ws, level)


def approve(ws: "Workspace") -> tuple[Any, list[str]]:
    """Approve the whole plan; returns the plan row and warnings (a dirty tree …)."""
    from baton_tui.plan.current import approve as approve_plan

    return approve_plan(ws)


def parse_ids(text: str) -> list[int]:
    from baton_tui.plan.edits import parse_ids as parse

    return parse(text)


def parse_list(text: str) -> list[str]:
    from baton_tui.plan.edits import parse_list as parse

    return parse(text)


def dependents(deps: dict[int, list[int]], task_id: int) -> set[int]:
    """Every task that depends on `task_id`, directly or through others."""
    from baton_tui.plan.dag import dependents as below

    return below(deps, task_id)


def player_facts(ws: "Workspace") -> PlayerFacts:
    from baton_tui.plan.current import player_facts as facts

    return facts(ws)


def refusal(ws: "Workspace", action: Action, task_id: int | None = None) -> str | None:
    """The rule book's sentence for `action` now, read from the store."""
    from baton_tui.plan.current import current, player_facts as facts

    cur = current(ws, required=False)
    if cur is None:
        return NO_PLAN
    snap = cur.snapshot(ws)
    return why_not(action, snap, snap.task(task_id), facts(ws))


# planning -----------------------------------------------------------------------------------
def plan_goal(ws: "Workspace", goal: str, new: bool = False,
              emit: Callable[[Any], None] = lambda event: None,
              skill: str | None = None) -> Any:
    """Run the planner on a goal: questions (exit 3 upstream) or a stored plan. `skill`:
    `grilling` (interrogate the goal first) or `to-spec` (a spec first, kept with the plan)."""
    from baton_tui.plan import planner

    return planner.start(ws, goal, new=new, emit=emit, skill=skill)


def trust_preview(ws: "Workspace") -> tuple[Path, list[tuple[str, str]], bool]:
    """What trusting this repository's baton.toml would allow: (its path, each command key
    with its value, whether it is trusted as it is now)."""
    import json as _json

    from baton_tui.config import file_hash

    path = ws.paths.project_config
    if file_hash(path) is None:
        raise BatonError(f"{path}: no baton.toml to trust here")
    loaded = ws.loaded
    shown = []
    for key in loaded.project_commands():
        node: Any = loaded.project_raw
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        shown.append((key, node if isinstance(node, str) else _json.dumps(node)))
    trusted = ws.store.trusted_hash(str(path)) == loaded.project_hash()
    return path, shown, trusted


def plan_answer(ws: "Workspace", answers: dict[int, str], take_all: bool = False,
                emit: Callable[[Any], None] = lambda event: None) -> Any:
    from baton_tui.plan import planner

    return planner.answer(ws, answers, take_all, emit=emit)


def planner_session(ws: "Workspace") -> dict:
    from baton_tui.plan import planner

    return planner.load_session(ws) or {}


# running ------------------------------------------------------------------------------------
def start_run(ws: "Workspace", approve: bool = False, until_failures: int | None = None,
              deadline: str | None = None) -> int:
    """Start (or attach to) the run; stop conditions as `run --until-failures --deadline`."""
    from baton_tui.run import control

    stops = {k: v for k, v in (("until_failures", until_failures), ("deadline", deadline))
             if v is not None}
    return control.start_run(ws, approve=True, **stops) if approve else \
        control.start_run(ws, **stops)


def resume_run(ws: "Workspace") -> int:
    from baton_tui.run import control

    return control.resume_run(ws)


def pause_run(ws: "Workspace") -> None:
    from baton_tui.run import control

    control.pause_run(ws)


def ensure_trusted(ws: "Workspace") -> None:
    """Refuse when the current plan would run commands from an untrusted baton.toml."""
    from baton_tui.plan.current import current
    from baton_tui.run import control

    cur = current(ws)
    assert cur is not None
    control.ensure_trusted(ws, cur)


def start_task(ws: "Workspace", task_id: int) -> int:
    from baton_tui.run import control

    return control.start_task(ws, task_id)


def take_task(ws: "Workspace", task_id: int) -> dict[str, Any]:
    """Stop a task's agent with its session saved; its worktree, player and session id."""
    from baton_tui.run import control

    return control.take_task(ws, task_id)


def wait_stopped(ws: "Workspace", task_id: int, timeout: float = 30.0
                 ) -> tuple[str, str | None]:
    """Wait for a taken-over task's agent to stop: its state and saved session id."""
    from baton_tui.run import control

    return control.wait_stopped(ws, task_id, timeout)


def interactive_argv(ws: "Workspace", player: str, session: str | None) -> list[str] | None:
    """The player's own interactive session, resumed (None: it has none; a shell then)."""
    found = ws.catalog.players.get(player)
    return found.interactive(session) if found is not None else None


def set_budget(ws: "Workspace", tokens: int | None = None, cost: float | None = None,
               seconds: float | None = None) -> dict[str, Any]:
    from baton_tui.run import control

    return control.set_budget(ws, tokens, cost, seconds)


def parse_duration(text: str) -> float:
    from baton_tui.config import parse_duration as parse

    try:
        return parse(text)
    except ValueError as exc:
        raise BatonError(f"{text!r}: {exc}") from None


def stop_task(ws: "Workspace", task_id: int) -> None:
    from baton_tui.run import control

    control.stop_task(ws, task_id)


def retry_task(ws: "Workspace", task_id: int, feedback: str | None = None) -> int:
    from baton_tui.run import control

    return control.retry_task(ws, task_id, feedback)


def mark_done(ws: "Workspace", task_id: int) -> None:
    from baton_tui.run import control

    control.mark_done(ws, task_id)


def answer_checkpoint(ws: "Workspace", task_id: int, yes: bool) -> None:
    from baton_tui.run import control

    control.answer_checkpoint(ws, task_id, yes)


def last_run_code(ws: "Workspace") -> int | None:
    from baton_tui.run import control

    return control.last_run_code(ws)


def conductor_alive(pid: int, token: float | None) -> bool:
    from baton_tui import procs

    return procs.alive(pid, token)


def process_token(pid: int) -> float | None:
    from baton_tui import procs

    return procs.start_token(pid)


# handoff ------------------------------------------------------------------------------------
def git_supports_worktrees() -> bool:
    """git is installed and new enough (2.38) for worktrees and merge-tree."""
    from baton_tui.gitops import git

    return git.supports_worktrees()


def git_handoff(ws: "Workspace") -> bool:
    from baton_tui.run import handoff

    return handoff.git_handoff(ws)


def review(ws: "Workspace", task_id: int | None = None) -> dict[str, Any]:
    from baton_tui.run import handoff

    return handoff.review(ws, task_id)


def merge(ws: "Workspace", upto: int | None = None,
          progress: Callable[[int, str], None] | None = None) -> Any:
    """Merge landed work onto the person's branch in plan order (all, or up to task `upto`)."""
    from baton_tui.run import handoff

    return handoff.merge(ws, upto, progress)


def handoff_review(ws: "Workspace") -> Any:
    """The handoff screen's data: the combined diff per file, each task's report, check, flags
    and the checkpoints decided for it (runs git: call it off the UI loop)."""
    from baton_tui.run import handoff_view

    return handoff_view.load(ws)


def discard_victims(ws: "Workspace", task_id: int) -> list[int]:
    """What discarding `task_id` takes with it (its dependents and carriers), for a question."""
    from baton_tui.plan.current import current
    from baton_tui.run import handoff, rules

    cur = current(ws)
    snap = cur.snapshot(ws)
    task = snap.task(task_id)
    if task is None or task.state != State.LANDED:
        return []
    return rules.built_on(snap, task, handoff._carriers(ws, cur, task_id))


def resolve_begin(ws: "Workspace", task_id: int) -> Any:
    """Start the conflicting merge of a task by hand (conflict markers left to edit)."""
    from baton_tui.run import resolve

    return resolve.begin(ws, task_id)


def resolve_status(ws: "Workspace", task_id: int) -> Any:
    from baton_tui.run import resolve

    return resolve.status(ws, task_id)


def resolve_abort(ws: "Workspace") -> None:
    """Give up a hand merge: the tree goes back to how it was before it began."""
    from baton_tui.run import resolve

    resolve.abort(ws)


def open_shell(root: Path, banner: str) -> int:
    """The person's shell in `root` (a front end suspends itself around this)."""
    from baton_tui.run import resolve

    return resolve.shell(root, banner)


def discard(ws: "Workspace", task_id: int, with_dependents: bool = False) -> list:
    from baton_tui.run import handoff

    return handoff.discard(ws, task_id, with_dependents)


def gc(ws: "Workspace", dry_run: bool = False) -> list:
    from baton_tui.run import handoff

    return handoff.gc(ws, dry_run)


# players, trust, skills ---------------------------------------------------------------------
def detect_players(ws: "Workspace") -> dict[str, Any]:
    """Detection for every player, fresh and recorded for `status` (may run `--version`
    subprocesses: call it off the UI loop). An untrusted repo's custom players are not ready."""
    from baton_tui.players import readiness

    return readiness.detect(ws)


def player_catalog(ws: "Workspace", name: str) -> tuple[tuple[str, ...] | None, str | None]:
    """(models — None for any name, () for none — and the default model) of a player."""
    player = ws.catalog.players.get(name)
    return (player.catalog(), player.default_model) if player else (None, None)


def player_efforts(ws: "Workspace", name: str) -> tuple[str, ...]:
    player = ws.catalog.players.get(name)
    return tuple(player.efforts) if player else ("low", "medium", "high")


def default_player(ws: "Workspace") -> str | None:
    return ws.config.players.default


def skills(ws: "Workspace") -> dict[str, str]:
    """Skill name -> one-line description."""
    return {name: skill.description for name, skill in sorted(ws.skills.items())}


def trust(ws: "Workspace") -> tuple[Path, str, list[str]]:
    """Trust this repository's baton.toml: (its path, its hash, the commands it may now run)."""
    from baton_tui.trust import trust_file

    return trust_file(ws)


def doctor(ws: "Workspace") -> tuple[list[str], int]:
    """`baton doctor`'s lines and exit code."""
    from baton_tui.players.doctor import diagnose

    return diagnose(ws)


# agents' side -------------------------------------------------------------------------------
def report(status: str, message: str | None, *, until: float | None = None,
           tokens: int | None = None, cost: float | None = None) -> str:
    """`baton report` from inside an attempt (its environment names it)."""
    from baton_tui.run.channel import caller_from_env, report as record

    return record(caller_from_env(), status, message, until=until, tokens=tokens, cost=cost)


def checkpoint(what: str, evidence: str | None) -> tuple[int, str]:
    from baton_tui.run.channel import caller_from_env, checkpoint as ask

    return ask(caller_from_env(), what, evidence)


def run_attempt(attempt_id: int, state: str) -> int:
    from baton_tui.run.attempt import run_attempt as shim

    return shim(attempt_id, state)


def conduct(root: str) -> int:
    from baton_tui.run.conductor import conduct as conductor

    return conductor(root)


def serve_mcp() -> None:
    from baton_tui.run.mcp_server import serve

    serve()
