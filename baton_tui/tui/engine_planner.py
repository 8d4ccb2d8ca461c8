"""The engine's planner behind the chat's `Planner` port.

The engine asks all its questions at once; the chat asks them one at a time, each
with its recommendation, and hands the answers back together. Planning runs on a
worker thread with a workspace of its own; its research steps stream into the chat
as they happen.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator

from baton_tui import api
from baton_tui.api import BatonError
from baton_tui.tui.planner_port import (
    DraftPlan, PlannerEvent, PlannerFailed, PlannerQuestion, PlannerSpec, ResearchStep,
)


class EnginePlanner:
    """`Planner` over `baton_tui.planner.drafting` (start, then answer)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.questions: list[dict] = []
        self.answers: dict[int, str] = {}

    def _next_question(self) -> PlannerQuestion | None:
        for number, q in enumerate(self.questions, 1):
            if number not in self.answers:
                return PlannerQuestion(q["question"], q.get("recommendation", ""))
        return None

    async def ask(self, message: str, *, new: bool = False,
                  skill: str | None = None) -> AsyncIterator[PlannerEvent]:
        if self.questions and (new or skill):
            self.questions, self.answers = [], {}  # a fresh goal drops unanswered questions
        if self.questions:
            number = next(n for n in range(1, len(self.questions) + 1) if n not in self.answers)
            self.answers[number] = message
            pending = self._next_question()
            if pending is not None:
                yield pending
                return
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        answering = bool(self.questions)

        def emit(event) -> None:
            if event.kind == "spec":
                loop.call_soon_threadsafe(queue.put_nowait, PlannerSpec(event.text))
            elif event.kind in ("step", "repair"):
                text = event.text if event.kind == "step" else f"fixing the draft: {event.text}"
                loop.call_soon_threadsafe(queue.put_nowait, ResearchStep(text))

        def work():
            session = api.Session(self.root)  # the handle every front end plans through
            try:
                if answering:
                    for number, text in sorted(self.answers.items()):
                        result = session.answer(text, number=number, emit=emit)
                else:
                    result = session.draft(message, new=new, emit=emit, skill=skill)
                return result, result["plan"]
            finally:
                session.close()

        future = loop.run_in_executor(None, work)
        while not future.done() or not queue.empty():
            try:  # not wait_for: on 3.11 it can swallow the worker's cancel
                async with asyncio.timeout(0.1):
                    step = await queue.get()
            except TimeoutError:
                continue
            yield step
        try:
            result, doc = await future
        except BatonError as exc:
            self.questions, self.answers = [], {}
            yield PlannerFailed(exc.message)
            return
        if result["status"] == "questions":
            self.questions, self.answers = list(result["questions"]), {}
            first = self._next_question()
            if first is not None:
                yield first
            return
        self.questions, self.answers = [], {}
        if result["status"] == "plan":
            yield DraftPlan(doc or {}, stored_slug=result["slug"])
        else:
            yield PlannerFailed(result["message"])
