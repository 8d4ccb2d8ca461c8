"""Remote tasks are supervised like local ones, on a real Dask cluster (127.0.0.1 inside a
loopback-only network namespace, `helpers.dask_kit`): the node says its agent's changed files
and CPU time on the job's topic, and the conductor's supervisor reads them through the runner
(`changed_files`, `activity`) — so a hostile agent on a worker writing outside its task's
scope is flagged `scope` while it still runs, and one going round in circles is flagged
`loop` (steps without changing any file) and `stall` (quiet), as a local agent would be.
Every wait is on a condition."""

from __future__ import annotations

import pytest

from helpers.dask_kit import loopback_cluster, loopback_only, wait
from helpers.run_kit import load_plan, script_agent, status, task, task_status, write_config
from test_dask_runner import bare_exchange, commit_config, conductor_logs, runners_table

pytest.importorskip("distributed", reason="the cluster runner needs `pip install '.[dask]'`")


@pytest.fixture
def cluster(tmp_path):
    with loopback_cluster(tmp_path / "cluster", {"w1": "agent=2"}) as made:
        yield made


def node_logs(nodes) -> str:
    """What the agents printed on their worker so far (their node's own logs)."""
    return "\n".join(f"--- {log}\n{log.read_text(errors='replace')[-2000:]}"
                     for log in sorted(nodes.rglob("output.log")))


def kinds(baton, task_id: int) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for flag in task_status(baton, task_id)["flags"]:
        found.setdefault(flag["kind"], []).append(flag["detail"])
    return found


@pytest.mark.timeout(1200)  # (a cluster, two agents and half a minute of silence, loaded)
def test_remote_agents_out_of_scope_or_going_round_are_flagged_while_they_run(
        request, repo, baton, tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    exchange = bare_exchange(tmp_path)
    gate1, gate2 = tmp_path / "gate1", tmp_path / "gate2"
    thinking = [step for i in range(10) for step in ({"print": f"thinking about it, {i}"},
                                                     {"sleep": 1})]
    agent = script_agent(tmp_path, "agent", {
        # Hostile: writes outside its scope (`src/**`), then waits, still running.
        "1": [{"write": "src/in.txt", "content": "in scope\n"},
              {"write": "elsewhere.txt", "content": "out of scope\n"},
              {"await": str(gate1)}, {"report": "done", "summary": "wrote both"}],
        # Going round in circles: one change, then steps that change nothing, then silence.
        "2": [{"write": "notes.txt", "content": "a start\n"}, *thinking,
              {"await": str(gate2)}, {"report": "done", "summary": "thought"}]})
    # Flagged quiet after half the stall limit; stopped only after all of it.
    write_config(repo, {"agent": agent}, limits={"stall": "60s"},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes")
                 + "\n[supervision]\nidle_turns = 4\n")
    commit_config(repo)
    load_plan(baton, [task(1, "Scoped", runner="lab", scope=["src/**"]),
                      task(2, "Circles", runner="lab")])
    started = baton("run", "--approve", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        scope = wait(lambda: kinds(baton, 1).get("scope"), 300,
                     "the out-of-scope write to be flagged", cluster,
                     also=lambda: baton("status").stdout + conductor_logs()
                     + node_logs(tmp_path / "nodes"))
        assert task_status(baton, 1)["state"] == "running"  # flagged as it runs, not after
        assert "elsewhere.txt" in scope[0] and "src/in.txt" not in scope[0]
        gate1.write_text("go\n")
        idle = wait(lambda: [d for d in kinds(baton, 2).get("loop", [])
                             if "without changing any file" in d], 300,
                    "the steps without any change to be flagged", cluster,
                    also=lambda: str(kinds(baton, 2)) + conductor_logs())
        assert idle and task_status(baton, 2)["state"] == "running"
        quiet = wait(lambda: [d for d in kinds(baton, 2).get("stall", [])
                              if d.startswith("quiet for")], 300,
                     "the quiet agent to be flagged", cluster,
                     also=lambda: str(kinds(baton, 2)) + conductor_logs())
        assert quiet and task_status(baton, 2)["state"] == "running"
    finally:
        for gate in (gate1, gate2):
            gate.write_text("go\n")
    wait(lambda: status(baton)["conductor"] is None, 300, "the run to end", cluster,
         also=lambda: baton("status").stdout + conductor_logs())
    assert [task_status(baton, n)["state"] for n in (1, 2)] == ["landed", "landed"]
