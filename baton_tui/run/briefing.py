"""Every word an agent receives, composed by the conductor whatever runs the agent.

The brief (`prompt.compose`: the plan's context, the task, its dependencies' reports, the
feedback of a retry or a handoff, a resume's message) and the note of files left in
conflict when its branch took in the integration branch. A runner gets the composed text
(`StartRequest.prompt`) and never words of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from baton_tui.core.errors import BatonError
from baton_tui.core.words import Mode
from baton_tui.plan.model import PlanDocument, Task
from baton_tui.run.prompt import compose
from baton_tui.skills import resolve
from baton_tui.workspace import Workspace


def conflict_note(conflicts: Sequence[str]) -> str | None:
    """What an agent whose branch now holds conflict markers is told (None: no conflict)."""
    if not conflicts:
        return None
    return ("Your branch now includes the latest integration branch, and these files "
            "conflict — resolve the conflict markers (keep both sides' intent): "
            + ", ".join(conflicts))


def with_conflicts(feedback: str | None, conflicts: Sequence[str]) -> str | None:
    """`feedback` with the conflict note after it, when there is one."""
    note = conflict_note(conflicts)
    return "\n\n".join(x for x in (feedback, note) if x) or None


def brief(ws: Workspace, doc: PlanDocument, task: Task, artifacts: dict[int, str],
          feedback: str | None, resume_message: str | None,
          conflicts: Sequence[str] = ()) -> str:
    """The prompt of the task's next attempt, as its player can act on it (reports by a
    shell command, or in its output)."""
    player = ws.catalog.players.get(task.player)
    if player is None:
        raise BatonError(f"task {task.id}: unknown player {task.player!r}")
    skills = resolve(task.skills, ws.skills) if task.skills else []
    research = task.mode == Mode.RESEARCH
    can_shell = player.reports_by_shell and (not research or player.research_shell)
    in_output = player.reports_in_output or (research and player.research_reports_in_output)
    return compose(doc, task, skills, artifacts, with_conflicts(feedback, conflicts),
                   resume_message, can_shell=can_shell, in_output=in_output)
