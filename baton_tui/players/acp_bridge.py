"""The ACP client that runs an ACP agent as a task's player (`protocol = "acp"`).

The attempt shim starts this bridge as the task's agent process; the bridge starts the real
agent (its own process group), speaks the Agent Client Protocol to it over its stdio with the
`agent-client-protocol` SDK, and prints what happens as JSON lines the player's decoder reads
(acp_events.py). What the agent may do is decided here:

* `fs/read_text_file` and `fs/write_text_file` inside the task's worktree only (a research task
  writes nothing); anything else is refused with an error the agent reads.
* `session/request_permission`: a location outside the worktree is rejected; a research task's
  edits are rejected; reads and searches inside are allowed; any other step inside goes through
  `baton checkpoint`, so the plan's autonomy decides (guarded: the person, however long it
  takes — the agent waits on the answer; watch, autopilot: at once).
* Updates are capped per second (a flood is dropped and counted); an agent that never answers
  `initialize` is stopped after `--start-timeout` seconds.
* SIGTERM/SIGINT (Baton's stop) → `session/cancel`, a short wait, then the agent's group ends.

The first refusal prints one `acp.contained` line: the task's flag. The report channel (the
`baton` MCP server handed to the session, or `baton report` in the agent's shell) decides done.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

FLOOD_PER_SECOND = 200      # updates written per second; the rest are counted and dropped
TEXT_CHUNK = 2000           # agent text is written in pieces of about this many characters
CANCEL_GRACE = 5.0          # seconds an agent gets to end its turn after session/cancel
READ_LIMIT = 4 << 20        # bytes of one file an agent may read through fs/read_text_file
REVIEW_KINDS = frozenset({"read", "search", "think", "fetch"})   # allowed inside, never asked
EDIT_KINDS = frozenset({"edit", "delete", "move"})
HEARTBEAT = 30              # seconds between the lines that say a permission still waits
WAIT_FOR_PERSON = 7 * 86400  # how long a guarded permission waits for the person


def emit(event: str, /, **data: Any) -> None:
    sys.stdout.write(json.dumps({"type": f"acp.{event}", **data}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def inside(root: Path, path: str) -> Path | None:
    """`path` (absolute, as ACP requires) resolved, when it lies in `root`; else None."""
    if not os.path.isabs(path):
        return None
    real = Path(os.path.realpath(path))
    return real if real == root or root in real.parents else None


class Bridge:
    """Baton's side of one ACP connection: the `Client` the SDK calls."""

    def __init__(self, root: Path, research: bool):
        self.root = root
        self.research = research
        self.contained = False
        self.text = ""
        self.window = (0.0, 0)      # (second, updates written in it)
        self.dropped = 0
        self.tools: dict[str, str] = {}
        self.cancel: asyncio.Event | None = None

    # containment ------------------------------------------------------------------------
    def refuse(self, what: str, why: str) -> None:
        emit("refused", what=what, why=why)
        if not self.contained:
            self.contained = True
            emit("contained", detail=f"refused: {what} ({why}); the agent was kept in its "
                                     "worktree — the attempt's log lists every refusal")

    def _flooding(self) -> bool:
        second = int(time.monotonic())
        start, count = self.window
        if start != second:
            start, count = second, 0
        self.window = (start, count + 1)
        if count < FLOOD_PER_SECOND:
            return False
        self.dropped += 1
        if self.dropped == 1:
            self.refuse("a flood of session updates", f"more than {FLOOD_PER_SECOND} a second: "
                        "the rest are dropped and counted")
        return True

    # the Client interface -----------------------------------------------------------------
    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **_: Any) -> Any:
        from acp import RequestError, ReadTextFileResponse

        found = inside(self.root, path)
        if found is None:
            self.refuse(f"read {path}", "outside the task's worktree")
            raise RequestError.invalid_params({"path": path, "reason": "outside the task's worktree"})
        try:
            with open(found, "rb") as fh:
                data = fh.read(READ_LIMIT)
        except FileNotFoundError:
            # Empty, not an error: Gemini CLI checks a file's existence by reading it and
            # takes any error of ours for an unreadable file (a new file could not be made).
            data = b""
        except OSError as exc:
            raise RequestError.internal_error({"path": path, "reason": exc.strerror}) from None
        lines = data.decode("utf-8", "replace").splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        chosen = lines[start:start + limit] if limit is not None else lines[start:]
        emit("fs", op="read", path=str(found))
        return ReadTextFileResponse(content="".join(chosen))

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> Any:
        from acp import RequestError, WriteTextFileResponse

        found = inside(self.root, path)
        if found is None or self.research:
            why = "a research task changes nothing" if found else "outside the task's worktree"
            self.refuse(f"write {path}", why)
            raise RequestError.invalid_params({"path": path, "reason": why})
        found.parent.mkdir(parents=True, exist_ok=True)
        found.write_text(content, encoding="utf-8")
        emit("fs", op="write", path=str(found))
        return WriteTextFileResponse()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **_: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        title = tool_call.title or self.tools.get(tool_call.tool_call_id) or "a tool call"
        kind = tool_call.kind or ""
        paths = [loc.path for loc in tool_call.locations or ()]
        allow, why = await self._decide(title, kind, paths)
        emit("permission", title=title, kind=kind, paths=paths,
             decision="allow" if allow else "reject", why=why)
        wanted = ("allow_once", "allow_always") if allow else ("reject_once", "reject_always")
        option = next((o for kind_ in wanted for o in options if o.kind == kind_), None)
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=option.option_id))

    async def _decide(self, title: str, kind: str, paths: list[str]) -> tuple[bool, str]:
        outside = [p for p in paths if inside(self.root, p) is None]
        if outside:
            self.refuse(f"{title} on {outside[0]}", "outside the task's worktree")
            return False, "outside the task's worktree"
        if self.research and kind in EDIT_KINDS:
            return False, "a research task changes nothing"
        if kind in REVIEW_KINDS:
            return True, "reading inside the worktree"
        code, said = await _checkpoint(title, self.cancel)
        return code == 0, said

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        if self._flooding():
            return
        kind = getattr(update, "session_update", "")
        if kind == "agent_message_chunk":
            self.text += getattr(update.content, "text", "") or ""
            if len(self.text) >= TEXT_CHUNK:
                self.flush_text()
            return
        self.flush_text()
        if kind == "tool_call":
            self.tools[update.tool_call_id] = update.title
            emit("tool", id=update.tool_call_id, title=update.title, kind=update.kind,
                 status=update.status, paths=[loc.path for loc in update.locations or ()])
        elif kind == "tool_call_update" and update.status in ("completed", "failed"):
            emit("tool_done", id=update.tool_call_id, status=update.status,
                 title=update.title or self.tools.get(update.tool_call_id, ""))
        elif kind == "plan":
            emit("plan", entries=[{"content": e.content, "status": e.status}
                                  for e in update.entries])
        elif kind == "usage_update":
            cost = getattr(update, "cost", None)
            emit("usage", used=update.used, cost=cost.amount if cost else None)

    def flush_text(self) -> None:
        if self.text.strip():
            emit("text", text=self.text)
        self.text = ""

    def on_connect(self, conn: Any) -> None:
        pass


async def _checkpoint(title: str, stop: asyncio.Event | None) -> tuple[int, str]:
    """`baton checkpoint` (the shim's `baton`, first on PATH), waiting for the answer as long
    as it takes — the agent is blocked on it, so the turn goes on — with a line every
    `HEARTBEAT` seconds (a wait is not a stall) and given up when Baton stops the attempt."""
    baton = shutil.which("baton") or "baton"
    asked = await asyncio.create_subprocess_exec(
        baton, "checkpoint", f"the agent asks to: {title}"[:2000], "--wait", str(WAIT_FOR_PERSON),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    answer = asyncio.ensure_future(asked.communicate())
    stopped = asyncio.ensure_future(stop.wait()) if stop is not None else None
    waited = 0
    while not answer.done():
        wanted = {answer, *([stopped] if stopped else [])}
        await asyncio.wait(wanted, timeout=HEARTBEAT, return_when=asyncio.FIRST_COMPLETED)
        if stopped is not None and stopped.done() and not answer.done():
            asked.kill()
            await asked.wait()
            answer.cancel()
            return 1, "stopped while waiting for the person"
        if not answer.done():
            waited += HEARTBEAT
            emit("waiting", what=title, seconds=waited)
    if stopped is not None:
        stopped.cancel()
    out, _ = answer.result()
    return asked.returncode or 0, out.decode("utf-8", "replace").strip()


def _mcp_servers() -> list[Any]:
    """Baton's report tools (`baton mcp`), bound to this attempt by its BATON_* variables."""
    from acp.schema import EnvVariable, McpServerStdio

    baton = shutil.which("baton")
    if baton is None:
        return []
    env = [EnvVariable(name=k, value=v) for k, v in os.environ.items() if k.startswith("BATON_")]
    return [McpServerStdio(name="baton", command=baton, args=["mcp"], env=env)]


async def _run(args: argparse.Namespace) -> int:
    from acp import PROTOCOL_VERSION, connect_to_agent, text_block
    from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

    root = Path(os.path.realpath(args.root))
    bridge = Bridge(root, args.research)
    bridge.cancel = cancel = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, cancel.set)
    emit("start", command=args.command)
    try:
        process = await asyncio.create_subprocess_exec(
            *args.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            cwd=str(root), start_new_session=True, limit=64 << 20)
    except OSError as exc:
        emit("result", ok=False, error=f"cannot start {args.command[0]}: {exc.strerror}")
        return 1
    assert process.stdin is not None and process.stdout is not None
    conn = connect_to_agent(bridge, process.stdin, process.stdout)  # type: ignore[arg-type]

    async def turn() -> tuple[bool, str | None]:
        try:
            init = await asyncio.wait_for(conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                    terminal=False),
                client_info=Implementation(name="baton", version=_version())),
                args.start_timeout)
        except asyncio.TimeoutError:
            bridge.refuse("a session", f"the agent never answered initialize in "
                          f"{args.start_timeout:g}s: stopped")
            return False, "the agent never answered initialize"
        agent = init.agent_info
        emit("init", agent=agent.name if agent else None,
             version=agent.version if agent else None)
        servers = [] if args.no_mcp else _mcp_servers()
        session = None
        can_load = bool(init.agent_capabilities and init.agent_capabilities.load_session)
        if args.session and can_load:
            await conn.load_session(cwd=str(root), session_id=args.session,
                                    mcp_servers=servers)
            session = args.session
        if session is None:
            session = (await conn.new_session(cwd=str(root), mcp_servers=servers)).session_id
        emit("session", session_id=session)
        with open(args.prompt_file, encoding="utf-8", errors="replace") as fh:
            prompt = fh.read()
        asked = asyncio.ensure_future(conn.prompt(session_id=session, prompt=[text_block(prompt)]))
        stop = asyncio.ensure_future(cancel.wait())
        await asyncio.wait({asked, stop}, return_when=asyncio.FIRST_COMPLETED)
        if not asked.done():
            await conn.cancel(session_id=session)
            emit("cancelled", reason="stopped")
            try:
                await asyncio.wait_for(asyncio.shield(asked), CANCEL_GRACE)
            except (asyncio.TimeoutError, Exception):
                pass
        stop.cancel()
        bridge.flush_text()
        if not asked.done() or asked.cancelled() or asked.exception() is not None:
            error = None if not asked.done() or asked.cancelled() else _said(asked.exception())
            return False, error or "stopped"
        response = asked.result()
        usage = response.usage
        if usage is not None:
            emit("usage", tokens=usage.total_tokens, input=usage.input_tokens,
                 output=usage.output_tokens)
        return response.stop_reason == "end_turn", response.stop_reason

    try:
        runner = asyncio.ensure_future(turn())
        stopper = asyncio.ensure_future(cancel.wait())
        await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not runner.done():   # stopped: a begun turn sends session/cancel and waits itself
            await asyncio.wait({runner}, timeout=CANCEL_GRACE + 1)
        if runner.done() and not runner.cancelled() and runner.exception() is None:
            ok, reason = runner.result()
        else:
            failed = runner.done() and not runner.cancelled()
            ok, reason = False, _said(runner.exception()) if failed else "stopped"
            runner.cancel()
        stopper.cancel()
    finally:
        _end(process)
        if bridge.dropped:
            emit("dropped", updates=bridge.dropped)
    emit("result", ok=ok, stop_reason=reason)
    return 0 if ok else 1


def _said(exc: BaseException | None) -> str:
    """An error the agent answered with, its data included (a provider's quota message is
    often there, not in the message)."""
    data = getattr(exc, "data", None)
    return f"{exc}: {json.dumps(data, ensure_ascii=False)[:2000]}" if data else str(exc)


def _end(process: asyncio.subprocess.Process) -> None:
    """The agent's whole process group ends (it runs in one of its own)."""
    if process.returncode is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                if os.waitpid(process.pid, os.WNOHANG)[0]:
                    return
            except ChildProcessError:
                return
            time.sleep(0.05)


def _version() -> str:
    from baton_tui import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acp_bridge")
    parser.add_argument("--root", required=True)
    parser.add_argument("--prompt-file", required=True)
    parser.add_argument("--research", action="store_true")
    parser.add_argument("--session")
    parser.add_argument("--no-mcp", action="store_true",
                        help="the agent starts Baton's MCP server itself (its own settings)")
    parser.add_argument("--start-timeout", type=float, default=120.0)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(_run(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
