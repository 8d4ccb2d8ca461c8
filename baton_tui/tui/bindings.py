"""Every key as data: id, key(s), action, label. Remapped by id from `[keys]` in config.

`baton.toml` / the personal config: `[keys] approve = "ctrl+a"` — applied with
`App.set_keymap`, so the Footer and the help screen show the person's own keys.
"""

from __future__ import annotations

from textual.binding import Binding

from baton_tui.api import TASK_ACTIONS, Action

# Keys of the plan pane. Actions live on the App ("app." namespace), so one
# `check_action` decides what applies now and why not.
PLAN = [
    Binding("tab", "app.swap_focus", "chat", id="swap", show=False),
    Binding("j,down", "cursor(1)", "down", id="down", show=False),
    Binding("k,up", "cursor(-1)", "up", id="up", show=False),
    Binding("pagedown", "cursor_page(1)", "page down", id="page-down", show=False),
    Binding("pageup", "cursor_page(-1)", "page up", id="page-up", show=False),
    Binding("home", "cursor_to(0)", "first task", id="first", show=False),
    Binding("end", "cursor_to(-1)", "last task", id="last", show=False),
    Binding("enter", "app.task_detail", "detail", id="detail"),
    Binding("e", "app.edit_menu", "edit…", id="edit"),
    Binding("p", "app.edit_prompt", "prompt", id="prompt"),
    Binding("R", "app.pick_player", "player", id="player"),
    Binding("o", "app.pick_model", "model", id="model"),
    Binding("ctrl+e", "app.pick_effort", "effort", id="effort"),
    Binding("M", "app.pick_mode", "mode", id="mode", show=False),
    Binding("d", "app.edit_deps", "deps", id="deps"),
    Binding("s", "app.edit_skills", "skills", id="skills", show=False),
    Binding("t", "app.edit_title", "title", id="title", show=False),
    Binding("S", "app.edit_scope", "scope", id="scope", show=False),
    Binding("c", "app.edit_check", "check", id="check", show=False),
    Binding("C", "app.toggle_checkpoint", "checkpoint", id="checkpoint", show=False),
    Binding("w", "app.pick_runner", "runner", id="runner", show=False),
    Binding("n", "app.add_task", "add", id="add", show=False),
    Binding("D", "app.remove_task", "remove", id="remove", show=False),
    Binding("a", "app.approve", "approve", id="approve"),
    Binding("E", "app.run_plan", "run", id="run"),
    Binding("f", "app.start_task", "start", id="start", show=False),
    Binding("x", "app.stop_task", "stop", id="stop", show=False),
    Binding("r", "app.retry_task", "retry", id="retry", show=False),
    Binding("y", "app.answer_checkpoint", "checkpoint answer", id="answer", show=False),
    Binding("m", "app.mark_done", "mark done", id="done", show=False),
    Binding("P", "app.pause_run", "pause run", id="pause", show=False),
    Binding("A", "app.pick_autonomy", "autonomy", id="autonomy", show=False),
    Binding("H", "app.handoff", "handoff", id="handoff"),
]

# Keys that work wherever focus is (the chat input keeps printable keys for itself).
APP = [
    Binding("question_mark", "app.help", "help", id="help"),
    Binding("q", "app.quit", "quit", id="quit"),
    Binding("ctrl+t", "app.toggle_theme", "light/dark", id="theme", show=False),
    Binding("g", "app.dag", "graph", id="graph", show=False),  # a view, not a plan action
]
# The plan pane lists them first, so a narrow footer (80 columns) cuts plan keys, never
# `?` and `q` (the footer shows one key per action: these are the same actions).
PLAN_PANE = [*APP, *PLAN]

# Chat pane: tab leaves the input for the plan (the Screen's focus_next would too,
# but this has an id and a label).
CHAT = [
    Binding("tab", "app.swap_focus", "plan", id="chat-swap", show=False),
    Binding("escape", "app.swap_focus", "plan", id="chat-leave", show=False),
]


# The handoff screen's keys (`HandoffScreen`), remapped by id like the rest.
HANDOFF = [
    Binding("escape,q", "close", "back", id="handoff-back"),
    Binding("M", "merge_all", "merge all", id="merge-all"),
    Binding("u", "merge_upto", "merge up to here", id="merge-upto"),
    Binding("x", "discard", "discard task", id="handoff-discard"),
    Binding("f", "full_diff", "full diff", id="full-diff"),
    Binding("s", "shell", "resolve in a shell", id="resolve-shell"),
    Binding("r", "retry", "retry task", id="handoff-retry"),
    Binding("P", "publish", "pull request", id="handoff-pr"),
    Binding("question_mark", "help", "help", id="handoff-help"),
]


# The key bar's order: of the plan keys that apply now, the step the plan waits on comes
# first, then the selected task's run, then its fields (ids; `?` lists every key).
NOW = ("answer", "handoff", "run", "approve", "retry", "done", "stop", "pause", "detail",
       "prompt", "player", "model", "effort", "start", "mode", "deps", "add", "remove",
       "check", "title", "scope", "skills", "checkpoint", "runner", "autonomy")

# The selected task's field keys, the most often changed first: the key bar's upper line
# lists the ones that apply now (as many as fit, then `… ? all`).
FIELDS = ("prompt", "player", "model", "effort", "mode", "deps", "title", "check",
          "checkpoint", "scope", "skills", "runner")
# `e` lists them all in a menu: the one key to guess for any field.
EDIT = "edit"

# The help screen's groups: keys sorted by what they change.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the selected task's fields", ("edit", "prompt", "title", "player", "model", "effort",
                                    "mode", "deps", "skills", "scope", "check", "checkpoint",
                                    "runner")),
    ("the selected task's run", ("detail", "start", "stop", "retry", "answer", "done")),
    ("the plan", ("add", "remove", "approve", "run", "pause", "autonomy", "handoff", "graph")),
    ("moving and the app", ("down", "up", "page-down", "page-up", "first", "last", "swap",
                            "help", "quit", "theme")),
)

# Why each letter: shown beside the default key (a remapped key has its own reason).
MNEMONIC = {
    "edit": "Edit: every field in a menu, each with its key",
    "prompt": "Prompt", "player": "who Runs it", "model": "mOdel; m marks done",
    "effort": "ctrl and the e of edit", "mode": "Mode", "deps": "depends on",
    "scope": "Scope, the wider s", "checkpoint": "Checkpoint, beside c check",
    "runner": "where it runs", "start": "fire", "stop": "x out", "answer": "yes or no",
    "done": "mark", "add": "new", "remove": "Delete", "run": "Execute",
    "autonomy": "Autonomy, beside a approve", "handoff": "Handoff",
    "pause": "Pause, the whole run",
}
SCHEME = ("e lists every field of the selected task with its key (the line above the key "
          "bar shows them too). Lowercase keys change the selected task; Shift marks the "
          "bigger step beside one (S scope by s skills, C checkpoint by c check, A autonomy "
          "by a approve) or the whole plan (E execute it, P pause it, H hand it off, D "
          "delete a task); R (who Runs it) and M (Mode) are Shift because r retries and m "
          "marks done")


def all_bindings() -> list[Binding]:
    return [*PLAN, *APP]


def keys_of(binding: Binding, keymap: dict[str, str]) -> list[str]:
    """The keys that press `binding` under `keymap` (its own when it is not remapped)."""
    return [key.strip() for key in keymap.get(binding.id or "", binding.key).split(",")]


def keymap_from_config(keys: dict[str, str]) -> dict[str, str]:
    """Only ids Baton knows; unknown ids are reported by `unknown_keys`, not applied."""
    known = {b.id for b in all_bindings() + CHAT + HANDOFF if b.id}
    return {k: v for k, v in keys.items() if k in known}


def unknown_keys(keys: dict[str, str]) -> list[str]:
    known = {b.id for b in all_bindings() + CHAT + HANDOFF if b.id}
    return sorted(k for k in keys if k not in known)


# Each plan key's action -> the rule-book action that says whether it applies now.
RULE_OF: dict[str, Action] = {
    "task_detail": Action.DETAIL, "edit_prompt": Action.EDIT_PROMPT,
    "pick_player": Action.EDIT_PLAYER, "pick_model": Action.EDIT_MODEL,
    "pick_effort": Action.EDIT_EFFORT, "pick_mode": Action.EDIT_MODE,
    "edit_deps": Action.EDIT_DEPS, "edit_skills": Action.EDIT_SKILLS,
    "edit_title": Action.EDIT_TITLE, "edit_scope": Action.EDIT_SCOPE,
    "edit_check": Action.EDIT_CHECK, "toggle_checkpoint": Action.EDIT_CHECKPOINT,
    "pick_runner": Action.EDIT_RUNNER,
    "add_task": Action.ADD_TASK, "remove_task": Action.REMOVE_TASK, "approve": Action.APPROVE,
    "run_plan": Action.RUN, "start_task": Action.START_TASK, "stop_task": Action.STOP_TASK,
    "retry_task": Action.RETRY_TASK, "answer_checkpoint": Action.ANSWER_CHECKPOINT,
    "mark_done": Action.DONE, "pause_run": Action.PAUSE, "pick_autonomy": Action.SET_AUTONOMY,
    "handoff": Action.MERGE,
}
EDIT_MENU = "edit_menu"  # `e`: applies when one of the selected task's fields does
PLAN_ACTIONS = frozenset(RULE_OF) | {EDIT_MENU}
TASK_KEYS = frozenset(key for key, rule in RULE_OF.items() if rule in TASK_ACTIONS)
