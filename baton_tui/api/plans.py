"""Plans: loading, editing, approving, and drafting them with the planner."""

from __future__ import annotations

import json as _json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from baton_tui.config_files import file_hash
from baton_tui.core.dag import dependents as below
from baton_tui.core.errors import BatonError
from baton_tui.core.rules import Action, PlayerFacts, why_not
from baton_tui.core.snapshot import NO_PLAN
from baton_tui.core.words import Mode
from baton_tui.plan.current import (
    Current, add_task as add, approve as approve_plan, current, edit_task as edit,
    known_player_facts as known, player_facts as facts, remove_task as remove,
    set_autonomy as change, store_new_plan, unchecked_models,
)
from baton_tui.plan.edits import parse_ids as parse_id_list, parse_list as parse_word_list
from baton_tui.plan.model import PlanDocument, parse_document, parse_text, read_source

if TYPE_CHECKING:
    from baton_tui.planner.drafting import PlannerEvent, PlanningResult
    from baton_tui.store.db import PlanRow
    from baton_tui.workspace import Workspace


def current_doc(ws: "Workspace") -> "PlanDocument":
    cur = current(ws)
    assert cur is not None
    return cur.doc


def current_plan(ws: "Workspace", required: bool = True) -> "Current | None":
    return current(ws, required=required)


def read_plan_text(name: str) -> tuple[str, str]:
    """A plan file's text (`-`: stdin) and its name, read only up to the size limit."""
    return read_source(name)


def load_plan(ws: "Workspace", text: str, source: str, new: bool = False) -> "PlanRow":
    """Parse a v1 plan document and make it the current plan; returns the plan row."""
    return store_new_plan(ws, parse_text(text, source), new=new, source=source)


def store_plan(ws: "Workspace", raw: dict[str, Any], source: str, new: bool = False
               ) -> "PlanRow":
    """Make an already-decoded v1 document the current plan; returns the plan row."""
    return store_new_plan(ws, parse_document(raw, source), new=new, source=source)


UNSET_WORDS = ("", "default", "none")  # a model, effort or check given as one of these: unset


def edit_task(ws: "Workspace", task_id: int, field: str, value: Any) -> "PlanDocument":
    """One field of one task. A model, effort or check typed as "", "default" or "none" is
    unset (every front end takes these words the same way)."""
    if field in ("model", "effort", "check") and isinstance(value, str) \
            and value.strip() in UNSET_WORDS:
        value = None
    return edit(ws, task_id, field, value)


def model_notes(ws: "Workspace", doc: "PlanDocument", task_id: int) -> list[str]:
    """Why a task's model could not be checked (its player cannot know its names here)."""
    return unchecked_models(ws, [doc.task(task_id)])


def add_task(ws: "Workspace", title: str, player: str, mode: str = Mode.BUILD,
             deps: list[int] | None = None, prompt: str = "", check: str | None = None) -> int:
    return add(ws, title, player, mode, deps, prompt, check)


def remove_task(ws: "Workspace", task_id: int) -> None:
    remove(ws, task_id)


def set_autonomy(ws: "Workspace", level: str) -> None:
    change(ws, level)


def approve(ws: "Workspace") -> "tuple[PlanRow, list[str]]":
    """Approve the whole plan; returns the plan row and warnings (a dirty tree …)."""
    return approve_plan(ws)


def parse_ids(text: str) -> list[int]:
    return parse_id_list(text)


def parse_list(text: str) -> list[str]:
    return parse_word_list(text)


def dependents(deps: dict[int, list[int]], task_id: int) -> set[int]:
    """Every task that depends on `task_id`, directly or through others."""
    return below(deps, task_id)


def player_facts(ws: "Workspace") -> PlayerFacts:
    return facts(ws)


def known_player_facts(ws: "Workspace", names: list[str]) -> PlayerFacts:
    """The facts of the players `names`, worked out now, for a front end to consult while it
    draws (call it off the UI loop: a catalog may ask a player's CLI or endpoint)."""
    return known(ws, names)


def refusal(ws: "Workspace", action: Action, task_id: int | None = None) -> str | None:
    """The rule book's sentence for `action` now, read from the store."""
    cur = current(ws, required=False)
    if cur is None:
        return NO_PLAN
    snap = cur.snapshot(ws)
    return why_not(action, snap, snap.task(task_id), facts(ws))


# planning -----------------------------------------------------------------------------------
def plan_goal(ws: "Workspace", goal: str, new: bool = False,
              emit: "Callable[[PlannerEvent], None]" = lambda event: None,
              skill: str | None = None) -> "PlanningResult":
    """Run the planner on a goal: questions (exit 3 upstream) or a stored plan. `skill`:
    `grilling` (interrogate the goal first) or `to-spec` (a spec first, kept with the plan)."""
    # lazy: `baton run` and plan edits load this module, never the planner
    from baton_tui.planner import drafting as planner

    return planner.start(ws, goal, new=new, emit=emit, skill=skill)


def trust_preview(ws: "Workspace") -> tuple[Path, list[tuple[str, str]], bool]:
    """What trusting this repository's baton.toml would allow: (its path, each command key
    with its value, whether it is trusted as it is now)."""
    path = ws.paths.project_config
    if file_hash(path) is None:
        raise BatonError(f"{path}: no baton.toml to trust here")
    ws.refresh_config()  # the file as it is now, not as an app that started earlier read it
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
                emit: "Callable[[PlannerEvent], None]" = lambda event: None
                ) -> "PlanningResult":
    # lazy: `baton run` and plan edits load this module, never the planner
    from baton_tui.planner import drafting as planner

    return planner.answer(ws, answers, take_all, emit=emit)


def planner_session(ws: "Workspace") -> dict[str, Any]:
    # lazy: `baton run` and plan edits load this module, never the planner
    from baton_tui.planner import drafting as planner

    return planner.load_session(ws) or {}
