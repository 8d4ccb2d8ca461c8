"""`DaskRunner`: attempts on a Dask cluster's workers, behind the runner seam.

A start prepares the task's worktree here exactly as a local start does (its branch is cut
from the integration branch, so landing stays local), then pushes the worktree's exact
commit to the exchange (`exchange` module), records the attempt — its Dask key first, before
anything is submitted — and submits `dask_node.run_job` asking for one unit of the resource
named after the task's player (`[runners.NAME] resources` may rename it). The job is
`fire_and_forget`: the scheduler keeps it when this conductor goes away, and the next one
re-attaches by its key; a job Dask runs twice finds its claim on the exchange and runs
nothing, so no agent ever runs twice for one attempt.

Progress comes back as the worker's events on the job's topic (`Client.subscribe_topic`):
appended to the attempt's log and read by the follower as a local agent's output. A stop
runs `dask_node.signal_job` on the worker (`Client.run`): Dask cannot cancel a running task,
Baton ends the agent's process group itself. At the end, `collect` fetches the record and
the result from the exchange, puts the agent's work into the local worktree as a local agent
would have left it, replays the agent's reports into the store, and hands the attempt to
the finisher like any other: report, check, commit and landing are this machine's.

`distributed` is imported here only, and this module only when a task names a Dask runner.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import tempfile
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton_tui import killpoints, trust
from baton_tui.runners.dask import cluster
from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.gitops.git import GitError
from baton_tui.gitops.refs import read_ref
from baton_tui.paths import private_file
from baton_tui.plan.model import Task
from baton_tui.runners.dask import node as dask_node
from baton_tui.runners.dask import exchange
from baton_tui.runners import launcher
from baton_tui.runners.base import (
    AttemptHandle, Changes, Looked, StartDeferred, StartFailed, StartRequest,
)
from baton_tui.store.attempt_spec import AttemptSpec
from baton_tui.store.rows import AttemptRow, PlanRow
from baton_tui.workspace import Workspace

if TYPE_CHECKING:
    from distributed import Client, Future

    from baton_tui.runners_config import RunnerSettings

K = EventKind
LOST_AFTER = 10.0   # a claimed attempt's worker gone from the scheduler this long: lost
WORKERS_EVERY = 2.0  # the scheduler's list of workers is asked at most this often
STOP_AGAIN = 2.0     # a stop with the same signal is sent again at most this often
RECORDS_EVERY = 3.0  # the exchange is asked for finished jobs' records this often
RECONNECT_AFTER = 5.0  # a scheduler that could not be reached is not asked again sooner


@dataclass(eq=False)
class _Live:
    """What the Dask runner knows of one attempt it follows."""

    job: str
    future: "Future | None"
    log_path: str | None
    node: str | None = None
    pending: bytearray = field(default_factory=bytearray)  # output not read by the follower
    gone_since: float | None = None                         # its worker left the scheduler
    exit: "asyncio.Future[object] | None" = None
    told: bool = False                                      # its node is recorded
    finished: bool = False                                  # its record is on the exchange
    progress: list[tuple[int, str]] = field(default_factory=list)  # reports to record
    streamed: set[int] = field(default_factory=set)         # node events recorded live
    last_stop: tuple[int, float] | None = None              # the last stop sent, and when


def _gist(exc: GitError) -> str:
    lines = [line for line in exc.stderr.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else str(exc))[:300]


def record_node(live: _Live | None) -> str:
    return (live.node if live is not None else None) or "its worker"


def _ran_on(live: _Live | None) -> str:
    """Why a record that appeared while its agent still ran is refused (its node writes one
    only once its agent ended: someone else made this one, the agent most likely)."""
    return (f"a record of it appeared on the exchange while its agent still ran on "
            f"{record_node(live)}: not one its worker made — refused, and that agent was ended")


def _wake(future: "asyncio.Future[object]") -> None:
    """Complete `future` from any thread (on its loop's)."""
    def done() -> None:
        if not future.done():
            future.set_result(None)

    try:
        future.get_loop().call_soon_threadsafe(done)
    except RuntimeError:  # its loop is closed: nobody waits
        pass


class DaskRunner:
    """Attempts as Dask jobs (see the module docstring)."""

    def __init__(self, ws: Workspace, name: str, settings: "RunnerSettings"):
        self.ws = ws
        self.store = ws.store
        self.name = name
        self.settings = settings
        self._client: "Client | None" = None
        self._connect_lock = threading.Lock()
        self._failed: tuple[float, BatonError] | None = None  # the last failed connection
        self._live: dict[AttemptHandle, _Live] = {}
        self._lock = threading.Lock()  # `_Live.pending` and `node`: written on Dask's thread
        self._workers_seen: tuple[float, set[str]] | None = None
        self._records_due = 0.0
        self._forged: set[tuple[int, str]] = set()  # (attempt, record commit) flagged
        self._records: threading.Thread | None = None
        # Tasks start and end together: their pushes and fetches go as one transfer.
        where = self.settings.exchange
        self._push_bases = exchange.Batched[str](
            lambda specs: exchange.push(ws.root, where, *specs))
        self._fetch_records = exchange.Batched[str](
            lambda specs: exchange.fetch(ws.root, where, *specs))

    # the cluster -----------------------------------------------------------------------------
    def client(self) -> "Client":
        """The scheduler's client, connected on first use (blocking: a worker thread's). A
        failed connection is not tried again for `RECONNECT_AFTER` seconds: the starts
        waiting on it hear the same answer, not one timeout each."""
        with self._connect_lock:
            if self._client is not None and self._client.status in ("running", "connecting"):
                return self._client
            if self._failed is not None and time.monotonic() - self._failed[0] < RECONNECT_AFTER:
                raise self._failed[1]
            self.ensure_trusted()
            try:
                self._client = cluster.connect(self.settings)
            except BatonError as exc:
                self._failed = (time.monotonic(), exc)
                raise
            self._failed = None
            self._warm(self._client)
            return self._client

    @staticmethod
    def _warm(client: "Client") -> None:
        """A cold worker loads the node's code now, not in the first job's path — on a thread
        of its own (`Client.run` takes no `wait=False` for a plain function: the workers
        refuse it, and the scheduler logs an error for each)."""
        def warm() -> None:
            try:
                client.run(dask_node.warm, on_error="ignore")
            except Exception:
                pass

        threading.Thread(target=warm, name="baton-dask-warm", daemon=True).start()

    def connect_soon(self) -> None:
        """Connect on a thread of its own (importing `distributed` and the handshake take a
        second or more): the conductor's start-up and the starts' worktrees go on meanwhile."""
        def connect() -> None:
            try:
                self.client()
            except Exception:  # the start that needs it says why
                pass

        if self._client is None and not self._connect_lock.locked():
            threading.Thread(target=connect, name="baton-dask-connect", daemon=True).start()

    def ensure_trusted(self) -> None:
        """Refuse (BatonError) a runner from an untrusted repository `baton.toml`."""
        ws = self.ws.sibling()  # (called on worker threads: a connection of its own)
        try:
            trust.ensure_trusted(ws, (), keys=(f"runners.{self.name}",))
        finally:
            ws.close()

    # starting -----------------------------------------------------------------------------
    async def start(self, request: StartRequest) -> AttemptHandle:
        loop = asyncio.get_running_loop()
        attempt_id, live = await asyncio.to_thread(self._start, request)
        handle = AttemptHandle(attempt_id, request.task.id)
        self._follow(handle, live, loop)
        return handle

    def _start(self, request: StartRequest) -> tuple[int, _Live]:
        task = request.task
        if task.checkpoint:
            raise StartFailed(f"checkpoint tasks run on this machine for now (runner "
                              f"{self.name}): `baton task-runner {task.id} local`")
        try:
            self.ensure_trusted()
        except BatonError as exc:  # the person's to settle: visible, not waited through
            raise StartFailed(f"runner {self.name}: {exc.message}") from None
        self.connect_soon()
        ws = self.ws.sibling()
        try:
            with launcher.start_failures(f" on runner {self.name}"):
                return self._submit(ws, request)
        finally:
            ws.close()

    def _submit(self, ws: Workspace, request: StartRequest) -> tuple[int, _Live]:
        task, plan, workdir, prompt = request.task, request.plan, request.workdir, request.prompt
        if workdir.path == ws.root:  # folder mode: no worktree of its own
            raise StartFailed(f"runner {self.name} needs a git repository (git 2.38 or newer)")
        pushed = exchange.snapshot(workdir.path, "baton: the worktree as the task starts").commit
        try:
            client = self.client()
        except BatonError as exc:  # unreachable: nothing sent, the task waits queued
            raise StartDeferred(f"runner {self.name}: {exc.message}") from None
        store = ws.store
        session_id, resume_message = request.session_id, request.resume_message
        resumed = bool(session_id or resume_message)
        where = self._session_node(ws, plan, task) if resumed else None
        if where is not None and where not in (self._workers(fresh=True) or {where}):
            # The worker that holds the agent's session is gone: a fresh session on another,
            # briefed with the handoff packet (as a task moved to another player is).
            prompt = request.rebrief(where) if request.rebrief is not None else prompt
            session_id, resume_message, resumed, where = None, None, False, None
        attempt_id = request.attempt_id
        job = exchange.job_name(plan.slug, task.id, attempt_id)
        refs = exchange.refs_of(job)
        for ref in refs.values():
            exchange.check_ref(ws.root, ref)
        log_path = private_file(request.folder / "output.log")
        spec: AttemptSpec = {"runner": self.name, "job": job, "refs": refs, "pushed": pushed,
                "cwd": str(workdir.path), "base": workdir.base, "branch": workdir.branch,
                "mode": task.mode, "resumed": resumed, "resume_message": resume_message,
                "argv": [], "env_names": [], "remote": True,
                "seal": secrets.token_hex(16)}  # binds its record to it (`exchange.seal`)
        # The key is recorded before anything is submitted: a conductor killed from here on
        # finds it, and re-attaches instead of submitting the attempt again.
        store.update_attempt(attempt_id, spec=spec, log_path=str(log_path))
        try:
            self._push_bases(f"{pushed}:{refs['base']}")
        except GitError as exc:  # nothing was submitted: the attempt never runs
            store.abandon_attempt(attempt_id)
            raise StartDeferred(f"runner {self.name}: cannot push to the exchange "
                                f"{self.settings.exchange}: {_gist(exc)}") from None
        payload = {
            "job": job, "exchange": self.settings.exchange, "base": pushed,
            "workdir": self.settings.workdir, "doc": request.doc.dump(), "task": task.id,
            "slug": plan.slug, "prompt": prompt, "resume_message": resume_message,
            "session_id": session_id, "trusted": self._trusted_hash(ws),
            "versions": cluster.versions(), "resource": self.settings.resource_of(task.player),
            "seal": spec["seal"]}
        # What a conductor killed before the submission was recorded submits again (the
        # plan's document is read back from the store; the claim makes a double harmless).
        store.note_attempt(attempt_id, "payload", {**payload, "doc": None, "where": where,
                                                   "seal": None})  # (in the spec already)
        store.claim_attempt(attempt_id, os.getpid())  # started: it is the cluster's now
        future = self._send(client, payload, where)
        store.note_attempt(attempt_id, "submitted", time.time())
        store.append(plan.id, task.id, K.TASK_RESUMED if resumed else K.TASK_STARTED,
                     {"attempt": attempt_id, "player": task.player, "workdir": str(workdir.path),
                      "base": workdir.base, "branch": workdir.branch, "runner": self.name,
                      "job": job})
        return attempt_id, _Live(job, future, str(log_path))

    @staticmethod
    def _send(client: "Client", payload: dict[str, Any], where: str | None) -> "Future":
        """Submit the job: one unit of its player's resource, kept by the scheduler when
        this conductor goes away (`fire_and_forget`)."""
        from distributed import fire_and_forget  # lazy: the optional extra

        future = client.submit(
            dask_node.run_job, payload, key=payload["job"], pure=False, retries=0,
            resources={payload["resource"]: 1},
            **({"workers": [where], "allow_other_workers": True} if where else {}))
        fire_and_forget(future)
        return future

    def _trusted_hash(self, ws: Workspace) -> str | None:
        """The hash of the baton.toml the person trusted, when it is this file as it is (a
        node runs the repository's commands only from that very file)."""
        digest = ws.loaded.project_hash()
        trusted = ws.store.trusted_hash(str(ws.paths.project_config))
        return digest if digest is not None and digest == trusted else None

    def _session_node(self, ws: Workspace, plan: PlanRow, task: Task) -> str | None:
        """The worker the task's last attempt ran on: it holds the agent's session (a
        player's own, or whatever an agent keeps on its machine): a resume goes back there."""
        for attempt in reversed(ws.store.attempts(plan.id, task.id)):
            if attempt.started is not None and attempt.spec.get("remote"):
                node = attempt.spec.get("node")
                return str(node) if node else None
        return None

    def _follow(self, handle: AttemptHandle, live: _Live, loop: asyncio.AbstractEventLoop
                ) -> None:
        """Stream the job's events into its log, and wake the loop when it ends."""
        self._live[handle] = live
        exit: asyncio.Future[object] = loop.create_future()
        live.exit = exit

        def wake() -> None:
            if not exit.done():
                exit.set_result(None)

        def done(_future: object) -> None:
            loop.call_soon_threadsafe(wake)

        if live.future is not None:
            live.future.add_done_callback(done)

        def heard(event: Any) -> None:
            _at, message = event if isinstance(event, tuple) else (None, event)
            if not isinstance(message, dict):
                return
            with self._lock:
                if message.get("node") and live.node is None:
                    live.node = str(message["node"])  # (recorded by the next `look`)
                if isinstance(message.get("progress"), str):
                    live.progress.append((int(message.get("event") or 0), message["progress"]))
                text = message.get("text")
                if isinstance(text, str) and text:
                    data = text.encode("utf-8", "replace")
                    live.pending += data
                    if live.log_path:
                        with open(live.log_path, "ab") as log:
                            log.write(data)

        try:
            self.client().subscribe_topic(live.job, heard)
        except Exception:  # no live view then: the whole output comes with the record
            pass

    def _record_progress(self, handle: AttemptHandle, live: _Live) -> None:
        """The agent's progress reports on its worker, recorded as they come (the card and
        `status` show them, and they count as the agent speaking for the stall limit)."""
        with self._lock:
            reports, live.progress = live.progress, []
        row = self.store.attempt(handle.attempt_id)
        if row is None:
            return
        for node_event, message in reports:
            live.streamed.add(node_event)
            self.store.append(row.plan_id, handle.task_id, K.TASK_PROGRESS,
                              {"message": message, "attempt": handle.attempt_id})

    def _tell_node(self, handle: AttemptHandle, live: _Live) -> None:
        """Record the worker that claimed the attempt (`status` shows it as `node`)."""
        live.told = True
        row = self.store.attempt(handle.attempt_id)
        if row is None or row.spec.get("node") == live.node:
            return
        self.store.note_attempt(handle.attempt_id, "node", live.node)
        self.store.append(row.plan_id, handle.task_id, K.TASK_PROGRESS, {
            "message": f"running on {live.node}", "node": live.node,
            "attempt": handle.attempt_id})

    def adopt(self, attempt: AttemptRow) -> AttemptHandle:
        handle = AttemptHandle(attempt.id, attempt.task_id)
        job = str(attempt.spec.get("job"))
        live = _Live(job, None, attempt.log_path, node=attempt.spec.get("node"),
                     told=bool(attempt.spec.get("node")))
        try:
            from distributed import Future  # lazy: the optional extra

            client = self.client()
            if attempt.spec.get("submitted"):
                live.future = Future(job, client=client)  # kept by the scheduler meanwhile
            else:
                live.future = self._submit_again(client, attempt)
        except BatonError:
            pass  # the cluster is unreachable: its record on the exchange still tells
        # Asked after the future was: a job the scheduler had already let go of pushed its
        # record before it ended.
        refs = attempt.spec.get("refs") or {}
        try:
            live.finished = bool(refs.get("record") and exchange.remote_ref(
                self.ws.root, self.settings.exchange, refs["record"]))
        except Exception:
            live.finished = False
        self._follow(handle, live, asyncio.get_running_loop())
        return handle

    def _submit_again(self, client: "Client", attempt: AttemptRow) -> "Future | None":
        """An attempt recorded as started whose submission was not recorded (its conductor
        was killed in between): submitted (again) under the same key, unless a worker has
        already claimed it — Dask keeps one task per key, and the claim on the exchange
        lets at most one run start an agent."""
        spec = attempt.spec
        payload, refs = spec.get("payload"), spec.get("refs") or {}
        plan = self.store.plan(attempt.plan_id)
        if not payload or plan is None:
            return None
        if refs.get("claim") and exchange.remote_ref(self.ws.root, self.settings.exchange,
                                                     refs["claim"]):
            from distributed import Future  # lazy: the optional extra

            return Future(payload["job"], client=client)
        where = payload.pop("where", None)
        future = self._send(client, {**payload, "doc": plan.doc, "seal": spec.get("seal")},
                            where)
        self.store.note_attempt(attempt.id, "submitted", time.time())
        return future

    def on_its_way(self, attempt: AttemptRow) -> bool:
        return bool(attempt.spec.get("submitted"))

    # following -----------------------------------------------------------------------------
    def look(self, handles: Collection[AttemptHandle]) -> Looked:
        looked = Looked()
        workers: set[str] | None = None
        self._look_for_records()
        for handle in handles:
            live = self._live.get(handle)
            if live is None:
                looked.lost.add(handle)
                continue
            future = live.future
            if live.finished or (future is not None and future.done()):
                looked.ended.add(handle)
                continue
            if live.node is not None and not live.told:
                self._tell_node(handle, live)
            if live.progress:
                self._record_progress(handle, live)
            if live.node is None:
                continue
            if workers is None:
                workers = self._workers()
            if workers is not None and live.node not in workers:
                live.gone_since = live.gone_since or time.monotonic()
                if time.monotonic() - live.gone_since > LOST_AFTER:
                    looked.ended.add(handle)
            else:
                live.gone_since = None
        return looked

    def _look_for_records(self) -> None:
        """Now and then, on a thread of its own, ask the exchange which followed jobs have
        pushed their record: the end of a job the scheduler no longer tells this conductor
        about (one that ended while no conductor ran) is told so."""
        if time.monotonic() < self._records_due or (self._records and self._records.is_alive()):
            return
        waiting = [(handle, live) for handle, live in self._live.items() if not live.finished
                   and not (live.future is not None and live.future.done())]
        if not waiting:
            return
        self._records_due = time.monotonic() + RECORDS_EVERY

        def ask() -> None:
            try:
                out = exchange.git(self.ws.root, *exchange.SAFE, "ls-remote", "--refs", "--",
                                   self.settings.exchange, "refs/baton/jobs/*")
            except Exception:
                return
            there = {line.partition("\t")[2] for line in out.splitlines()}
            for handle, live in waiting:
                if f"refs/baton/jobs/{live.job}/record" in there \
                        and self._its_own_record(handle):
                    live.finished = True
                    if live.exit is not None:  # wake the loop
                        _wake(live.exit)

        self._records = threading.Thread(target=ask, name="baton-dask-records", daemon=True)
        self._records.start()

    def _its_own_record(self, handle: AttemptHandle) -> bool:
        """Whether the record of this attempt's job on the exchange is its node's (sealed): one
        someone else pushed (another task's agent, the agent itself) is flagged and does not
        end the attempt — its agent runs on, and its node's own record comes when it ends."""
        ws = self.ws.sibling()  # (on the records thread: a store connection of its own)
        try:
            attempt = ws.store.attempt(handle.attempt_id)
            if attempt is None:
                return True
            mine = f"refs/baton/jobs/{attempt.spec['job']}/re*"
            self._fetch_records(f"+{mine}:{mine}")
            commit = read_ref(ws.root, attempt.spec["refs"]["record"])
            if commit is None:
                return False
            record, output = exchange.read_record(ws.root, commit)
            return self._sealed(ws, attempt, commit, record, output)
        except Exception:  # it could not be read now: asked again on the next round
            return False
        finally:
            ws.close()

    def _workers(self, fresh: bool = False) -> set[str] | None:
        """The scheduler's workers, asked at most every `WORKERS_EVERY` seconds (`fresh`:
        now); None when it cannot be asked."""
        client = self._client
        if client is None:
            return None
        now = time.monotonic()
        if not fresh and self._workers_seen is not None \
                and now - self._workers_seen[0] < WORKERS_EVERY:
            return self._workers_seen[1]
        try:
            found = set(client.scheduler_info(n_workers=-1).get("workers", {}))
        except Exception:
            return None
        self._workers_seen = (now, found)
        return found

    def exited(self, handle: AttemptHandle) -> asyncio.Future[object] | None:
        live = self._live.get(handle)
        return live.exit if live is not None else None

    def output(self, handle: AttemptHandle) -> bytes:
        live = self._live.get(handle)
        if live is None or not live.pending:
            return b""
        with self._lock:
            chunk, live.pending = bytes(live.pending), bytearray()
        return chunk

    def runs_here(self, task: Task) -> bool:
        return False  # on a worker: the person's checkout is out of its reach

    def activity(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
        return {}  # told by its output and reports only (for now)

    def changed_files(self, handle: AttemptHandle) -> "asyncio.Future[Changes] | None":
        return None  # the agent's files are on its worker until it ends (for now)

    def stop(self, handle: AttemptHandle, sig: signal.Signals) -> bool:
        live = self._live.get(handle)
        if live is None:
            return False
        now = time.monotonic()
        if live.last_stop is not None and live.last_stop[0] == sig \
                and now - live.last_stop[1] < STOP_AGAIN:
            return True  # (asked on every tick past the grace: one call on its way is enough)
        live.last_stop = (sig, now)

        def send() -> None:
            try:
                client = self.client()
                if live.node:
                    client.run(dask_node.signal_job, live.job, int(sig), workers=[live.node],
                               on_error="ignore")
                elif live.future is not None:
                    live.future.cancel()  # not running yet: it never will
            except Exception as exc:
                print(f"baton conductor: could not stop job {live.job}: {exc}", flush=True)

        threading.Thread(target=send, name="baton-dask-stop", daemon=True).start()
        return True

    async def collect(self, handle: AttemptHandle) -> AttemptRow:
        live = self._live.pop(handle, None)
        return await asyncio.to_thread(self._collect, handle, live)

    def _collect(self, handle: AttemptHandle, live: _Live | None) -> AttemptRow:
        ws = self.ws.sibling()
        try:
            store = ws.store
            attempt = store.attempt(handle.attempt_id)
            assert attempt is not None
            if live is not None:
                self._unsubscribe(live.job)
            record, output, lost = self._fetch(ws, attempt, live)
            if record is not None and self._still_ran(live, record):
                record, output, lost = None, b"", _ran_on(live)
            self._apply(ws, attempt, record, output, lost, live)
            found = store.attempt(handle.attempt_id)
            assert found is not None
            return found
        finally:
            ws.close()

    def _still_ran(self, live: _Live | None, record: dict[str, Any]) -> bool:
        """Whether the job's agent still runs although its record is there (a record its
        worker did not make: the node makes it only once its agent ended): the agent is ended
        on its worker now — no agent runs on after its attempt is collected."""
        if live is None or live.future is None or live.future.done():
            return False
        try:
            client = self.client()
            node = live.node or record.get("node")
            found = client.run(dask_node.signal_job, live.job, int(signal.SIGKILL),
                               workers=[node] if node else None, on_error="ignore")
        except Exception:
            return False
        return any(value is True for value in (found or {}).values())

    def _unsubscribe(self, job: str) -> None:
        try:
            if self._client is not None:
                self._client.unsubscribe_topic(job)
        except Exception:
            pass

    def _fetch(self, ws: Workspace, attempt: AttemptRow, live: _Live | None
               ) -> tuple[dict[str, Any] | None, bytes, str | None]:
        """The attempt's record and output from the exchange; else why there is none."""
        spec = attempt.spec
        refs = spec["refs"]
        job = spec["job"]
        mine = f"refs/baton/jobs/{job}/re*"  # its result and record (none yet: no error)
        deadline = time.monotonic() + 30
        forged: str | None = None
        while True:
            try:
                self._fetch_records(f"+{mine}:{mine}")
                commit = read_ref(ws.root, refs["record"])
                if commit is not None:
                    record, output = exchange.read_record(ws.root, commit)
                    if self._sealed(ws, attempt, commit, record, output):
                        return record, output, None
                    forged = commit
                    if live is not None and live.future is not None \
                            and not live.future.done():
                        time.sleep(1.0)  # its own node's record is still to come
                        continue
            except Exception:  # not there (yet): a job that ended tells why
                pass
            answer = self._answer(live)
            if answer is not None and not answer.get("claimed", True):
                break  # it ran nothing: nothing more will come
            if answer is not None and answer.get("unpushed"):
                return self._carried_home(ws, attempt, answer)
            if live is not None and live.node is None and live.future is not None \
                    and live.future.status == "cancelled":
                return None, b"", (f"stopped before a worker of runner {self.name} took it: "
                                   "nothing ran")
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        try:  # the exchange itself gone: its result is not lost, only not reachable now
            exchange.remote_ref(ws.root, self.settings.exchange, "HEAD")
        except Exception as exc:
            why = _gist(exc) if isinstance(exc, GitError) else str(exc)[:300]
            raise BatonError(f"its exchange {self.settings.exchange} cannot be reached ({why}); "
                             "bring it back first") from None
        node = (live.node if live else None) or spec.get("node")
        answer = self._answer(live)
        if answer is not None and not answer.get("claimed", True) and not node:
            return None, b"", f"its job ran no agent on runner {self.name}: {answer.get('why')}"
        if forged is not None:
            return None, b"", (f"its record on the exchange ({forged[:12]}) does not carry its "
                               "job's seal: refused, nothing of it landed — retry it")
        where = f"its worker {node}" if node else f"runner {self.name}"
        error = self._error(live)
        detail = f" ({error})" if error else ""
        return None, b"", (f"{where} went away mid-task{detail}: its agent is not run again; "
                           f"what it pushed is kept under refs/baton/jobs/{job}/ on the "
                           f"exchange — retry it")

    def _carried_home(self, ws: Workspace, attempt: AttemptRow, answer: dict[str, Any]
                      ) -> tuple[dict[str, Any] | None, bytes, str | None]:
        """A finished job whose worker could not push to the exchange (gone, damaged): its
        result and record came back with its answer, as a bundle — fetched from that, and
        said. Its agent is not run again."""
        refs, why = attempt.spec["refs"], answer.get("unpushed")
        said = (f"the exchange of runner {self.name} could not be reached when its worker "
                f"finished ({why})")
        bundle = answer.get("bundle")
        if not isinstance(bundle, bytes):
            kept = answer.get("kept")
            return None, b"", (f"{said}; its finished work is kept on {answer.get('node')}"
                               + (f" in {kept}" if kept else "") + " — its agent is not run "
                               "again: bring the exchange back, then take it from there")
        with tempfile.TemporaryDirectory(prefix="baton-result-") as tmp:
            path = Path(tmp) / "result.bundle"
            path.write_bytes(bundle)
            exchange.fetch(ws.root, str(path), *(f"+{refs[p]}:{refs[p]}"
                                                 for p in ("result", "record")))
        commit = read_ref(ws.root, refs["record"])
        if commit is None:
            return None, b"", f"{said}; the result it sent back holds no record"
        ws.store.append(attempt.plan_id, attempt.task_id, K.TASK_FLAGGED, {
            "flag": "exchange", "attempt": attempt.id,
            "message": f"{said}: its result came back with the job instead"})
        record, output = exchange.read_record(ws.root, commit)
        return record, output, None
    def _sealed(self, ws: Workspace, attempt: AttemptRow, commit: str,
                record: dict[str, Any], output: bytes) -> bool:
        """Whether the record is its job's node's (`exchange.seal`); a forged one flags the
        task once, naming the commit. Attempts recorded before seals have none to check."""
        secret, job = attempt.spec.get("seal"), attempt.spec["job"]
        if not secret or exchange.sealed(secret, job, record, output):
            return True
        if (attempt.id, commit) not in self._forged:
            self._forged.add((attempt.id, commit))
            ws.store.append(attempt.plan_id, attempt.task_id, K.TASK_FLAGGED, {
                "flag": "forged", "attempt": attempt.id, "commit": commit,
                "message": f"a record of its job on the exchange ({commit[:12]}) does not "
                           "carry its job's seal (someone else pushed it): refused"})
        return False

    @staticmethod
    def _answer(live: _Live | None) -> dict[str, Any] | None:
        future = live.future if live else None
        if future is None or not future.done() or future.status != "finished":
            return None
        try:
            value = future.result(timeout=5)
        except Exception:
            return None
        return value if isinstance(value, dict) else None

    @staticmethod
    def _error(live: _Live | None) -> str | None:
        future = live.future if live else None
        if future is None or not future.done() or future.status == "finished":
            return None
        try:
            exc = future.exception(timeout=5)
        except Exception as err:
            exc = err
        return f"{type(exc).__name__}: {exc}"[:300] if exc else future.status

    def _apply(self, ws: Workspace, attempt: AttemptRow, record: dict[str, Any] | None,
               output: bytes, lost: str | None, live: _Live | None) -> None:
        """The remote attempt as if it had run here: log, work, report, events, record."""
        store, spec = ws.store, attempt.spec.copy()
        if record is None or record.get("error"):
            spec["lost"] = lost or f"on {record.get('node') if record else '?'}: " \
                f"{record.get('error') if record else 'no record'}"
            if record is not None and record.get("node"):
                spec["node"] = record["node"]
            store.update_attempt(attempt.id, spec=spec, ended=time.time())
            return
        if spec.get("replayed"):  # collected before by a conductor killed after this point:
            return                 # its work is home and its events are in — not twice
        if attempt.log_path:
            Path(attempt.log_path).write_bytes(output)
        head, result = record.get("head"), record.get("result")
        if head and result and spec.get("cwd"):  # (fetched with the record, `_fetch`)
            exchange.bring_home(spec["cwd"], spec["pushed"], head, result)
        spec["replayed"] = True
        ran = record.get("attempt") or {}
        spec.update({"node": record.get("node"), "node_attempt": ran.get("node_attempt")})
        for key in ("leftover", "log_cut"):
            if ran.get(key):
                spec[key] = ran[key]
        with store.tx():
            streamed = live.streamed if live is not None else set()
            for event in record.get("events") or []:
                if event.get("kind") == K.TASK_PROGRESS and event.get("id") in streamed:
                    continue  # recorded as it came
                data = dict(event.get("data") or {})
                if "attempt" in data:
                    data["attempt"] = attempt.id
                store.append(attempt.plan_id, attempt.task_id, str(event.get("kind")), data)
            fields: dict[str, Any] = {"spec": spec, "exit_status": ran.get("exit_status"),
                                      "ended": ran.get("ended") or time.time()}
            if ran.get("report") is not None:
                fields["report"] = ran["report"]
            if ran.get("session_id"):
                fields["session_id"] = ran["session_id"]
            store.update_attempt(attempt.id, **fields)
        killpoints.reached("collected")

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close(timeout=5)
            except Exception:
                pass
