"""The autonomy policy: which level is in force, and what it decides without the person.

guarded: risky steps wait for the person at their checkpoint, and a checkpoint task that
finished without asking is held before landing. watch: Baton answers checkpoints itself
and records the decision (with the agent's evidence) for the one review at the end.
autopilot: as watch, and a failed task is retried once, then parked.
Standard library only: the agent-side `baton checkpoint` and `baton status` use it.
"""

from __future__ import annotations

import os

from baton_tui.core.words import DEFAULT_AUTONOMY, Autonomy

LEVELS = tuple(Autonomy)


def level(plan_autonomy: str | None) -> Autonomy:
    """The level in force: `BATON_AUTONOMY` for the command it is set on, else the plan's."""
    override = os.environ.get("BATON_AUTONOMY")
    if override in LEVELS:
        return Autonomy(override)
    return Autonomy(plan_autonomy) if plan_autonomy in LEVELS else DEFAULT_AUTONOMY


def checkpoint_decider(plan_level: str, auto_checkpoints: bool) -> str | None:
    """Who answers a checkpoint yes at once (`run --approve`, watch, autopilot), or None when
    the person decides."""
    if auto_checkpoints:
        return "run --approve"
    return plan_level if plan_level in (Autonomy.WATCH, Autonomy.AUTOPILOT) else None
