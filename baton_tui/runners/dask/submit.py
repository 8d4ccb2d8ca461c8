"""Sending an attempt to the cluster: the prepared worktree pushed to the exchange, the job
recorded (its key before anything is submitted) and submitted — once, or again under the same
key for an attempt whose conductor was killed between recording and submitting it.

A resume goes back to the worker that holds the agent's session; when that worker is gone the
attempt starts a fresh session elsewhere, briefed with the words the conductor composed for
that case (`StartRequest.rebrief`): nothing here composes a word the agent reads.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.gitops.git import GitError
from baton_tui.paths import private_file
from baton_tui.plan.model import Task
from baton_tui.runners.base import StartDeferred, StartFailed, StartRequest
from baton_tui.runners.dask import cluster, exchange
from baton_tui.runners.dask import node as dask_node
from baton_tui.runners.dask.connection import Connection
from baton_tui.runners.dask.fetch import gist
from baton_tui.runners.dask.follow import Followed
from baton_tui.runners.dask.job import Job, WireError
from baton_tui.store.attempt_spec import AttemptSpec
from baton_tui.store.rows import AttemptRow, PlanRow
from baton_tui.workspace import Workspace

if TYPE_CHECKING:
    from distributed import Client, Future

    from baton_tui.runners_config import RunnerSettings

K = EventKind


class Submitter:
    """Submits one runner's jobs to its cluster."""

    def __init__(self, name: str, settings: RunnerSettings, cluster: Connection,
                 root: os.PathLike[str]):
        self.name, self.settings, self.cluster = name, settings, cluster
        where = settings.exchange
        # Tasks start together: their pushes go as one transfer (and their take-backs).
        self._push_bases = exchange.Batched[str](
            lambda specs: exchange.push(root, where, *specs))
        self._delete_bases = exchange.Batched[str](
            lambda refs: exchange.push(root, where, *(f":{ref}" for ref in refs)))

    def submit(self, ws: Workspace, request: StartRequest) -> tuple[int, Followed]:
        """Push the prepared worktree, record the job, submit it (blocking); the attempt and
        what the runner follows of it."""
        task, plan, workdir, prompt = request.task, request.plan, request.workdir, request.prompt
        if workdir.path == ws.root:  # folder mode: no worktree of its own
            raise StartFailed(f"runner {self.name} needs a git repository (git 2.38 or newer)")
        pushed = exchange.snapshot(workdir.path, "baton: the worktree as the task starts").commit
        attempt_id = request.attempt_id
        name = exchange.job_name(plan.slug, task.id, attempt_id)
        refs = exchange.refs_of(name)
        for ref in refs.values():
            exchange.check_ref(ref)
        # The base goes to the exchange while the connection is still being made (importing
        # `distributed` and the handshake take a second or more as a run starts), not after
        # it; nothing is pushed for a scheduler known to be unreachable, and the base of a job
        # that could not be sent is taken back off the exchange.
        unreachable = self.cluster.known_unreachable()
        if unreachable is not None:
            raise StartDeferred(f"runner {self.name}: {unreachable.message}")
        try:
            self._push_bases(f"{pushed}:{refs['base']}")
        except GitError as exc:  # nothing was submitted: the attempt never runs
            raise StartDeferred(f"runner {self.name}: cannot push to the exchange "
                                f"{self.settings.exchange}: {gist(exc)}") from None
        try:
            client = self.cluster.client()
        except BatonError as exc:  # unreachable: nothing sent, the task waits queued
            self._take_back(refs["base"])
            raise StartDeferred(f"runner {self.name}: {exc.message}") from None
        store = ws.store
        session_id, resume_message = request.session_id, request.resume_message
        resumed = bool(session_id or resume_message)
        where = self._session_node(ws, plan, task) if resumed else None
        if where is not None and where not in (self.cluster.workers(fresh=True) or {where}):
            # The worker that holds the agent's session is gone: a fresh session on another,
            # briefed as the conductor briefs a task moved to another player (its words).
            if request.rebrief is not None:
                prompt = request.rebrief(where)
            session_id, resume_message, resumed, where = None, None, False, None
        log_path = private_file(request.folder / "output.log")
        seal = secrets.token_hex(16)  # binds its record to it (`exchange.seal`)
        spec: AttemptSpec = {
            "runner": self.name, "job": name, "refs": refs, "pushed": pushed,
            "cwd": str(workdir.path), "base": workdir.base, "branch": workdir.branch,
            "mode": task.mode, "resumed": resumed, "resume_message": resume_message,
            "argv": [], "env_names": [], "remote": True, "seal": seal}
        # The key is recorded before anything is submitted: a conductor killed from here on
        # finds it, and re-attaches instead of submitting the attempt again.
        store.update_attempt(attempt_id, spec=spec, log_path=str(log_path))
        job = Job(job=name, exchange=self.settings.exchange, base=pushed, task=task.id,
                  slug=plan.slug, resource=self.settings.resource_of(task.player),
                  doc=request.doc.dump(), prompt=prompt, workdir=self.settings.workdir,
                  resume_message=resume_message, session_id=session_id,
                  trusted=self._trusted_hash(ws), versions=cluster.versions(), seal=seal)
        # What a conductor killed before the submission was recorded submits again (the
        # plan's document is read back from the store, the seal from the spec; the claim
        # makes a double harmless).
        store.note_attempt(attempt_id, "payload",
                           {**replace(job, doc=None, seal=None).to_wire(), "where": where})
        store.claim_attempt(attempt_id, os.getpid())  # started: it is the cluster's now
        future = self.send(client, job, where)
        store.note_attempt(attempt_id, "submitted", time.time())
        store.append(plan.id, task.id, K.TASK_RESUMED if resumed else K.TASK_STARTED,
                     {"attempt": attempt_id, "player": task.player, "workdir": str(workdir.path),
                      "base": workdir.base, "branch": workdir.branch, "runner": self.name,
                      "job": name})
        return attempt_id, Followed(name, future, str(log_path))

    def _take_back(self, ref: str) -> None:
        """Delete a base pushed for a job that was not sent (its scheduler unreachable): the
        exchange keeps nothing of an attempt that never ran. Best effort — a base left there
        is never claimed (its job name is this attempt's own, with a random part)."""
        try:
            self._delete_bases(ref)
        except GitError:
            pass

    @staticmethod
    def send(client: Client, job: Job, where: str | None) -> Future[Any]:
        """Submit the job: one unit of its player's resource, kept by the scheduler when
        this conductor goes away (`fire_and_forget`)."""
        from distributed import fire_and_forget  # lazy: the optional extra

        placed: dict[str, object] = {"workers": [where], "allow_other_workers": True} \
            if where else {}
        future: Future[Any] = client.submit(
            dask_node.run_job, job.to_wire(), key=job.job, pure=False, retries=0,
            resources={job.resource: 1}, **placed)
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

    def again(self, ws: Workspace, client: Client, attempt: AttemptRow) -> Future[Any] | None:
        """An attempt recorded as started whose submission was not recorded (its conductor
        was killed in between): submitted (again) under the same key, unless a worker has
        already claimed it — Dask keeps one task per key, and the claim on the exchange
        lets at most one run start an agent."""
        spec = attempt.spec
        payload, refs = dict(spec.get("payload") or {}), spec.get("refs") or {}
        plan = ws.store.plan(attempt.plan_id)
        if not payload or plan is None:
            return None
        where = payload.pop("where", None)
        try:
            job = Job.from_wire({**payload, "doc": plan.doc, "seal": spec.get("seal")})
        except WireError:  # (recorded by another Baton: its record on the exchange tells)
            return None
        if refs.get("claim") and exchange.remote_ref(ws.root, self.settings.exchange,
                                                     refs["claim"]):
            from distributed import Future  # lazy: the optional extra

            return Future(job.job, client=client)
        future = self.send(client, job, where if isinstance(where, str) else None)
        ws.store.note_attempt(attempt.id, "submitted", time.time())
        return future

