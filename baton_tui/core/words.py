"""The closed vocabularies of a plan beside the task states (`events.State`): autonomy
levels, task modes and report statuses. Spelled here and nowhere else; each is a `StrEnum`,
so it equals, stores and prints as the plain word the plan file, the store and the CLI use.
The one runner name Baton gives itself (`LOCAL_RUNNER`; the others are the person's). And
how every front end writes a count of things (`counted`)."""

from __future__ import annotations

from enum import StrEnum


class Autonomy(StrEnum):
    """How much the person supervises a run (DESIGN.md, "Supervision")."""

    GUARDED = "guarded"      # checkpoints wait for the person; the diff is reviewed at handoff
    WATCH = "watch"          # a supervisor flags stalls, loops and off-plan edits
    AUTOPILOT = "autopilot"  # retry once, then park


class Mode(StrEnum):
    """What a task is allowed to do."""

    BUILD = "build"        # edits files in its own worktree and branch
    RESEARCH = "research"  # read-only; its report is an artifact for dependents
    MANUAL = "manual"      # never given to an agent; the person marks it done


class ReportStatus(StrEnum):
    """What an agent may say through `baton report`."""

    DONE = "done"
    FAILED = "failed"
    PROGRESS = "progress"
    LIMITED = "limited"


# The reports that end an attempt's turn (`progress` is a note on the way). A tuple, not a
# set: a status read from a file may be any JSON value, an unhashable one too.
FINAL_REPORTS = (ReportStatus.DONE, ReportStatus.FAILED, ReportStatus.LIMITED)


DEFAULT_AUTONOMY = Autonomy.GUARDED

# The runner that is this machine: built in, never a `[runners]` table, the runner of a task
# that names none. Every other runner name is the person's own (`[runners.NAME]`).
LOCAL_RUNNER = "local"

# The players Baton knows without configuration (`players/builtin.py` has one adapter for each
# but `script`); a person's `[players.custom.NAME]` adds to them.
BUILTIN_PLAYERS = (
    "claude-code", "codex", "opencode", "gemini", "aider", "cursor-agent", "goose", "amp",
    "anthropic", "openai", "script",
)


def counted(n: int, noun: str, start: bool = False) -> str:
    """`1 task`, `3 tasks`, `no tasks` (`No tasks` to `start` a line): a count as a person
    writes it, in the CLI's lines and the app's alike."""
    return f"{n or ('No' if start else 'no')} {noun}{'s' * (n != 1)}"
