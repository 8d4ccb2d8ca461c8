"""A finished job's record, fetched: from the exchange (sealed by its node, checked here), or
from the job's answer when its worker could not push (a bundle), or why there is none.

What comes back is a `JobRecord` and the agent's output, or the reason the attempt is lost —
which `homecoming` then records. A record on the exchange that does not carry its job's seal
was pushed by someone else (another task's agent, the agent itself): it is refused and the
task flagged once, naming the commit, and nothing of it lands.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.gitops.git import GitError
from baton_tui.gitops.refs import read_ref
from baton_tui.runners.dask import exchange
from baton_tui.runners.dask.follow import Followed
from baton_tui.runners.dask.job import JobRecord, WireError
from baton_tui.runners.homecoming import Arrival
from baton_tui.store.rows import AttemptRow
from baton_tui.workspace import Workspace

K = EventKind
FETCH_FOR = 30.0  # a job that ended is given this long for its record to reach the exchange
# What a record not (yet) on the exchange, or not readable now, raises: git refusing (the
# exchange away), git not running, a record commit without its files, JSON that is not one.
UNREADABLE = (GitError, OSError, ValueError, subprocess.CalledProcessError)


def gist(exc: GitError) -> str:
    lines = [line for line in exc.stderr.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else str(exc))[:300]


@dataclass(frozen=True)
class Found:
    """A record commit on the exchange: its record, or None when it is not its node's."""

    commit: str
    record: JobRecord | None
    output: bytes


@dataclass(frozen=True)
class Fetched:
    """A job's record and output, or why there is none (`lost`)."""

    record: JobRecord | None
    output: bytes = b""
    lost: str | None = None

    def arrival(self, streamed: set[int]) -> Arrival:
        assert self.record is not None
        record = self.record
        return Arrival(node=record.node, head=record.head, result=record.result,
                       ran=record.attempt, events=record.events, output=self.output,
                       streamed=frozenset(streamed))


def answer(followed: Followed | None) -> JobRecord | None:
    """The job's answer (its record, as `run_job` returned it) once it finished."""
    future = followed.future if followed else None
    if future is None or not future.done() or future.status != "finished":
        return None
    try:
        value = future.result(timeout=5)
    # The answer's own exception, or the scheduler's while fetching it (gone, a timeout):
    # no answer — the exchange still holds its record.
    except Exception:
        return None
    if not isinstance(value, dict):
        return None
    try:
        return JobRecord.from_wire(value)
    except WireError:
        return None


def error(followed: Followed | None) -> str | None:
    """Why a job that did not finish ended (its exception, else its status)."""
    future = followed.future if followed else None
    if future is None or not future.done() or future.status == "finished":
        return None
    try:
        exc = future.exception(timeout=5)
    except Exception as err:  # (the scheduler's own error while asking: said the same way)
        exc = err
    return f"{type(exc).__name__}: {exc}"[:300] if exc else str(future.status)


class Fetcher:
    """Fetches job records from one runner's exchange, checking their seals."""

    def __init__(self, name: str, root: Path, where: str):
        self.name, self.root, self.where = name, root, where
        self._forged: set[tuple[int, str]] = set()  # (attempt, record commit) flagged
        self._forged_lock = threading.Lock()
        # Tasks end together: their fetches go as one transfer.
        self._fetch = exchange.Batched[str](lambda specs: exchange.fetch(root, where, *specs))

    def record_of(self, ws: Workspace, attempt: AttemptRow) -> Found | None:
        """The record of the attempt's job on the exchange, fetched; None when there is none
        yet (GitError when it cannot be fetched)."""
        job = attempt.spec["job"]
        mine = f"refs/baton/jobs/{job}/re*"  # its result and record (none yet: no error)
        self._fetch(f"+{mine}:{mine}")
        commit = read_ref(ws.root, attempt.spec["refs"]["record"])
        if commit is None:
            return None
        wire, output = exchange.read_record(ws.root, commit)
        if not self.sealed(ws, attempt, commit, wire, output):
            return Found(commit, None, b"")
        return Found(commit, JobRecord.from_wire(wire), output)

    def sealed(self, ws: Workspace, attempt: AttemptRow, commit: str,
               wire: dict[str, Any], output: bytes) -> bool:
        """Whether the record is its job's node's (`exchange.seal`); a forged one flags the
        task once, naming the commit. Attempts recorded before seals have none to check."""
        secret, job = attempt.spec.get("seal"), attempt.spec["job"]
        if not secret or exchange.sealed(secret, job, wire, output):
            return True
        with self._forged_lock:
            if (attempt.id, commit) in self._forged:
                return False
            self._forged.add((attempt.id, commit))
        ws.store.append(attempt.plan_id, attempt.task_id, K.TASK_FLAGGED, {
            "flag": "forged", "attempt": attempt.id, "commit": commit,
            "message": f"a record of its job on the exchange ({commit[:12]}) does not "
                       "carry its job's seal (someone else pushed it): refused"})
        return False

    def its_own_record(self, ws: Workspace, attempt: AttemptRow) -> bool:
        """Whether the record of this attempt's job on the exchange is its node's (sealed): one
        someone else pushed (another task's agent, the agent itself) is flagged and does not
        end the attempt — its agent runs on, and its node's own record comes when it ends."""
        try:
            found = self.record_of(ws, attempt)
        except UNREADABLE:  # not readable now: asked again next round
            return False
        return found is not None and found.record is not None

    def fetch(self, ws: Workspace, attempt: AttemptRow, followed: Followed | None) -> Fetched:
        """The attempt's record and output from the exchange; else why there is none."""
        deadline = time.monotonic() + FETCH_FOR
        forged: str | None = None
        while True:
            try:
                found = self.record_of(ws, attempt)
            # Not there (yet), or the exchange not reachable now: a job that ended tells why.
            except UNREADABLE:
                found = None
            if found is not None:
                if found.record is not None:
                    return Fetched(found.record, found.output)
                forged = found.commit
                if followed is not None and followed.future is not None \
                        and not followed.future.done():
                    time.sleep(1.0)  # its own node's record is still to come
                    continue
            said = answer(followed)
            if said is not None and not said.claimed:
                break  # it ran nothing: nothing more will come
            if said is not None and said.unpushed:
                return self._carried_home(ws, attempt, said)
            if followed is not None and followed.node is None and followed.future is not None \
                    and followed.future.status == "cancelled":
                return Fetched(None, lost=f"stopped before a worker of runner {self.name} "
                                          "took it: nothing ran")
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        return Fetched(None, lost=self._why_none(ws, attempt, followed, forged))

    def _why_none(self, ws: Workspace, attempt: AttemptRow, followed: Followed | None,
                  forged: str | None) -> str:
        try:  # the exchange itself gone: its result is not lost, only not reachable now
            exchange.remote_ref(ws.root, self.where, "HEAD")
        except (GitError, OSError) as exc:
            why = gist(exc) if isinstance(exc, GitError) else str(exc)[:300]
            raise BatonError(f"its exchange {self.where} cannot be reached ({why}); "
                             "bring it back first") from None
        job = attempt.spec["job"]
        node = (followed.node if followed else None) or attempt.spec.get("node")
        said = answer(followed)
        if said is not None and not said.claimed and not node:
            return f"its job ran no agent on runner {self.name}: {said.why}"
        if forged is not None:
            return (f"its record on the exchange ({forged[:12]}) does not carry its job's seal: "
                    "refused, nothing of it landed — retry it")
        where = f"its worker {node}" if node else f"runner {self.name}"
        ended_by = error(followed)
        detail = f" ({ended_by})" if ended_by else ""
        return (f"{where} went away mid-task{detail}: its agent is not run again; what it "
                f"pushed is kept under refs/baton/jobs/{job}/ on the exchange — retry it")

    def _carried_home(self, ws: Workspace, attempt: AttemptRow, said: JobRecord) -> Fetched:
        """A finished job whose worker could not push to the exchange (gone, damaged): its
        result and record came back with its answer, as a bundle — fetched from that, and
        said. Its agent is not run again."""
        refs = attempt.spec["refs"]
        told = (f"the exchange of runner {self.name} could not be reached when its worker "
                f"finished ({said.unpushed})")
        if said.bundle is None:
            kept = f" in {said.kept}" if said.kept else ""
            return Fetched(None, lost=f"{told}; its finished work is kept on {said.node}{kept} "
                                      "— its agent is not run again: bring the exchange back, "
                                      "then take it from there")
        with tempfile.TemporaryDirectory(prefix="baton-result-") as tmp:
            path = Path(tmp) / "result.bundle"
            path.write_bytes(said.bundle)
            exchange.fetch(ws.root, str(path), *(f"+{refs[p]}:{refs[p]}"
                                                 for p in ("result", "record")))
        commit = read_ref(ws.root, refs["record"])
        if commit is None:
            return Fetched(None, lost=f"{told}; the result it sent back holds no record")
        ws.store.append(attempt.plan_id, attempt.task_id, K.TASK_FLAGGED, {
            "flag": "exchange", "attempt": attempt.id,
            "message": f"{told}: its result came back with the job instead"})
        wire, output = exchange.read_record(ws.root, commit)
        return Fetched(JobRecord.from_wire(wire), output)
