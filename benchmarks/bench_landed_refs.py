"""What holding the landed and waiting tasks' branches costs after each attempt, at thousands
of tasks.

A script, not a timed test. It builds a throwaway git repository and store with a plan of N
tasks (default 2,400), every one landed (a branch each, `task.landed` recording its tip) but
the last `--waiting` ones, which failed and wait (`task.failed` recording its tip and its
worktree's HEAD log size; each has a worktree's `.git` file and git's folder for it, as a
linked worktree has), then times `refguard.hold_branches` — the check run after each attempt
and before each landing pass — the first time in a process (the plan's fold read, every ref
file read) and then as it runs in the usual case (a few new events fed, each ref file a
`stat`; a waiting task's `.git` file read and its HEAD log a `stat` too), beside the two
plain ways of reading the same refs: every file read (`refs.read_ref`), and one
`git for-each-ref`. Each is the best of `--runs`, so a busy machine inflates none.

    python benchmarks/bench_landed_refs.py [--tasks 2400] [--waiting 0] [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2400)
    parser.add_argument("--waiting", type=int, default=0)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-landed-refs-"))
    os.environ["BATON_HOME"] = str(tmp / "home")
    repo = tmp / "repo"
    repo.mkdir()

    def git(*argv: str, input: str | None = None) -> str:
        return subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True,
                              text=True, input=input).stdout.strip()

    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "initial")
    tasks = [{"id": n, "title": f"Task {n}", "prompt": "x", "player": "agent",
              "depends_on": []} for n in range(1, args.tasks + 1)]
    (tmp / "plan.json").write_text(json.dumps({"version": 1, "goal": "Bench", "tasks": tasks}))
    (repo / "baton.toml").write_text('[players.custom.agent]\ncommand = ["true"]\n')
    for step in (["plan", "--from", str(tmp / "plan.json")], ["trust"], ["approve"]):
        subprocess.run([sys.executable, "-m", "baton_tui", *step], cwd=repo, check=True,
                       capture_output=True)

    sys.path.insert(0, str(ROOT))
    from baton_tui.core.events import EventKind
    from baton_tui.core.slug import task_branch
    from baton_tui.gitops import refs
    from baton_tui.run import refguard
    from baton_tui.workspace import Workspace

    ws = Workspace(repo)
    plan = ws.store.current_plan()
    base = plan.base_commit
    branches = [task_branch(plan.slug, t["id"], t["title"]) for t in tasks]
    git("update-ref", "--stdin", input="".join(f"create refs/heads/{b} {base}\n"
                                               for b in branches))
    common = repo / ".git"
    for t, branch in zip(tasks, branches):
        waits = t["id"] > args.tasks - args.waiting
        workdir = tmp / "worktrees" / str(t["id"])
        if waits:  # a linked worktree's `.git` file, and git's folder for it with a HEAD log
            admin = common / "worktrees" / str(t["id"])
            (admin / "logs").mkdir(parents=True)
            (admin / "logs" / "HEAD").write_text(f"{'0' * 40} {base} Baton <b@x> 0 +0000\tmade\n")
            workdir.mkdir(parents=True)
            (workdir / ".git").write_text(f"gitdir: {admin}\n")
        ws.store.append(plan.id, t["id"], EventKind.TASK_STARTED,
                        {"player": "agent", "branch": branch, "base": base,
                         "workdir": str(workdir)})
        if waits:
            ws.store.append(plan.id, t["id"], EventKind.TASK_FAILED,
                            refguard.waiting_tip(ws, branch, str(workdir)))
        else:
            ws.store.append(plan.id, t["id"], EventKind.TASK_LANDED,
                            {"commit": base, "tip": base, "at": time.time()})
    names = [f"refs/heads/{b}" for b in branches]
    time.sleep(refs.RACY_NS / 1e9 + 0.5)  # the ref files' stamps become trustworthy

    start = time.perf_counter()
    assert refguard.hold_branches(ws, plan) == []
    first = (time.perf_counter() - start) * 1000

    def usual() -> None:  # an attempt's few events, then the check
        ws.store.append(plan.id, 1, EventKind.TASK_PROGRESS, {"message": "tick"})
        assert refguard.hold_branches(ws, plan) == []

    print(f"{args.tasks} tasks, {args.tasks - args.waiting} landed and {args.waiting} waiting "
          f"(best of {args.runs}):")
    print(f"  hold_branches, first in a process: {first:8.1f} ms")
    print(f"  hold_branches, usual (stat each):  {best(usual, args.runs):8.1f} ms")
    print(f"  every ref file read (read_ref):    "
          f"{best(lambda: [refs.read_ref(repo, n) for n in names], args.runs):8.1f} ms")
    print(f"  one git for-each-ref:              "
          f"{best(lambda: git('for-each-ref', f'refs/heads/baton/{plan.slug}/'), args.runs):8.1f} ms")


if __name__ == "__main__":
    main()
