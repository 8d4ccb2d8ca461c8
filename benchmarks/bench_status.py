"""`baton status` wall time ÷ `python -c pass` on a 100-task plan (target ≤ 6).

A script, not a timed test: it builds a throwaway git repository, loads a 100-task plan,
appends a run's worth of events, then times `python -m baton_tui status` and `python -c pass`
alternately (so a busy machine slows both alike) and prints the ratio of the medians.

    python benchmarks/bench_status.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def build_repo(where: Path) -> Path:
    repo = where / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Bench",
           "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "Bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    (repo / "README.md").write_text("# bench\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=repo, check=True, env=env)
    players = ["claude-code", "codex", "gemini", "opencode"]
    tasks = [{"id": i, "title": f"Task number {i}", "prompt": f"Do step {i} of the work.",
              "player": players[i % len(players)], "mode": "build",
              "depends_on": [d for d in (i - 1, i - 7) if d >= 1 and i % 5],
              "skills": ["tdd"] if i % 3 == 0 else [], "scope": [f"src/mod{i}.py"],
              "check": "true" if i % 4 == 0 else None}
             for i in range(1, 101)]
    (repo / "plan.json").write_text(json.dumps(
        {"version": 1, "goal": "Benchmark plan with one hundred tasks", "tasks": tasks}))
    result = subprocess.run([sys.executable, "-m", "baton_tui", "plan", "--from", "plan.json"],
                            cwd=repo, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"loading the plan failed: {result.stderr}")
    subprocess.run([sys.executable, "-m", "baton_tui", "approve"], cwd=repo, check=True,
                   capture_output=True)
    # A run's worth of events: most tasks started, some done and landed, a few failed or paused.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from baton_tui.paths import find_repo
    from baton_tui.store.db import Store

    with Store(find_repo(repo).store_path) as store:
        plan_id = store.current_plan().id
        with store.tx():
            for i in range(1, 101):
                if i > 80:
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
                elif i < 60:
                    store.append(plan_id, i, "task.done", {"summary": f"did {i}"})
                    store.append(plan_id, i, "task.landed")
        EVENTS[0] = store.last_event_id()
    return repo


EVENTS = [0]


def wall(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as tmp:
        os.environ.setdefault("BATON_HOME", str(Path(tmp) / "home"))
        repo = build_repo(Path(tmp))
        status_cmd = [sys.executable, "-m", "baton_tui", "status"]
        base_cmd = [sys.executable, "-c", "pass"]
        for _ in range(3):  # warm the page cache and __pycache__
            wall(status_cmd, repo)
            wall(base_cmd, repo)
        status_times, base_times = [], []
        for _ in range(args.runs):
            status_times.append(wall(status_cmd, repo))
            base_times.append(wall(base_cmd, repo))
        status_median = statistics.median(status_times)
        base_median = statistics.median(base_times)
    ratio = status_median / base_median
    if args.json:
        print(json.dumps({"status_s": status_median, "python_pass_s": base_median,
                          "ratio": round(ratio, 2), "runs": args.runs, "target": 6}))
    else:
        print(f"baton status (100 tasks, {EVENTS[0]} events): "
              f"median {status_median * 1000:.1f} ms over {args.runs} runs")
        print(f"python -c pass: median {base_median * 1000:.1f} ms")
        print(f"ratio: {ratio:.2f}  (target ≤ 6)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
