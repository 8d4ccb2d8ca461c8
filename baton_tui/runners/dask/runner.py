"""`DaskRunner`: attempts on a Dask cluster's workers, behind the runner seam.

The conductor makes the task's worktree here as for a local start (its branch is cut from
the integration branch, so landing stays local), records the attempt and composes the
agent's brief; the start pushes the worktree's exact commit to the exchange (`exchange`
module), records the job — its Dask key first, before anything is submitted — and submits
`node.run_job` (a typed `job.Job`: the brief travels whole) asking for one unit of the resource
named after the task's player (`[runners.NAME] resources` may rename it). The job is
`fire_and_forget`: the scheduler keeps it when this conductor goes away, and the next one
re-attaches by its key; a job Dask runs twice finds its claim on the exchange and runs
nothing, so no agent ever runs twice for one attempt.

Progress comes back as the worker's events on the job's topic (`Client.subscribe_topic`):
appended to the attempt's log and read by the follower as a local agent's output. A stop
runs `node.signal_job` on the worker (`Client.run`): Dask cannot cancel a running task,
Baton ends the agent's process group itself. Every few seconds the node also says its
agent's changed files and CPU time there: `changed_files` and `activity` answer from what it
last said, so scope, idle and stall supervision see a remote agent as a local one. A resume
whose worker is gone with its session starts a fresh session elsewhere, briefed with the
words the conductor composed for that case (`StartRequest.rebrief`). At the end, `collect`
fetches the record and the result from the exchange, puts the agent's work into the local
worktree as a local agent would have left it, replays the agent's reports into the store,
and hands the attempt to the finisher like any other: report, check, commit and landing are
this machine's.

The runner's jobs are split by module: `connection` (the scheduler's client, made again
after it broke), `submit` (sending a job: once, or again under its key), `job` (what travels
to a node and back, typed and versioned), `follow` (what a followed job says on its topic),
`fetch` (its record, from the exchange or its answer, seals checked) and `runners.homecoming`
(the attempt recorded here as if it had run here — any remote runner's). This module is the
thin adapter between them and the runner seam.

`distributed` is imported by these modules only, and they only when a task names a Dask
runner.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from baton_tui import trust
from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.gitops.git import GitError
from baton_tui.plan.model import Task
from baton_tui.runners import homecoming, launcher
from baton_tui.runners.base import (
    AttemptHandle, Changes, Looked, StartFailed, StartRequest,
)
from baton_tui.runners.dask import exchange
from baton_tui.runners.dask import node as dask_node
from baton_tui.runners.dask.connection import Connection
from baton_tui.runners.dask.fetch import UNREADABLE, Fetcher
from baton_tui.runners.dask.follow import Followed
from baton_tui.runners.dask.submit import Submitter
from baton_tui.store.rows import AttemptRow
from baton_tui.workspace import Workspace

if TYPE_CHECKING:

    from baton_tui.runners_config import RunnerSettings

K = EventKind
LOST_AFTER = 10.0    # a claimed attempt's worker gone from the scheduler this long: lost
STOP_AGAIN = 2.0     # a stop with the same signal is sent again at most this often
RECORDS_EVERY = 3.0  # the exchange is asked for finished jobs' records this often
# What asking the scheduler raises when it is away or going: unreachable (BatonError), its
# comm closed (CommClosedError is an OSError), a closed client (RuntimeError), a timeout.
CLUSTER_AWAY = (BatonError, OSError, TimeoutError, RuntimeError)


def _ran_on(node: str | None) -> str:
    """Why a record that appeared while its agent still ran is refused (its node writes one
    only once its agent ended: someone else made this one, the agent most likely)."""
    return (f"a record of it appeared on the exchange while its agent still ran on "
            f"{node or 'its worker'}: not one its worker made — refused, and that agent was "
            "ended")


class DaskRunner:
    """Attempts as Dask jobs (see the module docstring)."""

    def __init__(self, ws: Workspace, name: str, settings: RunnerSettings):
        self.ws = ws
        self.store = ws.store
        self.name = name
        self.settings = settings
        self.cluster = Connection(settings, self.ensure_trusted)
        self.fetcher = Fetcher(name, ws.root, settings.exchange)
        self._followed: dict[AttemptHandle, Followed] = {}
        self._records_due = 0.0
        self.submitter = Submitter(name, settings, self.cluster, ws.root)
        self._records: threading.Thread | None = None  # the look at the exchange on its way

    def connect_soon(self) -> None:
        """Connect in the background as the conductor starts (`RunnerSwitch` asks)."""
        self.cluster.connect_soon()

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
        attempt_id, followed = await asyncio.to_thread(self._start, request)
        handle = AttemptHandle(attempt_id, request.task.id)
        self._follow(handle, followed, loop)
        return handle

    def _start(self, request: StartRequest) -> tuple[int, Followed]:
        task = request.task
        if task.checkpoint:
            raise StartFailed(f"checkpoint tasks run on this machine for now (runner "
                              f"{self.name}): `baton task-runner {task.id} local`")
        try:
            self.ensure_trusted()
        except BatonError as exc:  # the person's to settle: visible, not waited through
            raise StartFailed(f"runner {self.name}: {exc.message}") from None
        self.cluster.connect_soon()
        ws = self.ws.sibling()
        try:
            with launcher.start_failures(f" on runner {self.name}"):
                return self.submitter.submit(ws, request)
        finally:
            ws.close()

    def _follow(self, handle: AttemptHandle, followed: Followed,
                loop: asyncio.AbstractEventLoop) -> None:
        """Stream the job's events into its log, and wake the loop when it ends."""
        self._followed[handle] = followed
        followed.exit = loop.create_future()
        if followed.future is not None:
            followed.future.add_done_callback(lambda _future: followed.wake())
        self.cluster.subscribe(followed.job, followed.hear)

    # re-attaching -------------------------------------------------------------------------
    def adopt(self, attempt: AttemptRow) -> AttemptHandle:
        handle = AttemptHandle(attempt.id, attempt.task_id)
        job = str(attempt.spec.get("job"))
        node = attempt.spec.get("node")
        followed = Followed(job, None, attempt.log_path, node=node, told=bool(node))
        try:
            from distributed import Future  # lazy: the optional extra

            client = self.cluster.client()
            if attempt.spec.get("submitted"):
                followed.future = Future(job, client=client)  # kept by the scheduler meanwhile
            else:
                followed.future = self.submitter.again(self.ws, client, attempt)
        except BatonError:
            pass  # the cluster is unreachable: its record on the exchange still tells
        # Asked after the future was: a job the scheduler had already let go of pushed its
        # record before it ended.
        refs = attempt.spec.get("refs") or {}
        try:
            followed.finished = bool(refs.get("record") and exchange.remote_ref(
                self.ws.root, self.settings.exchange, refs["record"]))
        except UNREADABLE:  # the exchange away now: the next looks ask it again
            followed.finished = False
        self._follow(handle, followed, asyncio.get_running_loop())
        return handle

    def on_its_way(self, attempt: AttemptRow) -> bool:
        return bool(attempt.spec.get("submitted"))

    # following -----------------------------------------------------------------------------
    def look(self, handles: Collection[AttemptHandle]) -> Looked:
        looked = Looked()
        workers: set[str] | None = None
        self._look_for_records()
        for handle in handles:
            followed = self._followed.get(handle)
            if followed is None:
                looked.lost.add(handle)
                continue
            if followed.ended():
                looked.ended.add(handle)
                continue
            if followed.node is not None and not followed.told:
                self._tell_node(handle, followed)
            if followed.progress:
                self._record_progress(handle, followed)
            if followed.node is None:
                continue
            if workers is None:
                workers = self.cluster.workers()
            if workers is not None and followed.node not in workers:
                followed.gone_since = followed.gone_since or time.monotonic()
                if time.monotonic() - followed.gone_since > LOST_AFTER:
                    looked.ended.add(handle)
            else:
                followed.gone_since = None
        return looked

    def _record_progress(self, handle: AttemptHandle, followed: Followed) -> None:
        """The agent's progress reports on its worker, recorded as they come (the card and
        `status` show them, and they count as the agent speaking for the stall limit)."""
        reports = followed.take_progress()
        row = self.store.attempt(handle.attempt_id)
        if row is None:
            return
        for node_event, message in reports:
            followed.streamed.add(node_event)
            self.store.append(row.plan_id, handle.task_id, K.TASK_PROGRESS,
                              {"message": message, "attempt": handle.attempt_id})

    def _tell_node(self, handle: AttemptHandle, followed: Followed) -> None:
        """Record the worker that claimed the attempt (`status` shows it as `node`)."""
        followed.told = True
        row = self.store.attempt(handle.attempt_id)
        if row is None or row.spec.get("node") == followed.node:
            return
        self.store.note_attempt(handle.attempt_id, "node", followed.node)
        self.store.append(row.plan_id, handle.task_id, K.TASK_PROGRESS, {
            "message": f"running on {followed.node}", "node": followed.node,
            "attempt": handle.attempt_id})

    def _look_for_records(self) -> None:
        """Now and then, in the background, ask the exchange which followed jobs have pushed
        their record: the end of a job the scheduler no longer tells this conductor about
        (one that ended while no conductor ran) is told so."""
        if time.monotonic() < self._records_due or (self._records and self._records.is_alive()):
            return
        waiting = [(handle, followed) for handle, followed in self._followed.items()
                   if not followed.ended()]
        if not waiting:
            return
        self._records_due = time.monotonic() + RECORDS_EVERY
        self._records = self.cluster.background("records", lambda: self._ask_for(waiting))

    def _ask_for(self, waiting: list[tuple[AttemptHandle, Followed]]) -> None:
        try:
            out = exchange.git(self.ws.root, *exchange.SAFE, "ls-remote", "--refs", "--",
                               self.settings.exchange, "refs/baton/jobs/*")
        except (GitError, OSError):  # the exchange away now: asked again next round
            return
        there = {line.partition("\t")[2] for line in out.splitlines()}
        ws = self.ws.sibling()  # (on its own thread: a store connection of its own)
        try:
            for handle, followed in waiting:
                if f"refs/baton/jobs/{followed.job}/record" not in there:
                    continue
                attempt = ws.store.attempt(handle.attempt_id)
                if attempt is None or self.fetcher.its_own_record(ws, attempt):
                    followed.finished = True
                    followed.wake()
        finally:
            ws.close()

    def exited(self, handle: AttemptHandle) -> asyncio.Future[object] | None:
        followed = self._followed.get(handle)
        return followed.exit if followed is not None else None

    def output(self, handle: AttemptHandle) -> bytes:
        followed = self._followed.get(handle)
        return followed.take_output() if followed is not None else b""

    def runs_here(self, task: Task) -> bool:
        return False  # on a worker: the person's checkout is out of its reach

    def activity(self, handles: Sequence[AttemptHandle]) -> dict[AttemptHandle, float]:
        """The CPU seconds each agent's process tree used so far, as its node last said
        (every few seconds, on the job's topic): never a round trip."""
        found = {handle: self._followed.get(handle) for handle in handles}
        return {handle: followed.cpu for handle, followed in found.items()
                if followed is not None and followed.cpu is not None}

    def changed_files(self, handle: AttemptHandle) -> asyncio.Future[Changes] | None:
        """The agent's changed files on its worker and their signature (each one's size and
        modification time), as its node last said; None before it said any."""
        followed = self._followed.get(handle)
        if followed is None or followed.files is None or followed.exit is None:
            return None
        files = followed.files
        look: asyncio.Future[Changes] = followed.exit.get_loop().create_future()
        look.set_result(([path for path, _size, _mtime in files], files))
        return look

    # stopping and collecting --------------------------------------------------------------
    def stop(self, handle: AttemptHandle, sig: signal.Signals) -> bool:
        followed = self._followed.get(handle)
        if followed is None:
            return False
        now = time.monotonic()
        if followed.last_stop is not None and followed.last_stop[0] == sig \
                and now - followed.last_stop[1] < STOP_AGAIN:
            return True  # (asked on every tick past the grace: one call on its way is enough)
        followed.last_stop = (sig, now)
        self.cluster.background("stop", lambda: self._send_stop(followed, sig))
        return True

    def _send_stop(self, followed: Followed, sig: signal.Signals) -> None:
        try:
            if followed.node:
                self.cluster.on_workers(dask_node.signal_job, followed.job, int(sig),
                                        workers=[followed.node])
            elif followed.future is not None:
                followed.future.cancel()  # not running yet: it never will
        except CLUSTER_AWAY as exc:  # said in the conductor's log; the next tick asks again
            print(f"baton conductor: could not stop job {followed.job}: {exc}", flush=True)

    async def collect(self, handle: AttemptHandle) -> AttemptRow:
        followed = self._followed.pop(handle, None)
        return await asyncio.to_thread(self._collect, handle, followed)

    def _collect(self, handle: AttemptHandle, followed: Followed | None) -> AttemptRow:
        ws = self.ws.sibling()
        try:
            attempt = ws.store.attempt(handle.attempt_id)
            assert attempt is not None
            if followed is not None:
                self.cluster.unsubscribe(followed.job)
            fetched = self.fetcher.fetch(ws, attempt, followed)
            record = fetched.record
            if record is not None and self._still_ran(followed, record.node):
                homecoming.lost(ws, attempt, _ran_on(followed.node if followed else None))
            elif record is None:
                homecoming.lost(ws, attempt, fetched.lost or "no record", None)
            elif record.error:
                homecoming.lost(ws, attempt, f"on {record.node or '?'}: {record.error}",
                                record.node)
            else:
                streamed = followed.streamed if followed is not None else set()
                homecoming.arrive(ws, attempt, fetched.arrival(streamed))
            found = ws.store.attempt(handle.attempt_id)
            assert found is not None
            return found
        finally:
            ws.close()

    def _still_ran(self, followed: Followed | None, node: str | None) -> bool:
        """Whether the job's agent still runs although its record is there (a record its
        worker did not make: the node makes it only once its agent ended): the agent is ended
        on its worker now — no agent runs on after its attempt is collected."""
        if followed is None or followed.future is None or followed.future.done():
            return False
        where = followed.node or node
        try:
            found = self.cluster.on_workers(dask_node.signal_job, followed.job,
                                            int(signal.SIGKILL),
                                            workers=[where] if where else None)
        except CLUSTER_AWAY:  # the cluster away: its node cannot be asked, nor its agent run
            return False
        return any(value is True for value in found.values())

    def close(self) -> None:
        self.cluster.close()
