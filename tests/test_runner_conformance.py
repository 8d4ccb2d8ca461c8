"""What each `Runner` method means, pinned once for every runner: the scripted one (no agent
process), the local one (the demo agent under its shim) and the Dask one (the demo agent on a
real Dask cluster on 127.0.0.1, inside a loopback-only network namespace: see
`helpers.dask_kit`). The same two attempts run under each, driven through the protocol alone,
outside any conductor: one ends on its own once the test lets it, one is stopped. Every wait
is on a condition."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from baton_tui.api import agents, plans
from baton_tui.run.placing import Turns
from baton_tui.run.starting import Start, prepare
from baton_tui.runners.base import AttemptHandle, Runner, StartRequest
from baton_tui.workspace import Workspace
from helpers.dask_kit import Cluster, loopback_cluster, loopback_only
from helpers.run_kit import DEMO_AGENT, git

RUNNERS = ["scripted", "local", "dask"]
LIMIT = {"scripted": 30.0, "local": 60.0, "dask": 300.0}  # seconds, for a loaded machine


@pytest.fixture
def cluster(request, tmp_path):
    """A scheduler and one worker, for the Dask runner's case inside the namespace."""
    if request.node.callspec.params["kind"] != "dask":
        yield None
        return
    with loopback_cluster(tmp_path / "cluster", {"w1": "agent=2"}) as made:
        yield made


def steps(gate: Path, kind: str) -> dict[str, list[dict]]:
    """Task 1 prints, writes, waits for `gate`, prints again and reports done; task 2 prints
    and hangs until stopped. The scripted runner waits on a condition where the demo agent
    waits for the file."""
    wait = ({"until": lambda _ws: gate.exists()} if kind == "scripted"
            else {"await": str(gate)})
    return {"1": [{"print": "conformance line one"}, {"write": "done.txt", "content": "d\n"},
                  wait, {"print": "after the gate"},
                  {"report": "done", "summary": "finished"}],
            "2": [{"print": "waiting to be stopped"}, {"hang": True}]}


def set_up(repo: Path, tmp: Path, kind: str, cluster: Cluster | None) -> dict:
    script = steps(tmp / "gate", kind)
    file = tmp / "agent.json"
    file.write_text(json.dumps({k: v for k, v in script.items() if kind != "scripted"}))
    config = f"[players.custom.agent]\ncommand = {json.dumps([*DEMO_AGENT, str(file)])}\n"
    runner = {}
    if cluster is not None:
        exchange = tmp / "exchange.git"
        subprocess.run(["git", "init", "-q", "--bare", str(exchange)], check=True)
        config += (f'\n[runners.lab]\nkind = "dask"\naddress = "{cluster.address}"\n'
                   f'exchange = "{exchange}"\nworkdir = "{tmp / "nodes"}"\n')
        runner = {"runner": "lab"}
    (repo / "baton.toml").write_text(config)
    if cluster is not None:  # workers read the repository's baton.toml as committed
        git(repo, "add", "baton.toml")
        git(repo, "commit", "-q", "-m", "baton.toml")
    ws = Workspace(repo)
    tasks = [{"id": i, "title": f"Task {i}", "prompt": f"Do task {i}.", "player": "agent",
              **runner} for i in (1, 2)]
    plans.store_plan(ws, {"version": 1, "goal": "Conformance", "tasks": tasks}, "plan.json")
    agents.trust(ws)
    plans.approve(ws)
    ws.close()
    return script


def make_runner(kind: str, ws: Workspace, script: dict) -> Runner:
    if kind == "scripted":
        from baton_tui.runners.scripted import ScriptedRunner

        return ScriptedRunner(ws, script)
    if kind == "local":
        from baton_tui.runners.local import LocalRunner

        return LocalRunner(ws)
    from baton_tui.runners.switch import RunnerSwitch

    return RunnerSwitch(ws).runner("lab")


async def until(what: str, limit: float, check):
    """Ask `check()` until it returns something truthy (that)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def request(ws: Workspace, runner: Runner, task_id: int) -> StartRequest:
    """A start as the conductor makes it (`starting.prepare`): the task's place made, its
    words composed, its attempt recorded."""
    cur = plans.current(ws)
    assert cur is not None
    task = cur.doc.task(task_id)
    start = Start(task=task, attempt_no=1, here=runner.runs_here(task))

    def made() -> StartRequest:
        own = ws.sibling()
        try:
            return prepare(own, cur.row, cur.doc, start, Turns())
        finally:
            own.close()

    return await asyncio.to_thread(made)


async def conform(kind: str, repo: Path, gate: Path, script: dict) -> None:
    ws = Workspace(repo)
    runner = make_runner(kind, ws, script)
    limit = LIMIT[kind]
    seen: dict[AttemptHandle, bytes] = {}

    def read(handle: AttemptHandle) -> bytes:
        """One tick as the conductor's: a look, then the output since the last."""
        assert handle not in runner.look([handle]).lost
        seen[handle] = seen.get(handle, b"") + runner.output(handle)
        return seen[handle]

    def ended(handle: AttemptHandle) -> bool:
        looked = runner.look([handle])
        assert handle not in looked.lost
        seen[handle] = seen.get(handle, b"") + runner.output(handle)
        return handle in looked.ended

    cur = plans.current(ws)
    assert cur is not None
    try:
        # start: the attempt is recorded, with its start, and followed under its handle.
        # runs_here: whether the agent is within reach of this machine's checkout (the
        # conductor then does the containment bookkeeping before the start).
        assert runner.runs_here(cur.doc.task(1)) is (kind != "dask")
        made = await request(ws, runner, 1)
        first = await runner.start(made)
        assert first.task_id == 1 and first.attempt_id == made.attempt_id
        row = ws.store.attempt(first.attempt_id)
        assert row is not None and row.task_id == 1 and row.ended is None
        started = [e for e in ws.store.events(cur.row.id, task_id=1)
                   if e.kind == "task.started"]
        assert [e.data["attempt"] for e in started] == [first.attempt_id]

        # output: what the agent printed, while it runs; then nothing new while it prints
        # nothing. look: not ended while it waits; exited: not done.
        await until("its first lines", limit, lambda: b"wrote done.txt" in read(first))
        assert b"conformance line one" in seen[first]
        assert runner.output(first) == b""
        assert not ended(first)
        # changed_files: what the agent changed in its worktree so far, wherever it runs —
        # with a signature that moves with the files. (The Dask runner answers from its
        # node's events: not yet, so its leg is told nothing.)
        if kind != "dask":
            async def changed() -> list[str]:
                look = runner.changed_files(first)
                assert look is not None
                return (await look)[0]
            assert "done.txt" in await changed()
        # activity: a measure of the agent's work (CPU seconds) for those it can tell.
        busy = runner.activity([first])
        assert set(busy) <= {first} and all(v >= 0 for v in busy.values())
        future = runner.exited(first)
        assert future is None or not future.done()

        # look: ended, once it ends; exited: done then (or None: told at a look only).
        gate.write_text("go\n")
        await until("its end", limit, lambda: ended(first))
        future = runner.exited(first)
        if future is not None:
            await asyncio.wait_for(asyncio.shield(future), limit)

        # collect: its record — exit status, report — with its work in its worktree.
        row = await runner.collect(first)
        assert row.id == first.attempt_id and row.ended is not None
        assert row.exit_status == 0
        assert row.report is not None and row.report["status"] == "done"
        assert row.report["summary"] == "finished"
        assert (Path(row.spec["cwd"]) / "done.txt").read_text() == "d\n"
        assert row.log_path and "after the gate" in Path(row.log_path).read_text()
        # a collected attempt is no longer followed: a look loses it.
        assert first in runner.look([first]).lost

        # stop: asks a running attempt to end; it ends without a report, not exit 0.
        second = await runner.start(await request(ws, runner, 2))
        await until("its line", limit, lambda: b"waiting to be stopped" in read(second))
        assert not ended(second)
        assert runner.stop(second, signal.SIGTERM) is True
        await until("its end after the stop", limit, lambda: ended(second))
        row = await runner.collect(second)
        assert row.report is None and row.ended is not None
        assert row.exit_status != 0
    finally:
        runner.close()
        ws.close()


@pytest.mark.parametrize("kind", RUNNERS)
def test_each_runner_means_the_same_by_each_method(kind, request, repo, tmp_path, cluster):
    if kind == "dask":
        pytest.importorskip("distributed", reason="the cluster runner needs '.[dask]'")
        if not loopback_only(request.node.nodeid):
            return
    script = set_up(repo, tmp_path, kind, cluster)
    asyncio.run(conform(kind, repo, tmp_path / "gate", script))
