"""Folding events into views: the one place that reads meaning out of the event log.

The conductor, the finisher, run control, `baton status` and the TUI all ask these
views (pending checkpoint and its answer, retries, not-before time, feedback, base
commit, lost landing, flags …) instead of scanning events by hand. `Folder` is
incremental: feed it only the events it has not seen (standard library only).
"""

from __future__ import annotations


from baton_tui.core.events import ENDED, STARTS, STATE_EVENTS, Event, EventKind, State

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

K = EventKind
PROGRESS_KEPT = 20  # progress lines a view keeps (what a reassigned task's new player reads)


class TaskView:
    """What the events say about one task: its state and the latest details."""

    def __init__(self) -> None:
        self.state = State.DRAFT
        self.reason: str | None = None
        self.progress: str | None = None
        self.until: float | None = None
        self.started_at: float | None = None   # set while running: the current stretch began
        self.last_started: float | None = None  # when it last began running (kept after)
        self.ended_at: float | None = None
        self.wall = 0.0
        self.tokens = 0
        self.cost = 0.0
        self.cost_known = False                # some usage event carried a cost
        self.summary: str | None = None
        self.last_report: str | None = None    # the agent's last done summary / failed reason
        self.flags: list[dict[str, Any]] = []  # {"kind", "detail", "at"}
        self.attempts = 0
        self.started = False
        self.attempt: int | None = None        # the latest attempt's id
        self.base: str | None = None           # the integration commit its branch was cut from
        self.branch: str | None = None
        self.workdir: str | None = None
        self.recycled_for: int | None = None   # landed, its worktree now another task's
        self.cut_event: int | None = None      # the event that (last) cut its branch
        self.landed_event: int | None = None
        self.landed_branch_tip: str | None = None  # its branch's commit that landed (None in
                                                   # older stores: nothing is checked then)
        self.must_hold: str | None = None      # the commit its branch must hold now: the one
                                               # that landed, or the one it waits at (failed,
                                               # parked, paused, held, done before landing);
                                               # None while it runs, or with no record
        self.must_hold_log: int | None = None  # waiting: how long its worktree's HEAD log was
                                               # then (moves it records since are its own)
        self.ever_landed = False
        self.lost_landing = False               # its last failure was a landing conflict
        self.finish_only: str | None = None     # it failed in Baton's commit or landing after
                                                # the agent's report: a retry does only that
        self.conflicts: list[str] = []
        self.failure_output: str | None = None  # the output attached to its last failure
        # the latest queueing
        self.not_before = 0.0
        self.feedback: str | None = None
        self.rate_limited = False
        self.rate_limit_retries = 0
        self.autopilot_retries = 0
        # checkpoints
        self.pending_checkpoint: int | None = None   # the open checkpoint's event id
        self.checkpoint: str | None = None           # what it is about to do
        self.checkpoint_evidence: str | None = None
        self.checkpoint_attempt: int | None = None
        self.checkpoint_answer: str | None = None    # "yes" / "no" once answered
        self.asked_checkpoint = False
        self.check: dict[str, Any] | None = None     # the last `check` run: exit, output
        self.held = False                      # its open checkpoint holds a finished task
        self.outside_files: list[str] = []     # written outside its worktree by …
        self.outside_attempt: int | None = None  # … this attempt (the latest such flag)
        self.decisions: list[dict[str, Any]] = []    # checkpoints Baton answered itself
        self.progress_log: list[str] = []      # the latest progress lines (for a handoff)
        self.needs_approval = False            # edited mid-run: waits for `baton approve`
        self.taken = False                     # paused because the person took it over
        self.declared_limit = False            # its agent said it hit its limit (being collected)
        self.reassigned: dict[str, Any] | None = None  # moved to another player since it ran
        self.limit: str | None = None          # paused at a usage limit: known|unknown|declared
        self.limit_probes = 0                  # probes of a limit with no known reset so far
        self.node: str | None = None           # the worker its attempt runs on (a cluster runner)
        self.job: str | None = None            # the engine's key for its attempt (cluster runner)
        self.deferred = False                  # queued: its runner's cluster was unreachable
        self.pr: dict[str, Any] | None = None  # its pull request of a stack: number, url, …
        self.comments: list[dict[str, Any]] = []  # review comments on its lines (`open`: not
                                               # yet fixed by a retry that landed)
        self.sent_comments: list[int] = []     # the comments its latest retry was given
        self.messages: list[dict[str, Any]] = []  # `baton tell`: id, text, at, read

    @property
    def answerable(self) -> bool:
        """A checkpoint waits for the person's answer."""
        return self.pending_checkpoint is not None and self.checkpoint_answer is None


class PlanView:
    """What the events say about the plan as a whole."""

    def __init__(self) -> None:
        self.last_code: int | None = None          # the last run's exit code
        self.run_check: dict[str, Any] | None = None  # the last run-level check: head, exit
        self.first_start: float | None = None
        self.last_end: float | None = None
        self.unbranched = False   # an attempt ran with neither branch nor base (folder mode)
        self.stopped_by: str | None = None        # failures | deadline | budget, until resumed
        self.stop_detail: str | None = None
        self.run_started: float | None = None     # the latest `run`/`resume`
        self.until_failures: int | None = None    # that run's stop conditions
        self.deadline: float | None = None
        self.failures = 0                         # tasks that failed since that run began
        self.player_limits: dict[str, float] = {}  # player -> when its usage limit resets
        self.landed_tip: str | None = None        # the integration commit of the last landing
        self.conductor_died: str | None = None    # why the last conductor stopped unexpectedly
        self.pr: dict[str, Any] | None = None     # the plan's one pull request (`--single`)


class Folder:
    """Views of one plan, kept up to date from new events only."""

    def __init__(self) -> None:
        self.tasks: dict[int, TaskView] = {}
        self.plan = PlanView()
        self.last_id = 0
        # The tasks with a worktree or a held branch, in the order they got one: the few the
        # conductor's checks after each attempt look at, not every task of a 10,000-task plan.
        self.placed: dict[int, None] = {}

    def placed_views(self) -> list[tuple[int, TaskView]]:
        """(id, view) of each task with a worktree or a held branch."""
        return [(task_id, self.tasks[task_id]) for task_id in self.placed]

    def index_placed(self) -> None:
        """`placed` built again from the views (a fold read back from the cache)."""
        self.placed = {task_id: None for task_id, view in self.tasks.items()
                       if view.workdir or view.must_hold}

    def view(self, task_id: int) -> TaskView:
        return self.tasks.get(task_id) or TaskView()

    def feed(self, events: Iterable[Event]) -> "Folder":
        for event in events:
            self.apply(event)
        return self

    def apply(self, event: Event) -> None:
        self.last_id = max(self.last_id, event.id)
        if event.task_id is None:
            self._plan_event(event)
            return
        if event.kind == K.TASK_STARTED and event.data.get("branch") is None \
                and event.data.get("base") is None:
            self.plan.unbranched = True
        if event.kind == K.TASK_RESET:
            self.tasks[event.task_id] = TaskView()
            self.placed.pop(event.task_id, None)
            return
        view = self.tasks.get(event.task_id)
        if view is None:
            view = self.tasks[event.task_id] = TaskView()
        state = STATE_EVENTS.get(event.kind)
        if state is not None:
            self._state_change(view, event, state)
        if event.kind == K.TASK_LANDED and event.data.get("commit"):
            self.plan.landed_tip = event.data["commit"]
        _DETAIL.get(event.kind, _ignore)(view, event)
        if view.workdir or view.must_hold:
            self.placed.setdefault(event.task_id)
        else:
            self.placed.pop(event.task_id, None)

    def _plan_event(self, event: Event) -> None:
        data, plan = event.data, self.plan
        if event.kind == K.RUN_FINISHED:
            plan.conductor_died = None
            plan.last_code = int(data.get("code", 1))
            plan.last_end = event.ts
        elif event.kind == K.RUN_CHECK:
            plan.run_check = {"head": data.get("head"), "exit": data.get("exit")}
        elif event.kind == K.CONDUCTOR_CRASHED:
            plan.conductor_died = str(data.get("error") or "no reason recorded")
        elif event.kind in (K.RUN_STARTED, K.RUN_RESUMED):
            plan.conductor_died = None
            plan.stopped_by = plan.stop_detail = None
            plan.run_started, plan.failures = event.ts, 0
            plan.until_failures, plan.deadline = data.get("until_failures"), data.get("deadline")
        elif event.kind == K.RUN_STOPPED:
            plan.stopped_by, plan.stop_detail = data.get("by"), data.get("detail")
        elif event.kind == K.HANDOFF_PR:
            plan.pr = dict(data)
        elif event.kind == K.PLAN_APPROVED:
            for view in self.tasks.values():
                view.needs_approval = False

    def _state_change(self, view: TaskView, event: Event, state: State) -> None:
        data = event.data
        if view.state == State.RUNNING and view.started_at is not None and state != State.RUNNING:
            view.wall += event.ts - view.started_at
            view.started_at = None
        view.state = state
        view.reason = data.get("reason")
        view.until = data.get("until")
        if state == State.RUNNING:
            view.started = True
            view.started_at = view.last_started = event.ts
            if self.plan.first_start is None and event.kind in STARTS:
                self.plan.first_start = event.ts
        if state in ENDED:
            view.ended_at = event.ts
            if state != State.MERGED and state != State.DISCARDED:
                self.plan.last_end = event.ts
        if state in (State.FAILED, State.PARKED) and self.plan.run_started is not None \
                and event.ts >= self.plan.run_started:
            self.plan.failures += 1 if state == State.FAILED else 0
        if state != State.PAUSED:
            view.limit = None
        elif data.get("limit") and data.get("player") and data.get("until"):
            self.plan.player_limits[data["player"]] = float(data["until"])
        if state == State.RUNNING and event.kind == K.TASK_STARTED:
            view.reassigned = None
        if state == State.RUNNING:
            view.declared_limit = False
        if data.get("tip"):  # landed, or waiting: its branch is held there
            view.must_hold = data["tip"]
            view.must_hold_log = data.get("log") if state != State.LANDED else None
        elif event.kind in _RELEASES:
            view.must_hold = view.must_hold_log = None


# Its branch is its own again (it runs, the person finished it) or no longer Baton's to hold.
# A queueing keeps the hold until the task starts; a failure or a park without a tip keeps
# the one it had (a start refused, autopilot parking a failed task).
_RELEASES = frozenset({K.TASK_STARTED, K.TASK_RESUMED, K.TASK_CONTINUED, K.TASK_DONE,
                       K.TASK_LANDED, K.TASK_MERGED, K.TASK_DISCARDED})


def _ignore(view: TaskView, event: Event) -> None:
    return None


def _paused(view: TaskView, event: Event) -> None:
    data = event.data
    view.taken = data.get("by") == "person"
    view.limit = data.get("limit")
    view.limit_probes = data.get("probe", 0) if view.limit == "unknown" else 0


def _reassigned(view: TaskView, event: Event) -> None:
    view.reassigned = dict(event.data)
    view.until = None  # the old player's reset no longer matters


def _approval_voided(view: TaskView, event: Event) -> None:
    view.needs_approval = True


def _queued(view: TaskView, event: Event) -> None:
    data = event.data
    view.not_before = float(data.get("not_before") or 0)
    view.deferred = bool(data.get("deferred"))
    view.feedback = data.get("feedback")
    view.rate_limited = bool(data.get("rate_limited"))
    view.rate_limit_retries += 1 if view.rate_limited else 0
    view.autopilot_retries += 1 if data.get("by") == "autopilot" else 0
    if data.get("by") == "retry":
        view.sent_comments = list(data.get("comments") or [])


def _started(view: TaskView, event: Event) -> None:
    data = event.data
    view.finish_only = None
    view.attempt = data.get("attempt", view.attempt)
    if data.get("workdir"):
        view.workdir, view.recycled_for = data["workdir"], None
    view.job, view.node = data.get("job"), data.get("node")
    if event.kind == K.TASK_STARTED:
        view.attempts += 1
        if data.get("base"):
            view.base, view.branch, view.cut_event = data["base"], data.get("branch"), event.id


def _checkpoint(view: TaskView, event: Event) -> None:
    data = event.data
    view.held = bool(data.get("held"))
    view.pending_checkpoint = event.id
    view.checkpoint = data.get("what")
    view.checkpoint_evidence = data.get("evidence")
    view.checkpoint_attempt = data.get("attempt")
    view.checkpoint_answer = None
    view.asked_checkpoint = True


def _answered(view: TaskView, event: Event) -> None:
    data = event.data
    if data.get("checkpoint") == view.pending_checkpoint:
        view.checkpoint_answer = data.get("answer")
        if data.get("by") not in (None, "person"):  # Baton decided: part of the final review
            view.decisions.append({"what": view.checkpoint, "evidence": view.checkpoint_evidence,
                                   "answer": data.get("answer"), "by": data.get("by"),
                                   "at": event.ts})


def _continued(view: TaskView, event: Event) -> None:
    view.pending_checkpoint = None
    view.checkpoint_answer = None
    view.held = False


def _done(view: TaskView, event: Event) -> None:
    view.finish_only = None
    if event.data.get("summary"):
        view.summary = event.data["summary"]
        view.last_report = f"done: {view.summary}"


def _failed(view: TaskView, event: Event) -> None:
    view.failure_output = event.data.get("output")
    view.conflicts = list(event.data.get("conflicts") or [])
    view.finish_only = event.data.get("stage")
    view.lost_landing = bool(view.conflicts)


def _landed(view: TaskView, event: Event) -> None:
    if view.sent_comments:  # the retry that was given them landed: they are answered
        sent = set(view.sent_comments)
        view.comments = [{**c, "open": False} if c.get("id") in sent else c
                         for c in view.comments]
        view.sent_comments = []
    view.landed_event, view.ever_landed = event.id, True
    view.landed_branch_tip = event.data.get("tip")
    view.lost_landing = False


def _recycled(view: TaskView, event: Event) -> None:
    view.recycled_for, view.workdir = event.data.get("to"), None


def _progress(view: TaskView, event: Event) -> None:
    if event.data.get("node"):  # a cluster runner's worker took the attempt
        view.node = event.data["node"]
    view.progress = event.data.get("message")
    if view.progress:
        view.progress_log = [*view.progress_log[-(PROGRESS_KEPT - 1):], view.progress]


def _reported(view: TaskView, event: Event) -> None:
    data = event.data
    view.declared_limit = data.get("status") == "limited"
    if data.get("summary"):
        view.summary = data["summary"]
    text = data.get("summary") or data.get("reason")
    if text:
        view.last_report = f"{data.get('status', 'done')}: {text}"


def _usage(view: TaskView, event: Event) -> None:
    view.tokens += int(event.data.get("tokens") or 0)
    if event.data.get("cost") is not None:
        view.cost += float(event.data["cost"])
        view.cost_known = True


def _flagged(view: TaskView, event: Event) -> None:
    data = event.data
    view.flags.append({"kind": data.get("flag") or "note", "detail": str(data.get("message")),
                       "at": event.ts})
    if data.get("flag") == "outside":
        view.outside_files, view.outside_attempt = list(data.get("files") or []), data.get("attempt")


def _comment(view: TaskView, event: Event) -> None:
    view.comments = [*view.comments, {**event.data, "open": True, "at": event.ts}]


def _told(view: TaskView, event: Event) -> None:
    view.messages = [*view.messages, {**event.data, "at": event.ts, "read": False}]


def _told_read(view: TaskView, event: Event) -> None:
    read = set(event.data.get("ids") or ())
    view.messages = [{**m, "read": True} if m.get("id") in read else m for m in view.messages]


def _pr(view: TaskView, event: Event) -> None:
    view.pr = dict(event.data)


def _check(view: TaskView, event: Event) -> None:
    view.check = {"exit": event.data.get("exit"), "output": event.data.get("output", "")}


_DETAIL: dict[str, Callable[[TaskView, Event], None]] = {
    K.TASK_QUEUED: _queued, K.TASK_STARTED: _started, K.TASK_RESUMED: _started,
    K.TASK_CHECKPOINT: _checkpoint, K.TASK_CHECKPOINT_ANSWERED: _answered,
    K.TASK_CONTINUED: _continued, K.TASK_DONE: _done, K.TASK_FAILED: _failed,
    K.TASK_LANDED: _landed, K.TASK_PROGRESS: _progress, K.TASK_REPORTED: _reported,
    K.TASK_USAGE: _usage, K.TASK_FLAGGED: _flagged, K.TASK_CHECK: _check,
    K.TASK_PAUSED: _paused, K.TASK_REASSIGNED: _reassigned,
    K.TASK_APPROVAL_VOIDED: _approval_voided, K.TASK_RECYCLED: _recycled,
    K.TASK_PR: _pr, K.TASK_COMMENT: _comment, K.TASK_TOLD: _told,
    K.TASK_TOLD_READ: _told_read,
}


def fold(events: Iterable[Event]) -> dict[int, TaskView]:
    """Fold a plan's events (in id order) into one view per task."""
    return Folder().feed(events).tasks
