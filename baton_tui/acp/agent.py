"""`baton acp`: Baton as an Agent Client Protocol agent, for editors (Zed, JetBrains, Neovim,
Emacs, Toad) that start it in the project folder and speak ACP over its stdio.

A prompt is a goal, or the answer to the planner's open question, or an edit in words
(`use codex for task 2`, `/task-player 2 codex`). The planner's steps stream as tool calls
(read/search/execute, with paths); its question ends the turn as text with its
recommendation. Once the plan is drafted, in the same turn, approval is asked with
`session/request_permission` (allow_once / reject_once): allowed, the run starts and the turn
lasts through it — tasks as tool calls with live status, the plan entries kept current, a
guarded checkpoint asked the same way with its evidence — to the handoff, where the merge is
asked the same way; rejected, the turn ends with the plan unapproved. `session/cancel`
pauses the run (`resume` in a later prompt goes on). `session/load` shows the repository's
current plan from the store. Each ACP session holds one `api.Session` — the handle `baton
serve` and the app hold — and calls it on worker threads (the handle gives each thread a
workspace of its own).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import Callable
from typing import Any

from baton_tui import api
from baton_tui.acp import words
from baton_tui.core.errors import BatonError
from baton_tui.core.events import State
from baton_tui.core.words import Mode

_POLL = 0.5            # seconds between looks at the run's state
_DIFF_SHOWN = 20_000   # characters of the combined diff shown with the merge question
_PAUSE_WAIT = 60.0     # seconds a cancel waits for the run to pause
_GO_ON = {"run", "resume", "continue", "go", "go on"}


class Session:
    """One editor conversation: its repository's handle, and the run it is following."""

    def __init__(self, handle: "api.Session"):
        self.handle = handle
        self.cancelled = asyncio.Event()
        self.asked: set[str] = set()


async def _on(s: Session, fn: "Callable[[api.Session], Any]") -> Any:
    """`fn(handle)` on a worker thread (the handle gives it a workspace of its own)."""
    return await asyncio.to_thread(fn, s.handle)


def _status(handle: "api.Session") -> dict[str, Any]:
    return handle.status()


def _open_questions(handle: "api.Session") -> list[tuple[int, dict[str, Any]]]:
    session = api.planner_session(handle.ws)
    return [(n, q) for n, q in enumerate(session.get("questions") or [], 1)
            if q.get("answer") is None]


class BatonAgent:
    """The ACP `Agent` the SDK calls: sessions, prompts, cancel."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.sessions: dict[str, Session] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # the protocol -------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **_: Any) -> Any:
        from acp import PROTOCOL_VERSION, InitializeResponse
        from acp.schema import AgentCapabilities, Implementation

        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
            agent_info=Implementation(name="baton", title="Baton", version=api_version()))

    async def authenticate(self, method_id: str, **_: Any) -> Any:
        from acp import AuthenticateResponse

        return AuthenticateResponse()

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> Any:
        from acp import NewSessionResponse

        handle = await asyncio.to_thread(api.Session, cwd)   # or one clear error
        session_id = f"baton-{uuid.uuid4().hex[:12]}"
        self.sessions[session_id] = Session(handle)
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           **_: Any) -> Any:
        from acp import LoadSessionResponse

        self.sessions[session_id] = Session(await asyncio.to_thread(api.Session, cwd))
        await self._replay(session_id, self.sessions[session_id])
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        from acp import PromptResponse, RequestError

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "reason": "no such session: session/new first"})
        session.cancelled = asyncio.Event()
        text = "".join(getattr(block, "text", "") or "" for block in prompt).strip()
        try:
            stop = await self._turn(session_id, session, text)
        except BatonError as exc:
            await self.say(session_id, "\n".join(exc.lines))
            stop = "end_turn"
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    # one turn ---------------------------------------------------------------------------
    async def _turn(self, sid: str, s: Session, text: str) -> str:
        if not text:
            await self.say(sid, "Say what you want built (a goal), or answer the open question.")
            return "end_turn"
        edit = words.edit_of(text)
        if edit is not None:
            return await self._edit(sid, s, *edit)
        if text.startswith("/"):
            await self.say(sid, f"{text.split()[0]}: not a command here. Edit a task with "
                           f"/task-FIELD N VALUE ({', '.join(words.FIELDS)}) or in words "
                           "(`use codex for task 2`); say `resume` to go on with a paused run; "
                           "anything else is a goal, or the answer to the open question.")
            return "end_turn"
        if await _on(s, _open_questions):
            result = await self._plan(sid, s, lambda h, emit: h.answer(text, emit=emit))
        elif text.lower().rstrip(".!") in _GO_ON:
            return await self._go_on(sid, s)
        else:
            result = await self._plan(sid, s, lambda h, emit: h.draft(text, emit=emit))
        if s.cancelled.is_set():     # the planner cannot be interrupted: its result is kept
            return "cancelled"
        if result["status"] == "failed":
            await self.say(sid, f"The planner failed: {result['message']}")
            return "end_turn"
        if result["status"] == "questions":
            await self._ask_questions(sid, s)
            return "end_turn"
        return await self._approve(sid, s)

    async def _plan(self, sid: str, s: Session, fn: Callable[[Any, Any], Any]) -> Any:
        """Run the planner, its steps streamed as tool calls."""
        loop = asyncio.get_running_loop()
        sent: list[Any] = []
        count = [0]
        root = str(s.handle.root)

        def emit(event: Any) -> None:
            step = getattr(event, "data", None)
            if event.kind == "thinking" or (event.kind == "step" and getattr(step, "kind", "")
                                            == "said"):
                sent.append(asyncio.run_coroutine_threadsafe(
                    self.think(sid, event.text), loop))   # its words, as thought
                return
            if event.kind not in ("step", "repair"):
                return
            count[0] += 1
            sent.append(asyncio.run_coroutine_threadsafe(
                self._step(sid, f"planner-{count[0]}", event.text, root), loop))

        result = await asyncio.to_thread(fn, s.handle, emit)
        for future in sent:
            await asyncio.wrap_future(future)
        return result

    async def _step(self, sid: str, call_id: str, text: str, root: str) -> None:
        from acp import start_tool_call
        from acp.schema import ToolCallLocation

        paths = [p if os.path.isabs(p) else os.path.join(root, p) for p in words.step_paths(text)]
        await self.update(sid, start_tool_call(
            call_id, text[:200], kind=words.step_kind(text),  # type: ignore[arg-type]
            status="completed", locations=[ToolCallLocation(path=p) for p in paths]))

    async def _ask_questions(self, sid: str, s: Session) -> None:
        questions = await _on(s, _open_questions)
        lines = ["The planner asks (answer in your next message):"]
        for number, q in questions[:1]:
            lines.append(f"{number}. {q['question']}")
            if q.get("recommendation"):
                lines.append(f"Recommendation: {q['recommendation']}")
        if len(questions) > 1:
            lines.append(f"({len(questions) - 1} more after this one)")
        await self.say(sid, "\n".join(lines))

    async def _edit(self, sid: str, s: Session, task_id: int, field: str, value: str) -> str:
        def apply(handle: "api.Session") -> str:
            converted: object = value
            if field == "depends_on":
                converted = api.parse_ids(value)
            elif field in ("scope", "skills"):
                converted = api.parse_list(value)
            elif field == "checkpoint":
                converted = value.strip().lower() in ("on", "yes", "true")
            elif field in ("model", "check", "effort") and value.strip() in ("", "default", "none"):
                converted = None
            doc = handle.edit(task_id, field, converted)["plan"]
            task = next(t for t in doc["tasks"] if t["id"] == task_id)
            return f"task {task_id}: {field} = {json.dumps(task.get(field))}"

        await self.say(sid, await _on(s, apply))
        return await self._approve(sid, s)

    # approval, the run, the handoff ------------------------------------------------------
    async def _approve(self, sid: str, s: Session) -> str:
        status = await _on(s, _status)
        await self.plan(sid, status)
        if status.get("plan", {}).get("approved"):
            return "end_turn"
        doc = (await _on(s, lambda h: h.plan()))["plan"]
        slug = status["plan"]["slug"]
        allowed = await self.ask(sid, f"approve-{slug}-{uuid.uuid4().hex[:6]}",
                                 f"Approve the plan ({len(doc['tasks'])} tasks) and run it?",
                                 words.plan_summary(doc), "Approve and run", "Not yet")
        if not allowed:
            await self.say(sid, "The plan is not approved. Edit it in words (`use codex for "
                           "task 2`, `/task-title 1 …`) and it is asked again.")
            return "cancelled" if s.cancelled.is_set() else "end_turn"

        def start(handle: "api.Session") -> int:
            handle.approve()
            return int(handle.start()["conductor"])

        return await self._follow(sid, s, await _on(s, start))

    async def _go_on(self, sid: str, s: Session) -> str:
        status = await _on(s, _status)
        if not status.get("plan", {}).get("approved"):
            return await self._approve(sid, s)
        return await self._follow(sid, s, await _on(s, lambda h: api.resume_run(h.ws)))

    async def _follow(self, sid: str, s: Session, pid: int) -> str:
        """The run, as it goes: tasks as tool calls, plan entries, checkpoints asked."""
        seen: dict[int, str] = {}
        while True:
            if s.cancelled.is_set():
                return await self._pause(sid, s, pid, seen)
            status = await _on(s, _status)
            await self._show(sid, s, status, seen)
            running = await asyncio.to_thread(api.conductor_alive, pid, None)
            if status.get("conductor") is None and not running:
                return await self._handoff(sid, s, status)
            try:
                async with asyncio.timeout(_POLL):  # not wait_for: it can swallow a cancel
                    await s.cancelled.wait()
            except TimeoutError:
                pass

    async def _pause(self, sid: str, s: Session, pid: int, seen: dict[int, str]) -> str:
        """`session/cancel` mid-run: the run is paused, and the turn ends once it has (the
        tasks' last states shown), so what the editor shows next is what the store holds."""
        await _on(s, lambda h: h.stop())
        await asyncio.to_thread(api.wait_conductor, pid, _PAUSE_WAIT)
        await self._show(sid, s, await _on(s, _status), seen, ask=False)
        await self.say(sid, "Paused: the running tasks stop with their work kept. "
                       "Send `resume` to go on.")
        return "cancelled"

    async def _show(self, sid: str, s: Session, status: dict[str, Any], seen: dict[int, str],
                    ask: bool = True) -> None:
        """Each task whose state changed since `seen`, as a tool call; the plan entries when
        any did; a checkpoint asked (`ask`)."""
        from acp import start_tool_call, text_block, tool_content, update_tool_call
        from acp.schema import ToolCallLocation

        changed = False
        for task in status["tasks"]:
            state, tid = task["state"], task["id"]
            if seen.get(tid) == state:
                continue
            changed = True
            call_id = f"task-{tid}"
            report = (task.get("last_report") or {}) if isinstance(task.get("last_report"), dict) \
                else {}
            said = report.get("summary") or report.get("reason") or ""
            content = [tool_content(text_block(f"{state}: {said}" if said else state))]
            where = [ToolCallLocation(path=task["worktree"])] if task.get("worktree") else []
            if tid not in seen:
                await self.update(sid, start_tool_call(
                    call_id, f"#{tid} {task['title']} ({task['player']})",
                    kind="edit" if task.get("mode") == Mode.BUILD else "read",
                    status=words.call_status(state),  # type: ignore[arg-type]
                    content=content, locations=where))
            else:
                await self.update(sid, update_tool_call(
                    call_id, status=words.call_status(state),  # type: ignore[arg-type]
                    content=content, locations=where or None))
            seen[tid] = state
            if ask and (state == State.CHECKPOINT or task.get("checkpoint")):
                await self._checkpoint(sid, s, task)
        if changed:
            await self.plan(sid, status)

    async def _checkpoint(self, sid: str, s: Session, task: dict[str, Any]) -> None:
        asked = task.get("checkpoint") or {}
        key = f"{task['id']}:{asked.get('what')}"
        if not asked or key in s.asked:
            return
        s.asked.add(key)
        body = f"Task {task['id']} ({task['title']}) is about to: {asked.get('what')}"
        if asked.get("evidence"):
            body += f"\n\nEvidence:\n{asked['evidence']}"
        yes = await self.ask(sid, f"checkpoint-{task['id']}-{len(s.asked)}",
                             f"Task {task['id']} asks: {asked.get('what')}", body,
                             "Go ahead", "Stop")
        await _on(s, lambda h: h.answer_checkpoint(task["id"], yes))

    async def _handoff(self, sid: str, s: Session, status: dict[str, Any]) -> str:
        landed = [t for t in status["tasks"] if t["state"] == State.LANDED]
        others = [t for t in status["tasks"] if t["state"] not in (State.LANDED, State.MERGED)]
        note = "".join(f"\n#{t['id']} {t['title']}: {t['state']}" for t in others)
        if not landed:
            await self.say(sid, "The run ended with nothing to merge." + note)
            return "end_turn"
        review = await _on(s, lambda h: h.review())
        files = review["files"]
        body = (f"{len(landed)} landed task(s) · {len(files)} file(s) · "
                f"+{sum(f['added'] for f in files)} −{sum(f['deleted'] for f in files)} · "
                f"onto {review['onto']}{note}\n\n"
                + review["diff"][:_DIFF_SHOWN])
        yes = await self.ask(sid, f"merge-{status['plan']['slug']}-{uuid.uuid4().hex[:6]}",
                             f"Merge {len(landed)} landed task(s) onto {review['onto']}?", body,
                             "Merge", "Not now", kind="edit")
        if not yes:
            await self.say(sid, "Not merged: the work stays on its branches. Review it with "
                           "`baton handoff review`, merge with `baton handoff merge`.")
            return "cancelled" if s.cancelled.is_set() else "end_turn"
        merged = await _on(s, lambda h: h.merge())
        conflict = merged["conflict"]
        if conflict:
            await self.say(sid, f"Stopped at a conflict in task {conflict['id']} "
                           f"({', '.join(conflict['files'])}): {conflict['command']}")
        else:
            await self.say(sid, f"Merged task(s) {', '.join(map(str, merged['merged']))} onto "
                           f"{merged['onto']}.")
        await self.plan(sid, await _on(s, _status))
        return "end_turn"

    async def _replay(self, sid: str, s: Session) -> None:
        """A loaded session: the repository's current plan, from the store."""
        status = await _on(s, _status)
        plan = status.get("plan")
        if not plan:
            await self.say(sid, "No plan yet: say what you want built.")
            return
        lines = [f"Plan {plan['slug']} — {'approved' if plan.get('approved') else 'not approved'}"
                 f": {plan.get('goal')}"]
        lines += [f"#{t['id']} {t['title']}: {t['state']}" for t in status["tasks"]]
        await self.say(sid, "\n".join(lines))
        await self.plan(sid, status)
        if await _on(s, _open_questions):
            await self._ask_questions(sid, s)

    # sending ------------------------------------------------------------------------------
    async def update(self, sid: str, update: Any) -> None:
        await self.conn.session_update(session_id=sid, update=update)

    async def say(self, sid: str, text: str) -> None:
        from acp import update_agent_message_text

        await self.update(sid, update_agent_message_text(text + "\n"))

    async def think(self, sid: str, text: str) -> None:
        from acp import update_agent_thought_text

        await self.update(sid, update_agent_thought_text(text + "\n"))

    async def plan(self, sid: str, status: dict[str, Any]) -> None:
        from acp import plan_entry, update_plan

        found = words.entries(status)
        if found:
            await self.update(sid, update_plan([plan_entry(e["content"], priority="medium",
                                                           status=e["status"])  # type: ignore
                                                for e in found]))

    async def ask(self, sid: str, call_id: str, title: str, body: str, yes: str, no: str,
                  kind: str = "other") -> bool:
        """`session/request_permission`: allow_once / reject_once; True when allowed."""
        from acp import text_block, tool_content
        from acp.schema import PermissionOption, ToolCallUpdate

        answer = await self.conn.request_permission(
            session_id=sid,
            tool_call=ToolCallUpdate(tool_call_id=call_id, title=title, kind=kind,  # type: ignore
                                     status="pending", content=[tool_content(text_block(body))]),
            options=[PermissionOption(option_id="allow", name=yes, kind="allow_once"),
                     PermissionOption(option_id="reject", name=no, kind="reject_once")])
        outcome = answer.outcome
        return getattr(outcome, "outcome", "") == "selected" and outcome.option_id == "allow"


def api_version() -> str:
    from baton_tui import __version__

    return __version__


def serve() -> None:
    """Speak ACP on this process's stdin and stdout until the editor closes them. The
    protocol owns the real stdout: fd 1 (and what Baton's children inherit) goes to stderr."""
    from acp import run_agent

    out = os.dup(sys.stdout.fileno())
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = os.fdopen(out, "w")
    agent = BatonAgent()
    try:
        asyncio.run(run_agent(agent))  # type: ignore[arg-type]  # (a Protocol)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        for session in agent.sessions.values():
            session.handle.close()
