"""Benchmark: the conductor's own CPU per started task, at 40 tasks and at 10,000 (target: the
10,000-task figure ≤ 1.15 × the 40-task one, issue "Performance, part 4").

Each plan is layered — rows of `--parallel` tasks, each depending on two tasks of the row
above — on the trivial agent: the `script` player with check `true` (no model, no agent
program: the shim runs `sh -c true`, Baton commits nothing and lands). The run starts with
`baton run --approve --detach`; the benchmark reads the conductor's pid from the store and its
CPU time (user + system, its own process only: git and the shims are other processes) from the
kernel, at the moment the `--skip`-th task starts and again at the (`--skip` + `--window`)-th.
The figure per size is that CPU ÷ `--window` tasks: the steady cost of choosing, starting,
following and landing one task, whatever the plan's size. It also prints the CPU the conductor
spent before its first start (loading, folding, queueing every task), a once-per-run cost.
Then it asks the conductor to stop (SIGTERM pauses the running tasks) and removes everything.

    python benchmarks/bench_conductor_cpu.py [--sizes 40,10000] [--runs 3] [--parallel 8]

Not a test; nothing is asserted. Ratios, not absolute times: both sizes run in one call,
alternately, and the medians are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil


def plan(n: int, width: int) -> dict:
    tasks = []
    for i in range(1, n + 1):
        row, col = divmod(i - 1, width)
        above = (row - 1) * width + 1
        deps = sorted({above + col, above + (col + 1) % width}) if row else []
        tasks.append({"id": i, "title": f"Task {i}", "prompt": f"Step {i}.", "player": "script",
                      "check": "true", "depends_on": deps})
    return {"version": 1, "goal": f"conductor cpu {n}", "tasks": tasks}


def setup(base: Path, n: int, width: int) -> tuple[Path, dict[str, str]]:
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
    env = {**os.environ, "HOME": str(home), "BATON_HOME": str(base / "baton-home"),
           "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1", "BATON_MAX_PARALLEL": str(width)}
    for name in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_CONFIG"):
        env.pop(name, None)
    repo = base / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# bench\n")
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", "initial"]):
        subprocess.run(argv, cwd=repo, env=env, check=True, capture_output=True)
    (base / "plan.json").write_text(json.dumps(plan(n, width)))
    baton(repo, env, "plan", "--from", str(base / "plan.json"))
    return repo, env


def baton(repo: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "baton_tui", *args], cwd=repo, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"baton {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def one_run(n: int, width: int, skip: int, window: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="baton-bench-cpu-") as tmp:
        base = Path(tmp)
        repo, env = setup(base, n, width)
        db = sqlite3.connect(repo / ".git" / "baton" / "baton.db", timeout=30)
        baton(repo, env, "run", "--approve", "--detach")
        deadline = time.monotonic() + 60
        pid = None
        while pid is None and time.monotonic() < deadline:
            row = db.execute("SELECT pid FROM conductor WHERE id = 1").fetchone()
            pid = row[0] if row else None
            time.sleep(0.01)
        if pid is None:
            sys.exit("no conductor started")
        proc = psutil.Process(pid)
        marks: dict[int, tuple[float, float]] = {}
        started, last = 0, 0
        t0 = time.monotonic()
        goal = skip + window
        try:
            while started < goal:
                if time.monotonic() - t0 > 1800:
                    sys.exit(f"{n} tasks: only {started} started in 30 minutes")
                rows = db.execute("SELECT id, kind FROM events WHERE id > ? AND kind IN "
                                  "('task.started', 'run.finished') ORDER BY id",
                                  (last,)).fetchall()
                if any(kind == "run.finished" for _, kind in rows):
                    sys.exit(f"{n} tasks: the run ended after {started} starts")
                for event_id, _ in rows:
                    last = event_id
                    started += 1
                    for mark in (1, skip, goal):
                        if started == mark and mark not in marks:
                            marks[mark] = (cpu(proc), time.monotonic())
                time.sleep(0.005)
        finally:
            try:
                os.kill(pid, signal.SIGTERM)
                proc.wait(timeout=120)
            except (ProcessLookupError, psutil.NoSuchProcess, psutil.TimeoutExpired):
                pass
            db.close()
        (c1, _), (c_skip, w_skip), (c_goal, w_goal) = marks[1], marks[skip], marks[goal]
        return {"cpu_per_task": (c_goal - c_skip) / window,
                "wall_per_task": (w_goal - w_skip) / window,
                "cpu_before_first_start": c1, "cpu_share": (c_goal - c_skip) / (w_goal - w_skip)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="40,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=8, help="max_parallel and row width")
    parser.add_argument("--skip", type=int, default=8, help="starts before the window opens")
    parser.add_argument("--window", type=int, default=24, help="starts measured")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if min(sizes) < args.skip + args.window:
        sys.exit(f"every size needs at least --skip + --window = {args.skip + args.window} tasks")
    results: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for _ in range(args.runs):
        for n in sizes:  # alternately, so a busy machine slows every size alike
            results[n].append(one_run(n, args.parallel, args.skip, args.window))
    rows = {n: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
            for n, runs in results.items()}
    small, large = rows[sizes[0]], rows[sizes[-1]]
    ratio = large["cpu_per_task"] / small["cpu_per_task"]
    if args.json:
        print(json.dumps({"sizes": rows, "ratio": ratio}, indent=2))
        return 0
    for n, row in rows.items():
        print(f"{n:>6} tasks: conductor CPU per started task {row['cpu_per_task'] * 1000:7.1f} ms "
              f"(wall {row['wall_per_task'] * 1000:6.0f} ms per start, conductor busy "
              f"{row['cpu_share'] * 100:4.0f} %); CPU before the first start "
              f"{row['cpu_before_first_start']:.2f} s")
    print(f"ratio {sizes[-1]} ÷ {sizes[0]}: {ratio:.2f}   (target <= 1.15; medians of "
          f"{args.runs} runs, window of {args.window} starts after {args.skip})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
