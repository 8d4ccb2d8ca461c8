"""`baton status --json` wall time ÷ `python -c pass`, by plan shape and size (target ≤ 4 at 100
tasks, ≤ 20 at 10,000).

A script, not a timed test. For each plan shape and size it builds a throwaway git repository,
loads the plan with `baton plan --from` and approves it (both fast enough at 10,000 tasks, so
plans go through the CLI like a person's would), appends a run's worth of events through the
store (most tasks started, progress and usage, some done and landed, a few failed or paused),
then times `python -m baton_tui status --json` and `python -c pass` alternately (so a busy
machine slows both alike) and prints the ratio of the medians.

Each plan is timed three ways (`--cases`):
  cached   nothing happens between two statuses (the kept snapshot is read back as it is)
  live     a conductor is recorded as running (a sleeping process of the benchmark's own) and
           a run's worth of events (`--events`, untimed) comes before every status: a
           second terminal watching a live run
  stale    the same events before every status, with no run: a cache that new events outdate

Both are timed with bytecode available, as an installed Baton has it: the timed processes may
write `.pyc` files (`PYTHONDONTWRITEBYTECODE` is dropped for them) into a cache folder of the
run's own (`PYTHONPYCACHEPREFIX`, so the checkout is not touched), filled by the untimed warm-up
runs. Without it, a machine that sets `PYTHONDONTWRITEBYTECODE` would compile every Baton module
changed since its last `.pyc` on every timed run (about 25 ms for the status path's modules).

Shapes:
  mixed    the original 100-task benchmark plan (each task on the one before and the one
           seven back, every fifth task free), players, skills, scopes and checks mixed
  chain    each task depends on the one before
  layered  rows of √n tasks, each depending on three tasks of the row above
  wide     every task depends on task 1

    python benchmarks/bench_status.py [--sizes 100,10000] [--shapes chain,layered,wide]
                                      [--cases cached,live,stale] [--events 30] [--runs N]
                                      [--rounds N] [--json] [--hogs N]

`--rounds 3` measures every case of a plan three times, the cases taking turns, and prints each
case's ratio over the rounds and their median (the issue's targets are medians of three or more
alternating runs; with hogs a single round can land on the slow side of the scheduler).

`--hogs 2` runs two busy CPU loops beside it all, each in a session of its own (as programs in
other terminals are: where Linux groups tasks by session for its scheduler, hogs in the
benchmark's own shell would share a group with the timed processes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Players every machine has: custom agents (trusted below) and the check-only `script`.
PLAYERS = ["agent-a", "agent-b", "agent-c", "script"]
PYCACHE = ""  # where the timed processes keep their bytecode (set in `main`)
PLAYERS_TOML = "".join(f'[players.custom.{p}]\ncommand = ["true"]\n\n' for p in PLAYERS[:-1])


def deps_for(shape: str, i: int, n: int) -> list[int]:
    if shape == "mixed":
        return [d for d in (i - 1, i - 7) if d >= 1 and i % 5]
    if shape == "chain":
        return [i - 1] if i > 1 else []
    if shape == "wide":
        return [1] if i > 1 else []
    if shape == "layered":
        width = max(1, math.isqrt(n))
        row, col = divmod(i - 1, width)
        if row == 0:
            return []
        above = (row - 1) * width + 1
        return sorted({above + (col * 7 + k * 13) % width for k in range(3)})
    raise ValueError(shape)


def plan_doc(shape: str, n: int) -> dict:
    tasks = []
    for i in range(1, n + 1):
        task = {"id": i, "title": f"Task number {i}", "prompt": f"Do step {i} of the work.",
                "player": PLAYERS[i % len(PLAYERS)], "mode": "build",
                "depends_on": deps_for(shape, i, n)}
        if task["player"] == "script":
            task["check"] = "true"
        if shape == "mixed":
            task.update(skills=["tdd"] if i % 3 == 0 else [], scope=[f"src/mod{i}.py"],
                        check="true" if i % 4 == 0 else task.get("check"))
        tasks.append(task)
    return {"version": 1, "goal": f"Benchmark plan: {shape}, {n} tasks", "tasks": tasks}


def baton(repo: Path, *args: str) -> float:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "baton_tui", *args], cwd=repo,
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"baton {' '.join(args)} failed: {result.stdout}{result.stderr}")
    return time.perf_counter() - start


def build_repo(where: Path, shape: str, n: int) -> tuple[Path, dict]:
    repo = where / f"repo-{shape}-{n}"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Bench",
           "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "Bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    (repo / "README.md").write_text("# bench\n")
    (repo / "baton.toml").write_text(PLAYERS_TOML)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=repo, check=True, env=env)
    plan_file = where / f"plan-{shape}-{n}.json"
    plan_file.write_text(json.dumps(plan_doc(shape, n)))
    baton(repo, "trust")
    setup = {"plan_from_s": baton(repo, "plan", "--from", str(plan_file)),
             "approve_s": baton(repo, "approve")}
    # A run's worth of events: most tasks started, some done and landed, a few failed or paused.
    sys.path.insert(0, str(ROOT))
    from baton_tui.paths import find_repo
    from baton_tui.store.db import Store

    with Store(find_repo(repo).store_path) as store:
        plan_id = store.current_plan().id
        with store.tx():
            for i in range(1, n + 1):
                if i % 100 > 80 or (n == 100 and i > 80):
                    continue
                store.append(plan_id, i, "task.queued")
                store.append(plan_id, i, "task.started", {"attempt": i})
                for step in range(5):
                    store.append(plan_id, i, "task.progress", {"message": f"step {step}"})
                store.append(plan_id, i, "task.usage", {"tokens": 1200, "cost": 0.01})
                if i % 10 == 0:
                    store.append(plan_id, i, "task.failed", {"reason": "check failed"})
                elif i % 13 == 0:
                    store.append(plan_id, i, "task.paused", {"reason": "usage limit",
                                                             "until": time.time() + 3600})
                elif i % 100 < 60:
                    store.append(plan_id, i, "task.done", {"summary": f"did {i}"})
                    store.append(plan_id, i, "task.landed")
        setup["events"] = store.last_event_id()
    return repo, setup


def wall(argv: list[str], cwd: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = PYCACHE
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, env=env)
    return time.perf_counter() - start


class Run:
    """What happens between two statuses of a case: nothing (`cached`), or `per_status`
    events of a run going on, with a conductor recorded (`live`) or none (`stale`)."""

    def __init__(self, repo: Path, case: str, per_status: int):
        from baton_tui.paths import find_repo
        from baton_tui.store.db import Store

        self.case, self.per_status, self.step = case, per_status, 0
        self.store = Store(find_repo(repo).store_path)
        self.plan_id = self.store.current_plan().id
        self.n = len(self.store.current_plan().doc["tasks"])
        self.sleeper: subprocess.Popen | None = None
        if case == "live":
            from baton_tui import procs

            self.sleeper = subprocess.Popen(["sleep", "3600"])
            self.store.set_conductor(self.sleeper.pid, procs.start_token(self.sleeper.pid),
                                     self.plan_id)

    def before_status(self) -> None:
        """A live run's traffic: progress and usage of a few running tasks, now and then one
        finishing and landing (the same for every case, so the ratios compare)."""
        if self.case == "cached":
            return
        with self.store.tx():
            for _ in range(self.per_status):
                self.step += 1
                task = 1 + (self.step * 7919) % self.n
                if self.step % 10 == 0:
                    self.store.append(self.plan_id, task, "task.done", {"summary": "ok"})
                    self.store.append(self.plan_id, task, "task.landed")
                elif self.step % 10 == 5:
                    self.store.append(self.plan_id, task, "task.started",
                                      {"attempt": self.step})
                elif self.step % 2:
                    self.store.append(self.plan_id, task, "task.progress",
                                      {"message": f"step {self.step}"})
                else:
                    self.store.append(self.plan_id, task, "task.usage", {"tokens": 100})

    def close(self) -> None:
        if self.sleeper is not None:
            self.store.clear_conductor(self.sleeper.pid)
            self.sleeper.kill()
            self.sleeper.wait()
        self.store.close()


def measure(repo: Path, runs: int, run: Run) -> tuple[float, float, float]:
    """Medians of status and of `python -c pass`, and the first status alone: it folds every
    event and caches the fold in the store (the ones after it start from that fold)."""
    status_cmd = [sys.executable, "-m", "baton_tui", "status", "--json"]
    base_cmd = [sys.executable, "-c", "pass"]
    run.before_status()
    first = wall(status_cmd, repo)
    for _ in range(2):  # warm the page cache and the bytecode cache
        run.before_status()
        wall(status_cmd, repo)
        wall(base_cmd, repo)
    status_times, base_times = [], []
    for _ in range(runs):
        run.before_status()
        status_times.append(wall(status_cmd, repo))
        base_times.append(wall(base_cmd, repo))
    return statistics.median(status_times), statistics.median(base_times), first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,10000")
    parser.add_argument("--shapes", default="mixed,chain,layered,wide")
    parser.add_argument("--cases", default="cached,live,stale")
    parser.add_argument("--events", type=int, default=30,
                        help="events a live run adds before each status (live, stale)")
    parser.add_argument("--runs", type=int, default=11,
                        help="timed runs per case (at most 5 for plans over 1,000 tasks)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="times every case is measured, the cases taking turns")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--hogs", type=int, default=0, help="busy CPU loops beside it all, "
                        "each in a session of its own")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    shapes = [s for s in args.shapes.split(",") if s]
    cases = [c for c in args.cases.split(",") if c]
    rows: list[dict] = []
    from cpu_hogs import running, said  # (beside this script)

    with running(args.hogs):
        measure_all(args, sizes, shapes, cases, rows)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif args.hogs > 0:
        print(said(args.hogs, "it all"))
    return 0


def measure_all(args: argparse.Namespace, sizes: list[int], shapes: list[str], cases: list[str],
                rows: list[dict]) -> None:
    global PYCACHE
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as tmp:
        os.environ.setdefault("BATON_HOME", str(Path(tmp) / "home"))
        PYCACHE = str(Path(tmp) / "pycache")
        # Compile the status path once, so not even the first timed status pays for it.
        wall([sys.executable, "-m", "baton_tui", "status", "--json"], Path(tmp))
        for n in sizes:
            for shape in shapes:
                if shape == "mixed" and n != 100:
                    continue  # the original benchmark plan has one size
                repo, setup = build_repo(Path(tmp), shape, n)
                runs = args.runs if n <= 1000 else min(args.runs, 5)
                for round_no, case in ((r, c) for r in range(1, args.rounds + 1) for c in cases):
                    run = Run(repo, case, args.events)
                    try:
                        status_s, base_s, first_s = measure(repo, runs, run)
                    finally:
                        run.close()
                    rows.append({"shape": shape, "tasks": n, "case": case, "round": round_no,
                                 "events": setup["events"],
                                 "status_s": round(status_s, 4), "python_pass_s": round(base_s, 4),
                                 "ratio": round(status_s / base_s, 2), "runs": runs,
                                 "first_status_s": round(first_s, 4),
                                 "plan_from_s": round(setup["plan_from_s"], 3),
                                 "approve_s": round(setup["approve_s"], 3),
                                 "target": 4 if n <= 100 else 20})
                    if not args.json:
                        r = rows[-1]
                        print(f"{shape:>8} {n:>6} tasks {case:>6} {r['events']:>6} events: status --json "
                              f"{status_s * 1000:8.1f} ms, python -c pass {base_s * 1000:6.1f} ms, "
                              f"ratio {r['ratio']:6.2f} (target ≤ {r['target']}); first status "
                              f"{first_s * 1000:.0f} ms; plan --from "
                              f"{r['plan_from_s']:.2f} s, approve {r['approve_s']:.2f} s", flush=True)
                if args.rounds > 1 and not args.json:
                    for case in cases:
                        ratios = [r["ratio"] for r in rows
                                  if (r["shape"], r["tasks"], r["case"]) == (shape, n, case)]
                        print(f"{shape:>8} {n:>6} tasks {case:>6}: ratios over {len(ratios)} "
                              f"rounds {', '.join(f'{x:.2f}' for x in ratios)}; median "
                              f"{statistics.median(ratios):.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
