"""The hub: every connected client, the event pump, running tasks' output, back-pressure.

One asyncio loop owns every client. The pump reads new events from the store (the conductor
and every CLI write them there) on a thread of its own and hands them to the loop, which keeps
the newest in a ring and sends each to every subscribed client — so two clients (the app and an
editor) see the same events, in the same order, with the same cursors.

A slow client never slows anything else: its messages wait in its own queue. Past a high-water
mark it stops receiving events and gets one `lagged {cursor}`; it catches up with
`events/subscribe {cursor}` (replayed from the store, then live). Task output is coalesced per
task on each tick and simply skipped for a client that is behind (the log keeps every line).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, Callable

from pydantic import ValidationError

from baton_tui import api
from baton_tui.serve import wire
from baton_tui.serve.methods import HANDLERS

RING = 4096            # recent events kept in memory: a resubscribe within them reads no store
HIGH_WATER = 2000      # messages queued for a client before it is told it lagged
OUTPUT_WATER = 200     # a client with more than this queued gets no task output this tick
POLL = 0.05            # seconds between looks at the store for new events
OUTPUT_TICK = 0.25     # seconds between output batches
OUTPUT_LINES = 40      # lines per task per batch (the rest are counted as dropped)
LINE_CHARS = 2000      # longest output line sent
MAX_LINE = 1 << 20     # longest request accepted (bytes)
INFLIGHT = 64          # requests of one client being handled before its reading waits

K = api.EventKind
_STARTS = {K.TASK_STARTED, K.TASK_RESUMED, K.TASK_CONTINUED}
_ENDS = {K.TASK_DONE, K.TASK_LANDED, K.TASK_MERGED, K.TASK_PAUSED, K.TASK_CHECKPOINT,
         K.TASK_FAILED, K.TASK_PARKED, K.TASK_DISCARDED, K.TASK_RESET}


def event_note(event: Any) -> dict[str, Any]:
    return {"cursor": event.id, "kind": str(event.kind), "plan": event.plan_id,
            "task": event.task_id, "at": event.ts, "data": event.data}


class Hub:
    """Every client of one `baton serve`, and what they all receive."""

    def __init__(self, session: api.Session, transports: list[str]):
        self.session = session
        self.transports = transports
        self.clients: set[Client] = set()
        self.ring: deque[dict[str, Any]] = deque(maxlen=RING)
        self.cursor = session.last_cursor()
        self.pool = ThreadPoolExecutor(max_workers=6, thread_name_prefix="baton-serve")
        self._pump_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="baton-pump")
        self.running: dict[int, dict[str, Any]] = {}   # task id -> its output follower
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._wake = asyncio.Event()

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.session.wrote = self._woken
        status = await self.loop.run_in_executor(self._pump_thread, self.session.status)
        for task in status.get("tasks", []):
            if task["state"] == api.State.RUNNING:
                self.running[task["id"]] = {"player": task["player"], "offset": None}
        self._tasks = [asyncio.create_task(self._pump()), asyncio.create_task(self._output())]

    def _woken(self) -> None:
        """(From a request's thread) what it wrote goes out now, not at the next poll."""
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self._wake.set)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for client in list(self.clients):
            client.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self._pump_thread.shutdown(wait=False, cancel_futures=True)

    # to every client --------------------------------------------------------------------------
    def notify_all(self, method: str, params: dict[str, Any]) -> None:
        """A notification for every initialized client (planner steps, questions)."""
        for client in list(self.clients):
            if client.ready:
                client.notify(method, params)

    def notify_threadsafe(self, method: str, params: dict[str, Any]) -> None:
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self.notify_all, method, params)

    def _publish(self, events: list[Any]) -> None:
        for event in events:
            note = event_note(event)
            self.ring.append(note)
            self.cursor = event.id
            self._follow(note)
            for client in list(self.clients):
                client.offer(note)
            if note["kind"] == K.TASK_CHECKPOINT and not note["data"].get("held"):
                self.notify_all("checkpoint", {"task": note["task"],
                                               "what": note["data"].get("what", ""),
                                               "evidence": note["data"].get("evidence")})

    def _follow(self, note: dict[str, Any]) -> None:
        """Which tasks run now, from the events themselves (their output is followed)."""
        task = note["task"]
        if task is None:
            return
        if note["kind"] in _STARTS:
            self.running[task] = {"player": note["data"].get("player"), "offset": 0}
        elif note["kind"] in _ENDS and task in self.running:
            self.running[task]["ended"] = True  # its last lines go out at the next tick

    async def _pump(self) -> None:
        assert self.loop is not None
        while True:
            try:
                events = await self.loop.run_in_executor(
                    self._pump_thread, self.session.events_after, self.cursor, 1000)
            except Exception as exc:  # a busy or damaged store: say so, keep trying
                print(f"baton serve: reading events: {exc}", file=sys.stderr)
                events = []
            if events:
                self._publish(events)
                continue
            self._wake.clear()
            try:  # a request of ours that wrote wakes it at once; others' writes in POLL
                async with asyncio.timeout(POLL):  # not wait_for: on 3.11 it can swallow
                    await self._wake.wait()        # the cancel of `stop` (the server hung)
            except TimeoutError:
                pass

    # task output ------------------------------------------------------------------------------
    async def _output(self) -> None:
        assert self.loop is not None
        while True:
            await asyncio.sleep(OUTPUT_TICK)
            wanting = [c for c in self.clients if c.live and c.output]
            if not wanting or not self.running:
                self._forget_ended(list(self.running.values()))
                continue
            ending = [f for f in self.running.values() if f.get("ended")]  # read once more
            try:
                batches = await self.loop.run_in_executor(self._pump_thread, self._read_output)
            except Exception as exc:  # a log that went away mid-read: the next tick tries again
                print(f"baton serve: reading output: {exc}", file=sys.stderr)
                continue
            self._forget_ended(ending)
            for params in batches:
                for client in wanting:
                    if client.pending <= OUTPUT_WATER:
                        client.notify("task/output", params)

    def _forget_ended(self, followers: list[dict[str, Any]]) -> None:
        """Stop following tasks that ended (a task started again since has a new follower)."""
        for task_id, follower in list(self.running.items()):
            if follower.get("ended") and any(follower is f for f in followers):
                del self.running[task_id]

    def _read_output(self) -> list[dict[str, Any]]:
        batches = []
        for task_id, follower in list(self.running.items()):
            try:
                if follower["offset"] is None:  # running before we started: from its end
                    follower["offset"] = self.session.log_end(task_id)
                    continue
                got = self.session.read_log(task_id, follower["offset"])
            except api.BatonError:
                continue
            follower["offset"] = got["cursor"]
            lines = got["lines"]
            if not lines:
                continue
            reader = follower.get("reader")
            if reader is None and got.get("player"):
                reader = follower["reader"] = api.step_reader(got["player"])
            steps = [{"kind": s.kind, "text": s.text, "detail": s.detail}
                     for line in lines for s in (reader.feed(line) if reader else [])]
            dropped = max(0, len(lines) - OUTPUT_LINES)
            batches.append({"task": task_id, "lines": [line[:LINE_CHARS] for line in lines[-OUTPUT_LINES:]],
                            "steps": steps[-OUTPUT_LINES:], "dropped": dropped})
        return batches

    # requests ---------------------------------------------------------------------------------
    async def call(self, client: Client, name: str, params: Any) -> Any:
        """Run one request's handler on a worker thread; its planner steps reach everyone."""
        assert self.loop is not None
        handler = HANDLERS[name]
        try:
            return await self.loop.run_in_executor(
                self.pool, handler, self.session, params, self.notify_threadsafe)
        finally:
            self._wake.set()  # what it wrote goes out now, not at the next poll

    async def replay(self, client: Client, cursor: int) -> None:
        """Every event after `cursor` to `client` — from the store while the ring does not reach
        back that far, then from the ring — and live ones after it: none missed, none twice."""
        assert self.loop is not None
        client.live, client.sent = False, cursor
        while True:
            oldest = self.ring[0]["cursor"] if self.ring else self.cursor + 1
            if client.sent >= oldest - 1:
                break
            batch = await self.loop.run_in_executor(
                self.pool, self.session.events_after, client.sent, 500)
            if not batch:
                break
            for event in batch:
                if event.id >= oldest:
                    break
                client.push(_notification("event", event_note(event)))
                client.sent = event.id
            await client.drained()
        for note in self.ring:  # on the loop: nothing is published while this runs
            if note["cursor"] > client.sent:
                client.push(_notification("event", note))
                client.sent = note["cursor"]
        client.live = True


def _notification(method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params},
                      ensure_ascii=False, default=str)


class Client:
    """One connection: its queue of outgoing lines, its subscription, its requests."""

    def __init__(self, hub: Hub, send: Callable[[str], Awaitable[None]], transport: str):
        self.hub, self._send, self.transport = hub, send, transport
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.pending = 0
        self._room = asyncio.Event()
        self._room.set()
        self.ready = False          # initialized
        self.interactive = False
        self.live = False           # receiving events
        self.output = True
        self.sent = 0               # the last event's cursor sent
        self._inflight = asyncio.Semaphore(INFLIGHT)
        self._lanes: dict[str, asyncio.Lock] = {}
        self._writer = asyncio.create_task(self._write())
        self._handling: set[asyncio.Task[None]] = set()
        self.closed = False
        hub.clients.add(self)

    # sending ----------------------------------------------------------------------------------
    def push(self, line: str) -> None:
        if self.closed:
            return
        self.queue.put_nowait(line)
        self.pending += 1
        if self.pending > HIGH_WATER:
            self._room.clear()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.push(_notification(method, params))

    def offer(self, note: dict[str, Any]) -> None:
        """An event, if this client follows them and keeps up; else one `lagged`."""
        if not self.live or note["cursor"] <= self.sent:
            return
        if self.pending > HIGH_WATER:
            self.live = False
            self.notify("lagged", {"cursor": self.sent})
            return
        self.push(_notification("event", note))
        self.sent = note["cursor"]

    def answer(self, id_: Any, result: Any = None, error: wire.ProtocolError | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_}
        if error is not None:
            message["error"] = error.as_json()
        else:
            message["result"] = result
        self.push(json.dumps(message, ensure_ascii=False, default=str))

    async def drained(self) -> None:
        await self._room.wait()

    async def _write(self) -> None:
        try:
            while True:
                line = await self.queue.get()
                if line is None:
                    return
                await self._send(line)
                self.pending -= 1
                if self.pending <= HIGH_WATER // 2:
                    self._room.set()
        except (ConnectionError, OSError, asyncio.CancelledError):
            self.close()
        except Exception as exc:  # the transport's own refusal (a closed WebSocket …)
            print(f"baton serve: {self.transport} client dropped: {exc}", file=sys.stderr)
            self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.hub.clients.discard(self)
            self.queue.put_nowait(None)
            self._room.set()

    async def finish(self) -> None:
        """Send what is queued, then stop (the end of a stdio session)."""
        self.queue.put_nowait(None)
        try:
            await asyncio.wait_for(self._writer, 10)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass
        self.close()

    # receiving --------------------------------------------------------------------------------
    async def receive(self, raw: bytes | str) -> None:
        """One line (or WebSocket message) from the client: answered, never fatal."""
        await self.drained()  # a client that never reads stops being read, nothing more
        if len(raw) > MAX_LINE:
            self.answer(None, error=wire.ProtocolError(
                wire.INVALID_REQUEST, f"request too large ({len(raw)} bytes; the limit is "
                f"{MAX_LINE} bytes)"))
            return
        if not raw.strip():
            return
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            message = json.loads(text)
        except UnicodeDecodeError as exc:
            self.answer(None, error=wire.ProtocolError(
                wire.PARSE_ERROR, f"parse error: the line is not UTF-8 ({exc.reason} at byte {exc.start})"))
            return
        except ValueError as exc:
            self.answer(None, error=wire.ProtocolError(wire.PARSE_ERROR, f"parse error: {exc}"))
            return
        await self._inflight.acquire()
        task = asyncio.create_task(self._handle(message))
        self._handling.add(task)
        task.add_done_callback(self._handling.discard)

    async def settle(self) -> None:
        """Wait for the requests being handled (their answers are queued when this returns)."""
        while self._handling:
            await asyncio.gather(*self._handling, return_exceptions=True)

    async def _handle(self, message: Any) -> None:
        try:
            id_ = message.get("id") if isinstance(message, dict) else None
            try:
                name, params, is_call = _parse(message)
                spec = wire.METHODS[name]
                lane = self._lanes.setdefault(spec.lane, asyncio.Lock())
                async with lane:
                    valid, result = await self._dispatch(name, spec, params)
                if is_call:
                    self.answer(id_, result)
                if isinstance(valid, wire.SubscribeParams):
                    await self.hub.replay(self, valid.cursor)
            except wire.ProtocolError as exc:
                if isinstance(message, dict) and "id" in message or exc.code in (
                        wire.INVALID_REQUEST, wire.PARSE_ERROR):
                    self.answer(id_ if isinstance(id_, (int, str)) else None, error=exc)
        finally:
            self._inflight.release()

    async def _dispatch(self, name: str, spec: wire.Method, raw: Any) -> tuple[wire.Params, Any]:
        """The validated params and the result of one request."""
        try:
            params = spec.params.model_validate(raw if raw is not None else {})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'params'}: {e['msg']}"
                                 for e in exc.errors()[:5])
            raise wire.ProtocolError(wire.BAD_PARAMS, f"bad params for {name}: {problems}") from None
        if isinstance(params, wire.InitializeParams):
            return params, self._initialize(params)
        if not self.ready:
            raise wire.ProtocolError(wire.NOT_INITIALIZED, "call initialize first "
                                     f"({{\"protocol\": {wire.PROTOCOL}, \"interactive\": …}})")
        if spec.interactive and not self.interactive:
            raise wire.ProtocolError(wire.NOT_INTERACTIVE, (
                f"{name} is the person's to do: only a person's own UI (a connection that said "
                "\"interactive\": true at initialize) may approve, merge or discard; a person "
                "can do it with " + _PERSON.get(name, "the app")))
        if isinstance(params, wire.SubscribeParams):
            self.output = params.output
            self.live = False
            return params, {"cursor": self.hub.cursor}
        try:
            result = await self.hub.call(self, name, params)
        except api.BatonError as exc:
            raise wire.ProtocolError(_code_of(exc.message), exc.message, {"exit": exc.code}) from None
        except Exception as exc:  # a bug: one clear error for this request, the server goes on
            print(f"baton serve: {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            raise wire.ProtocolError(wire.INTERNAL, f"{name} failed: {type(exc).__name__}: {exc}") from None
        return params, spec.result.model_validate(result).model_dump(mode="json")

    def _initialize(self, params: wire.InitializeParams) -> dict[str, Any]:
        if params.protocol not in wire.SUPPORTED:
            raise wire.ProtocolError(
                wire.NOT_INITIALIZED, f"protocol {params.protocol} is not supported; this Baton "
                f"speaks protocol {', '.join(map(str, wire.SUPPORTED))}",
                {"supported": list(wire.SUPPORTED)})
        self.ready, self.interactive = True, params.interactive
        from baton_tui import __version__

        return {"protocol": wire.PROTOCOL, "baton": __version__,
                "capabilities": {"methods": list(wire.METHODS), "notifications": list(wire.NOTIFICATIONS),
                                 "transports": self.hub.transports, "interactive": self.interactive},
                "repo": str(self.hub.session.root)}


_PERSON = {"plan/approve": "`baton approve` (or a in the app)",
           "handoff/merge": "`baton handoff merge` (or M at the app's handoff)",
           "task/discard": "`baton discard N` (or x at the app's handoff)"}


def _parse(message: Any) -> tuple[str, Any, bool]:
    """(method, params, whether it wants an answer) of a JSON-RPC 2.0 request."""
    if isinstance(message, list):
        raise wire.ProtocolError(wire.INVALID_REQUEST, "invalid request: batches are not "
                                 "supported; send one request object per line")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" \
            or not isinstance(message.get("method"), str):
        raise wire.ProtocolError(wire.INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 "
                                 "object with \"jsonrpc\": \"2.0\" and a \"method\"")
    id_ = message.get("id")
    if "id" in message and not (id_ is None or isinstance(id_, (str, int))) or isinstance(id_, bool):
        raise wire.ProtocolError(wire.INVALID_REQUEST, "invalid request: id must be a string or "
                                 "an integer")
    name = message["method"]
    if name not in wire.METHODS:
        raise wire.ProtocolError(wire.UNKNOWN_METHOD, f"unknown method {name[:80]!r}",
                                 {"methods": list(wire.METHODS)})
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        raise wire.ProtocolError(wire.BAD_PARAMS, "bad params: params must be an object")
    return name, params, "id" in message


def _code_of(message: str) -> int:
    if "`baton trust`" in message:
        return wire.NOT_TRUSTED
    if "conflict" in message or "changed while" in message:  # another client edited first
        return wire.CONFLICT
    return wire.REFUSED
