"""`baton demo --tui`: the whole app on the sample repository, offline, with no key.

The planner and every task run on Baton's native `anthropic` player, whose model is the
scripted model server on 127.0.0.1. Besides the per-task scripts of `baton demo`, the
server answers the planner: it reads the package, asks one question, then drafts the
sample plan for whatever goal was typed — and says so in its first message (it is a
script; it never pretends to have read the goal).
"""

from __future__ import annotations

import hashlib
import json

from baton_tui.core.words import Autonomy
from baton_tui.demo.sample import DemoModelServer, model_turns, tasks
from baton_tui.demo.script import Answer, Script, text_of

PLANNER_MARK = "You are Baton's planner."
QUESTION = {"question": "Should the command line print both the word and the line count, or "
                        "words only?",
            "recommendation": "both: words and lines"}


def planner_turns() -> list[dict]:
    """Read, ask, then draft (the goal is filled in from what the person typed)."""
    plan = {"version": 1, "autonomy": Autonomy.GUARDED, "tasks": tasks()}
    return [
        {"text": "This is the demo's scripted planner: whatever the goal and the answer, it "
                 "drafts the same sample plan (word and line counts for textstats). Reading "
                 "the package before planning.",
         "tools": [{"tool": "list_files", "input": {"path": "."}},
                   {"tool": "read_file", "input": {"path": "textstats/core.py"}}]},
        {"text": json.dumps({"questions": [QUESTION]})},
        {"text": "Here is the plan.\n" + json.dumps(plan)},
    ]


class TuiDemoServer(DemoModelServer):
    """Task requests go to their task's script; planner requests to a planner script, a
    fresh one for each planning conversation (keyed by its opening message)."""

    def __init__(self, **kwargs: object):
        super().__init__(model_turns(), **kwargs)
        self.planners: dict[str, Script] = {}

    def _take_turn(self, protocol: str, req: dict, record: dict) -> Answer:
        messages = req.get("messages") or []
        first = text_of(messages[0].get("content")) if messages else ""
        if PLANNER_MARK not in first:
            return super()._take_turn(protocol, req, record)
        key = hashlib.sha256(first.encode()).hexdigest()
        script = self.planners.setdefault(key, Script(planner_turns(), self.side_text))
        answer, record["turn"], record["side"] = script.take(protocol, req)
        return answer


def start_server() -> TuiDemoServer:
    return TuiDemoServer().start()
