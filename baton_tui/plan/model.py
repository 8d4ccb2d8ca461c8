"""The v1 plan document and its tasks (pydantic, `extra="forbid"`)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from baton_tui.errors import BatonError
from baton_tui.validation import error_lines

Mode = Literal["build", "research", "manual"]
Effort = Literal["low", "medium", "high"]
Autonomy = Literal["guarded", "watch", "autopilot"]
MODES: tuple[str, ...] = ("build", "research", "manual")
EFFORTS: tuple[str, ...] = ("low", "medium", "high")
AUTONOMIES: tuple[str, ...] = ("guarded", "watch", "autopilot")


class Question(BaseModel):
    """A planner question, its recommendation, and the person's answer once given."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1)
    recommendation: str = ""
    answer: str | None = None


class Task(BaseModel):
    """One unit of work for one player (see DESIGN.md's task table)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: int = Field(ge=1)
    title: str = Field(min_length=1, max_length=200)
    prompt: str = ""
    player: str = Field(min_length=1)
    model: str | None = None
    effort: Effort | None = None
    mode: Mode = "build"
    depends_on: list[int] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    scope: list[str] = Field(default_factory=list)
    checkpoint: bool = False
    check: str | None = None

    @field_validator("title")
    @classmethod
    def _one_line(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("title must not be empty")
        if "\n" in value or "\r" in value:
            raise ValueError("title must be one line")
        return value

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
    goal: str = Field(min_length=1)
    autonomy: Autonomy = "guarded"
    questions: list[Question] = Field(default_factory=list)
    tasks: list[Task] = Field(min_length=1)

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


def parse_document(raw: Any, source: str = "plan") -> PlanDocument:
    """Validate a decoded document; every problem becomes one line of a BatonError (exit 2)."""
    try:
        return PlanDocument.model_validate(raw)
    except ValidationError as exc:
        lines = error_lines(exc, raw, f"{source}: ")
        raise BatonError(lines[0], code=2, lines=lines) from None


def parse_text(text: str, source: str = "plan") -> PlanDocument:
    """Parse JSON text into a document, with a one-line error for broken JSON."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BatonError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno} "
                         f"column {exc.colno}") from None
    if not isinstance(raw, dict):
        raise BatonError(f"{source}: a plan document must be a JSON object")
    return parse_document(raw, source)
