"""The Dask runner against a real Dask cluster (issue 27): a `dask scheduler` and two `dask
worker`s with different `--resources`, all on 127.0.0.1, inside a network namespace that
holds only the loopback interface (`helpers.dask_kit.loopback_only`), driven through the real
`baton` CLI with scripted agents (the demo agent), on real git repositories and a bare
exchange repository. Every wait is on a condition, with a generous timeout."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from helpers.dask_kit import loopback_cluster, loopback_only, only_loopback_here, wait
from helpers.run_kit import (
    events, git, load_plan, script_agent, status, task, task_status, tree_files, write_config,
)

pytest.importorskip("distributed", reason="the cluster runner needs `pip install '.[dask]'`")


NODE_SECRET = "node-only-secret-4f8a2c91"  # in the workers' environment only


def runners_table(address: str, exchange: Path, workdir: Path) -> str:
    return (f'\n[runners.lab]\nkind = "dask"\naddress = "{address}"\n'
            f'exchange = "{exchange}"\nworkdir = "{workdir}"\n')


def bare_exchange(tmp: Path) -> Path:
    path = tmp / "exchange.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def conductor_logs() -> str:
    home = Path(os.environ["BATON_HOME"])
    return "\n".join(p.read_text(errors="replace")[-4000:]
                     for p in home.rglob("conductor*.log"))


def commit_config(repo: Path) -> None:
    git(repo, "add", "baton.toml")
    git(repo, "commit", "-q", "-m", "baton.toml")


def exchange_refs(exchange: Path) -> list[str]:
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname)", "refs/baton/"],
                         cwd=exchange, capture_output=True, text=True, check=True).stdout
    return out.split()


@pytest.fixture
def cluster(tmp_path):
    with loopback_cluster(tmp_path / "cluster", {"w1": "agent=2", "w2": "agent2=1"},
                          env={"DEMO_API_KEY": NODE_SECRET}) as made:
        yield made


def test_a_mixed_plan_lands_and_merges(request, repo, baton, tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    exchange = bare_exchange(tmp_path)
    script = {
        "1": [{"write": "local.txt", "content": "made here\n"},
              {"report": "done", "summary": "local file"}],
        "2": [{"print": "remote step one"}, {"print": f"its key: {NODE_SECRET}"},
              {"progress": "halfway on the cluster"},
              {"write": "remote.txt", "content": "made on a worker\n"},
              {"report": "done", "summary": "remote file"}],
        "3": [{"write": "both.txt", "content": "after both\n"},
              {"report": "done", "summary": "after both", "tokens": 1200}],
    }
    agent = script_agent(tmp_path, "agent", script)
    write_config(repo, {"agent": agent, "agent2": agent},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes"))
    commit_config(repo)  # workers read the repository's baton.toml as committed
    load_plan(baton, [task(1), task(2, runner="lab"),
                      task(3, player="agent2", deps=[1, 2], runner="lab")])
    result = baton("run", "--approve", timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.tails()
    found = {t["id"]: t for t in status(baton)["tasks"]}
    assert {i: t["state"] for i, t in found.items()} == {1: "landed", 2: "landed", 3: "landed"}
    workers = {name: w["address"] for name, w in cluster.workers().items()}
    assert (found[1]["runner"], found[1]["node"], found[1]["job"]) == ("local", None, None)
    assert found[2]["runner"] == "lab" and found[2]["node"] == workers["w1"]
    assert found[3]["runner"] == "lab" and found[3]["node"] == workers["w2"]  # agent2: w2 only
    assert found[2]["job"].startswith("baton-") and found[3]["job"] != found[2]["job"]
    assert found[3]["tokens"] == 1200
    logs = baton("logs", "2")
    assert "remote step one" in logs.stdout
    assert NODE_SECRET not in logs.stdout and "its key: [redacted]" in logs.stdout
    assert "halfway on the cluster" in [e["data"].get("message") for e in events(baton)
                                        if e["kind"] == "task.progress" and e.get("task") == 2]
    refs = exchange_refs(exchange)
    for job in (found[2]["job"], found[3]["job"]):
        for part in ("base", "claim", "result", "record"):
            assert f"refs/baton/jobs/{job}/{part}" in refs
    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    files = tree_files(repo, "main")
    assert files["local.txt"].strip() == "made here"
    assert files["remote.txt"].strip() == "made on a worker"
    assert files["both.txt"].strip() == "after both"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_scheduler_leaves_its_tasks_queued(request, repo, baton, tmp_path):
    if not loopback_only(request.node.nodeid):
        return
    only_loopback_here()
    exchange = bare_exchange(tmp_path)
    script = {"*": [{"write": "x.txt", "content": "x\n"}, {"report": "done", "summary": "x"}]}
    agent = script_agent(tmp_path, "agent", script)
    address = f"tcp://127.0.0.1:{closed_port()}"
    write_config(repo, {"agent": agent},
                 extra=runners_table(address, exchange, tmp_path / "nodes"))
    load_plan(baton, [task(1), task(2, runner="lab")])
    result = baton("run", "--approve", timeout=600)
    # The local task lands; the remote one waits, queued: the run ends waiting (3), and
    # `baton resume` tries that cluster again.
    assert result.returncode == 3, result.stdout + result.stderr
    assert task_status(baton, 1)["state"] == "landed"
    deferred = task_status(baton, 2)
    reason = deferred["reason"]
    assert deferred["state"] == "queued" and "unreachable" in reason
    assert "\n" not in reason and address in reason and reason.startswith("runner lab:")
    assert deferred["attempts"] == 0 and deferred["job"] is None
    said = [line for line in result.stdout.splitlines()
            if line.startswith("#2 ") and "unreachable" in line]
    assert len(said) == 1, result.stdout  # one clear line, saying when it is tried again
    assert said[0].startswith(f"#2 Task 2: waiting — {reason} (tried again at ")
    assert said[0].endswith("`baton resume` tries it at once)")
    again = baton("resume", timeout=600)
    assert again.returncode == 3, again.stdout + again.stderr
    assert task_status(baton, 2)["state"] == "queued"
    assert task_status(baton, 2)["attempts"] == 0
    assert exchange_refs(exchange) == []
    assert "x.txt" not in tree_files(repo, git(repo, "rev-parse", "HEAD"))


def _one_remote_task(repo, baton, tmp_path, cluster, steps: list[dict]) -> Path:
    exchange = bare_exchange(tmp_path)
    agent = script_agent(tmp_path, "agent", {"*": steps})
    write_config(repo, {"agent": agent},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes"))
    commit_config(repo)
    load_plan(baton, [task(1, runner="lab")])
    return exchange


def test_a_killed_conductor_reattaches_without_a_second_submission(request, repo, baton,
                                                                    tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    marker = tmp_path / "ran.txt"
    exchange = _one_remote_task(repo, baton, tmp_path, cluster, [
        {"append": str(marker), "content": "ran\n"}, {"progress": "working on it"},
        {"sleep": 8}, {"write": "after.txt", "content": "after the kill\n"},
        {"report": "done", "summary": "survived its conductor"}])
    started = baton("run", "--approve", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    claimed = wait(lambda: (t := task_status(baton, 1))["node"] and marker.exists() and t, 300,
                   "the worker to claim the task and its agent to start", cluster)
    pid = status(baton)["conductor"]["pid"]
    os.kill(pid, signal.SIGKILL)
    wait(lambda: not os.path.exists(f"/proc/{pid}") or
         open(f"/proc/{pid}/stat").read().split()[2] == "Z", 60, "the conductor to die")
    resumed = baton("resume", "--detach")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    wait(lambda: status(baton)["conductor"] is None, 240, "the resumed run to end",
         cluster, also=lambda: baton("status").stdout + conductor_logs())
    done = task_status(baton, 1)
    assert done["state"] == "landed" and done["attempts"] == 1
    assert done["job"] == claimed["job"] and done["node"] == claimed["node"]
    assert marker.read_text() == "ran\n"  # its agent ran once
    jobs = {ref.split("/")[3] for ref in exchange_refs(exchange)}
    assert jobs == {claimed["job"]}  # one submission: one job, one claim
    assert "after.txt" in tree_files(repo, "baton/sample-goal/1-task-1")


def agents_running(script: Path) -> list[int]:
    """The processes whose command line names `script` (the demo agent's: one per agent)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except OSError:  # gone meanwhile
            continue
        if str(script).encode() in argv:
            found.append(int(entry.name))
    return found


def test_a_worker_killed_mid_task_fails_its_task_visibly(request, repo, baton, tmp_path,
                                                         cluster):
    if not loopback_only(request.node.nodeid):
        return
    marker = tmp_path / "ran.txt"
    exchange = _one_remote_task(repo, baton, tmp_path, cluster, [
        {"append": str(marker), "content": "ran\n"}, {"progress": "started"},
        {"sleep": 300}, {"report": "done", "summary": "never heard"}])
    started = baton("run", "--approve", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    claimed = wait(lambda: (t := task_status(baton, 1))["node"] and marker.exists() and t, 300,
                   "the worker to claim the task and its agent to start", cluster)
    script = tmp_path / "agent-script.json"
    assert agents_running(script)
    cluster.kill("w1")
    cluster.add_worker("w3", "agent=1")  # Dask reschedules the job there: it runs nothing
    # The killed worker's agent does not run on, orphaned: its watchdog ends it.
    wait(lambda: not agents_running(script), 120, "the killed worker's agent to be ended",
         cluster)
    failed = wait(lambda: (t := task_status(baton, 1))["state"] == "failed" and t, 300,
                  "the task to fail", cluster)
    assert "went away mid-task" in failed["reason"] and claimed["node"] in failed["reason"]
    assert "\n" not in failed["reason"]
    wait(lambda: status(baton)["conductor"] is None, 120, "the run to end")
    assert marker.read_text() == "ran\n"  # its agent never ran twice
    refs = exchange_refs(exchange)
    assert f"refs/baton/jobs/{claimed['job']}/claim" in refs


def test_a_remote_usage_limit_pauses_and_resumes_on_its_worker(request, repo, baton,
                                                               tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    _one_remote_task(repo, baton, tmp_path, cluster, [
        {"progress": "before the limit"}, {"report": "limited", "in": 3, "reason": "quota"},
        {"write": "resumed.txt", "content": "after the reset\n"},
        {"report": "done", "summary": "finished after the reset"}])
    result = baton("run", "--approve", timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.tails()
    kinds_of = [e["kind"] for e in events(baton) if e.get("task") == 1]
    assert "task.paused" in kinds_of and "task.resumed" in kinds_of
    done = task_status(baton, 1)
    assert done["state"] == "landed" and done["attempts"] == 1  # (a resume is no new try)
    assert done["node"] == cluster.started["w1"]["address"]
    assert tree_files(repo, "baton/sample-goal/1-task-1")["resumed.txt"].strip() == \
        "after the reset"


def attempt_specs(repo: Path) -> list[dict]:
    """Every attempt's spec, oldest first, as the conductor's store holds them."""
    import sqlite3

    with sqlite3.connect(repo / ".git" / "baton" / "baton.db") as db:
        return [json.loads(row[0]) for row in db.execute("SELECT spec FROM attempts ORDER BY id")]


def test_a_paused_task_whose_worker_is_gone_starts_afresh_with_the_handoff(
        request, repo, baton, tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    marker = tmp_path / "ran.txt"
    _one_remote_task(repo, baton, tmp_path, cluster, [
        {"append": str(marker), "content": "ran\n"}, {"progress": "before the limit"},
        {"write": "half.txt", "content": "half\n"},
        {"report": "limited", "in": 40, "reason": "quota"},
        {"write": "resumed.txt", "content": "after the reset\n"},
        {"report": "done", "summary": "finished after the reset"}])
    started = baton("run", "--approve", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    paused = wait(lambda: (t := task_status(baton, 1))["state"] == "paused" and t, 300,
                  "the task to pause at its usage limit", cluster)
    assert paused["node"] == cluster.started["w1"]["address"]
    cluster.kill("w1")  # the agent's session goes with it
    cluster.add_worker("w3", "agent=1")
    wait(lambda: set(cluster.workers()) == {"w2", "w3"}, 120, "the scheduler to see w3, not w1",
         cluster)
    assert task_status(baton, 1)["state"] == "paused"  # (the reset is still to come)
    wait(lambda: status(baton)["conductor"] is None, 300, "the run to end", cluster,
         also=lambda: baton("status").stdout + conductor_logs())
    done = task_status(baton, 1)
    assert done["state"] == "landed", done
    w3 = cluster.workers()["w3"]["address"]
    specs = attempt_specs(repo)
    handed = specs[1]  # the resume after the reset: not resumed, a fresh session on w3
    assert handed["node"] == w3 and handed["resumed"] is False
    assert handed["payload"]["session_id"] is None and handed["payload"]["resume_message"] is None
    packet = handed["payload"]["prompt"]  # the brief the conductor composed, packet in it
    assert (f"## Handoff: this task was started by agent on worker {paused['node']} "
            "(gone, with its session)") in packet
    assert "- before the limit" in packet and "half.txt" in packet
    seen = [(spec.get("node"), spec.get("resumed"), "## Handoff" in spec["payload"]["prompt"])
            for spec in specs]
    assert marker.read_text() == "ran\nran\n", seen  # the script ran again from its start
    assert all(spec["node"] == w3 for spec in specs[1:]), seen
    assert tree_files(repo, "baton/sample-goal/1-task-1")["resumed.txt"].strip() == \
        "after the reset"


def test_runners_lists_the_workers_what_they_offer_and_their_versions(request, repo, baton,
                                                                      tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    exchange = bare_exchange(tmp_path)
    write_config(repo, {"agent": script_agent(tmp_path, "agent", {})},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes"))
    assert baton("trust").returncode == 0
    result = baton("runners", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    lab = next(r for r in json.loads(result.stdout) if r["name"] == "lab")
    assert lab["reachable"] is True and lab["reason"] is None
    assert lab["versions_match"] is True
    offers = {w["name"]: w["resources"] for w in lab["workers"]}
    assert offers == {"w1": {"agent": 2}, "w2": {"agent2": 1}}
    assert all(w["baton"] == lab["baton"] and w["python"] == lab["python"]
               for w in lab["workers"])
    text = baton("runners").stdout
    assert f"✓ runner lab (dask at {cluster.address}), 2 workers" in text
    assert "agent=2" in text and "agent2=1" in text
    assert f"✓ runner lab (dask at {cluster.address})" in baton("doctor").stdout


def test_a_runner_s_max_parallel_caps_its_tasks_at_once(request, repo, baton, tmp_path,
                                                        cluster):
    if not loopback_only(request.node.nodeid):
        return
    exchange = bare_exchange(tmp_path)
    trace = tmp_path / "trace.txt"
    agent = script_agent(tmp_path, "agent", {"*": [
        {"append": str(trace), "content": "in\n"}, {"sleep": 1.5},
        {"append": str(trace), "content": "out\n"}, {"report": "done", "summary": "slept"}]})
    write_config(repo, {"agent": agent},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes")
                 + "max_parallel = 1\n")
    commit_config(repo)
    load_plan(baton, [task(1, runner="lab"), task(2, runner="lab"), task(3, runner="lab")])
    result = baton("run", "--approve", timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.tails()
    assert trace.read_text().split() == ["in", "out"] * 3  # never two agents at once


def test_an_exchange_that_cannot_be_pushed_to_leaves_the_task_queued(request, repo, baton,
                                                                      tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    missing = tmp_path / "no-such-exchange.git"
    agent = script_agent(tmp_path, "agent", {"*": [{"report": "done", "summary": "x"}]})
    write_config(repo, {"agent": agent},
                 extra=runners_table(cluster.address, missing, tmp_path / "nodes"))
    commit_config(repo)
    load_plan(baton, [task(1, runner="lab")])
    result = baton("run", "--approve", timeout=600)
    assert result.returncode == 3, result.stdout + result.stderr
    waiting = task_status(baton, 1)
    assert waiting["state"] == "queued" and waiting["attempts"] == 0
    assert waiting["reason"].startswith("runner lab: cannot push to the exchange")
    assert "\n" not in waiting["reason"]


def test_taking_over_a_remote_task_brings_its_work_home_first(request, repo, baton, tmp_path,
                                                             cluster):
    if not loopback_only(request.node.nodeid):
        return
    _one_remote_task(repo, baton, tmp_path, cluster, [
        {"write": "half.txt", "content": "half done on the worker\n"},
        {"progress": "half way"}, {"sleep": 120}, {"report": "done", "summary": "never"}])
    started = baton("run", "--approve", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    wait(lambda: task_status(baton, 1)["progress"] == "half way", 300,
         "the remote agent's progress", cluster)
    taken = baton("take", "1")
    assert taken.returncode == 0, taken.stdout + taken.stderr
    paused = wait(lambda: (t := task_status(baton, 1))["state"] == "paused" and t, 120,
                  "the task to stop and come home", cluster,
                  also=lambda: baton("status").stdout + conductor_logs())
    worktree = Path(paused["worktree"])
    assert (worktree / "half.txt").read_text() == "half done on the worker\n"
    (worktree / "half.txt").write_text("finished by hand\n")
    done = baton("done", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    wait(lambda: task_status(baton, 1)["state"] == "landed", 300, "the task to land", cluster)
    branch = tree_files(repo, "baton/sample-goal/1-task-1")
    assert branch["half.txt"].strip() == "finished by hand"


def test_the_watchdog_ends_the_groups_it_was_told_of_when_its_worker_goes(tmp_path):
    """`dask_watch` (no cluster needed): the groups still listed when its pipe closes are
    ended, SIGTERM-ignoring ones by SIGKILL after the grace; an unlisted group runs on."""
    import sys

    def group(ignore_term: bool) -> subprocess.Popen:
        code = ("import signal, time\n"
                + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
                + "print('ready', flush=True)\ntime.sleep(600)\n")
        proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                                stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"  # (set up)
        return proc

    stays, ends, stubborn, ended_early = group(False), group(False), group(True), group(False)
    watch = subprocess.Popen([sys.executable, "-m", "baton_tui.runners.dask.watch"],
                             stdin=subprocess.PIPE, start_new_session=True)
    try:
        assert watch.stdin is not None
        for proc in (ends, stubborn, ended_early):
            watch.stdin.write(f"+{proc.pid}\n".encode())
        watch.stdin.write(f"-{ended_early.pid}\nnonsense\n+1\n".encode())
        watch.stdin.close()  # the worker went away
        assert watch.wait(timeout=120) == 0
        assert ends.wait(timeout=60) == -signal.SIGTERM
        assert stubborn.wait(timeout=60) == -signal.SIGKILL
        assert stays.poll() is None and ended_early.poll() is None
    finally:
        for proc in (stays, ends, stubborn, ended_early):
            proc.kill()
            proc.wait()


def test_a_remote_agent_cannot_forge_another_remote_tasks_result(request, repo, baton,
                                                                 tmp_path, cluster):
    """Task 2's agent, on a worker, pushes a forged `result` and `record` for task 1's job to
    the exchange while task 1's agent still runs. The record lacks its job's seal: refused,
    task 1 is flagged, and it lands its own agent's work (never `forged.txt`) when that ends."""
    if not loopback_only(request.node.nodeid):
        return
    from helpers.run_kit import program

    exchange = bare_exchange(tmp_path)
    go = tmp_path / "go"
    write_config(repo, {"agent": program("ref_mover.py", "main", f"wait:{go}"),
                        "agent2": program("sibling_forger.py", "lab")},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes"))
    commit_config(repo)
    load_plan(baton, [task(1, "Victim", runner="lab"),
                      task(2, "Forger", player="agent2", runner="lab")])
    outcome: dict = {}
    import threading

    runner = threading.Thread(target=lambda: outcome.update(
        result=baton("run", "--approve", timeout=600)))
    runner.start()
    try:
        wait(lambda: task_status(baton, 1)["flags"] or task_status(baton, 1)["state"] in (
            "done", "landed", "failed"), 300, "the forged record to be judged")
    finally:
        go.write_text("go\n")
        runner.join(600)
    result = outcome["result"]
    assert result.returncode == 0, result.stdout + result.stderr + cluster.tails()
    victim = task_status(baton, 1)
    assert victim["state"] == "landed" and victim["summary"] == "done", victim
    forged = [f for f in victim["flags"] if f["kind"] == "forged"]
    assert forged and "seal" in forged[0]["detail"], victim["flags"]
    assert "forged: pushed a record" in baton("logs", "2").stdout
    files = tree_files(repo, status(baton)["plan"]["integration_branch"])
    assert "forged.txt" not in files and "own-work.txt" in files


def test_agents_on_one_worker_cannot_write_each_others_checkouts(request, repo, baton,
                                                                 tmp_path, cluster):
    """Two remote tasks on the same worker: task 2's agent writes into task 1's scratch
    checkout and the node's shared object cache while task 1's agent runs. Both refused
    (every job's checkout is read-only to another job's agent); each lands its own work."""
    if not loopback_only(request.node.nodeid):
        return
    from baton_tui.runners import readonly
    from helpers.run_kit import program

    if why := readonly.available():
        pytest.skip(f"no read-only view here ({why})")
    exchange = bare_exchange(tmp_path)
    running, done = tmp_path / "running", tmp_path / "done"
    write_config(repo, {"agent": program("ref_mover.py", "main", f"signal:{running}",
                                         f"wait:{done}"),
                        "writer": program("sibling_writer.py", f"wait:{running}", "scratch",
                                          "cache", f"signal:{done}")},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes")
                 + 'resources = { writer = "agent" }\n')  # both on w1
    commit_config(repo)
    load_plan(baton, [task(1, "Victim", runner="lab"),
                      task(2, "Writer", player="writer", runner="lab")])
    result = baton("run", "--approve", timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.tails()
    log = baton("logs", "2").stdout
    assert "scratch injected.txt: refused (Read-only file system)" in log, log
    assert "cache injected: refused (Read-only file system)" in log, log
    assert "written" not in log, log
    assert [task_status(baton, n)["state"] for n in (1, 2)] == ["landed"] * 2
    files = tree_files(repo, status(baton)["plan"]["integration_branch"])
    assert "injected.txt" not in files and "own-work.txt" in files


def test_a_remote_agent_writing_outside_its_scope_is_flagged(request, repo, baton, tmp_path,
                                                            cluster):
    """A task on the cluster whose scope is `src/**` writes `elsewhere.txt` too: flagged
    (`scope`, naming the file) when its work comes home, as a local task would be."""
    if not loopback_only(request.node.nodeid):
        return
    exchange = bare_exchange(tmp_path)
    agent = script_agent(tmp_path, "agent", {"1": [
        {"write": "src/in.txt", "content": "in scope\n"},
        {"write": "elsewhere.txt", "content": "out of scope\n"},
        {"report": "done", "summary": "wrote both"}]})
    write_config(repo, {"agent": agent},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes"))
    commit_config(repo)
    load_plan(baton, [task(1, "Scoped", runner="lab", scope=["src/**"])])
    result = baton("run", "--approve", timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.tails()
    t1 = task_status(baton, 1)
    flagged = [f for f in t1["flags"] if f["kind"] == "scope"]
    assert t1["state"] == "landed" and flagged, t1
    assert "elsewhere.txt" in flagged[0]["detail"] and "src/in.txt" not in flagged[0]["detail"]
