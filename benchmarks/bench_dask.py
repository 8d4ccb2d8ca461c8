"""Benchmark: Baton's cluster runner against the same agents submitted by hand through Dask.

A local Dask cluster (a scheduler and one worker offering `agent=16`, on 127.0.0.1; with
`--workers N`, N workers each offering `agent=16` — `--slots` — so 16 × N slots in all, and
tasks beyond them wait in Dask's queue on both sides) and a bare exchange repository. Both
sides use the same cluster; Baton's `max_parallel` is the number of tasks, up to its ceiling
of 64 (so 100 tasks on four workers run in two waves on both sides: 64 slots). Baton runs 16
independent tasks on `[runners.lab]`; each task's agent is
the demo agent (`baton_tui.demo.agent`) sleeping 3 s, writing one file and reporting done. Its
wall time is `baton run --approve` from start to exit (every task landed).

The baseline does the same by hand, with the same git steps: push the base to the exchange,
submit 16 Dask tasks (one unit of `agent` each) that each fetch that one commit into a scratch
repository, make a worktree, run the same agent program on the same script, commit what it
left and push the result back; then fetch each result and land it on an integration branch
(`git merge-tree --write-tree`, `git commit-tree`, `git update-ref` with the old value).

A fair comparison: both sides are a fresh process timed from its start to its exit. A person
submitting by hand writes a script that starts Python, imports `distributed` and connects its
client; Baton's run starts Python, imports `distributed` and connects too. So the baseline is
this file run again (`--by-hand`) in a process of its own, and its time includes that start,
the import and the connection, as Baton's does; neither side's cluster start is counted.

Each round starts a fresh cluster and exchange and runs both, in alternating order (the first
side of a round meets a cold worker): the figure is the median of the rounds' ratios, Baton ÷
by hand (targets: ≤ 1.15 at 16 tasks on one worker, ≤ 1.10 at ``--tasks 100 --workers 4``).
`--hogs N` runs N busy CPU loops beside it all (ended after). Each round's line says the load
average as it ended (other work on the machine moves both sides' figures). Run:
``python benchmarks/bench_dask.py [--tasks N] [--workers W] [--slots S] [--sleep S]
[--rounds R] [--hogs N]``. Not a test; nothing is asserted. Needs the `dask` extra
(`pip install -e '.[dask]'`).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
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


def start_cluster(base: Path, slots: int, env: dict[str, str], workers: int = 1
                  ) -> tuple[str, list]:
    """A scheduler and `workers` workers, each offering `agent=slots` (and as many threads)."""
    file = base / "scheduler.json"
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port",
                               "0", "--no-dashboard", "--scheduler-file", str(file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                              start_new_session=True)]
    while not (file.exists() and file.stat().st_size):
        time.sleep(0.1)
    address = json.loads(file.read_text())["address"]
    for _ in range(workers):
        procs.append(subprocess.Popen(
            [str(BIN / "dask"), "worker", address, "--host", "127.0.0.1", "--nthreads",
             str(slots), "--no-nanny", "--no-dashboard", "--resources", f"agent={slots}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True))
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(workers, timeout=60)
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
    import os
    import sys

    # `baton` on the agent's PATH, as Baton's shim puts it: the agent's `baton report` runs
    # (and is refused outside a task) instead of failing to start at all.
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    sp.run(argv, cwd=tree, input="prompt", text=True, capture_output=True,
           env={**os.environ, "PATH": path, "BATON_TASK": str(task)})
    run(tree, "add", "-A")
    run(tree, "commit", "-q", "--no-verify", "-m", f"task {task}")
    run(tree, "push", "-q", exchange, f"HEAD:refs/b/result/{task}")
    return run(tree, "rev-parse", "HEAD")


def by_hand(address: str, exchange: Path, scratch: Path, argv: list[str], n: int) -> None:
    """The person's own script (run in a fresh process, `--by-hand`): import, connect, push
    the base, submit, fetch and land each result as it comes. Run in its repository."""
    repo = Path.cwd()
    from distributed import Client, as_completed

    with Client(address, timeout="30s") as client:
        git(repo, "push", "-q", str(exchange), "HEAD:refs/b/base")
        tip = git(repo, "rev-parse", "HEAD")
        git(repo, "update-ref", "refs/heads/integration", tip)
        futures = [client.submit(by_hand_task, str(exchange), "refs/b/base", str(scratch),
                                 argv, t, resources={"agent": 1}, pure=False)
                   for t in range(1, n + 1)]
        for future in as_completed(futures):
            commit = future.result()
            git(repo, "fetch", "-q", str(exchange), commit)
            old = git(repo, "rev-parse", "refs/heads/integration")
            tree = git(repo, "merge-tree", "--write-tree", old, commit).splitlines()[0]
            new = git(repo, "commit-tree", tree, "-p", old, "-p", commit, "-m", "land")
            git(repo, "update-ref", "refs/heads/integration", new, old)


def baseline(base: Path, address: str, exchange: Path, argv: list[str], n: int) -> float:
    repo, env = setup(base, "hand")
    script = [sys.executable, str(Path(__file__).resolve()), "--by-hand", address,
              str(exchange), str(base / "scratch"), json.dumps(argv), str(n)]
    start = time.perf_counter()
    done = subprocess.run(script, cwd=repo, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the by-hand script exited {done.returncode}:\n{done.stderr}")
    return elapsed


def with_baton(base: Path, address: str, exchange: Path, argv: list[str], n: int) -> float:
    repo, env = setup(base, "baton")
    players = f'[players.custom.agent]\ncommand = {json.dumps(argv)}\n'
    (repo / "baton.toml").write_text(
        f'{players}\n[limits]\nmax_parallel = {min(n, 64)}\n\n[runners]\ndefault = "lab"\n\n'
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


def one_round(base: Path, argv: list[str], n: int, baton_first: bool, workers: int = 1,
              slots: int = 16) -> tuple[float, float]:
    """A fresh cluster and exchange; both sides, in the order asked; (by hand, Baton)."""
    base.mkdir()
    _, env = setup(base, "cluster")
    address, procs = start_cluster(base, slots, env, workers)
    try:
        exchange = base / "exchange.git"
        subprocess.run(["git", "init", "-q", "--bare", str(exchange)], check=True)
        if baton_first:
            ours = with_baton(base, address, exchange, argv, n)
            hand = baseline(base, address, exchange, argv, n)
        else:
            hand = baseline(base, address, exchange, argv, n)
            ours = with_baton(base, address, exchange, argv, n)
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:  # a worker still closing: ended now
                os.killpg(proc.pid, signal.SIGKILL)
    return hand, ours


def main() -> None:
    if sys.argv[1:2] == ["--by-hand"]:
        address, exchange, scratch, argv, n = sys.argv[2:7]
        by_hand(address, Path(exchange), Path(scratch), json.loads(argv), int(n))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--sleep", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1, help="workers in the cluster")
    parser.add_argument("--slots", type=int, default=16, help="agent slots on each worker")
    parser.add_argument("--hogs", type=int, default=0, help="busy CPU loops beside it")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    script = base / "script.json"
    script.write_text(json.dumps({"*": [{"sleep": args.sleep},
                                        {"write": "out.txt", "content": "done\n"},
                                        {"report": "done", "summary": "slept"}]}))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script)]
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.hogs)]
    ratios = []
    try:
        slots = args.slots
        print(f"{args.tasks} remote tasks, agents {args.sleep:g} s each, {args.workers} "
              f"worker(s) offering agent={slots} each ({slots * args.workers} slots), "
              f"{args.hogs} CPU hog(s); load {os.getloadavg()[0]:.1f}")
        for number in range(args.rounds):
            first = number % 2 == 1
            hand, ours = one_round(base / f"round{number}", argv, args.tasks, first,
                                   args.workers, args.slots)
            ratios.append(ours / hand)
            print(f"  round {number + 1} ({'Baton' if first else 'by hand'} first): by hand "
                  f"{hand:.2f} s, baton {ours:.2f} s, ratio {ours / hand:.2f} (load "
                  f"{os.getloadavg()[0]:.1f})", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(f"  Baton ÷ by hand: median {statistics.median(ratios):.2f} "
          f"(range {min(ratios):.2f}–{max(ratios):.2f}, {len(ratios)} rounds; target ≤ 1.15 at "
          f"16 tasks on one worker, ≤ 1.10 at 100 on four)")


if __name__ == "__main__":
    main()
