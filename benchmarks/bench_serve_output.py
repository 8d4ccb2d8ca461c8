"""`baton serve` beside a run: the conductor's CPU with a client subscribed to every event and
every task's output ÷ the same run with no client (target ≤ 1.10 at 1,000 tasks).

A script, not a timed test. Each round builds a repository with `--tasks` independent tasks on
Baton's demo agent (each prints `--lines` lines of output, then reports done), runs it with
`baton run --approve --detach`, and reads the conductor's own CPU time (user + system, its
process only) from the kernel until it exits. Rounds alternate between no client and a
`baton serve --stdio` client that subscribed (`events/subscribe`, output on) and reads all it
is sent — so a busy machine slows both alike. Prints the medians and their ratio.

    python benchmarks/bench_serve_output.py [--tasks 1000] [--lines 20] [--rounds 3] [--hogs N]
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


def baton(repo: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "baton_tui", *args], cwd=repo, input=stdin,
                          capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(folder: Path, tasks: int, lines: int) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    script = folder / "agent.json"
    script.write_text(json.dumps({"*": [*({"print": f"output line {n} " + "x" * 60}
                                          for n in range(lines)),
                                        {"report": "done", "summary": "printed"}]}))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script)]
    (repo / "baton.toml").write_text(f"[players.custom.agent]\ncommand = {json.dumps(argv)}\n"
                                     '[limits]\nstall = "300s"\n')
    baton(repo, "trust")
    plan = {"version": 1, "goal": "output", "tasks": [
        {"id": n, "title": f"task {n}", "prompt": "p", "player": "agent"}
        for n in range(1, tasks + 1)]}
    baton(repo, "plan", "--from", "-", stdin=json.dumps(plan))
    return repo


def conductor_cpu(repo: Path) -> float:
    import psutil

    baton(repo, "run", "--approve", "--detach")
    pid = None
    while pid is None:
        pid = (json.loads(baton(repo, "status", "--json"))["conductor"] or {}).get("pid")
        if pid is None and json.loads(baton(repo, "status", "--json"))["plan"]["state"] == "complete":
            raise SystemExit("the run ended before its conductor was seen")
    process = psutil.Process(pid)
    spent = 0.0
    while True:
        try:
            times = process.cpu_times()
            spent = times.user + times.system
            if process.status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    return spent


def one_round(tasks: int, lines: int, with_client: bool) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BATON_HOME"] = str(Path(tmp) / "home")
        repo = make_repo(Path(tmp), tasks, lines)
        server = None
        if with_client:
            server = StdioServer(repo)
            server.client.initialize()
            server.client.call("events/subscribe", {"cursor": 0, "output": True})
        try:
            spent = conductor_cpu(repo)
        finally:
            received = 0
            if server is not None:
                received = len(server.client.notes("task/output"))
                server.close()
        return spent, received


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hogs", type=int, default=0)
    args = parser.parse_args()
    from cpu_hogs import running as hogs

    alone, served, outputs = [], [], []
    with hogs(args.hogs):
        for _ in range(args.rounds):
            alone.append(one_round(args.tasks, args.lines, False)[0])
            spent, received = one_round(args.tasks, args.lines, True)
            served.append(spent)
            outputs.append(received)
    a, s = statistics.median(alone), statistics.median(served)
    print(f"conductor CPU: no client {a:.2f} s · a client following every event and output "
          f"{s:.2f} s ({statistics.median(outputs):.0f} task/output notifications) · ratio "
          f"{s / a:.3f} (target ≤ 1.10) · {args.tasks} tasks × {args.lines} lines, "
          f"{args.rounds} rounds, {args.hogs} hogs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
