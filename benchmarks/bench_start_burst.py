"""Benchmark: many tasks starting at once in a big repository — how soon each one starts.

Sixteen independent tasks (`max_parallel` 16) in a repository of 3,000 files: every start
makes a worktree (a checkout of all of them), looks at the person's checkout and forks its
shim; on two cores they cannot all start at once. Printed: when the first, the median and the
last task started, counted from the conductor's start, and the figure median ÷ last — about
1 when the starts share the machine and all end late together, about 0.5 when they take
turns (`placing.Turns`), the best-ranked first, for the same last one. The agent writes a
file and reports; everything is real (git, the detached conductor, shims, the store).

    python benchmarks/bench_start_burst.py [--tasks 16] [--files 3000] [--runs 1]

Not a test; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def one_run(tasks: int, files: int) -> tuple[float, float, float]:
    base = Path(tempfile.mkdtemp(prefix="baton-bench-burst-"))
    try:
        home = base / "home"
        home.mkdir()
        (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
        env = {**os.environ, "HOME": str(home), "BATON_HOME": str(base / "baton-home"),
               "XDG_CONFIG_HOME": str(home / ".config"),
               "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}
        for name in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_MAX_PARALLEL", "BATON_CONFIG"):
            env.pop(name, None)
        repo = base / "repo"
        repo.mkdir()

        def run(*argv: str) -> str:
            done = subprocess.run(list(argv), cwd=repo, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
            return done.stdout

        run("git", "init", "-q", "-b", "main")
        for n in range(files):
            folder = repo / f"d{n // 100}"
            folder.mkdir(exist_ok=True)
            (folder / f"f{n % 100}.txt").write_text(f"line {n}\n" * 40)
        run("git", "add", "-A")
        run("git", "commit", "-q", "-m", "a big repository")
        script = base / "script.json"
        script.write_text(json.dumps({"*": [{"write": "out.txt", "content": "x\n"},
                                            {"report": "done", "summary": "ok"}]}))
        agent = [sys.executable, "-m", "baton_tui.demo.agent", str(script)]
        (repo / "baton.toml").write_text(f"[players.custom.bench]\ncommand = {json.dumps(agent)}"
                                         f"\n\n[limits]\nmax_parallel = {tasks}\n")
        plan = [{"id": i, "title": f"Task {i}", "prompt": "Write out.txt.", "player": "bench"}
                for i in range(1, tasks + 1)]
        (base / "plan.json").write_text(json.dumps({"version": 1, "goal": "burst", "tasks": plan}))
        baton = [sys.executable, "-m", "baton_tui"]
        run(*baton, "plan", "--from", str(base / "plan.json"))
        run(*baton, "trust")
        run(*baton, "run", "--approve")
        events = [json.loads(line) for line in run(*baton, "log", "--json").splitlines()]
        began = next(e["ts"] for e in events if e["kind"] == "conductor.started")
        starts = sorted(e["ts"] - began for e in events if e["kind"] == "task.started")
        return starts[0], starts[len(starts) // 2], starts[-1]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    str(Path(__file__).parents[1] / "baton_tui")], check=True)
    for _ in range(args.runs):
        first, median, last = one_run(args.tasks, args.files)
        print(f"{args.tasks} tasks, {args.files} files: started after the conductor's start: "
              f"first {first:.2f} s, median {median:.2f} s, last {last:.2f} s; "
              f"median ÷ last {median / last:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
