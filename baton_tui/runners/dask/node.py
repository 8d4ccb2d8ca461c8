"""The worker's side of a Dask runner: one attempt, run on a cluster node (`run_job`).

Dask calls `run_job(job)` on a worker that has one unit of the resource the task asked for.
It makes a scratch repository of the job's own that borrows the objects of a cache the
node's jobs share (a base is fetched from the exchange once — that one commit, no history —
however many jobs start from it), claims the attempt on the exchange (`exchange` module: an
attempt Dask runs a second time finds the claim and runs nothing), and runs the agent under
the same `baton attempt` shim as on the person's machine (forked from a warm spawner where
there is one, as there), with a store local to the node: the agent reports
with `baton report` to that store, with a nonce made here (no secret travels in the job).
When the agent ends it pushes the worktree as the agent left it (`result`) and a record of
the attempt (`record`: exit status, report, events, session handle, output) back to the
exchange, and returns the record. The claims, and the results, of the jobs a node starts or
ends at about the same time go as one push each (a plan's tasks start and end together).
Progress travels as Dask worker events (`log_event`) on a topic named after the job: the
conductor streams them into the task's log.

The job carries the plan, the task and what the conductor decided for its start — never
the person's environment, keys or tokens: a node's players are signed in on the node. A
repository's custom player command runs only when the node's copy of `baton.toml` is the
one the person trusted (its hash travels with the job).

`signal_job` is what the conductor runs on the worker (`Client.run`) to stop an attempt:
it signals the agent's whole process group, as a local stop does. A worker that dies leaves
no agent behind: its watchdog (`dask_watch`) ends the groups of the attempts it still ran.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from baton_tui import layout, procs
from baton_tui.runners import changes
from baton_tui.runners.base import StartRequest, Workdir
from baton_tui.runners.dask.cluster import versions
from baton_tui.runners.dask.job import Heard, Job, JobRecord, WireError
from baton_tui.runners.homecoming import Ran, RemoteEvent
from baton_tui.config_files import file_hash
from baton_tui.core.events import EventKind
from baton_tui.gitops.git import GitError, git, run_git
from baton_tui.plan.model import parse_document
from baton_tui.paths import own_module
from baton_tui.redact import clean, redact
from baton_tui.runners.dask import exchange
from baton_tui.runners import launcher, logcap, spawner
from baton_tui.runners.spawner import Forked
from baton_tui.store.db import Store
from baton_tui.workspace import Workspace

LOOK_EVERY = 0.3
ACTIVITY_EVERY = 2.0  # the agent's changed files and CPU time are said this often
K = EventKind
KEPT_EVENTS = (K.TASK_REPORTED, K.TASK_PROGRESS, K.TASK_USAGE, K.TASK_REPORT_REFUSED,
               K.TASK_FLAGGED)
_running: dict[str, tuple[str, int]] = {}  # job -> (node store, node attempt id)
_lock = threading.Lock()
_batches: "dict[tuple[str, Path, str], exchange.Batched[Any]]" = {}  # (kind, cache, exchange)
_claimed: set[str] = set()  # claim refs the node's pushes created, not yet told to their job
_watchdog: "subprocess.Popen[bytes] | None" = None
_watched: set[int] = set()  # the process groups the watchdog ends if this worker dies
_watch_lock = threading.Lock()


def _worker_address() -> str | None:
    """This Dask worker's address; None outside a worker (a job run directly, in a test)."""
    try:
        from distributed import get_worker  # lazy: only ever imported on a Dask worker

        return str(get_worker().address)
    except (ImportError, ValueError):  # (ValueError: "No worker found")
        return None


def _tell(topic: str, message: Heard) -> None:
    """A worker event on the job's topic (the conductor streams them); nothing outside Dask."""
    try:
        from distributed import get_worker  # lazy: only ever imported on a Dask worker

        get_worker().log_event(topic, dict(message))
    except (ImportError, ValueError):  # not on a worker: nobody listens
        pass
    # Broad on purpose: a worker whose connection to the scheduler is closing raises what its
    # comm layer has (CommClosedError, OSError, RuntimeError…), and the job must run on
    # regardless — its output and progress come home with its record; a lost event costs
    # only the live view.
    except Exception:
        pass


def scratch_root(workdir: str | None) -> Path:
    root = Path(workdir).expanduser() if workdir else Path(tempfile.gettempdir()) / "baton-node"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _object_cache(root: Path) -> Path:
    """The node's bare repository of the bases it fetched: every job's scratch repository
    borrows its objects (`alternates`), so a base many jobs share is fetched once."""
    cache = root / "objects.git"
    if not (cache / "HEAD").exists():
        made = root / f".objects-{os.getpid()}-{threading.get_ident()}"
        git(root, "init", "--quiet", "--bare", "--template=", str(made))
        git(made, "config", "gc.auto", "0")  # (its objects are borrowed: never pruned)
        try:
            made.rename(cache)
        except OSError:  # another job or worker of this machine made it first
            shutil.rmtree(made, ignore_errors=True)
    return cache


def _fetch_base(cache: Path, ex: str, ref: str, base: str) -> str:
    """Fetch the job's base (that one commit, no history) into the cache; the commit the
    exchange's ref names. One fetch at a time (a shallow fetch rewrites `shallow`): the jobs
    of a plan arrive together and all miss the cache, so the ones that waited for the lock
    look again first — the base one of them fetched is not fetched once per job."""
    with open(cache / "fetch.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if run_git(cache, "cat-file", "-e", f"{base}^{{commit}}").returncode == 0:
            return base
        exchange.fetch(cache, ex, f"+{ref}:refs/baton/base", depth=1)
        return git(cache, "rev-parse", "refs/baton/base^{commit}")


def _borrow(repo: Path, cache: Path) -> None:
    """Point the job's repository at the cache's objects (and the cache's shallow commits,
    so git never looks for the parents the cache does not hold)."""
    info = repo / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{(cache / 'objects').resolve()}\n")
    if (cache / "shallow").exists():
        shutil.copyfile(cache / "shallow", repo / ".git" / "shallow")


def run_job(wire: dict[str, Any]) -> dict[str, Any]:
    """Run one attempt on this node (see the module docstring); returns its record's wire
    form (`job.JobRecord`)."""
    node = _worker_address()
    ours, theirs = versions(), wire.get("versions")
    # Another Baton's job may not even read as one: its versions are compared first, and
    # refused in one clear line, before anything is fetched or claimed.
    if isinstance(theirs, dict) and theirs and theirs != ours:
        return JobRecord(claimed=False, node=node, why=(
            f"worker {node} runs Baton {ours['baton']} on Python {ours['python']}, the "
            f"person's machine Baton {theirs.get('baton')} on Python {theirs.get('python')}: "
            "install the same versions there (`baton runners` compares them)")).to_wire()
    try:
        job = Job.from_wire(wire)
    except WireError as exc:
        return JobRecord(claimed=False, node=node, why=f"worker {node}: {exc}").to_wire()
    return _run(job, node).to_wire()


def _run(job: Job, node: str | None) -> JobRecord:
    name, ex = job.job, job.exchange
    refs = exchange.refs_of(name)
    root = scratch_root(job.workdir)
    sweep(root)
    scratch = root / name
    repo, tree = scratch / "repo", scratch / "tree"
    try:
        scratch.mkdir()
    except FileExistsError:  # a second run of the same job on this node: never a second agent
        return JobRecord(claimed=False, node=node, why="already run on this node")
    _own(scratch, name, ex)
    cache = _object_cache(root)
    git(scratch, "init", "--quiet", "--template=", str(repo))
    _borrow(repo, cache)
    base = job.base
    # The base is usually in the cache already (the tasks of a plan start from few commits):
    # its worktree is made at once; else it is fetched first, and checked.
    if run_git(repo, "worktree", "add", "--quiet", "--detach", str(tree), base).returncode:
        there = _fetch_base(cache, ex, refs["base"], base)
        if there != base:
            shutil.rmtree(scratch, ignore_errors=True)
            return JobRecord(claimed=False, node=node,
                             why=f"the exchange's base is {there}, not {base}")
        _borrow(repo, cache)
        git(repo, "worktree", "add", "--quiet", "--detach", str(tree), base)
    # The claim: a commit of this run's own, pushed where only the first push may create
    # it. (Never the base itself: a second push of a commit the ref already names is "up to
    # date" — a success that would let a second run start the agent again.)
    claim = git(repo, *exchange.NO_HOOKS, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m",
                f"baton: claimed by {node} at {time.time()}", env=dict(exchange.BATON_IDENTITY))
    # The claim's push is on its way (on a thread of its own) while the attempt is prepared
    # here — the node's store, the plan, the attempt's record: nothing any other run can see,
    # and nothing starts before the claim is known to be this run's.
    claiming: list[bool | str | BaseException] = []

    def push_claim() -> None:
        try:
            claiming.append(_claim(cache, ex, repo / ".git" / "objects", claim, refs["claim"]))
        except BaseException as exc:  # (raised below, in the job's own thread)
            claiming.append(exc)

    pushing = threading.Thread(target=push_claim, name="baton-node-claim", daemon=True)
    pushing.start()
    prepared: Prepared | Exception
    try:
        prepared = _prepare(job, repo, tree, base)
    # Anything the set-up raised (git, the store, a bad document): said in the record below
    # once the attempt is claimed — never a silent loss, the job's answer must always come back.
    except Exception as exc:
        prepared = exc
    pushing.join()
    claimed = claiming[0]
    if isinstance(claimed, BaseException):
        if isinstance(prepared, Prepared):
            prepared.ws.close()
        raise claimed
    if claimed is not True:
        if isinstance(prepared, Prepared):
            prepared.ws.close()
        shutil.rmtree(scratch, ignore_errors=True)
        return JobRecord(claimed=False, node=node,
                         why=claimed or "another run claimed it first")
    topic = name
    _tell(topic, {"node": node or "", "claimed": True})
    log: str | None = None
    try:
        if isinstance(prepared, Exception):
            raise prepared
        record, log = _run_agent(job, prepared, tree, topic, node)
    # Anything the set-up raised (git, the store, the shim's start, a bad document): said in
    # a record, never a silent loss — the job's answer must always come back.
    except Exception as exc:
        record = JobRecord(claimed=True, node=node, error=f"{type(exc).__name__}: {exc}"[:500])
    left = exchange.snapshot(tree, "baton: the worktree as the agent left it",
                             env=dict(exchange.BATON_IDENTITY))
    record = replace(record, head=left.head, result=left.commit)
    output = Path(log).read_bytes() if log and Path(log).exists() else b""
    # What leaves the node is redacted (the worker's own keys, its configured values).
    output = redact(output.decode("utf-8", "surrogateescape")).encode("utf-8",
                                                                      "surrogateescape")
    kept: dict[str, Any] = clean(record.to_wire())
    if job.seal:  # the attempt's secret, from the conductor: never the agent's
        kept["seal"] = exchange.seal(job.seal, name, kept, output)
    commit = exchange.record_commit(repo, kept, output, None)
    record = JobRecord.from_wire(kept)
    # Forced: the job's refs are this run's (what anyone else pushed there carries no seal).
    try:
        _push_results(cache, ex, repo / ".git" / "objects", f"+{left.commit}:{refs['result']}",
                      f"+{commit}:{refs['record']}")
    except (GitError, OSError) as exc:  # the exchange is gone or damaged: the finished work
        return _carried(repo, scratch, base, refs, left.commit, commit, record, exc)  # is not
    _tell(topic, {"done": True})
    # (after the answer: the conductor need not wait for it)
    threading.Thread(target=shutil.rmtree, args=(scratch,), kwargs={"ignore_errors": True},
                     name="baton-node-cleanup", daemon=True).start()
    return record


OWNER = "owner.json"
SWEEP_EVERY = 60.0
_swept = 0.0


def _own(scratch: Path, job: str, ex: str) -> None:
    """Say whose the scratch checkout is: this machine, this worker process, the job and its
    exchange (`sweep` reads it once that process is gone)."""
    pid = os.getpid()
    (scratch / OWNER).write_text(json.dumps({
        "host": socket.gethostname(), "pid": pid, "token": procs.start_token(pid),
        "job": job, "exchange": ex}), encoding="utf-8")


def sweep(root: Path) -> list[str]:
    """Scratch checkouts a dead worker of this machine left (killed mid-job, or its job
    failed before it could clean up): each one's work is pushed to its exchange first, as
    `refs/baton/jobs/<job>/leftover` (the worktree as it was, uncommitted files included),
    then the checkout goes; one whose work cannot be pushed stays. At most once a minute per
    worker process; the jobs returned."""
    global _swept
    now = time.monotonic()
    if _swept and now - _swept < SWEEP_EVERY:
        return []
    _swept = now
    host, gone = socket.gethostname(), []
    for scratch in root.glob("baton-*"):
        try:
            owner = json.loads((scratch / OWNER).read_text(encoding="utf-8"))
            pid, job, ex = int(owner["pid"]), str(owner["job"]), str(owner["exchange"])
            token = owner.get("token")
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not one this code made (or being made): left alone
        if owner.get("host") != host or procs.alive(pid, float(token) if token else None):
            continue
        with _lock:
            if job in _running:
                continue
        tree = scratch / "tree"
        try:
            if (tree / ".git").exists():
                left = exchange.snapshot(tree, "baton: the worktree its dead worker left",
                                         env=dict(exchange.BATON_IDENTITY))
                exchange.refs_of(job)  # (a job's name, checked)
                exchange.push(scratch / "repo", ex, f"+{left.commit}:refs/baton/jobs/{job}/leftover")
        except (GitError, OSError, ValueError):
            continue  # its work could not be kept elsewhere: it stays here
        shutil.rmtree(scratch, ignore_errors=True)
        gone.append(job)
    return gone


def _carried(repo: Path, scratch: Path, base: str, refs: dict[str, str], result: str,
             commit: str, record: JobRecord, exc: Exception) -> JobRecord:
    """A finished attempt whose result and record could not be pushed to the exchange: they
    go back with the job's answer instead, as a git bundle (its `result` and `record` refs,
    on top of the base the conductor has), and the scratch repository stays on the node
    until then. The agent is never run again for want of an exchange."""
    why = getattr(exc, "stderr", "") or str(exc)
    lines = [line for line in str(why).strip().splitlines() if line.strip()]
    record = replace(record, unpushed=(lines[-1] if lines else type(exc).__name__)[:300])
    try:
        git(repo, "update-ref", refs["result"], result)
        git(repo, "update-ref", refs["record"], commit)
        bundle = scratch / "result.bundle"
        git(repo, "bundle", "create", "--quiet", str(bundle), refs["result"], refs["record"],
            f"^{base}")
        carried = bundle.read_bytes()
    except (GitError, OSError) as err:  # kept on the node: said, with where
        return replace(record, bundle_error=f"{type(err).__name__}: {err}"[:300],
                       kept=str(scratch))
    shutil.rmtree(scratch, ignore_errors=True)
    return replace(record, bundle=carried)


def _batch(kind: str, cache: Path, ex: str, send: Callable[[list[Any]], None]
           ) -> "exchange.Batched[Any]":
    """The node's one batch of `kind` for this exchange: the jobs of a plan start and end
    together, and one push for all of them is a few processes instead of a few each."""
    with _lock:
        found = _batches.get((kind, cache, ex))
        if found is None:
            found = _batches[(kind, cache, ex)] = exchange.Batched(send)
        return found


def _claim(cache: Path, ex: str, objects: Path, commit: str, ref: str) -> bool | str:
    """Claim the attempt (push `commit` to `ref`, which only the first push may create), in
    one push with the node's other jobs claiming at about the same time: sent from the
    node's cache, borrowing each job's objects. True when this push created it; else False,
    or why the exchange could not be reached."""
    def send(items: list[tuple[str, str, str]]) -> None:
        created = exchange.claim(cache, ex, [(c, r) for _o, c, r in items],
                                 borrow=list(dict.fromkeys(o for o, _c, _r in items)))
        with _lock:
            _claimed.update(created)

    try:
        _batch("claim", cache, ex, send)((str(objects), commit, ref))
    except (GitError, OSError) as exc:  # (not pushed: not claimed)
        return f"the exchange could not be reached: {exc}"[:300]
    with _lock:
        if ref in _claimed:
            _claimed.discard(ref)
            return True
        if run_git(cache, *exchange.SAFE, "ls-remote", "--", ex, ref).returncode != 0:
            return "the exchange could not be reached to claim it"
    return False


def _push_results(cache: Path, ex: str, objects: Path, *refspecs: str) -> None:
    """Push a job's result and record, in one push with those of the node's other jobs
    that end at about the same time (sent from the node's cache, borrowing each job's
    objects)."""
    def send(items: list[tuple[str, str]]) -> None:
        exchange.push(cache, ex, *(spec for _o, spec in items),
                      borrow=list(dict.fromkeys(o for o, _spec in items)))

    _batch("results", cache, ex, send)(*((str(objects), spec) for spec in refspecs))


@dataclass
class Prepared:
    """An attempt made ready to start on this node: its store, plan and record."""

    ws: Workspace
    plan_id: int
    task_id: int
    node_attempt: int
    request: StartRequest


def _prepare(job: Job, repo: Path, tree: Path, base: str) -> Prepared:
    """The node's store for the attempt (in the job's scratch repository), its plan, and the
    attempt recorded there with a nonce of its own: all but the start of the shim."""
    config = tree / "baton.toml"  # the repository's configuration, as the base has it
    if config.is_file() and not config.is_symlink():
        shutil.copyfile(config, repo / "baton.toml")
    ws = Workspace(repo)
    try:
        trusted = job.trusted
        if trusted and file_hash(repo / "baton.toml") == trusted:
            ws.store.set_trust(str(ws.paths.project_config), trusted)
        doc = parse_document(job.doc, "job", stored=True)
        task = doc.task(job.task)
        plan_id = ws.store.insert_plan(job.slug, doc.dump())
        ws.store.update_plan(plan_id, approved=True)
        plan = ws.store.plan(plan_id)
        assert plan is not None
        layout.shim_dir()
        node_attempt, nonce, folder = launcher.record(ws, plan, task)
    except BaseException:
        ws.close()
        raise
    request = StartRequest(plan=plan, doc=doc, task=task, attempt_id=node_attempt,
                           folder=folder, workdir=Workdir(tree, base, None, fresh=True),
                           prompt=job.prompt, nonce=nonce, resume_message=job.resume_message,
                           session_id=job.session_id)
    return Prepared(ws, plan_id, task.id, node_attempt, request)


def _run_agent(job: Job, prepared: Prepared, tree: Path, topic: str,
               node: str | None) -> tuple[JobRecord, str | None]:
    """The shim and its agent in `tree`, with the store `_prepare` made; its record, and the
    path of its output log."""
    ws, plan_id, node_attempt = prepared.ws, prepared.plan_id, prepared.node_attempt
    task_id, request = prepared.task_id, prepared.request
    shim = launcher.start_attempt(
        ws, request,
        # Every job's checkout on this node and the shared object cache: read-only to this
        # agent, as sibling tasks' worktrees are to a local one (its own places stay writable).
        guard=[tree.parent.parent])
    token = procs.start_token(shim.pid)
    groups = [shim.pid]  # the shim's session, then its agent's group: ended if we die
    _watch("+", shim.pid)
    with _lock:
        _running[job.job] = (str(ws.paths.store_path), node_attempt)
    attempt = ws.store.attempt(node_attempt)
    log = attempt.log_path if attempt else None
    offset, seen = 0, 0
    activity = Activity(tree, shim.pid)
    try:
        while True:
            ended = _ended(shim, token)
            if len(groups) == 1 and (row := ws.store.attempt(node_attempt)) and row.pgid:
                groups.append(row.pgid)
                _watch("+", row.pgid)
            if log:
                chunk, offset, _cut = logcap.read_from(log, offset)
                if chunk:  # (what leaves the node is redacted: its own keys stay there)
                    _tell(topic, {"at": offset,
                                  "text": redact(chunk.decode("utf-8", "replace"))})
            for event in ws.store.events(plan_id, after=seen, task_id=task_id):
                seen = event.id  # the agent's progress reports, live (the rest at the end)
                if event.kind == K.TASK_PROGRESS and event.data.get("message"):
                    _tell(topic, {"progress": redact(str(event.data["message"]))[:300],
                                  "event": event.id})
            if ended:
                break
            said = activity.due()
            if said is not None:
                _tell(topic, said)
            _wait(shim, LOOK_EVERY)  # (woken at once by the shim's end)
    finally:
        with _lock:
            _running.pop(job.job, None)
        for group in groups:
            _watch("-", group)
    row = ws.store.attempt(node_attempt)
    assert row is not None
    events = tuple(RemoteEvent(kind=e.kind, data=dict(e.data), ts=e.ts, id=e.id)
                   for e in ws.store.events(plan_id, task_id=task_id) if e.kind in KEPT_EVENTS)
    spec = row.spec
    record = JobRecord(
        claimed=True, node=node,
        attempt=Ran(exit_status=row.exit_status, report=row.report,
                    session_id=row.session_id, started=row.started, ended=row.ended,
                    leftover=spec.get("leftover"), log_cut=spec.get("log_cut"),
                    node_attempt=node_attempt),
        events=events)
    ws.close()
    return record, log


class Activity:
    """What the conductor's supervisor would look at on a local agent, looked at here and
    said on the job's topic every `ACTIVITY_EVERY` seconds: the agent's changed files (with
    a signature that changes when any of them does) and its process tree's CPU seconds — so
    scope, idle and stall supervision work for a remote task as for a local one. The first
    look is `ACTIVITY_EVERY` after the agent starts (nothing has changed yet then, and a
    plan's agents start together: a `git status` and a walk of the process table each would
    take the CPU their own start-up needs)."""

    def __init__(self, tree: Path, pid: int):
        self.tree, self.pid = tree, pid
        self.next = time.monotonic() + ACTIVITY_EVERY  # (nothing to say as it starts)

    def due(self) -> Heard | None:
        now = time.monotonic()
        if now < self.next:
            return None
        self.next = now + ACTIVITY_EVERY
        return self.look()

    def look(self) -> Heard | None:
        try:
            _changed, signature = changes.read(self.tree)  # (as a local agent's is looked at)
        except (GitError, OSError):  # the tree mid-change (a lock, a rename): the next look
            return None
        return {"files": list(signature), "cpu": procs.tree_cpu_time(self.pid)}


def _ended(shim: "subprocess.Popen[bytes] | Forked", token: float | None) -> bool:
    if isinstance(shim, subprocess.Popen):
        return shim.poll() is not None
    return not procs.alive(shim.pid, token)  # (the spawner reaps it)


def _wait(shim: "subprocess.Popen[bytes] | Forked", seconds: float) -> None:
    if isinstance(shim, subprocess.Popen):
        try:
            shim.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            pass
    else:
        procs.wait_exit(shim.pid, seconds)


def _watch(sign: str, pgid: int) -> None:
    """Tell this worker's watchdog (`dask_watch`) a group to end if the worker dies (`+`),
    or one that ended (`-`); the watchdog is started on first use, and again if it died."""
    global _watchdog
    with _watch_lock:
        if sign == "+":
            _watched.add(pgid)
        else:
            _watched.discard(pgid)
        message = f"{sign}{pgid}\n"
        if _watchdog is None or _watchdog.poll() is not None:
            try:
                _watchdog = subprocess.Popen(own_module("baton_tui.runners.dask.watch"),
                                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL, cwd="/",
                                             start_new_session=True)
            except OSError:
                _watchdog = None
                return
            message = "".join(f"+{group}\n" for group in _watched)  # (all of them, again)
        try:
            assert _watchdog.stdin is not None  # (started with a pipe)
            _watchdog.stdin.write(message.encode())
            _watchdog.stdin.flush()
        except (OSError, ValueError):
            _watchdog = None


def signal_job(job: str, signum: int) -> bool:
    """Signal the agent of `job` on this worker (run here by the conductor's `Client.run`):
    its whole process group, as a local stop does. False when it does not run here (yet)."""
    with _lock:
        found = _running.get(job)
    if found is None:
        return False
    store = Store(found[0], create=False)
    try:
        row = store.attempt(found[1])
    finally:
        store.close()
    if row is None or not row.pgid:
        return False
    procs.signal_group(row.pgid, signal.Signals(signum))
    return True


def warm() -> None:
    """Ready this node for the jobs about to come (run here by the conductor's `Client.run`
    as it connects, while it still makes the tasks' worktrees): this module and the shim's
    spawner are loaded then, not in the first job's path."""
    spawner.warm()


def ping() -> dict[str, str]:
    """This node's Baton and Python versions (what `baton runners` compares)."""
    return {**versions(), "pid": str(os.getpid())}
