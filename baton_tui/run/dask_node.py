"""The worker's side of a Dask runner: one attempt, run on a cluster node (`run_job`).

Dask calls `run_job(job)` on a worker that has one unit of the resource the task asked for.
It fetches exactly the attempt's base from the exchange into a scratch repository of its own
(one commit, no history), claims the attempt there (`exchange` module: an attempt Dask runs a
second time finds the claim and runs nothing), and runs the agent under the same `baton
attempt` shim as on the person's machine, with a store local to the node: the agent reports
with `baton report` to that store, with a nonce made here (no secret travels in the job).
When the agent ends it pushes the worktree as the agent left it (`result`) and a record of
the attempt (`record`: exit status, report, events, session handle, output) back to the
exchange, and returns the record. Progress travels as Dask worker events (`log_event`) on a
topic named after the job: the conductor streams them into the task's log.

The job carries the plan, the task and what the conductor decided for its start — never
the person's environment, keys or tokens: a node's players are signed in on the node. A
repository's custom player command runs only when the node's copy of `baton.toml` is the
one the person trusted (its hash travels with the job).

`signal_job` is what the conductor runs on the worker (`Client.run`) to stop an attempt:
it signals the agent's whole process group, as a local stop does.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from baton_tui import layout, procs
from baton_tui.cluster import versions
from baton_tui.config_files import file_hash
from baton_tui.core.events import EventKind
from baton_tui.gitops.git import git, run_git
from baton_tui.plan.model import parse_document
from baton_tui.redact import clean, redact
from baton_tui.run import exchange, launcher, logcap, spawner
from baton_tui.store.db import Store
from baton_tui.workspace import Workspace

LOOK_EVERY = 0.3
K = EventKind
KEPT_EVENTS = (K.TASK_REPORTED, K.TASK_PROGRESS, K.TASK_USAGE, K.TASK_REPORT_REFUSED,
               K.TASK_FLAGGED)
_running: dict[str, tuple[str, int]] = {}  # job -> (node store, node attempt id)
_lock = threading.Lock()


def _worker_address() -> str | None:
    try:
        from distributed import get_worker  # lazy: only ever imported on a Dask worker

        return str(get_worker().address)
    except Exception:
        return None


def _tell(topic: str, message: dict[str, Any]) -> None:
    """A worker event on the job's topic (the conductor streams them); nothing outside Dask."""
    try:
        from distributed import get_worker  # lazy: only ever imported on a Dask worker

        get_worker().log_event(topic, message)
    except Exception:
        pass


def scratch_root(workdir: str | None) -> Path:
    root = Path(workdir).expanduser() if workdir else Path(tempfile.gettempdir()) / "baton-node"
    root.mkdir(parents=True, exist_ok=True)
    return root


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run one attempt on this node (see the module docstring); returns its record."""
    name, ex = job["job"], job["exchange"]
    refs = exchange.refs_of(name)
    node = _worker_address()
    ours, theirs = versions(), job.get("versions") or {}
    if theirs and theirs != ours:  # one clear line, before anything is fetched or claimed
        return {"claimed": False, "node": node, "why": (
            f"worker {node} runs Baton {ours['baton']} on Python {ours['python']}, the "
            f"person's machine Baton {theirs.get('baton')} on Python {theirs.get('python')}: "
            "install the same versions there (`baton runners` compares them)")}
    scratch = scratch_root(job.get("workdir")) / name
    repo, tree = scratch / "repo", scratch / "tree"
    if scratch.exists():  # a second run of the same job on this node: never a second agent
        return {"claimed": False, "node": node, "why": "already run on this node"}
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet")
    exchange.fetch(repo, ex, f"+{refs['base']}:refs/baton/base", depth=1)
    base = git(repo, "rev-parse", "refs/baton/base^{commit}")
    if base != job["base"]:
        return {"claimed": False, "node": node, "why": f"the exchange's base is {base}, not "
                f"{job['base']}"}
    claim = git(repo, *exchange.NO_HOOKS, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m",
                f"baton: claimed by {node} at {time.time()}", env=exchange.identity(repo))
    try:
        exchange.push(repo, ex, f"{claim}:{refs['claim']}", lease_absent=refs["claim"])
    except Exception:
        shutil.rmtree(scratch, ignore_errors=True)
        return {"claimed": False, "node": node, "why": "another run claimed it first"}
    topic = name
    _tell(topic, {"node": node, "claimed": True})
    git(repo, "worktree", "add", "--quiet", "--detach", str(tree), base)
    try:
        record = _run_agent(job, repo, tree, base, topic, node)
    except Exception as exc:  # set-up failed here: a record saying so, never a silent loss
        record = {"claimed": True, "node": node, "error": f"{type(exc).__name__}: {exc}"[:500],
                  "attempt": {}, "events": []}
    record["head"] = git(tree, "rev-parse", "HEAD")
    result = exchange.snapshot(tree, "baton: the worktree as the agent left it")
    record["result"] = result
    log = record.pop("_log", None)
    output = Path(log).read_bytes() if log and Path(log).exists() else b""
    # What leaves the node is redacted (the worker's own keys, its configured values).
    output = redact(output.decode("utf-8", "surrogateescape")).encode("utf-8",
                                                                      "surrogateescape")
    commit = exchange.record_commit(repo, clean(record), output, None)
    exchange.push(repo, ex, f"{result}:{refs['result']}", f"{commit}:{refs['record']}")
    _tell(topic, {"done": True})
    if not job.get("keep"):
        shutil.rmtree(scratch, ignore_errors=True)
    return record


def _run_agent(job: dict[str, Any], repo: Path, tree: Path, base: str, topic: str,
               node: str | None) -> dict[str, Any]:
    """The shim and its agent in `tree`, with a store of this node's own."""
    shown = run_git(repo, "show", f"{base}:baton.toml")
    if shown.returncode == 0:  # the repository's configuration, as the commit has it
        (repo / "baton.toml").write_text(shown.stdout)
    ws = Workspace(repo)
    trusted = job.get("trusted")
    if trusted and file_hash(repo / "baton.toml") == trusted:
        ws.store.set_trust(str(ws.paths.project_config), trusted)
    doc = parse_document(job["doc"], "job", stored=True)
    task = doc.task(int(job["task"]))
    plan_id = ws.store.insert_plan(job.get("slug") or "plan", doc.dump())
    ws.store.update_plan(plan_id, approved=True)
    plan = ws.store.plan(plan_id)
    assert plan is not None
    spawner._broken = True  # a Dask worker: each shim a fresh process, waited for here
    layout.shim_dir()
    workdir = launcher.Workdir(tree, base, None, fresh=True)
    node_attempt, shim = launcher.start_attempt(
        ws, plan, doc, task, workdir, artifacts={int(k): v for k, v in
                                                 (job.get("artifacts") or {}).items()},
        feedback=job.get("feedback"), resume_message=job.get("resume_message"),
        session_id=job.get("session_id"))
    assert isinstance(shim, subprocess.Popen)  # (no spawner here: a process of our own)
    proc = shim
    with _lock:
        _running[job["job"]] = (str(ws.paths.store_path), node_attempt)
    attempt = ws.store.attempt(node_attempt)
    log = attempt.log_path if attempt else None
    offset, seen = 0, 0
    try:
        while True:
            ended = proc.poll() is not None
            if log:
                chunk, offset, _cut = logcap.read_from(log, offset)
                if chunk:  # (what leaves the node is redacted: its own keys stay there)
                    _tell(topic, {"at": offset,
                                  "text": redact(chunk.decode("utf-8", "replace"))})
            for event in ws.store.events(plan_id, after=seen, task_id=task.id):
                seen = event.id  # the agent's progress reports, live (the rest at the end)
                if event.kind == K.TASK_PROGRESS and event.data.get("message"):
                    _tell(topic, {"progress": redact(str(event.data["message"]))[:300],
                                  "event": event.id})
            if ended:
                break
            try:  # (woken at once by the shim's end)
                proc.wait(timeout=LOOK_EVERY)
            except subprocess.TimeoutExpired:
                pass
    finally:
        with _lock:
            _running.pop(job["job"], None)
    row = ws.store.attempt(node_attempt)
    assert row is not None
    events = [{"kind": e.kind, "data": e.data, "ts": e.ts, "id": e.id}
              for e in ws.store.events(plan_id, task_id=task.id) if e.kind in KEPT_EVENTS]
    spec = row.spec
    record = {
        "claimed": True, "node": node,
        "attempt": {"exit_status": row.exit_status, "report": row.report,
                    "session_id": row.session_id, "started": row.started, "ended": row.ended,
                    "leftover": spec.get("leftover"), "log_cut": spec.get("log_cut"),
                    "node_attempt": node_attempt},
        "events": events, "_log": log}
    ws.close()
    return record


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


def ping() -> dict[str, str]:
    """This node's Baton and Python versions (what `baton runners` compares)."""
    return {**versions(), "pid": str(os.getpid())}
