"""Benchmark: what Baton adds per task, against doing the same steps by hand.

Baton runs a chain of N tasks (each depends on the one before, so they run one after another);
each task's agent is the demo agent (`baton_tui.demo.agent`) writing one file and reporting
done. Per task, Baton makes a worktree and branch, starts the attempt shim, which starts the
agent, receives the report, commits and lands on the integration branch. Its per-task time is
(last landing − conductor start) ÷ N.

The baseline does the same git steps in a shell-free Python loop — `git worktree add -b`,
starting the same agent program directly on the same script (its `baton report` step too, which
answers at once outside a task), `git add -A`, `git commit --no-verify`, `git merge-tree
--write-tree`, `git commit-tree`, `git update-ref` with the old value — and its per-task time is
its total ÷ N. The figure is Baton ÷ baseline (target ≤ 1.3). Both also count the git
processes they start (Baton's through a `git` shim first on its PATH; the baseline's by its own
loop), per task. Run: ``python benchmarks/bench_task_overhead.py [--tasks N] [--runs R]``. Not a test;
nothing is asserted.

``--scope`` gives each task a scope (the file it writes), so the scope check is counted too;
``--independent`` makes the tasks independent and runs them one at a time
(`BATON_MAX_PARALLEL=1`): each start then may take over the worktree of the task that landed
before it instead of checking out a new one; ``--files N`` puts N files in the repository (a
checkout's cost grows with them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


FILES = 30  # files in the benchmark repository (`--files`)
SCOPE = False  # each task scoped to the file it writes (`--scope`)
INDEPENDENT = False  # independent tasks, one at a time (`--independent`)


def setup(base: Path, name: str) -> tuple[Path, dict[str, str]]:
    home = base / f"home-{name}"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
    env = {**os.environ, "HOME": str(home), "BATON_HOME": str(base / f"baton-home-{name}"),
           "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1"}
    for var in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_MAX_PARALLEL", "BATON_CONFIG",
                "BATON_TASK", "BATON_ATTEMPT", "BATON_NONCE", "BATON_STATE"):
        env.pop(var, None)
    repo = base / f"repo-{name}"
    repo.mkdir()
    for i in range(FILES):
        folder = repo / f"dir{i // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"file{i}.txt").write_text(f"line {i}\n" * 40)
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", "initial"]):
        subprocess.run(argv, cwd=repo, env=env, check=True, capture_output=True)
    return repo, env


def write_script(base: Path, n: int) -> Path:
    script = {str(t): [{"write": f"out/t{t}.txt", "content": f"task {t}\n"},
                       {"report": "done", "summary": f"task {t}"}] for t in range(1, n + 1)}
    path = base / "script.json"
    path.write_text(json.dumps(script))
    return path


def git_shim(base: Path) -> tuple[Path, Path]:
    """A folder holding a `git` that logs its arguments, then runs the real git."""
    folder = base / "git-shim"
    folder.mkdir()
    log = base / "git-commands.log"
    (folder / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\n'
                                f'exec "{shutil.which("git")}" "$@"\n')
    (folder / "git").chmod(0o755)
    return folder, log


def git_counts(log: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        words = line.split(" ")
        while len(words) > 2 and words[0] in ("-c", "-C"):
            words = words[2:]
        counts[words[0]] = counts.get(words[0], 0) + 1
    return counts


def run_baton(base: Path, n: int, script: Path) -> tuple[float, dict[str, float], dict[str, int]]:
    repo, env = setup(base, "baton")
    baton = [sys.executable, "-m", "baton_tui"]

    def run(*argv: str) -> subprocess.CompletedProcess:
        done = subprocess.run(list(argv), cwd=repo, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
        return done

    agent = [sys.executable, "-m", "baton_tui.demo.agent", str(script)]
    (repo / "baton.toml").write_text(f"[players.custom.bench]\ncommand = {json.dumps(agent)}\n")
    tasks = [{"id": t, "title": f"Task {t}", "prompt": f"Task {t}.", "player": "bench",
              "depends_on": [t - 1] if t > 1 and not INDEPENDENT else [],
              **({"scope": [f"out/t{t}.txt"]} if SCOPE else {})} for t in range(1, n + 1)]
    (base / "plan.json").write_text(json.dumps({"version": 1, "goal": "overhead benchmark",
                                                "tasks": tasks}))
    run(*baton, "plan", "--from", str(base / "plan.json"))
    run(*baton, "trust")
    run(*baton, "approve")
    shim, git_log = git_shim(base)
    env = {**env, "PATH": f"{shim}{os.pathsep}{env.get('PATH', '')}",
           **({"BATON_MAX_PARALLEL": "1"} if INDEPENDENT else {})}
    run(*baton, "run")
    counts = git_counts(git_log)
    events = [json.loads(line) for line in run(*baton, "log", "--json").stdout.splitlines()]
    t0 = next(e["ts"] for e in events if e["kind"] == "conductor.started")
    by = {}
    for e in events:
        if e.get("task"):
            by.setdefault((e["task"], e["kind"]), e["ts"])
    landed = [by[(t, "task.landed")] for t in range(1, n + 1)]
    # Phases, averaged over tasks: previous landing -> started (worktree + shim spawn),
    # started -> reported (shim + agent + report), reported -> landed (notice, commit, landing).
    prev = [t0] + landed[:-1]
    phases = {
        "landed->started (worktree, attempt start)": statistics.mean(
            by[(t, "task.started")] - prev[t - 1] for t in range(1, n + 1)),
        "started->reported (shim, agent, report)": statistics.mean(
            by[(t, "task.reported")] - by[(t, "task.started")] for t in range(1, n + 1)),
        "reported->landed (notice, commit, landing)": statistics.mean(
            by[(t, "task.landed")] - by[(t, "task.reported")] for t in range(1, n + 1)),
    }
    # Finer, from the attempts the shims recorded: shim up and agent spawned, agent's report,
    # agent's exit seen by the shim.
    import sqlite3

    db = sqlite3.connect(repo / ".git" / "baton" / "baton.db")
    rows = db.execute("SELECT task_id, started, ended, report FROM attempts").fetchall()
    db.close()
    att = {r[0]: (r[1], r[2], json.loads(r[3])["ts"]) for r in rows}
    tasks_ = range(1, n + 1)
    phases.update({
        "  started event -> agent spawned by shim": statistics.mean(
            att[t][0] - by[(t, "task.started")] for t in tasks_),
        "  agent spawned -> report recorded": statistics.mean(att[t][2] - att[t][0]
                                                              for t in tasks_),
        "  report -> shim records agent exit": statistics.mean(att[t][1] - att[t][2]
                                                               for t in tasks_),
        "  shim recorded exit -> task.done": statistics.mean(
            by[(t, "task.done")] - att[t][1] for t in tasks_),
        "  task.done -> task.landed": statistics.mean(
            by[(t, "task.landed")] - by[(t, "task.done")] for t in tasks_),
    })
    return (landed[-1] - t0) / n, phases, counts


def run_baseline(base: Path, n: int, script: Path) -> tuple[float, int, dict[str, float]]:
    repo, env = setup(base, "plain")
    git_env = {**env, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
               "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}

    spawned = [0]

    def git(*args: str, cwd: Path = repo) -> str:
        spawned[0] += 1
        return subprocess.run(["git", *args], cwd=cwd, env=git_env, check=True,
                              capture_output=True, text=True).stdout.strip()

    # The same `baton` the agent finds first on its PATH under Baton (its report answers 2 here).
    shim = base / "baseline-bin"
    shim.mkdir()
    (shim / "baton").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m baton_tui "$@"\n')
    (shim / "baton").chmod(0o755)
    agent_env = {**env, "PATH": f"{shim}{os.pathsep}{env.get('PATH', '')}"}
    integration = "refs/heads/integration"
    git("update-ref", integration, git("rev-parse", "HEAD"))
    worktrees = base / "plain-worktrees"
    prompt = base / "prompt.md"
    prompt.write_text("Write the file, then report.\n")
    started = time.monotonic()
    spawned[0] = 0
    spent = {"worktree": 0.0, "agent": 0.0, "commit and landing": 0.0}
    for t in range(1, n + 1):
        path = worktrees / f"{t}-task"
        branch = f"task/{t}"
        at = time.monotonic()
        onto = git("rev-parse", integration)
        git("worktree", "add", "-q", "-b", branch, str(path), onto)
        spent["worktree"] += time.monotonic() - at
        at = time.monotonic()
        with open(prompt, "rb") as stdin:
            subprocess.run([sys.executable, "-m", "baton_tui.demo.agent", str(script)], cwd=path,
                           env={**agent_env, "BATON_TASK": str(t)}, stdin=stdin,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        spent["agent"] += time.monotonic() - at
        at = time.monotonic()
        git("add", "-A", cwd=path)
        git("commit", "-q", "--no-verify", "-m", f"Task {t}", cwd=path)
        tree = git("merge-tree", "--write-tree", onto, f"refs/heads/{branch}").splitlines()[0]
        commit = git("commit-tree", tree, "-p", onto, "-p", f"refs/heads/{branch}", "-m",
                     f"Land task {t}")
        git("update-ref", integration, commit, onto)
        spent["commit and landing"] += time.monotonic() - at
    return (time.monotonic() - started) / n, spawned[0], {k: v / n for k, v in spent.items()}


def main() -> int:
    global FILES, SCOPE, INDEPENDENT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--scope", action="store_true")
    parser.add_argument("--independent", action="store_true")
    parser.add_argument("--runs", type=int, default=1,
                        help="baseline and Baton, one after the other, this many times; "
                             "the medians are shown")
    args = parser.parse_args()
    FILES, SCOPE, INDEPENDENT = args.files, args.scope, args.independent
    plains, bats, ratios, runs, plain_runs = [], [], [], [], []
    for _ in range(args.runs):
        base = Path(tempfile.mkdtemp(prefix="baton-bench-overhead-"))
        try:
            script = write_script(base, args.tasks)
            plain, plain_git, plain_phases = run_baseline(base, args.tasks, script)
            per_task, phases, counts = run_baton(base, args.tasks, script)
        finally:
            subprocess.run(["rm", "-rf", str(base)])
        plains.append(plain)
        bats.append(per_task)
        ratios.append(per_task / plain)
        runs.append(phases)
        plain_runs.append(plain_phases)
    median = statistics.median
    print(f"{args.tasks} tasks in a chain (one at a time), {args.runs} run(s), medians")
    print(f"baseline per task (git steps + agent run directly): {median(plains):6.3f} s")
    for name in plain_runs[0]:
        print(f"  {name:<45} {median(r[name] for r in plain_runs):6.3f} s")
    print(f"Baton per task (worktree, attempt, report, landing): {median(bats):6.3f} s")
    for name in runs[0]:
        print(f"  {name:<45} {median(r[name] for r in runs):6.3f} s")
    shown = " ".join(f"{r:.2f}" for r in ratios)
    print(f"ratio: {median(ratios):.2f}   (each run: {shown}; target <= 1.3)")
    total = sum(counts.values())
    print(f"git processes per task: Baton {total / args.tasks:.1f} (the run's fixed few "
          f"included), baseline {plain_git / args.tasks:.1f}")
    print("  Baton by command: " + ", ".join(f"{cmd} {k}" for cmd, k in
                                             sorted(counts.items(), key=lambda kv: -kv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
