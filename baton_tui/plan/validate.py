"""Whole-plan checks beyond the schema: ids, dependencies, cycles, players, skills."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from baton_tui.core.errors import BatonError
from baton_tui.core.dag import find_cycle
from baton_tui.plan.model import PlanDocument

if TYPE_CHECKING:
    from collections.abc import Collection

    from baton_tui.players.registry import Catalog


def plan_problems(doc: PlanDocument, catalog: "Catalog | None",
                  skills: set[str] | None = None,
                  runners: "Collection[str] | None" = None) -> list[str]:
    """Every problem, one line each, in task order. Empty means valid. `runners`: the
    runners configured here (`local` and `[runners.NAME]`), when they are to be checked."""
    problems: list[str] = []
    ids = Counter(t.id for t in doc.tasks)
    for task_id, count in ids.items():
        if count > 1:
            problems.append(f"task {task_id}: duplicate id ({count} tasks use it)")
    for task in doc.tasks:
        for dep in task.depends_on:
            if dep == task.id:
                problems.append(f"task {task.id}: depends on itself")
            elif dep not in ids:
                problems.append(f"task {task.id}: depends on task {dep}, which does not exist")
        if catalog is not None:
            problems.extend(f"task {task.id}: {p}" for p in catalog.problems(task))
        if catalog is not None:
            for entry in task.fallback:
                player, _, model = entry.partition(":")
                stand_in = task.model_copy(update={"player": player, "model": model or None,
                                                   "effort": None})
                problems.extend(f"task {task.id}: fallback {entry!r}: {p}"
                                for p in catalog.problems(stand_in))
        if runners is not None and task.runner not in runners:
            problems.append(f"task {task.id}: unknown runner {task.runner!r} (configured: "
                            f"{', '.join(runners)}; add a [runners.{task.runner}] table)")
        if skills is not None:
            unknown = [s for s in task.skills if s not in skills]
            if unknown:
                problems.append(f"task {task.id}: unknown skill {', '.join(map(repr, unknown))} "
                                f"(available: {', '.join(sorted(skills))})")
    deps = {t.id: [d for d in t.depends_on if d != t.id] for t in doc.tasks}
    cycle = find_cycle(deps)
    if cycle:
        problems.append("tasks " + " → ".join(str(n) for n in cycle) + " form a cycle")
    return problems


def ensure_valid(doc: PlanDocument, catalog: "Catalog | None", skills: set[str] | None = None,
                 source: str = "plan", runners: "Collection[str] | None" = None) -> PlanDocument:
    """Raise a BatonError (exit 2) listing every problem, or return the document."""
    problems = plan_problems(doc, catalog, skills, runners)
    if problems:
        lines = [f"{source}: {p}" for p in problems]
        raise BatonError(lines[0], code=2, lines=lines)
    return doc
