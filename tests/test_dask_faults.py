"""Faults on the way home from a Dask cluster (issue 50), on the real local cluster inside a
loopback-only namespace (`helpers.dask_kit`): a remote result that cannot be brought home is
said, kept and brought home later — never dropped with its task left "running", and its agent
is never run again. Every wait is on a condition, with a generous timeout."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from helpers.dask_kit import Cluster, loopback_cluster, loopback_only, only_loopback_here, wait
from helpers.run_kit import events, popen_baton, status, task_status, tree_files
from test_dask_runner import _one_remote_task, conductor_logs

pytest.importorskip("distributed", reason="the cluster runner needs `pip install '.[dask]'`")


@pytest.fixture
def cluster(tmp_path):
    with loopback_cluster(tmp_path / "cluster", {"w1": "agent=2"}) as made:
        yield made


def _index_lock(worktree: str) -> Path:
    """Where git keeps the task worktree's `index.lock` (in its record under .git/worktrees)."""
    gitdir = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=worktree,
                            capture_output=True, text=True, check=True).stdout.strip()
    return Path(gitdir) / "index.lock"


def _agent_waiting(baton, marker: Path, cluster) -> dict:
    return wait(lambda: (t := task_status(baton, 1))["node"] and marker.exists()
                and t["worktree"] and t, 300,
                "the worker to claim the task and its agent to start", cluster)


def test_a_stale_index_lock_fails_the_remote_task_clearly_and_retry_only_brings_it_home(
        request, repo, baton, tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    marker, go = tmp_path / "ran.txt", tmp_path / "go"
    _one_remote_task(repo, baton, tmp_path, cluster, [
        {"append": str(marker), "content": "ran\n"}, {"await": str(go)},
        {"write": "remote.txt", "content": "made on a worker\n"},
        {"report": "done", "summary": "remote file"}])
    run = popen_baton(repo, "run", "--approve")
    try:
        claimed = _agent_waiting(baton, marker, cluster)
        lock = _index_lock(claimed["worktree"])
        lock.write_bytes(b"left by a git that was killed\n")  # (as a killed conductor's git)
        go.touch()
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    # Said, like a local task's: the run fails, not "complete" with the task running forever.
    assert run.returncode == 1, out + err + conductor_logs()
    failed = task_status(baton, 1)
    assert failed["state"] == "failed", failed
    assert "index.lock" in failed["reason"] and "bring its result home" in failed["reason"]
    assert "baton retry 1" in failed["reason"] and "\n" not in failed["reason"]
    assert lock.exists()  # not Baton's to remove while a run is live: the person's call
    lock.unlink()  # as the reason says
    again = baton("retry", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    wait(lambda: status(baton)["conductor"] is None, 300, "the retried run to end", cluster,
         also=lambda: baton("status").stdout + conductor_logs())
    done = task_status(baton, 1)
    assert done["state"] == "landed" and done["attempts"] == 1, done
    assert marker.read_text() == "ran\n"  # brought home: its agent never ran again
    assert tree_files(repo, "baton/sample-goal/1-task-1")["remote.txt"] == "made on a worker"
    reported = [e for e in events(baton) if e["kind"] == "task.reported" and e.get("task") == 1]
    assert len(reported) == 1, reported


def test_resume_finishes_a_collection_its_killed_conductor_left_a_lock_in(
        request, repo, baton, tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    marker, go = tmp_path / "ran.txt", tmp_path / "go"
    _one_remote_task(repo, baton, tmp_path, cluster, [
        {"append": str(marker), "content": "ran\n"}, {"await": str(go)},
        {"write": "remote.txt", "content": "made on a worker\n"},
        {"report": "done", "summary": "remote file"}])
    started = baton("run", "--approve", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    claimed = _agent_waiting(baton, marker, cluster)
    pid = status(baton)["conductor"]["pid"]
    os.killpg(os.getpgid(pid), signal.SIGKILL)  # the conductor and every git it ran
    wait(lambda: not os.path.exists(f"/proc/{pid}") or
         open(f"/proc/{pid}/stat").read().split()[2] == "Z", 60, "the conductor to die")
    # What its git killed while bringing the result home would have left behind.
    _index_lock(claimed["worktree"]).write_bytes(b"DIRC half written\n")
    os.utime(_index_lock(claimed["worktree"]), (1, 1))
    go.touch()
    resumed = baton("resume", timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr + conductor_logs()
    done = task_status(baton, 1)
    assert done["state"] == "landed" and done["attempts"] == 1, done
    assert marker.read_text() == "ran\n"
    assert not _index_lock(claimed["worktree"]).exists()
    assert tree_files(repo, "baton/sample-goal/1-task-1")["remote.txt"] == "made on a worker"
    repaired = [e["data"] for e in events(baton) if e["kind"] == "run.repaired"]
    assert any("index.lock" in r.get("detail", "") for r in repaired), repaired


@pytest.mark.parametrize("how", ["deleted", "damaged"])
def test_an_exchange_lost_mid_run_keeps_the_finished_work_and_says_so(
        request, repo, baton, tmp_path, cluster, how):
    if not loopback_only(request.node.nodeid):
        return
    marker, go = tmp_path / "ran.txt", tmp_path / "go"
    exchange = _one_remote_task(repo, baton, tmp_path, cluster, [
        {"append": str(marker), "content": "ran\n"}, {"await": str(go)},
        {"write": "remote.txt", "content": "made on a worker\n"},
        {"report": "done", "summary": "remote file"}])
    run = popen_baton(repo, "run", "--approve")
    try:
        _agent_waiting(baton, marker, cluster)
        if how == "deleted":
            exchange.rename(exchange.with_name("exchange.gone"))
        else:  # not a repository git can use any more
            (exchange / "HEAD").write_text("garbage\n")
            for folder in ("objects", "refs"):
                subprocess.run(["rm", "-rf", str(exchange / folder)], check=True)
        go.touch()
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 0, out + err + conductor_logs() + cluster.tails()
    done = task_status(baton, 1)
    assert done["state"] == "landed" and done["attempts"] == 1, done
    assert marker.read_text() == "ran\n"  # its finished agent was never run again
    assert tree_files(repo, "baton/sample-goal/1-task-1")["remote.txt"] == "made on a worker"
    said = [f["detail"] for f in done["flags"] if f["kind"] == "exchange"]
    assert len(said) == 1 and "could not be reached when its worker finished" in said[0], \
        done["flags"]
    assert "went away" not in (done.get("reason") or "")


def test_resume_right_after_a_deferral_tries_the_cluster_at_once(request, repo, baton,
                                                                  tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    from test_dask_runner import bare_exchange, closed_port, commit_config, runners_table
    from helpers.run_kit import load_plan, script_agent, task, write_config

    exchange = bare_exchange(tmp_path)
    agent = script_agent(tmp_path, "agent", {"*": [
        {"write": "remote.txt", "content": "made on a worker\n"},
        {"report": "done", "summary": "remote file"}]})

    write_config(repo, {"agent": agent})
    commit_config(repo)
    personal = Path(os.environ["XDG_CONFIG_HOME"]) / "baton" / "config.toml"
    personal.parent.mkdir(parents=True, exist_ok=True)

    def configure(address: str) -> None:  # the person's own runner (their config)
        personal.write_text(runners_table(address, exchange, tmp_path / "nodes"))

    configure(f"tcp://127.0.0.1:{closed_port()}")
    load_plan(baton, [task(1, runner="lab")])
    first = baton("run", "--approve", timeout=600)
    assert first.returncode == 3, first.stdout + first.stderr
    deferred = task_status(baton, 1)
    assert deferred["state"] == "queued" and "unreachable" in deferred["reason"]
    configure(cluster.address)  # the scheduler is reachable now (well within its wait)
    again = baton("resume", timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr + conductor_logs()
    done = task_status(baton, 1)
    assert done["state"] == "landed" and done["attempts"] == 1, done
    assert tree_files(repo, "baton/sample-goal/1-task-1")["remote.txt"] == "made on a worker"


def test_runners_warns_of_a_cluster_listening_beyond_loopback_without_tls(request, repo, baton,
                                                                          tmp_path):
    if not loopback_only(request.node.nodeid):
        return
    only_loopback_here()
    from test_dask_runner import bare_exchange, runners_table
    from helpers.run_kit import write_config

    exchange = bare_exchange(tmp_path)
    for exposed in (False, True):
        made = Cluster(tmp_path / f"cluster-{exposed}", {"w1": "agent=1"}, exposed=exposed)
        try:
            write_config(repo, {"agent": ["true"]},
                         extra=runners_table(made.address, exchange, tmp_path / "nodes"))
            assert baton("trust").returncode == 0
            said = baton("runners", timeout=300)
            shown = baton.json("runners", "--json")
        finally:
            made.close()
        assert said.returncode == 0, said.stdout + said.stderr
        lab = next(r for r in shown if r["name"] == "lab")
        warned = [line for line in said.stdout.splitlines() if "beyond loopback" in line]
        if not exposed:  # bound as the README shows: nothing to say
            assert lab["exposed"] == [] and warned == [], said.stdout
            continue
        # `--no-dashboard` alone: the scheduler's and the worker's HTTP on every interface
        assert "scheduler http://0.0.0.0:8787" in lab["exposed"], lab
        assert any(a.startswith("worker ") and "http://0.0.0.0:" in a for a in lab["exposed"])
        assert len(warned) == 1 and "--dashboard-address 127.0.0.1:0" in warned[0]
        assert not any(a.split()[-1].startswith("tcp://127.0.0.1") for a in lab["exposed"])
    doctor = baton("doctor", timeout=300)
    assert "Traceback" not in doctor.stderr


def test_a_conductor_killed_after_bringing_a_result_home_records_its_report_once(
        request, repo, baton, tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    marker = tmp_path / "ran.txt"
    _one_remote_task(repo, baton, tmp_path, cluster, [
        {"append": str(marker), "content": "ran\n"},
        {"write": "remote.txt", "content": "made on a worker\n"},
        {"report": "done", "summary": "remote file"}])
    started = baton("run", "--approve", "--detach", env={"BATON_KILL_AT": "collected"})
    assert started.returncode == 0, started.stdout + started.stderr

    def killed() -> bool:
        evs = events(baton)
        died = [e for e in evs if e["kind"] == "conductor.started"]
        pid = died[-1]["data"]["pid"] if died else None
        return bool(pid) and any(e["kind"] == "task.reported" for e in evs) and (
            not os.path.exists(f"/proc/{pid}")
            or open(f"/proc/{pid}/stat").read().split()[2] == "Z")

    wait(killed, 300, "the conductor to be killed once the result is home", cluster,
         also=conductor_logs)
    assert task_status(baton, 1)["state"] == "running"  # (killed before its finisher ran)
    resumed = baton("resume", timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr + conductor_logs()
    done = task_status(baton, 1)
    assert done["state"] == "landed" and done["attempts"] == 1, done
    assert marker.read_text() == "ran\n"
    reported = [e for e in events(baton) if e["kind"] == "task.reported" and e.get("task") == 1]
    assert len(reported) == 1, reported
    assert tree_files(repo, "baton/sample-goal/1-task-1")["remote.txt"] == "made on a worker"
    # The workers were warmed as the conductor connected, and nobody logged an error for it.
    assert "Run out-of-band function 'warm'" in cluster.logs["w1"].read_text()
    assert " - ERROR - " not in cluster.logs["scheduler"].read_text(), cluster.tails()


def test_a_dead_worker_s_scratch_checkout_is_pushed_then_swept_by_the_next_job(
        request, repo, baton, tmp_path, cluster):
    if not loopback_only(request.node.nodeid):
        return
    from test_dask_runner import agents_running, exchange_refs

    marker, go = tmp_path / "ran.txt", tmp_path / "go"
    exchange = _one_remote_task(repo, baton, tmp_path, cluster, [
        {"append": str(marker), "content": "ran\n"},
        {"write": "half.txt", "content": "half done\n"}, {"await": str(go)},
        {"report": "done", "summary": "finished"}])
    nodes = tmp_path / "nodes"
    started = baton("run", "--approve", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    first = _agent_waiting(baton, marker, cluster)
    wait(lambda: list(nodes.glob(f"{first['job']}/tree/half.txt")), 120, "its half-done file")
    cluster.kill("w1")
    wait(lambda: not agents_running(tmp_path / "agent-script.json"), 120,
         "the killed worker's agent to be ended", cluster)
    wait(lambda: task_status(baton, 1)["state"] == "failed", 300, "the task to fail", cluster)
    wait(lambda: status(baton)["conductor"] is None, 120, "the run to end")
    assert (nodes / first["job"]).exists()  # nobody swept it yet
    cluster.add_worker("w3", "agent=1")
    go.touch()
    again = baton("retry", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    wait(lambda: status(baton)["conductor"] is None, 300, "the retried run to end", cluster,
         also=lambda: baton("status").stdout + conductor_logs())
    assert task_status(baton, 1)["state"] == "landed"
    assert not (nodes / first["job"]).exists()  # swept by the next job on this machine…
    kept = f"refs/baton/jobs/{first['job']}/leftover"
    assert kept in exchange_refs(exchange)  # …after its work went to the exchange
    half = subprocess.run(["git", "show", f"{kept}:half.txt"], cwd=exchange,
                          capture_output=True, text=True, check=True).stdout
    assert half == "half done\n"


def test_a_record_an_agent_forges_for_itself_is_flagged_and_stopping_ends_the_agent(
        request, repo, baton, tmp_path, cluster):
    """The agent pushes a `done` record of its own making for its job, then runs on. The
    record lacks its job's seal: flagged, and it ends nothing (nothing of it lands); the
    agent runs until the person stops the task, and then no agent runs on."""
    if not loopback_only(request.node.nodeid):
        return
    from test_dask_runner import agents_running, bare_exchange, commit_config, runners_table
    from helpers.run_kit import load_plan, program, task, write_config

    exchange, marker = bare_exchange(tmp_path), tmp_path / "forged.txt"
    forger = program("record_forger.py", str(exchange), str(marker))
    write_config(repo, {"agent": forger},
                 extra=runners_table(cluster.address, exchange, tmp_path / "nodes"))
    commit_config(repo)
    load_plan(baton, [task(1, runner="lab")])
    assert baton("run", "--approve", "--detach").returncode == 0
    wait(lambda: any(f["kind"] == "forged" for f in task_status(baton, 1)["flags"]), 300,
         "the forged record to be flagged", cluster)
    assert marker.read_text() == "forged\n"
    running = task_status(baton, 1)
    assert running["state"] == "running", running  # a record it made itself ends nothing
    assert agents_running(Path(forger[-3]))
    stopped = baton("stop", "1")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    wait(lambda: not agents_running(Path(forger[-3])), 120, "the forging agent to be ended",
         cluster)
    wait(lambda: task_status(baton, 1)["state"] != "running", 120, "the task to stop", cluster)
    ended = task_status(baton, 1)
    assert ended["state"] == "failed" and ended["reason"] == "stopped by you", ended
