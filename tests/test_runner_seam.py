"""The runner seam as the conductor uses it. Scope, idle and stall supervision through the
runner alone (`Runner.changed_files`, `Runner.activity`): a runner whose agents' worktrees
are out of the conductor's reach — as a remote runner's are — tells what they changed and
whether they work, and its tasks are flagged and kept alive as a local agent's would be. The
conductor makes the place, records the attempt and composes every word before the runner
starts it; a start the runner refuses gives the recorded attempt up. The real conductor,
store and git, with scripted agents (`helpers.scripted_kit`); every wait is on a condition."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from baton_tui.api import reading
from baton_tui.plan.model import Task
from baton_tui.runners.base import AttemptHandle, Changes, StartFailed, StartRequest
from baton_tui.runners.scripted import ScriptedRunner, Step, _Agent
from helpers.scripted_kit import Scripted


class Told(ScriptedRunner):
    """Scripted agents whose runner answers as a remote one does: from what its agents told
    it (a node's events), never by looking at a folder — the files each `write` step names,
    and a measure of work that grows while the agent lives (its CPU seconds on a worker)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.told: dict[int, dict[str, int]] = {}  # attempt -> file -> times written
        self.looks = 0                             # changed_files asked (all attempts)

    def runs_here(self, task: Task) -> bool:
        return False

    async def _step(self, agent: _Agent, step: Step) -> int | None:
        if "write" in step:  # the node's event: this file changed
            files = self.told.setdefault(agent.handle.attempt_id, {})
            files[str(step["write"])] = files.get(str(step["write"]), 0) + 1
        return await super()._step(agent, step)

    def changed_files(self, handle: AttemptHandle) -> asyncio.Future[Changes] | None:
        self.looks += 1
        files = self.told.get(handle.attempt_id)
        if files is None:
            return None
        future: asyncio.Future[Changes] = asyncio.get_running_loop().create_future()
        future.set_result((sorted(files), tuple((f, n, 0) for f, n in sorted(files.items()))))
        return future

    def activity(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
        return {h: time.monotonic() for h in handles if h in self._agents}  # always working


class Remote(Scripted):
    runner_type = Told


def _flags(ws) -> list[dict]:
    return json.loads(reading.snapshot_json(ws.store))["tasks"][0]["flags"]


def _run(repo: Path, stall: str = "60s") -> Remote:
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "setup"], cwd=repo, check=True)
    run = Remote(repo)
    run.config(players=("a",), limits={"stall": stall},
               extra="[supervision]\nidle_turns = 3\n")
    run.plan([{"id": 1, "title": "Edit", "prompt": "Edit.", "player": "a",
               "scope": ["inside.txt"]}], goal="told", autonomy="watch")
    return run


def test_scope_and_idle_flags_come_from_the_runner_not_a_local_path(repo):
    run = _run(repo)

    def flagged(kind: str):
        return lambda ws: any(f["kind"] == kind for f in _flags(ws))

    steps = [{"write": "inside.txt", "content": "in\n"},
             {"write": "outside.txt", "content": "out\n"},
             {"until": flagged("scope")},
             # steps that change no file: the runner's answer stays the same
             *[{"print": f"thinking {i}"} for i in range(4)],
             {"until": lambda ws: any("without changing any file" in f["detail"]
                                      for f in _flags(ws))},
             {"report": "done", "summary": "edited"}]
    assert run.run({"*": steps}) == 0
    task = run.task(1)
    # while it ran (the finish flags the landed diff's files too, on its own)
    live = [f for f in task["flags"] if f["detail"].startswith("editing outside its scope")]
    assert len(live) == 1 and "outside.txt" in live[0]["detail"]
    assert "inside.txt" not in live[0]["detail"]
    assert task["state"] == "landed"


def test_a_silent_agent_the_runner_says_is_working_is_not_stalled(repo):
    """Silent past the stall limit (3 s) for three looks at its files (5 s apart), but its
    runner tells it works: neither flagged nor stopped."""
    run = _run(repo, stall="3s")

    steps = [{"write": "inside.txt", "content": "in\n"},
             {"until": lambda _ws: run.runner is not None and run.runner.looks >= 3},
             {"report": "done", "summary": "worked in silence"}]
    assert run.run({"*": steps}, timeout=120) == 0
    task = run.task(1)
    assert task["state"] == "landed"
    assert not [f for f in task["flags"] if f["kind"] == "stall"], task["flags"]


class Seen(ScriptedRunner):
    """Scripted agents; what each start was given is kept, as the runner received it."""

    requests: list[tuple[StartRequest, bool]] = []  # (the request, its place there then)

    async def start(self, request: StartRequest) -> AttemptHandle:
        Seen.requests.append((request, (request.workdir.path / ".git").is_file()))
        return await super().start(request)


class Refusing(ScriptedRunner):
    async def start(self, request: StartRequest) -> AttemptHandle:
        raise StartFailed("no room on the moon")


def test_the_runner_gets_the_place_made_and_every_word_composed(repo):
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "setup"], cwd=repo, check=True)
    run = Scripted(repo)
    run.runner_type = Seen
    Seen.requests = []
    run.config(players=("a",))
    run.plan([{"id": 1, "title": "Look", "prompt": "Find the answer.", "player": "a",
               "mode": "research"},
              {"id": 2, "title": "Use", "prompt": "Use the answer.", "player": "a",
               "depends_on": [1]}])
    assert run.run({"1": [{"report": "done", "summary": "the answer is 42"}],
                    "2": [{"write": "a.txt", "content": "42\n"},
                          {"report": "done", "summary": "used"}]}) == 0
    (first, _), (second, made) = Seen.requests
    assert made and second.workdir.branch  # its worktree and branch, before the start
    assert "Use the answer." in second.prompt and "the answer is 42" in second.prompt
    assert first.attempt_id != second.attempt_id and second.nonce
    row = run.ws.store.attempt(second.attempt_id)
    assert row is not None and row.task_id == 2 and row.started is not None
    assert Path(row.spec["prompt_path"]).read_text() == second.prompt


def test_a_start_the_runner_refuses_fails_the_task_and_gives_its_attempt_up(repo):
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "setup"], cwd=repo, check=True)
    run = Scripted(repo)
    run.runner_type = Refusing
    run.config(players=("a",))
    run.plan([{"id": 1, "title": "Edit", "prompt": "Edit.", "player": "a"}])
    assert run.run({}) == 1
    task = run.task(1)
    assert task["state"] == "failed" and "no room on the moon" in (task.get("reason") or "")
    plan = run.ws.store.current_plan()
    assert plan is not None
    [attempt] = run.ws.store.attempts(plan.id, 1)
    assert attempt.collected and attempt.started is None  # never to run
