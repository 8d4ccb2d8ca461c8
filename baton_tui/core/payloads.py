"""The typed payloads of events: the keys each kind's `data` may hold (stdlib only).

All keys are optional: older rows lack some. Kept apart from `events` (which only this module
imports, never the other way) so that `baton status` never imports `typing`.
"""

from __future__ import annotations

from typing import TypedDict

from baton_tui.core.events import EventKind

K = EventKind


class Queued(TypedDict, total=False):
    by: str                 # "retry" | "start" | "autopilot" | "reassign" | absent: the run's own
    feedback: str | None
    rate_limited: bool
    not_before: float
    reason: str


class Started(TypedDict, total=False):
    attempt: int
    player: str
    workdir: str
    base: str | None
    branch: str | None
    shim_token: float | None
    adopted: bool           # recorded by a later conductor: its shim had started the agent


# done, failed, paused, parked, landed, merged, discarded ("with" is not an identifier)
Ended = TypedDict("Ended", {
    "attempt": int, "summary": str, "reason": str, "output": str, "until": float,
    "conflicts": list[str], "kept": str | None, "commit": str, "at": float, "by": str,
    "took_over": bool, "onto": str, "with": int | None,
    "player": str,            # paused at a usage limit: whose limit
    "limit": str,             # "known" | "unknown" (reset time) | "declared" (baton report limited)
    "probe": int,             # the how-many-th probe of a limit with no known reset
    "held": bool,             # a checkpoint held before landing (it finished without asking)
    "stage": str,             # failed after the agent ended: "collect" (its remote result
                              # not brought home) | "commit" | "land" (a retry collects,
                              # commits and lands without running the agent again)
    "tip": str,               # landed: the task branch's commit that landed ("commit" is the
                              # integration commit); failed, parked, paused, held or done
                              # before landing: its branch's commit as Baton left it (held
                              # there until it starts again); older stores lack it
    "log": int,               # with a waiting tip: the size of its worktree's HEAD log then
}, total=False)


class Checkpoint(TypedDict, total=False):
    what: str
    attempt: int
    evidence: str | None
    held: bool              # Baton holds a finished task before landing (guarded review)


class CheckpointAnswered(TypedDict, total=False):
    checkpoint: int
    answer: str             # "yes" | "no"
    by: str


class Flagged(TypedDict, total=False):
    message: str
    flag: str               # "stall" | "loop" | "scope" | "checkpoint" | "outside" | …
    files: list[str]
    attempt: int            # outside: the attempt that ran while the files changed
    refs: list[str]         # ref: the refs it moved (put back)


class Usage(TypedDict, total=False):
    tokens: int
    cost: float
    attempt: int


class Reported(TypedDict, total=False):
    attempt: int
    status: str             # done | failed | limited
    summary: str
    reason: str
    until: float | None     # limited: when the limit resets, if the agent knows
    ts: float


Reassigned = TypedDict("Reassigned", {
    "from": str, "to": str, "model": str | None, "effort": str | None}, total=False)


class RunStarted(TypedDict, total=False):
    approve: bool
    until_failures: int | None
    deadline: float | None


class Repaired(TypedDict, total=False):
    what: str               # "integration" (branch rebuilt from the landings recorded),
                            # "git-lock" (a lock a killed git left on the run's refs removed),
                            # "ref" (the integration branch put back where Baton left it,
                            # or a landed or waiting task's branch where it must be)
    ref: str
    detail: str
    commit: str


class Recycled(TypedDict, total=False):
    to: int                 # the task its worktree now serves
    workdir: str            # where that worktree was


class Stopped(TypedDict, total=False):
    by: str                 # failures | deadline | budget
    detail: str


PAYLOADS: dict[EventKind, type] = {
    K.TASK_QUEUED: Queued, K.TASK_STARTED: Started, K.TASK_RESUMED: Started,
    K.TASK_CHECKPOINT: Checkpoint, K.TASK_CHECKPOINT_ANSWERED: CheckpointAnswered,
    K.TASK_FLAGGED: Flagged, K.TASK_USAGE: Usage, K.TASK_REPORTED: Reported,
    K.RUN_STARTED: RunStarted, K.RUN_RESUMED: RunStarted, K.RUN_STOPPED: Stopped,
    K.RUN_REPAIRED: Repaired,
    K.TASK_REASSIGNED: Reassigned, K.TASK_RECYCLED: Recycled,
    **{kind: Ended for kind in (K.TASK_DONE, K.TASK_FAILED, K.TASK_PAUSED, K.TASK_PARKED,
                                K.TASK_LANDED, K.TASK_MERGED, K.TASK_DISCARDED)},
}
