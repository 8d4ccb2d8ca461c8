"""The conversation's contract with a planner — and a scripted planner for tests and demos.

The chat pane sends the person's goal, then each answer, to `Planner.ask`, an async
generator that yields what the planner does as it happens:

* `ResearchStep(text)` — one line about what it is reading or checking;
* `PlannerQuestion(question, recommendation)` — a question that changes the plan,
  with the answer the planner recommends (the person may take it with one key);
* `DraftPlan(document)` — a v1 plan document (a dict, as `baton plan --from` reads);
* `PlannerFailed(message)` — it could not go on; the message is shown as it is;
* `PlannerSpec(text)` — the spec it wrote first when asked to (`/to-spec`).

The App stores a draft through the engine (`store_new_plan`), never itself.
`ScriptedPlanner` replays fixed turns — the in-tree implementation of this port used
across the tests, as httpx's `MockTransport` is for its transports.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Protocol, Union, runtime_checkable


@dataclass(frozen=True)
class ResearchStep:
    text: str


@dataclass(frozen=True)
class PlannerQuestion:
    question: str
    recommendation: str = ""


@dataclass(frozen=True)
class DraftPlan:
    document: dict[str, Any]
    stored_slug: str | None = None  # set when the engine's planner already stored it


@dataclass(frozen=True)
class PlannerFailed:
    message: str


@dataclass(frozen=True)
class PlannerSpec:
    """The spec the planner wrote first (`/to-spec`); the plan is built against it."""

    text: str


PlannerEvent = Union[ResearchStep, PlannerQuestion, DraftPlan, PlannerFailed, PlannerSpec]


@runtime_checkable
class Planner(Protocol):
    """Anything that turns a goal (then answers) into steps, questions and a draft."""

    def ask(self, message: str, *, new: bool = False,
            skill: str | None = None) -> AsyncIterator[PlannerEvent]:
        """Send the goal (first call) or an answer (later calls); yield what follows.
        `new` archives a plan with open work first; `skill` is grilling or to-spec."""
        ...


@dataclass
class ScriptedPlanner:
    """Replays `turns`: the n-th call to `ask` yields the n-th list of events."""

    turns: list[list[PlannerEvent]]
    received: list[str] = field(default_factory=list)
    options: list[dict] = field(default_factory=list)
    delay: float = 0.0

    async def ask(self, message: str, *, new: bool = False,
                  skill: str | None = None) -> AsyncIterator[PlannerEvent]:
        self.received.append(message)
        self.options.append({"new": new, "skill": skill})
        turn = self.turns.pop(0) if self.turns else [
            PlannerFailed("the scripted planner has no more turns")]
        for event in turn:
            await asyncio.sleep(self.delay)
            yield event
