"""`ScriptedRunner`: the `Runner` whose agents are scripts played in the conductor's own process.

It exists so that the real conductor — its scheduling, supervision, stop conditions, budget,
finishing and landing with real git — can be driven without an agent process: a test hands
a `Conductor` this runner instead of the `RunnerSwitch` (the conductor takes its runner as a
constructor argument; no runner name selects this one). Everything but the agent is real:
the conductor makes the task's worktree, records the attempt and composes its prompt as for
any runner; the prompt is written and the attempt started as a shim would, its output goes
to the attempt's log, and its reports go through the same `baton report` path an agent's do
(`channel.report`, nonce checked) — only the agent's process is a list of steps. The
supervisor's looks at its changed files are a `git status` of its worktree (`changes`), as
a local agent's; a silent script does no work (`activity` tells nothing).

A script is a list of steps (the demo agent's words, `baton_tui.demo.agent`, without its
wall-clock sleeps):

    {"write": "path", "content": "text"}    create or replace a file in the worktree
    {"append": "path", "content": "text"}   append to a file
    {"delete": "path"}                      delete a file
    {"commit": "message"}                   `git add -A` and commit in the worktree
    {"print": "text"}                       a line of output
    {"progress": "text"}                    `baton report progress`
    {"report": "done", "summary": "…"}      `baton report done|failed` (optional "tokens",
                                            "cost"; "reason" for failed)
    {"report": "limited", "until": 1e9}     a usage limit (optional "until", "in" seconds from
                                            now, "reason"): reported, and the turn ends
    {"checkpoint": "what", "evidence": "…"} `baton checkpoint`: a no ends the script (failed),
                                            undecided ends the turn
    {"await": "path"}                       wait until the path (from the worktree) exists
    {"until": fn}                           wait until `fn(ws)` is true (a condition, never a
                                            guessed delay); `ws` has a store of its own
    {"call": fn}                            call `fn(ws)` (what a person does at this point)
    {"exit": 3}                             end with this exit status
    {"hang": True}                          wait until stopped

Scripts are keyed by task id ("1"), by task and player ("1@b": once the task moved to player
b), by player ("@b"), or "*" for any task — the first of those found. A resumed attempt plays the steps after
its script's last limit or checkpoint, as the demo agent does. A stop ends a script at its
next step with the signal's negative exit status, as a killed process's.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton_tui.channel.report import UNDECIDED, caller_from_env, checkpoint, report
from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.core.words import ReportStatus
from baton_tui.paths import private_file, write_private
from baton_tui.plan.model import Task
from baton_tui.runners import changes, launcher
from baton_tui.runners.base import AttemptHandle, Changes, Looked, StartRequest
from baton_tui.runners.logcap import CappedLog
from baton_tui.store.attempt_spec import AttemptSpec
from baton_tui.store.rows import AttemptRow
from baton_tui.trust import ensure_trusted
from baton_tui.workspace import Workspace

Step = Mapping[str, Any]
POLL = 0.02  # how often an `until` condition is asked again


@dataclass(eq=False)
class _Agent:
    """One scripted attempt: what its steps need, and what the conductor reads of it."""

    handle: AttemptHandle
    steps: list[Step]
    cwd: Path
    env: dict[str, str]        # what `baton report` reads: the store, attempt id, nonce, task
    log: CappedLog
    unread: bytearray = field(default_factory=bytearray)  # output not yet given to `output`
    stopped: signal.Signals | None = None
    play: asyncio.Task[int] | None = None
    exit: asyncio.Future[object] | None = None


class ScriptedRunner:
    """Implements `Runner` with scripted agents (see the module docstring)."""

    def __init__(self, ws: Workspace, scripts: Mapping[int | str, Sequence[Step]]):
        self.ws = ws
        self.store = ws.store
        self.scripts = {str(key): list(steps) for key, steps in scripts.items()}
        self._agents: dict[AttemptHandle, _Agent] = {}
        self._adopted: set[AttemptHandle] = set()  # left by another conductor: over

    def steps_for(self, task_id: int, player: str, resumed: bool) -> list[Step]:
        """The steps an attempt plays (a resumed one: those after its last limit or
        checkpoint, where it stopped)."""
        found = next((self.scripts[key] for key in (f"{task_id}@{player}", str(task_id),
                                                    f"@{player}", "*") if key in self.scripts),
                     [])
        steps = list(found)
        if resumed:
            marks = [i for i, s in enumerate(steps)
                     if "checkpoint" in s or s.get("report") == "limited"]
            if marks:
                steps = steps[marks[-1] + 1:]
        return steps

    # starting ---------------------------------------------------------------------------
    async def start(self, request: StartRequest) -> AttemptHandle:
        agent = await asyncio.to_thread(self._record, request)
        agent.exit = asyncio.get_running_loop().create_future()
        agent.play = asyncio.ensure_future(self._play(agent))
        self._agents[agent.handle] = agent
        return agent.handle

    def _record(self, request: StartRequest) -> _Agent:
        """On a worker thread: the task's place, as the local runner makes it, then the
        attempt recorded as a shim would find it, claimed and started."""
        ws = self.ws.sibling()
        try:
            with launcher.start_failures():
                return self._begin(ws, request)
        finally:
            ws.close()

    def _begin(self, ws: Workspace, request: StartRequest) -> _Agent:
        task, plan, workdir = request.task, request.plan, request.workdir
        attempt_id, folder = request.attempt_id, request.folder
        player = ws.catalog.players.get(task.player)
        if player is None:
            raise BatonError(f"task {task.id}: unknown player {task.player!r}")
        if player.runs_agent:
            ensure_trusted(ws, {task.player}, keys=())
        store = ws.store
        prompt_path = write_private(folder / "prompt.md", request.prompt)
        log_path = private_file(folder / "output.log")
        resumed = bool(request.session_id or request.resume_message)
        spec: AttemptSpec = {"argv": ["scripted"], "cwd": str(workdir.path), "env_names": [],
                "stdin_prompt": False, "prompt_path": str(prompt_path), "base": workdir.base,
                "branch": workdir.branch, "mode": task.mode, "resumed": resumed,
                "resume_message": request.resume_message, "readonly": None,
                "secret_prints": {}}
        store.update_attempt(attempt_id, spec=spec, log_path=str(log_path), started=time.time())
        store.append(plan.id, task.id,
                     EventKind.TASK_RESUMED if resumed else EventKind.TASK_STARTED,
                     {"attempt": attempt_id, "player": task.player,
                      "workdir": str(workdir.path), "base": workdir.base,
                      "branch": workdir.branch, "shim_token": None})
        env = {"BATON_STATE": str(ws.paths.store_path), "BATON_ATTEMPT": str(attempt_id),
               "BATON_NONCE": request.nonce, "BATON_TASK": str(task.id)}
        return _Agent(AttemptHandle(attempt_id, task.id),
                      self.steps_for(task.id, task.player, resumed), workdir.path, env,
                      CappedLog(log_path))

    def adopt(self, attempt: AttemptRow) -> AttemptHandle:
        # No script outlives its conductor (`close` ends them): an attempt left by another
        # is over, and collected as its record says.
        handle = AttemptHandle(attempt.id, attempt.task_id)
        self._adopted.add(handle)
        return handle

    def on_its_way(self, attempt: AttemptRow) -> bool:
        return False  # a scripted attempt starts within its `start`

    def runs_here(self, task: Task) -> bool:
        return True  # its steps write in the worktree, as a local agent's

    # playing ----------------------------------------------------------------------------
    async def _play(self, agent: _Agent) -> int:
        """Play the steps; record the exit as a shim records its agent's."""
        code = 0
        try:
            for step in agent.steps:
                ended = await self._step(agent, step)
                if ended is not None:
                    code = ended
                    break
        except asyncio.CancelledError:
            code = -(agent.stopped or signal.SIGKILL)
        except Exception as exc:  # a step that could not be taken: the agent "crashed"
            self._say(agent, f"scripted agent: {type(exc).__name__}: {exc}")
            code = 1
        agent.log.close()
        self.store.update_attempt(agent.handle.attempt_id, exit_status=code, ended=time.time())
        if agent.exit is not None and not agent.exit.done():
            agent.exit.set_result(code)
        return code

    async def _step(self, agent: _Agent, step: Step) -> int | None:
        """Take one step; an exit status when the script ends here."""
        if "print" in step:
            self._say(agent, str(step["print"]))
        elif "until" in step:
            while not await asyncio.to_thread(self._with_ws, step["until"]):
                await asyncio.sleep(POLL)
        elif "await" in step:
            while not (agent.cwd / str(step["await"])).exists():
                await asyncio.sleep(POLL)
        elif "call" in step:
            await asyncio.to_thread(self._with_ws, step["call"])
        elif step.get("hang"):
            await asyncio.Event().wait()  # until stopped (cancelled)
        elif "exit" in step:
            return int(step["exit"])
        elif "checkpoint" in step:
            code, said = await asyncio.to_thread(self._checkpoint, agent, step)
            self._say(agent, said)
            if code == 1:
                await asyncio.to_thread(self._report, agent, ReportStatus.FAILED,
                                        "the person said no at the checkpoint", {})
                return 0
            if code == UNDECIDED:
                return 0
        elif "report" in step:
            status = str(step["report"])
            if status == ReportStatus.LIMITED:
                until = step.get("until") or (time.time() + step["in"] if "in" in step
                                              else None)
                said = await asyncio.to_thread(self._report, agent, status, step.get("reason"),
                                               step, until)
                self._say(agent, said)
                return 0
            text = step.get("summary") if status == ReportStatus.DONE else step.get("reason")
            self._say(agent, await asyncio.to_thread(self._report, agent, status,
                                                     text or step.get("summary"), step))
        elif "progress" in step:
            self._say(agent, await asyncio.to_thread(self._report, agent, ReportStatus.PROGRESS,
                                                     str(step["progress"]), {}))
        else:
            self._say(agent, await asyncio.to_thread(_edit, agent.cwd, step))
        if agent.stopped is not None:  # a stop lands between steps, as a signal would
            return -agent.stopped
        return None

    def _say(self, agent: _Agent, line: str) -> None:
        data = (line + "\n").encode()
        agent.log.write(data)
        agent.unread += data

    def _with_ws(self, fn: Callable[[Workspace], Any]) -> Any:
        ws = self.ws.sibling()
        try:
            return fn(ws)
        finally:
            ws.close()

    def _report(self, agent: _Agent, status: str, message: str | None, step: Step,
                until: float | None = None) -> str:
        """`baton report` as an agent's runs it without a channel: the store, nonce checked."""
        caller = caller_from_env(agent.env)
        try:
            return report(caller, status, message, until=until, tokens=step.get("tokens"),
                          cost=step.get("cost"))
        finally:
            caller.store.close()

    def _checkpoint(self, agent: _Agent, step: Step) -> tuple[int, str]:
        caller = caller_from_env(agent.env)
        try:
            return checkpoint(caller, str(step["checkpoint"]), step.get("evidence"))
        finally:
            caller.store.close()

    # following --------------------------------------------------------------------------
    def look(self, handles: Collection[AttemptHandle]) -> Looked:
        looked = Looked()
        for handle in handles:
            agent = self._agents.get(handle)
            if handle in self._adopted or (agent is not None and agent.play is not None
                                           and agent.play.done()):
                looked.ended.add(handle)
            elif agent is None:
                looked.lost.add(handle)  # not followed (collected already): forget it
        return looked

    def exited(self, handle: AttemptHandle) -> asyncio.Future[object] | None:
        agent = self._agents.get(handle)
        return agent.exit if agent is not None else None

    def output(self, handle: AttemptHandle) -> bytes:
        agent = self._agents.get(handle)
        if agent is None or not agent.unread:
            return b""
        chunk, agent.unread = bytes(agent.unread), bytearray()
        return chunk

    def activity(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
        return {}  # no process: a silent script is idle

    def changed_files(self, handle: AttemptHandle) -> asyncio.Future[Changes] | None:
        agent = self._agents.get(handle)
        return changes.look(agent.cwd) if agent is not None else None

    def stop(self, handle: AttemptHandle, sig: signal.Signals) -> bool:
        agent = self._agents.get(handle)
        if agent is None or agent.play is None or agent.play.done():
            return False
        if agent.stopped is None:
            agent.stopped = sig
        agent.play.cancel()  # a waiting step ends now; a step under way ends after it
        return True

    async def collect(self, handle: AttemptHandle) -> AttemptRow:
        self._adopted.discard(handle)
        agent = self._agents.pop(handle, None)
        if agent is not None and agent.play is not None and not agent.play.done():
            await asyncio.shield(agent.play)  # (ended: `look` saw it done; never reached)
        attempt = self.store.attempt(handle.attempt_id)
        assert attempt is not None
        return attempt

    def close(self) -> None:
        for agent in self._agents.values():
            if agent.play is not None and not agent.play.done():
                agent.stopped = signal.SIGKILL
                agent.play.cancel()


def _edit(cwd: Path, step: Step) -> str:
    """A file step or a commit in the worktree; the line an agent would print for it."""
    if "write" in step:
        path = cwd / str(step["write"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(step.get("content", "")), encoding="utf-8")
        return f"wrote {step['write']}"
    if "append" in step:
        with open(cwd / str(step["append"]), "a", encoding="utf-8") as fh:
            fh.write(str(step.get("content", "")))
        return f"appended to {step['append']}"
    if "delete" in step:
        (cwd / str(step["delete"])).unlink(missing_ok=True)
        return f"deleted {step['delete']}"
    if "commit" in step:
        for argv in (["git", "add", "-A"], ["git", "commit", "-q", "-m", str(step["commit"])]):
            subprocess.run(argv, cwd=cwd, check=True, capture_output=True,
                           stdin=subprocess.DEVNULL, env={**os.environ, "GIT_EDITOR": "true"})
        return f"committed: {step['commit']}"
    raise ValueError(f"unknown scripted step {dict(step)!r}")
