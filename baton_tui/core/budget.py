"""The budget guard: per-plan limits on tokens, cost (USD) and the run's wall time.

The limits live in the plan's options (`baton budget`, filled from `[limits] budget_*` when a
run starts); use so far comes from the agents' usage events. Once a limit is reached no new
task starts; with `budget_hard` the running ones pause too. Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any

KEYS = ("tokens", "cost", "time")


def from_config(limits: Any) -> dict[str, Any]:
    """The configured budget (`[limits] budget_tokens`, `budget_cost`, `budget_time`, `budget_hard`)."""
    return {"tokens": limits.budget_tokens, "cost": limits.budget_cost,
            "time": limits.budget_time, "hard": limits.budget_hard}


def usage(budget: dict[str, Any] | None, tokens: int, cost: float | None, running: bool,
          folder: Any, now: float) -> dict[str, Any]:
    """`plan.budget` in `status --json`: the limits and the use so far, from the tasks' sums
    (the snapshot adds them up field by field; the conductor's ready queue as usage events
    arrive, instead of visiting every task each tick)."""
    budget = budget or {}
    first, last = folder.plan.first_start, folder.plan.last_end
    wall = ((now if running or not last else last) - first) if first is not None else 0.0
    return {
        "limits": {key: budget.get(key) for key in KEYS},
        "hard": bool(budget.get("hard")),
        "used": {"tokens": tokens, "cost": round(cost, 6) if cost is not None else None,
                 "time": round(max(0.0, wall), 2)},
    }


def reached(state: dict[str, Any]) -> str | None:
    """Which limit the use has reached, in words, or None."""
    limits, used = state["limits"], state["used"]
    for key, unit in (("tokens", " tokens"), ("cost", " USD"), ("time", "s of run time")):
        limit = limits.get(key)
        if limit is not None and used.get(key) is not None and used[key] >= limit:
            return f"{key}: {used[key]:g}{unit} used of {limit:g}"
    return None
