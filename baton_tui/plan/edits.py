"""Edits to a plan document: pure functions from a document to a new one.

Each returns a fresh document; the caller (`plan.current.edit_task`) validates it,
refuses edits to started tasks, stores it and voids approval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from baton_tui.core.errors import BatonError
from baton_tui.core.words import Mode
from baton_tui.plan.model import EFFORTS, MODES, PlanDocument, Task
from baton_tui.plan.model import parse_document

if TYPE_CHECKING:
    from baton_tui.players.registry import Catalog


def parse_ids(text: str) -> list[int]:
    """`"1,2, 3"` -> [1, 2, 3]; empty text -> []."""
    ids: list[int] = []
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise BatonError(f"{part!r} is not a task id (use comma-separated numbers, e.g. 1,3)")
        ids.append(int(part))
    return ids


def parse_list(text: str) -> list[str]:
    """`"a, b"` -> ["a", "b"]; empty text -> []."""
    return [item.strip() for item in text.split(",") if item.strip()]


def _with_task(doc: PlanDocument, task_id: int, **changes: Any) -> PlanDocument:
    """The document with one task changed: only that task is validated again (the whole
    plan's rules are checked when it is stored); a refusal is worded as for the whole."""
    old = doc.task(task_id)  # raises a clear error for an unknown id
    try:
        new = Task.model_validate({**old.model_dump(mode="json"), **changes})
    except ValidationError:
        raw = doc.dump()
        for task in raw["tasks"]:
            if task["id"] == task_id:
                task.update(changes)
        return parse_document(raw, "", by_task=True)  # raises, naming the task
    return doc.model_copy(update={"tasks": [new if t.id == task_id else t for t in doc.tasks]})


def set_field(doc: PlanDocument, task_id: int, field: str, value: Any,
              catalog: "Catalog | None" = None) -> PlanDocument:
    """Set one task field. Changing the player resets model and effort to its defaults."""
    if field == "player":
        if catalog is not None and value not in catalog.players:
            raise BatonError(catalog.unknown(value))
        model, effort = catalog.defaults(value) if catalog is not None else (None, None)
        return _with_task(doc, task_id, player=value, model=model, effort=effort)
    if field == "effort" and value is not None and value not in EFFORTS:
        raise BatonError(f"effort {value!r} is not one of {', '.join(EFFORTS)}")
    if field == "mode" and value not in MODES:
        raise BatonError(f"mode {value!r} is not one of {', '.join(MODES)}")
    if field not in Task.model_fields or field == "id":
        raise BatonError(f"tasks have no editable field {field!r}")
    return _with_task(doc, task_id, **{field: value})


def add_task(doc: PlanDocument, title: str, player: str, mode: str = Mode.BUILD,
             deps: list[int] | None = None, prompt: str = "", next_id: int | None = None,
             catalog: "Catalog | None" = None, check: str | None = None
             ) -> tuple[PlanDocument, int]:
    """Append a task with the next free id; returns the new document and that id. A check
    comes with it (a `script` task is refused without one)."""
    new_id = next_id or (max(t.id for t in doc.tasks) + 1)
    model, effort = catalog.defaults(player) if catalog is not None and player in catalog.players \
        else (None, None)
    raw = doc.dump()
    raw["tasks"].append({"id": new_id, "title": title, "prompt": prompt or title, "player": player,
                         "model": model, "effort": effort, "mode": mode,
                         "depends_on": deps or [], **({"check": check} if check else {})})
    return parse_document(raw, "task-add", by_task=True), new_id


def remove_task(doc: PlanDocument, task_id: int) -> PlanDocument:
    """Remove a task (the rule book has checked that nothing depends on it)."""
    doc.task(task_id)
    raw = doc.dump()
    raw["tasks"] = [t for t in raw["tasks"] if t["id"] != task_id]
    return parse_document(raw, "task-remove")

