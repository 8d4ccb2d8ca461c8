"""The v1 plan document and its tasks (pydantic, `extra="forbid"`).

Plan text reaches terminals, prompts, commit messages and branch names, and may come
from a model or a careless file: control characters (NUL, escapes, bidi overrides) are
refused, ids and sizes are bounded, and a file is read only up to a limit, so a bad
document is one line per problem (exit 2) and never a traceback or a hang.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from baton_tui.core import visible
from baton_tui.core.errors import BatonError
from baton_tui.core.words import DEFAULT_AUTONOMY, LOCAL_RUNNER, Autonomy, Mode
from baton_tui.pydantic_plugins import skip_discovery
from baton_tui.runners_config import NAME as RUNNER_NAME  # as `[runners.NAME]` (config)
from baton_tui.validation import error_lines

skip_discovery()  # before the models below (see pydantic_plugins)
MODES: tuple[Mode, ...] = tuple(Mode)
EFFORTS: tuple[str, ...] = ("low", "medium", "high")
AUTONOMIES: tuple[Autonomy, ...] = tuple(Autonomy)
Effort = Literal["low", "medium", "high"]
# The fields hold the words as plain strings — a Literal, not the enum: the plan is validated
# strictly from its JSON, and its error messages list the words — derived from the enums
# (a type checker sees the strings they are).
if TYPE_CHECKING:
    ModeWord = str
    AutonomyWord = str
else:
    ModeWord = Literal[tuple(m.value for m in Mode)]
    AutonomyWord = Literal[tuple(a.value for a in Autonomy)]
MAX_ID = 999_999               # task ids: SQLite and every front end hold them easily
MAX_TASKS = 100_000
MAX_TEXT = 200_000             # characters in a prompt
MAX_PLAN_BYTES = 32 << 20      # a plan file larger than this is refused unread
TaskId = Annotated[int, Field(ge=1, le=MAX_ID)]
# Anywhere: C0 controls but tab/newline/CR, DEL, C1, bidi overrides. In one-line fields,
# newline, CR and the Unicode line separators too (a tab is only whitespace).
_CONTROL_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(value: str, one_line: bool = False, info: ValidationInfo | None = None) -> str:
    """`value`, or a ValueError naming the first control character it holds — or the first
    code point a person would not see (`core.visible`). A plan stored before that rule
    still loads (its context says `stored`): front ends and prompts show such text escaped."""
    found = (_CONTROL_LINE if one_line else _CONTROL_TEXT).search(value)
    if found:
        code = ord(found.group(0))
        raise ValueError(f"contains a control character (U+{code:04X}); plan text must be "
                         "printable")
    if not (info is not None and info.context and info.context.get("stored")):
        unseen = visible.hidden(value)
        if unseen:
            raise ValueError(f"contains {unseen}; plan text must be visible — remove it")
    return value


class Question(BaseModel):
    """A planner question, its recommendation, and the person's answer once given."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1, max_length=20_000)
    recommendation: str = Field(default="", max_length=20_000)
    answer: str | None = Field(default=None, max_length=20_000)

    @field_validator("question", "recommendation", "answer")
    @classmethod
    def _printable(cls, value: str | None, info: ValidationInfo) -> str | None:
        return value if value is None else printable(value, info=info)


class Task(BaseModel):
    """One unit of work for one player (see DESIGN.md's task table)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: int = Field(ge=1, le=MAX_ID)
    title: str = Field(min_length=1, max_length=200)
    prompt: str = Field(default="", max_length=MAX_TEXT)
    player: str = Field(min_length=1, max_length=100)
    model: str | None = Field(default=None, max_length=200)
    effort: Effort | None = None
    mode: ModeWord = Mode.BUILD.value
    depends_on: list[TaskId] = Field(default_factory=list, max_length=MAX_TASKS)
    skills: list[Annotated[str, Field(max_length=100)]] = Field(default_factory=list,
                                                                 max_length=100)
    scope: list[Annotated[str, Field(max_length=1000)]] = Field(default_factory=list,
                                                                 max_length=1000)
    checkpoint: bool = False
    check: str | None = Field(default=None, max_length=20_000)
    runner: str = Field(default=LOCAL_RUNNER, min_length=1, max_length=63)
    fallback: list[Annotated[str, Field(min_length=1, max_length=300)]] = Field(
        default_factory=list, max_length=20)
    """Players to move to, in order, when a usage limit's reset is further away than
    `[limits] fallback_after`: `player` or `player:model`."""

    @field_validator("title")
    @classmethod
    def _one_line(cls, value: str, info: ValidationInfo) -> str:
        value = value.strip()
        if not value:
            raise ValueError("title must not be empty")
        if "\n" in value or "\r" in value:
            raise ValueError("title must be one line")
        return printable(value, one_line=True, info=info)

    @field_validator("player", "model")
    @classmethod
    def _name(cls, value: str | None, info: ValidationInfo) -> str | None:
        return value if value is None else printable(value, one_line=True, info=info)

    @field_validator("skills", "scope")
    @classmethod
    def _names(cls, value: list[str], info: ValidationInfo) -> list[str]:
        for item in value:
            printable(item, one_line=True, info=info)
        return value

    @field_validator("fallback")
    @classmethod
    def _fallbacks(cls, value: list[str], info: ValidationInfo) -> list[str]:
        for item in value:
            printable(item, one_line=True, info=info)
            if not item.partition(":")[0].strip():
                raise ValueError(f"fallback {item[:70]!r}: name a player (`codex`, or "
                                 "`opencode:anthropic/claude-sonnet-4` with a model)")
        if len(set(value)) != len(value):
            raise ValueError("fallback lists a player twice")
        return value

    @field_validator("runner")
    @classmethod
    def _runner_name(cls, value: str) -> str:
        if not RUNNER_NAME.fullmatch(value):
            raise ValueError(f"runner {value[:70]!r}: a runner's name is lowercase letters, "
                             "digits, -_.")
        return value

    @field_validator("prompt", "check")
    @classmethod
    def _text(cls, value: str | None, info: ValidationInfo) -> str | None:
        return value if value is None else printable(value, info=info)

    @field_validator("model", "check")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            return None
        return value

    @field_validator("depends_on")
    @classmethod
    def _unique_deps(cls, value: list[int]) -> list[int]:
        if len(set(value)) != len(value):
            raise ValueError("depends_on lists a task twice")
        return value

    @field_validator("skills")
    @classmethod
    def _unique_skills(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("skills lists a skill twice")
        return value

    @field_validator("scope")
    @classmethod
    def _scope_inside_repo(cls, value: list[str]) -> list[str]:
        for entry in value:
            parts = entry.replace("\\", "/").split("/")
            if not entry.strip() or entry.startswith(("/", "~")) or ".." in parts:
                raise ValueError(f"scope entry {entry!r} must be a path inside the repository")
        return value


class PlanDocument(BaseModel):
    """The plan file, version 1 — exactly what `baton plan --json` prints."""

    model_config = ConfigDict(extra="forbid", strict=True)

    version: Literal[1]
    goal: str = Field(min_length=1, max_length=20_000)
    autonomy: AutonomyWord = DEFAULT_AUTONOMY.value
    questions: list[Question] = Field(default_factory=list, max_length=1000)
    tasks: list[Task] = Field(min_length=1, max_length=MAX_TASKS)

    @field_validator("goal")
    @classmethod
    def _goal(cls, value: str, info: ValidationInfo) -> str:
        return printable(value, info=info)

    def task(self, task_id: int) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise BatonError(f"no task {task_id} in the plan (tasks: "
                         f"{', '.join(str(t.id) for t in self.tasks)})")

    def deps(self) -> dict[int, list[int]]:
        return {t.id: list(t.depends_on) for t in self.tasks}

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def parse_document(raw: Any, source: str = "plan", stored: bool = False,
                   by_task: bool = False) -> PlanDocument:
    """Validate a decoded document; every problem becomes one line of a BatonError (exit 2).
    `stored`: a plan already in the store, which loads even with text a newer rule refuses.
    `by_task`: an edit, whose problems are named after the task (`validation.error_lines`);
    an empty `source` then puts nothing before them."""
    try:
        return PlanDocument.model_validate(raw, context={"stored": True} if stored else None)
    except ValidationError as exc:
        lines = error_lines(exc, raw, f"{source}: " if source else "", by_task)
        raise BatonError(lines[0], code=2, lines=lines) from None


def parse_text(text: str, source: str = "plan") -> PlanDocument:
    """Parse JSON text into a document, with a one-line error for broken JSON."""
    if len(text) > MAX_PLAN_BYTES:
        raise BatonError(f"{source}: larger than {MAX_PLAN_BYTES >> 20} MiB: not a plan document")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BatonError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno} "
                         f"column {exc.colno}") from None
    except RecursionError:
        raise BatonError(f"{source}: nested too deeply to be a plan document") from None
    if not isinstance(raw, dict):
        raise BatonError(f"{source}: a plan document must be a JSON object")
    try:
        return parse_document(raw, source)
    except RecursionError:
        raise BatonError(f"{source}: nested too deeply to be a plan document") from None


def read_source(name: str) -> tuple[str, str]:
    """The text of a plan file (`-`: stdin) and its name for messages — read only up to
    MAX_PLAN_BYTES, so `--from /dev/zero` is refused at once instead of read forever."""
    try:
        if name == "-":
            stdin = getattr(sys.stdin, "buffer", None)
            data = stdin.read(MAX_PLAN_BYTES + 1) if stdin is not None else \
                sys.stdin.read(MAX_PLAN_BYTES + 1).encode("utf-8", "surrogateescape")
            source = "stdin"
        else:
            with open(name, "rb") as fh:
                data, source = fh.read(MAX_PLAN_BYTES + 1), name
    except FileNotFoundError:
        raise BatonError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise BatonError(f"{name}: is a folder, not a plan file") from None
    except OSError as exc:
        raise BatonError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_PLAN_BYTES:
        raise BatonError(f"{source}: larger than {MAX_PLAN_BYTES >> 20} MiB: not a plan document")
    if b"\0" in data:
        raise BatonError(f"{source}: holds NUL bytes: not a plan document")
    try:
        return data.decode("utf-8"), source
    except UnicodeDecodeError as exc:
        raise BatonError(f"{source}: not UTF-8 text (byte {exc.start})") from None
