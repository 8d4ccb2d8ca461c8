"""Benchmark: Baton's cluster runner against the same agents submitted by hand through Dask.

A local Dask cluster (a scheduler and one worker offering `agent=16`, on 127.0.0.1) and a bare
exchange repository. Baton runs 16 independent tasks on `[runners.lab]`; each task's agent is
the demo agent (`baton_tui.demo.agent`) sleeping 3 s, writing one file and reporting done. Its
wall time is `baton run --approve` from start to exit (every task landed).

The baseline does the same by hand, with the same git steps: push the base to the exchange,
submit 16 Dask tasks (one unit of `agent` each) that each fetch that one commit into a scratch
repository, make a worktree, run the same agent program on the same script, commit what it
left and push the result back; then fetch each result and land it on an integration branch
(`git merge-tree --write-tree`, `git commit-tree`, `git update-ref` with the old value). Its
wall time is from the first push to the last landing. The figure is Baton ÷ baseline (target
≤ 1.3). Run: ``python benchmarks/bench_dask.py [--tasks N] [--sleep S]``. Not a test; nothing
is asserted. Needs the `dask` extra (`pip install -e '.[dask]'`).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def git(cwd: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def setup(base: Path, name: str) -> tuple[Path, dict[str, str]]:
    home = base / f"home-{name}"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
    env = {**os.environ, "HOME": str(home), "BATON_HOME": str(base / f"baton-home-{name}"),
           "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1"}
    for var in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_MAX_PARALLEL", "BATON_CONFIG"):
        env.pop(var, None)
    repo = base / f"repo-{name}"
    repo.mkdir()
    for i in range(30):
        (repo / f"file{i}.txt").write_text(f"line {i}\n" * 40)
    git(repo, "init", "-q", "-b", "main", env=env)
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "initial", env=env)
    return repo, env


def start_cluster(base: Path, slots: int, env: dict[str, str]) -> tuple[str, list]:
    file = base / "scheduler.json"
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port",
                               "0", "--no-dashboard", "--scheduler-file", str(file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                              start_new_session=True)]
    while not (file.exists() and file.stat().st_size):
        time.sleep(0.1)
    address = json.loads(file.read_text())["address"]
    procs.append(subprocess.Popen(
        [str(BIN / "dask"), "worker", address, "--host", "127.0.0.1", "--nthreads", str(slots),
         "--no-nanny", "--no-dashboard", "--resources", f"agent={slots}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True))
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(1, timeout=60)
    return address, procs


def by_hand_task(exchange: str, base_ref: str, scratch: str, argv: list[str], task: int) -> str:
    """On the worker: the same git steps and the same agent as a Baton job (no Baton)."""
    import subprocess as sp
    from pathlib import Path as P

    where = P(scratch) / f"t{task}"
    repo, tree = where / "repo", where / "tree"
    repo.mkdir(parents=True)
    run = lambda cwd, *a: sp.run(["git", *a], cwd=cwd, check=True, capture_output=True,  # noqa
                                 text=True).stdout.strip()
    run(repo, "init", "-q")
    run(repo, "fetch", "-q", "--depth=1", "--no-tags", exchange, f"+{base_ref}:refs/b/base")
    run(repo, "worktree", "add", "-q", "--detach", str(tree), "refs/b/base")
    sp.run(argv, cwd=tree, input="prompt", text=True, capture_output=True,
           env={**__import__("os").environ, "BATON_TASK": str(task)})
    run(tree, "add", "-A")
    run(tree, "commit", "-q", "--no-verify", "-m", f"task {task}")
    run(tree, "push", "-q", exchange, f"HEAD:refs/b/result/{task}")
    return run(tree, "rev-parse", "HEAD")


def baseline(base: Path, address: str, exchange: Path, argv: list[str], n: int) -> float:
    repo, env = setup(base, "hand")
    os.environ.update({k: env[k] for k in ("HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")})
    from distributed import Client, as_completed

    client = Client(address, timeout="30s")
    start = time.perf_counter()
    git(repo, "push", "-q", str(exchange), "HEAD:refs/b/base", env=env)
    tip = git(repo, "rev-parse", "HEAD", env=env)
    git(repo, "update-ref", "refs/heads/integration", tip, env=env)
    futures = [client.submit(by_hand_task, str(exchange), "refs/b/base", str(base / "scratch"),
                             argv, t, resources={"agent": 1}, pure=False)
               for t in range(1, n + 1)]
    for future in as_completed(futures):
        commit = future.result()
        git(repo, "fetch", "-q", str(exchange), commit, env=env)
        old = git(repo, "rev-parse", "refs/heads/integration", env=env)
        tree = git(repo, "merge-tree", "--write-tree", old, commit, env=env).splitlines()[0]
        new = git(repo, "commit-tree", tree, "-p", old, "-p", commit, "-m", "land", env=env)
        git(repo, "update-ref", "refs/heads/integration", new, old, env=env)
    elapsed = time.perf_counter() - start
    client.close()
    return elapsed


def with_baton(base: Path, address: str, exchange: Path, argv: list[str], n: int) -> float:
    repo, env = setup(base, "baton")
    players = f'[players.custom.agent]\ncommand = {json.dumps(argv)}\n'
    (repo / "baton.toml").write_text(
        f'{players}\n[limits]\nmax_parallel = {n}\n\n[runners]\ndefault = "lab"\n\n'
        f'[runners.lab]\nkind = "dask"\naddress = "{address}"\nexchange = "{exchange}"\n'
        f'workdir = "{base / "nodes"}"\n')
    git(repo, "add", "baton.toml", env=env)
    git(repo, "commit", "-q", "-m", "baton.toml", env=env)
    tasks = [{"id": t, "title": f"Task {t}", "prompt": "p", "player": "agent"}
             for t in range(1, n + 1)]
    plan = base / "plan.json"
    plan.write_text(json.dumps({"version": 1, "goal": "bench", "tasks": tasks}))
    baton = [sys.executable, "-m", "baton_tui"]
    for args in (["plan", "--from", str(plan)], ["trust"]):
        subprocess.run([*baton, *args], cwd=repo, env=env, check=True, capture_output=True)
    start = time.perf_counter()
    done = subprocess.run([*baton, "run", "--approve"], cwd=repo, env=env, capture_output=True,
                          text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"baton run exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--sleep", type=float, default=3.0)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    script = base / "script.json"
    script.write_text(json.dumps({"*": [{"sleep": args.sleep},
                                        {"write": "out.txt", "content": "done\n"},
                                        {"report": "done", "summary": "slept"}]}))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script)]
    _, env = setup(base, "cluster")
    address, procs = start_cluster(base, args.tasks, env)
    try:
        exchange = base / "exchange.git"
        subprocess.run(["git", "init", "-q", "--bare", str(exchange)], check=True)
        hand = baseline(base, address, exchange, argv, args.tasks)
        ours = with_baton(base, address, exchange, argv, args.tasks)
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:  # a worker still closing: ended now
                os.killpg(proc.pid, signal.SIGKILL)
    print(f"{args.tasks} remote tasks, agents {args.sleep:g} s each, one worker offering "
          f"agent={args.tasks}")
    print(f"  by hand through a Dask client: {hand:.2f} s")
    print(f"  baton run --approve:           {ours:.2f} s")
    print(f"  Baton ÷ by hand:               {ours / hand:.2f}  (target ≤ 1.3)")


if __name__ == "__main__":
    main()
