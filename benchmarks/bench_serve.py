"""`baton serve`: an edit request → its `event` notification, round trip p95 ÷ `status --json`'s
in-process cost p95 (target ≤ 2).

A script, not a timed test. It builds a throwaway repository with a plan of `--tasks` tasks,
starts `baton serve --stdio`, subscribes, then alternates: one `task/edit` sent and the
`plan.edited` event it causes received (timed from just before the send), and one in-process
`api.snapshot_json(store)` (the work behind `baton status --json`, timed in this process) — so
a busy machine slows both alike. Prints both p95s and their ratio.

    python benchmarks/bench_serve.py [--tasks 40] [--runs 200] [--hogs N] [--json]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from helpers.serve_kit import StdioServer  # noqa: E402


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def make_repo(folder: Path, tasks: int) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    plan = {"version": 1, "goal": "benchmark", "tasks": [
        {"id": n, "title": f"task {n}", "prompt": "p", "player": "script", "check": "true",
         "depends_on": [n - 1] if n > 1 else []} for n in range(1, tasks + 1)]}
    subprocess.run([sys.executable, "-m", "baton_tui", "plan", "--from", "-"], cwd=repo,
                   input=json.dumps(plan), text=True, check=True, capture_output=True)
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--hogs", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from cpu_hogs import running as hogs

    with tempfile.TemporaryDirectory() as tmp, hogs(args.hogs):
        os.environ.setdefault("BATON_HOME", str(Path(tmp) / "home"))
        repo = make_repo(Path(tmp), args.tasks)
        os.chdir(repo)
        from baton_tui import api

        store = api.open_store()
        assert store is not None
        server = StdioServer(repo)
        c = server.client
        c.initialize()
        c.call("events/subscribe", {"cursor": api.last_event_id(store)})
        trips, statuses = [], []
        for n in range(args.runs + 10):
            title = f"title {n}"
            started = time.perf_counter()
            c.request("task/edit", {"id": 1, "field": "title", "value": title})
            c.wait_note("event", lambda e, t=title: e["kind"] == "plan.edited"
                        and e["data"].get("value") == t)
            trip = time.perf_counter() - started
            started = time.perf_counter()
            api.snapshot_json(store)
            status = time.perf_counter() - started
            if n >= 10:  # warm-up
                trips.append(trip)
                statuses.append(status)
        server.close()
    result = {"tasks": args.tasks, "runs": args.runs, "hogs": args.hogs,
              "round_trip_p95_ms": round(p95(trips) * 1000, 3),
              "status_json_p95_ms": round(p95(statuses) * 1000, 3),
              "ratio": round(p95(trips) / p95(statuses), 2), "target": 2.0}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"edit → event round trip p95 {result['round_trip_p95_ms']} ms · status --json "
              f"in-process p95 {result['status_json_p95_ms']} ms · ratio {result['ratio']} "
              f"(target ≤ 2) · {args.tasks} tasks, {args.runs} runs, {args.hogs} hogs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
