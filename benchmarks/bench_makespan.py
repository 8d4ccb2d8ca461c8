"""Benchmark: a run's makespan against the lower bound of its DAG.

Forty scripted tasks in five levels of eight; every task past the first level depends on two
tasks of the level before; each task's agent (the demo agent, `baton_tui.demo.agent`) sleeps
2–6 s (fixed seed), writes one file and reports. `[limits] max_parallel = 8`. The lower bound
is max(critical path, total work ÷ 8); the figure is makespan ÷ lower bound (target ≤ 1.10).

The makespan is measured from `baton run --approve` being typed to its exit (what a person
waits), and also from the conductor's start to the last landing (the scheduler alone).
Everything is real: git worktrees and landings, the detached conductor, one shim and one agent
process per task. Run: ``python benchmarks/bench_makespan.py [--seed S] [--scale X]``
(``--scale 0.5`` halves every duration, for a quick look). Not a test; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LEVELS, WIDTH, PARALLEL = 5, 8, 8


def make_dag(seed: int, scale: float) -> tuple[dict[int, float], dict[int, list[int]]]:
    rng = random.Random(seed)
    durations: dict[int, float] = {}
    deps: dict[int, list[int]] = {}
    for level in range(LEVELS):
        for k in range(WIDTH):
            tid = level * WIDTH + k + 1
            durations[tid] = round(rng.uniform(2.0, 6.0) * scale, 2)
            previous = list(range((level - 1) * WIDTH + 1, level * WIDTH + 1)) if level else []
            deps[tid] = sorted(rng.sample(previous, 2)) if previous else []
    return durations, deps


def lower_bound(durations: dict[int, float], deps: dict[int, list[int]]) -> tuple[float, float]:
    finish: dict[int, float] = {}
    for tid in sorted(durations):
        finish[tid] = durations[tid] + max((finish[d] for d in deps[tid]), default=0.0)
    return max(finish.values()), sum(durations.values()) / PARALLEL


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary repository")
    args = parser.parse_args()
    durations, deps = make_dag(args.seed, args.scale)
    critical, work = lower_bound(durations, deps)
    bound = max(critical, work)

    base = Path(tempfile.mkdtemp(prefix="baton-bench-makespan-"))
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
    env = {**os.environ, "HOME": str(home), "BATON_HOME": str(base / "baton-home"),
           "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1"}
    for name in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_MAX_PARALLEL", "BATON_CONFIG"):
        env.pop(name, None)
    repo = base / "repo"
    repo.mkdir()

    def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(list(argv), cwd=repo, env=env, capture_output=True, text=True)
        if check and done.returncode != 0:
            sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
        return done

    baton = [sys.executable, "-m", "baton_tui"]
    run("git", "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# bench\n")
    run("git", "add", "-A")
    run("git", "commit", "-q", "-m", "initial")

    script = {str(t): [{"sleep": d}, {"write": f"out/t{t}.txt", "content": f"{t}\n"},
                       {"report": "done", "summary": f"task {t}"}] for t, d in durations.items()}
    (base / "script.json").write_text(json.dumps(script))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(base / "script.json")]
    (repo / "baton.toml").write_text(f"[players.custom.bench]\ncommand = {json.dumps(argv)}\n\n"
                                     f"[limits]\nmax_parallel = {PARALLEL}\n")
    tasks = [{"id": t, "title": f"Task {t}", "prompt": f"Task {t}.", "player": "bench",
              "depends_on": deps[t]} for t in durations]
    (base / "plan.json").write_text(json.dumps({"version": 1, "goal": "makespan benchmark",
                                                "tasks": tasks}))
    run(*baton, "plan", "--from", str(base / "plan.json"))
    run(*baton, "trust")

    started = time.monotonic()
    result = run(*baton, "run", "--approve", check=False)
    makespan = time.monotonic() - started
    if result.returncode != 0:
        print(result.stdout[-3000:], result.stderr[-3000:])
        sys.exit(f"the run exited {result.returncode}")

    events = [json.loads(line) for line in run(*baton, "log", "--json").stdout.splitlines()]
    conductor_at = next(e["ts"] for e in events if e["kind"] == "conductor.started")
    landed = [e["ts"] for e in events if e["kind"] == "task.landed"]
    started_at = {e["task"]: e["ts"] for e in events if e["kind"] == "task.started"}
    landed_at = {e["task"]: e["ts"] for e in events if e["kind"] == "task.landed"}
    assert len(landed) == len(durations), f"{len(landed)} of {len(durations)} tasks landed"
    scheduler_span = max(landed) - conductor_at
    # Where the time beyond the agents' own sleep goes, per task: start -> landed minus sleep.
    per_task = sorted(landed_at[t] - started_at[t] - durations[t] for t in durations)
    # Dependency latency: from the last dependency landing to the dependent's start.
    waits = sorted(started_at[t] - max(landed_at[d] for d in deps[t]) for t in durations
                   if deps[t])

    print(f"tasks {len(durations)} in {LEVELS} levels of {WIDTH}, max_parallel {PARALLEL}, "
          f"seed {args.seed}, scale {args.scale}")
    print(f"critical path       {critical:7.2f} s")
    print(f"total work / {PARALLEL}      {work:7.2f} s")
    print(f"lower bound         {bound:7.2f} s")
    print(f"makespan (command)  {makespan:7.2f} s")
    print(f"makespan (conductor start -> last landing) {scheduler_span:7.2f} s")
    print(f"per task: started -> landed beyond its sleep: median {per_task[len(per_task) // 2]:.2f}"
          f" s, max {per_task[-1]:.2f} s")
    print(f"dependency latency (last dep landed -> started): median "
          f"{waits[len(waits) // 2]:.2f} s, max {waits[-1]:.2f} s")
    print(f"ratio (command):    {makespan / bound:.3f}   (target <= 1.10)")
    print(f"ratio (conductor):  {scheduler_span / bound:.3f}")
    if args.keep:
        print(f"kept at {base}")
    else:
        subprocess.run(["rm", "-rf", str(base)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
