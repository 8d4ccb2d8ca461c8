"""The protocol's shapes: every request's params and result, every notification, as pydantic
models — the one source the JSON Schema and the TypeScript declarations are generated from.

Params refuse unknown keys (a typo is an error, not silently ignored); results and the records
inside them allow more keys than they name, so a newer Baton can add fields without breaking an
older client. `METHODS` and `NOTIFICATIONS` are the protocol's table of contents.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from baton_tui.api import LOCAL_RUNNER, Autonomy, Mode

PROTOCOL = 1
SUPPORTED = (PROTOCOL,)

# Baton's own error codes, beside JSON-RPC's (-32700 parse, -32600 invalid request, -32601
# unknown method, -32602 bad params, -32603 internal).
PARSE_ERROR, INVALID_REQUEST, UNKNOWN_METHOD, BAD_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603
REFUSED = -32001          # the rule book (or the engine) refused: the CLI's own sentence
NOT_TRUSTED = -32002      # a command of an untrusted baton.toml would run: `baton trust` first
CONFLICT = -32003         # another client changed the plan first, or a merge conflicts
NOT_INTERACTIVE = -32004  # approve, merge and discard are a person's: interactive clients only
NOT_INITIALIZED = -32005  # `initialize` first, with a supported protocol

ERROR_NAMES = {
    PARSE_ERROR: "parse error", INVALID_REQUEST: "invalid request", UNKNOWN_METHOD: "unknown method",
    BAD_PARAMS: "bad params", INTERNAL: "internal error", REFUSED: "refused", NOT_TRUSTED: "not trusted",
    CONFLICT: "conflict", NOT_INTERACTIVE: "not interactive", NOT_INITIALIZED: "not initialized",
}

EditableField = Literal["title", "prompt", "player", "model", "effort", "mode", "depends_on",
                        "skills", "scope", "branch", "checkpoint", "check", "runner"]


class Params(BaseModel):
    """A request's params: unknown keys are refused."""

    model_config = ConfigDict(extra="forbid")


class Record(BaseModel):
    """A result or a record inside one: a newer Baton may add keys."""

    model_config = ConfigDict(extra="allow")


class Empty(Params):
    """No params."""


class Ok(Record):
    """Done; nothing more to say."""

    ok: Literal[True] = True


# -- handshake --------------------------------------------------------------------------------
class ClientInfo(Record):
    name: str = Field(description="the client's name, such as `vscode` or `acp`")
    version: str | None = None


class InitializeParams(Params):
    protocol: int = Field(description="the protocol version the client speaks (this one is 1)")
    client: ClientInfo | None = None
    interactive: bool = Field(default=False, description=(
        "true only for a person's own UI: plan/approve, handoff/merge and task/discard are "
        "refused on any other connection"))


class Capabilities(Record):
    methods: list[str]
    notifications: list[str]
    transports: list[str]
    interactive: bool


class InitializeResult(Record):
    protocol: int
    baton: str = Field(description="Baton's version")
    capabilities: Capabilities
    repo: str = Field(description="the repository (or folder) this server works in")


# -- the plan ---------------------------------------------------------------------------------
class Question(Record):
    question: str
    recommendation: str = ""
    answer: str | None = None


class Task(Record):
    """A task as the plan document (version 1) holds it."""

    id: int
    title: str
    prompt: str = ""
    player: str
    model: str | None = None
    effort: str | None = None
    mode: Mode = Mode.BUILD
    depends_on: list[int] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    scope: list[str] = Field(default_factory=list)
    checkpoint: bool = False
    check: str | None = None
    runner: str = LOCAL_RUNNER


class Plan(Record):
    """The plan document, version 1 (as `baton plan --json` prints it)."""

    version: Literal[1] = 1
    goal: str
    autonomy: Autonomy = Autonomy.GUARDED
    questions: list[Question] = Field(default_factory=list)
    tasks: list[Task]


class PlanResult(Record):
    plan: Plan | None = Field(description="the current plan, or null when there is none")
    approved: bool = False
    slug: str | None = None


class DraftParams(Params):
    goal: str = Field(min_length=1, max_length=20_000)
    skill: Literal["grilling", "to-spec"] | None = None
    new: bool = Field(default=False, description="archive a current plan that has open work")


class AnswerParams(Params):
    answer: str | None = Field(default=None, max_length=20_000, description=(
        "the answer to the first open question (or to `number`)"))
    number: int | None = Field(default=None, ge=1, description="which question (1-based)")
    recommended: bool = Field(default=False, description=(
        "take the recommendation for every question still open"))


class DraftResult(Record):
    status: Literal["questions", "plan", "failed"]
    questions: list[Question] = Field(default_factory=list, description="the open questions")
    plan: Plan | None = None
    slug: str | None = None
    message: str = ""


class NewPlanResult(Record):
    archived: bool


class EditParams(Params):
    id: int = Field(ge=1)
    field: EditableField
    value: Any = Field(description=(
        "the new value: text; a list for depends_on, skills and scope; a boolean for "
        "checkpoint; null (or \"\") for the player's default model, effort or no check"))


class AddParams(Params):
    title: str = Field(min_length=1, max_length=200)
    player: str
    mode: Mode = Mode.BUILD
    depends_on: list[int] = Field(default_factory=list)
    prompt: str = ""
    check: str | None = None


class AddResult(PlanResult):
    id: int


class TaskParams(Params):
    id: int = Field(ge=1)


class RetryParams(TaskParams):
    feedback: str | None = None


class DiscardParams(TaskParams):
    with_dependents: bool = False


class CheckpointAnswerParams(TaskParams):
    answer: Literal["yes", "no"]


class ApproveResult(Record):
    approved: Literal[True] = True
    base_branch: str | None = None
    base_commit: str | None = None
    warnings: list[str] = Field(default_factory=list)


class RunStartParams(Params):
    until_failures: int | None = Field(default=None, ge=1)
    deadline: str | None = None


class RunStartResult(Record):
    started: bool
    conductor: int | None = Field(description="the conductor's pid")


class RunStopResult(Record):
    paused: bool


class RetryResult(Record):
    queued: Literal[True] = True
    conductor: int | None = Field(description="null: it waits for the plan's approval")


class DiscardResult(Record):
    discarded: list[int]
    kept_under: dict[str, str | None] = Field(description="task id -> the ref its last state is kept under")


class TakeResult(Record):
    """What to run in a terminal to take the task over: the agent's own session resumed in the
    worktree (or the person's shell), then `task/done` or `task/retry`."""

    argv: list[str]
    cwd: str
    player: str
    session: str | None = None
    interactive: bool = Field(description="false: the player has no session to resume; argv is a shell")


# -- players, runners, status -----------------------------------------------------------------
class PlayersParams(Params):
    refresh: bool = Field(default=False, description="detect again (a newly signed-in agent joins)")


class PlayerInfo(Record):
    name: str
    ready: bool
    reason: str | None = None
    version: str | None = None
    models: list[str] | None = Field(default=None, description="null: any model name")
    default_model: str | None = None
    efforts: list[str] = Field(default_factory=list)


class PlayersResult(Record):
    players: list[PlayerInfo]


class RunnersResult(Record):
    runners: list[dict[str, Any]]


class TaskStatus(Record):
    """One task in `status/get` (the same object as in `baton status --json`)."""

    id: int
    title: str
    player: str
    mode: str
    state: str
    model: str | None = None
    effort: str | None = None
    depends_on: list[int] = Field(default_factory=list)
    branch: str | None = None
    worktree: str | None = None
    reason: str | None = None
    progress: str | None = None
    checkpoint: dict[str, Any] | None = None
    summary: str | None = None
    last_report: str | None = None
    flags: list[dict[str, Any]] = Field(default_factory=list)
    words: str = ""
    needs_approval: bool = False
    attempts: int = 0
    runner: str = LOCAL_RUNNER


class PlanStatus(Record):
    goal: str
    slug: str
    approved: bool
    autonomy: str
    state: str
    stopped_by: str | None = None
    base_branch: str | None = None
    integration_branch: str | None = None


class Status(Record):
    """`baton status --json`'s object."""

    plan: PlanStatus | None
    conductor: dict[str, Any] | None
    tasks: list[TaskStatus]
    summary: dict[str, Any] | None = None
    cursor: int = Field(default=0, description="the newest event's cursor when this was read")


# -- handoff ----------------------------------------------------------------------------------
class ReviewParams(Params):
    task: int | None = Field(default=None, ge=1)


class ReviewFile(Record):
    path: str
    added: int
    deleted: int
    tasks: list[int]


class Review(Record):
    diff: str = Field(description="the combined diff of landed tasks (or of `task`)")
    files: list[ReviewFile]
    tasks: list[dict[str, Any]]
    onto: str | None = Field(description="the person's branch the work merges onto")
    base: str | None = Field(description="the commit on the person's branch the diff starts from")
    head: str | None = Field(description="the integration branch's tip")


class FileParams(Params):
    path: str = Field(min_length=1, max_length=4096)


class FileSides(Record):
    path: str
    left: str | None = Field(description="the file on the person's branch (null: not there)")
    right: str | None = Field(description="the file with the landed work (null: deleted)")
    binary: bool = False


class MergeParams(Params):
    upTo: int | None = Field(default=None, ge=1, description="merge up to this task only")


class Conflict(Record):
    id: int
    branch: str
    files: list[str]
    command: str


class MergeResult(Record):
    merged: list[int]
    already: list[int]
    onto: str
    conflict: Conflict | None
    not_landed: list[int]
    notes: list[str]


# -- logs and events --------------------------------------------------------------------------
class LogParams(Params):
    task: int = Field(ge=1)
    cursor: int = Field(default=0, ge=0, description="a byte offset returned by the last call")


class LogResult(Record):
    lines: list[str] = Field(description="redacted output lines")
    cursor: int
    cut: int = Field(default=0, description="bytes cut from a long log before the cursor")
    player: str | None = None


class SubscribeParams(Params):
    cursor: int = Field(default=0, ge=0, description=(
        "the last event's cursor the client has (0: every event); events after it arrive as "
        "`event` notifications, then live ones"))
    output: bool = Field(default=True, description="also send running tasks' output (task/output)")


class SubscribeResult(Record):
    cursor: int = Field(description="the newest event's cursor now (replayed ones follow)")


# -- notifications ----------------------------------------------------------------------------
class EventNote(Record):
    cursor: int = Field(description="increases with each event; resume from it")
    kind: str = Field(description="`task.landed`, `plan.approved` … (the store's event kinds)")
    plan: int | None
    task: int | None
    at: float = Field(description="seconds since the epoch")
    data: dict[str, Any]


class PlannerStepNote(Record):
    kind: str = Field(description="read, search, execute, edit, fetch, think or other")
    tool: str | None = None
    text: str
    detail: str = ""
    path: str | None = Field(default=None, description="the file or pattern the step names")


class DeltaNote(Record):
    delta: str


class QuestionNote(Record):
    questions: list[Question]


class CheckpointNote(Record):
    task: int
    what: str
    evidence: str | None = None


class OutputStep(Record):
    kind: str
    text: str
    detail: str = ""


class OutputNote(Record):
    task: int
    lines: list[str]
    steps: list[OutputStep] = Field(default_factory=list)
    dropped: int = Field(default=0, description="lines coalesced away (the log keeps them)")


class LaggedNote(Record):
    cursor: int = Field(description="the last event sent; call events/subscribe with it")


class Method:
    """A request: its params and result models, and whether only a person's UI may call it."""

    def __init__(self, params: type[Params], result: type[BaseModel], doc: str,
                 interactive: bool = False, lane: str = "main"):
        self.params, self.result, self.doc = params, result, doc
        self.interactive, self.lane = interactive, lane


METHODS: dict[str, Method] = {
    "initialize": Method(InitializeParams, InitializeResult, "the handshake; first on every connection"),
    "plan/draft": Method(DraftParams, DraftResult, "the planner on a goal: questions or a plan",
                         lane="planner"),
    "plan/answer": Method(AnswerParams, DraftResult, "answer the planner's question", lane="planner"),
    "plan/get": Method(Empty, PlanResult, "the current plan"),
    "plan/new": Method(Empty, NewPlanResult, "archive the current plan (its work is kept)"),
    "task/edit": Method(EditParams, PlanResult, "set one field of one task, by the rule book"),
    "task/add": Method(AddParams, AddResult, "add a task"),
    "task/remove": Method(TaskParams, PlanResult, "remove a task that has not started"),
    "plan/approve": Method(Empty, ApproveResult, "approve the whole plan", interactive=True),
    "run/start": Method(RunStartParams, RunStartResult, "start (or attach to) the run"),
    "run/stop": Method(Empty, RunStopResult, "pause the running tasks; `run/start` resumes"),
    "task/retry": Method(RetryParams, RetryResult, "queue a task again (with feedback)"),
    "task/done": Method(TaskParams, Ok, "mark a manual or taken-over task done"),
    "task/discard": Method(DiscardParams, DiscardResult, "discard a task's work", interactive=True),
    "task/take": Method(TaskParams, TakeResult, "stop a task's agent; the command to take it over"),
    "task/stop": Method(TaskParams, Ok, "stop one task's agent (branch kept)"),
    "checkpoint/answer": Method(CheckpointAnswerParams, Ok, "answer a task's checkpoint"),
    "players/list": Method(PlayersParams, PlayersResult, "the players, their models and efforts"),
    "runners/list": Method(Empty, RunnersResult, "the configured runners"),
    "status/get": Method(Empty, Status, "the status snapshot, as `baton status --json`"),
    "handoff/review": Method(ReviewParams, Review, "the combined diff of landed work"),
    "handoff/file": Method(FileParams, FileSides, "one file on the person's branch and landed"),
    "handoff/merge": Method(MergeParams, MergeResult, "merge landed work onto the person's branch",
                            interactive=True),
    "log/read": Method(LogParams, LogResult, "a task's output from a cursor"),
    "events/subscribe": Method(SubscribeParams, SubscribeResult,
                               "every event after a cursor, then live ones"),
}

NOTIFICATIONS: dict[str, type[BaseModel]] = {
    "event": EventNote,
    "planner/step": PlannerStepNote,
    "planner/text": DeltaNote,
    "planner/thinking": DeltaNote,
    "question": QuestionNote,
    "checkpoint": CheckpointNote,
    "task/output": OutputNote,
    "lagged": LaggedNote,
}


class ProtocolError(Exception):
    """An error answer: a JSON-RPC or Baton code, its message, optional data."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def as_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error
