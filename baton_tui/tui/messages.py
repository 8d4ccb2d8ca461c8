"""App-wide messages (past tense). Widget-specific ones live on the widget that sends them."""

from __future__ import annotations

from textual.message import Message

from baton_tui.api import Snapshot


class BoardChanged(Message):
    """The poller read a new state of the plan from the store: `changed` names the tasks
    that differ from `since`, the board it read before (None: all of them)."""

    def __init__(self, board: Snapshot, since: Snapshot | None = None,
                 changed: frozenset[int] | None = None) -> None:
        super().__init__()
        self.board = board
        self.since = since
        self.changed = changed

    def can_replace(self, message: Message) -> bool:
        # Only the newest board matters when several queue up.
        return isinstance(message, BoardChanged)


class OutputRead(Message):
    """New lines of a task's agent output (a batch) and the readable steps read from them;
    `reset` starts a new attempt."""

    def __init__(self, task_id: int, lines: list[str], reset: bool = False,
                 steps: list | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        self.lines = lines
        self.reset = reset
        self.steps = steps or []


class PlayersDetected(Message):
    """Player detection finished: name -> Detection."""

    def __init__(self, detections: dict) -> None:
        super().__init__()
        self.detections = detections


class EngineRefused(Message):
    """An engine command refused (a BatonError); shown, never swallowed."""

    def __init__(self, what: str, lines: list[str]) -> None:
        super().__init__()
        self.what = what
        self.lines = lines


class PlanEdited(Message):
    """The engine accepted an edit (`what`: a field name, `add`, `remove`, `autonomy`)."""

    def __init__(self, task_id: int | None, what: str, voided: bool) -> None:
        super().__init__()
        self.task_id = task_id
        self.what = what
        self.voided = voided


class PlanApproved(Message):
    def __init__(self, warnings: list[str]) -> None:
        super().__init__()
        self.warnings = warnings


class PlanStored(Message):
    """A draft from the planner became the current plan."""

    def __init__(self, slug: str) -> None:
        super().__init__()
        self.slug = slug


class RunCommanded(Message):
    """A run-control command went through (`command`: start_run, stop_task, …)."""

    def __init__(self, command: str, task_id: int | None, result: object = None) -> None:
        super().__init__()
        self.command = command
        self.task_id = task_id
        self.result = result


class KeyRefused(Message):
    """A key that does not apply now was pressed; the reason was shown."""

    def __init__(self, action: str, reason: str) -> None:
        super().__init__()
        self.action = action
        self.reason = reason


class HandoffLoaded(Message):
    """The handoff screen read the review (a HandoffReview)."""

    def __init__(self, review: object) -> None:
        super().__init__()
        self.review = review


class MergeProgressed(Message):
    """One task's branch was merged (or found merged already) during a handoff merge."""

    def __init__(self, task_id: int, what: str) -> None:
        super().__init__()
        self.task_id = task_id
        self.what = what


class MergeStopped(Message):
    """A handoff merge stopped at a conflict: {"id", "branch", "files", "command"}."""

    def __init__(self, conflict: dict) -> None:
        super().__init__()
        self.conflict = conflict


class MergeFinished(Message):
    """A handoff merge went through: what it merged now and what was merged already."""

    def __init__(self, merged: list[int], skipped: list[int], onto: str,
                 notes: list[str] | None = None,
                 missing: dict[int, list[str]] | None = None) -> None:
        super().__init__()
        self.merged = merged
        self.skipped = skipped
        self.onto = onto
        self.notes = notes or []      # an interrupted merge finished first, a tag named so…
        self.missing = missing or {}  # landed changes its tree does not hold (task -> files)


class AttentionNeeded(Message):
    """Something waits for the person (checkpoint, question, limit, handoff): bell rung."""

    def __init__(self, what: str, task_id: int | None = None) -> None:
        super().__init__()
        self.what = what
        self.task_id = task_id
