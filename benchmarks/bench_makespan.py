"""Benchmark: a run's makespan against the lower bound of its DAG.

Three DAGs (`--dag`): forty scripted tasks in five levels of eight at `[limits] max_parallel = 8`
(`--dag 40`, the default), two hundred in five levels of forty at `max_parallel = 32`
(`--dag 200`), or sixteen in four levels of four at `max_parallel = 8` (`--dag 16`; with
`--files 1900`, a repository the size of mypy's, every start's checkout is a real one).
Every task past the first level depends on two tasks of the level before; each task's agent
(the demo agent, `baton_tui.demo.agent`) sleeps 2–6 s (fixed seed), writes one file and
reports. The lower bound is max(critical path, total work ÷ max_parallel); the figure
is makespan ÷ lower bound (target ≤ 1.05).

The makespan is measured from `baton run --approve` being typed to its exit (what a person
waits), and also from the conductor's start to the last landing (the scheduler alone). A third
ratio counts each task as long as its agent takes when run by hand — the same program on the
same script, its sleep and its `baton report` (which answers at once outside a task) included
(median of five): the limit of this DAG of these agents, so that figure is Baton's own share.
A fourth splits the scheduling policy from the overhead: Baton's start order simulated with no
overhead at all (`order_alone`). It cannot know the agents' durations, so where the DAG is
wider than its slots it may start a short task before the critical one: on the 200-task DAG
that order alone is 1.037 × the lower bound.
With `--by-hand`, each run is followed by the same DAG run with no Baton (`by_hand`): the same
agents on the same script and the same git steps — a worktree per task, a commit, a landing by
`merge-tree` and `commit-tree` onto an `integration` branch under one lock — by a plain driver
with as many slots, starting ready tasks in Baton's order, in a fresh repository made alike.
Baton ÷ by hand (makespans from the command typed and from the driver's start to its last
landing; target ≤ 1.1 on the mypy-sized `--dag 16 --files 1900`) is Baton's cost on this
machine under this run's load: runs alternate, Baton then by hand, so others' load hits both.
The plain driver's own makespan against the lower bound and against Baton's start order alone
is printed too: how near those targets a run with no conductor at all comes.
Baton's modules are compiled first, as an installed Baton's are (a `PYTHONDONTWRITEBYTECODE`
checkout would otherwise compile them in every process, the agents' `baton report` too).
Everything is real: git worktrees and landings, the detached conductor, one shim and one agent
process per task. Run: ``python benchmarks/bench_makespan.py [--dag 40|200] [--seed S]
[--scale X] [--runs N] [--files N] [--by-hand] [--scope --count-git] [--hogs N]`` (``--scale
0.5`` halves every duration, for a quick look; with ``--runs`` the ratios' median is printed
too; ``--hogs 2`` runs two busy CPU loops beside every run, each in a session of its own: where
Linux groups tasks by session for its scheduler (`sched_autogroup`), hogs started in the
benchmark's own shell would share a group with Baton's command and the by-hand driver, and the
ratios would say more about that than about Baton). Also printed: how soon the first
task started, from the command being typed and from the conductor's start. Not a test: it asserts
only that every task landed.
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

DAGS = {16: (4, 4, 8), 40: (5, 8, 8), 200: (5, 40, 32)}  # tasks: (levels, width, max_parallel)
LEVELS, WIDTH, PARALLEL = DAGS[40]


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


def order_alone(durations: dict[int, float], deps: dict[int, list[int]]) -> float:
    """The makespan of Baton's own start order with no overhead at all: the DAG simulated
    with `max_parallel` slots, each freed slot given to the best-ranked ready task
    (`run.ready.start_ranks`). That order cannot know how long an agent will take, so on a
    DAG wider than its slots it may start a short task before the one on the critical path;
    what it loses so is the scheduling policy's share of the ratio, not its overhead's."""
    import heapq

    from baton_tui.core.dag import children
    from baton_tui.run.ready import start_ranks

    below = children(deps)
    rank = start_ranks(deps, below)
    unmet = {t: len(deps[t]) for t in durations}
    ready = [(rank[t], t) for t in durations if not deps[t]]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []
    now = 0.0
    while ready or running:
        while ready and len(running) < PARALLEL:
            tid = heapq.heappop(ready)[1]
            heapq.heappush(running, (now + durations[tid], tid))
        now, tid = heapq.heappop(running)
        for dependent in below[tid]:
            unmet[dependent] -= 1
            if not unmet[dependent]:
                heapq.heappush(ready, (rank[dependent], dependent))
    return now


def traced_git_counts(trace: Path) -> tuple[dict[str, int], int]:
    """Git processes by subcommand, from git's event trace (`GIT_TRACE2_EVENT`): every one
    started, those git starts itself included (a `worktree add`'s branch and checkout); and
    how many of them Baton started (a child of git's names its parent in its `sid`)."""
    counts: dict[str, int] = {}
    by_baton = 0
    for line in trace.read_text().splitlines() if trace.exists() else []:
        event = json.loads(line)
        if event.get("event") == "start":
            words = event["argv"][1:]
            while len(words) > 2 and words[0] in ("-c", "-C"):
                words = words[2:]
            name = words[0] if words else "?"
            counts[name] = counts.get(name, 0) + 1
            by_baton += "/" not in event["sid"]
    return counts, by_baton


def with_baton_shim(folder: Path, env: dict[str, str]) -> dict[str, str]:
    """`env` with a folder holding `baton` as agents find it (first on PATH, the same script)
    made under `folder`: an agent's `baton report` outside a task answers at once."""
    from baton_tui.layout import shim_script

    shim = folder / "bin"
    shim.mkdir()
    (shim / "baton").write_text(shim_script())
    (shim / "baton").chmod(0o755)
    return {**env, "PATH": f"{shim}{os.pathsep}{env.get('PATH', '')}"}


def agent_by_hand(base: Path, env: dict[str, str]) -> float:
    """What one task's agent costs beyond its sleep, run by hand: start, write, report."""
    folder = base / "by-hand"
    folder.mkdir()
    script = folder / "script.json"
    script.write_text(json.dumps({"*": [{"sleep": 0}, {"write": "out.txt", "content": "x\n"},
                                        {"report": "done", "summary": "by hand"}]}))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script)]
    by_hand = with_baton_shim(folder, env)
    times = []
    for _ in range(5):
        began = time.monotonic()
        subprocess.run(argv, cwd=folder, env=by_hand, stdin=subprocess.DEVNULL,
                       capture_output=True)
        times.append(time.monotonic() - began)
    return sorted(times)[len(times) // 2]


def make_repo(base: Path, files: int) -> tuple[Path, dict[str, str]]:
    """A repository of `files` files besides its README at `base`/repo, its initial commit
    made, and an environment of its own (HOME, BATON_HOME, git's config) under `base`: Baton's
    run and the by-hand one each get one, made alike."""
    home = base / "home"
    home.mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
    env = {**os.environ, "HOME": str(home), "BATON_HOME": str(base / "baton-home"),
           "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1"}
    for name in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_MAX_PARALLEL", "BATON_CONFIG"):
        env.pop(name, None)
    repo = base / "repo"
    repo.mkdir()
    git(repo, env, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# bench\n")
    for n in range(files):
        folder = repo / f"d{n // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{n % 100}.py").write_text(f"line = {n}\n" * 40)
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-q", "-m", "initial")
    return repo, env


def git(cwd: Path, env: dict[str, str], *args: str) -> str:
    """One git command's output, stripped; a RuntimeError if it fails."""
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done.stdout.strip()


def by_hand(base: Path, files: int, agent: list[str], durations: dict[int, float],
            deps: dict[int, list[int]]) -> tuple[float, float | None]:
    """The same DAG run with no Baton, in a fresh repository made alike: what a plain driver
    spends on the same agents and the same git steps, so that Baton ÷ this is Baton's own
    cost on this machine under this run's load. At most `max_parallel` tasks at once, ready
    ones started in Baton's order (`run.ready.start_ranks`), each once all its dependencies
    have landed: a full checkout at the integration branch, the agent (its task's script
    entry picked by BATON_TASK; its `baton report` answers at once outside a task, as in
    `agent_by_hand`), a commit, then the landing under one lock — a merge of trees, a merge
    commit, a compare-and-swap of the branch. The checkout is Baton's two steps: git's record
    of the worktree made under a lock of its own (`worktree add --no-checkout`), its files
    beside the others' (`reset --hard`). Two `worktree add` at once fail now and then (one
    reads the other's half-made `.git/worktrees/X`: "failed to read …/commondir"), and one
    lock around whole checkouts would queue them. One thread per task, which waits on its
    processes. Returns the makespan, from the driver's start to the last landing, once all
    tasks' files are on the integration tree, and the CPU-s the machine was busy meanwhile
    (`busy_cpu`: others' load shows there).

    Its processes sit as Baton's do, since Linux shares the CPU by session where it groups
    tasks automatically (`sched_autogroup`): the driver and its git in a session of their
    own, as the detached conductor and its git are (see `hand_driver`), and each agent in one
    of its own, as each attempt's shim and agent are. Run in the benchmark's own session, the
    by-hand side shared one group with whatever else ran there (two CPU hogs) while Baton's
    processes each had theirs."""
    import heapq
    import queue
    import threading

    from baton_tui.core.dag import children
    from baton_tui.run.ready import start_ranks

    repo, env = make_repo(base, files)
    git(repo, env, "branch", "integration")
    agent_env = with_baton_shim(base, env)
    tip = [git(repo, env, "rev-parse", "refs/heads/integration")]  # only the lock's holder
    lock, adding, finished = threading.Lock(), threading.Lock(), queue.SimpleQueue()

    def one_task(tid: int) -> None:
        try:
            branch, path = f"task-{tid}", base / "worktrees" / f"t{tid}"
            with adding:
                git(repo, env, "worktree", "add", "-q", "--no-checkout", "-b", branch,
                    str(path), "integration")
            git(path, env, "reset", "--hard", "-q")
            done = subprocess.run(agent, cwd=path, env={**agent_env, "BATON_TASK": str(tid)},
                                  input=f"Task {tid}.", text=True, capture_output=True,
                                  start_new_session=True)
            if done.returncode != 0:
                raise RuntimeError(f"task {tid}'s agent exited {done.returncode}: {done.stderr}")
            git(path, env, "add", "-A")
            git(path, env, "commit", "-q", "--no-verify", "-m", f"Task {tid}")
            with lock:
                tree = git(repo, env, "merge-tree", "--write-tree", "refs/heads/integration",
                           f"refs/heads/{branch}").splitlines()[0]
                new = git(repo, env, "commit-tree", tree, "-p", tip[0], "-p",
                          f"refs/heads/{branch}", "-m", f"Land task {tid}")
                git(repo, env, "update-ref", "refs/heads/integration", new, tip[0])
                tip[0] = new
                finished.put((tid, time.monotonic(), None))
        except Exception as exc:  # the driver ends the benchmark with it
            finished.put((tid, time.monotonic(), exc))

    below = children(deps)
    rank = start_ranks(deps, below)
    unmet = {t: len(deps[t]) for t in durations}
    ready = [(rank[t], t) for t in durations if not deps[t]]
    heapq.heapify(ready)
    landed: dict[int, float] = {}
    busy_before, running, began = busy_cpu(), 0, time.monotonic()
    while ready or running:
        while ready and running < PARALLEL:
            tid = heapq.heappop(ready)[1]
            threading.Thread(target=one_task, args=(tid,), daemon=True).start()
            running += 1
        tid, at, error = finished.get()
        if error is not None:
            sys.exit(f"by hand: task {tid}: {error}")
        running -= 1
        landed[tid] = at
        for dependent in below[tid]:
            unmet[dependent] -= 1
            if not unmet[dependent]:
                heapq.heappush(ready, (rank[dependent], dependent))
    busy_after = busy_cpu()
    assert len(landed) == len(durations), f"by hand: {len(landed)} of {len(durations)} landed"
    on_tree = set(git(repo, env, "ls-tree", "-r", "--name-only", "refs/heads/integration",
                      "out/").splitlines())
    missing = [t for t in durations if f"out/t{t}.txt" not in on_tree]
    assert not missing, f"by hand: tasks {missing} landed but their files are not on the tree"
    busy = busy_after - busy_before if busy_before is not None and busy_after is not None else None
    return max(landed.values()) - began, busy


def hand_driver(args: argparse.Namespace, base: Path, script: Path) -> tuple[float, float | None]:
    """`by_hand` in a child process of its own session, as the detached conductor is; its
    makespan and the machine's busy CPU-s, as it printed them."""
    argv = [sys.executable, __file__, "--hand-driver", str(base), str(script), "--dag",
            str(args.dag), "--seed", str(args.seed), "--scale", str(args.scale), "--files",
            str(args.files)]
    done = subprocess.run(argv, capture_output=True, text=True, start_new_session=True)
    if done.returncode != 0:
        sys.exit(f"by hand exited {done.returncode}:\n{done.stdout}{done.stderr}")
    hand, busy = json.loads(done.stdout.splitlines()[-1])
    return hand, busy


def busy_cpu() -> float | None:
    """CPU seconds the whole machine has spent busy so far (Linux's /proc/stat), or None."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def follow_conductor(repo: Path, run: subprocess.Popen) -> float:
    """The conductor's CPU time (user + system), sampled until it exits."""
    import sqlite3

    import psutil

    db_path, cpu, proc = repo / ".git" / "baton" / "baton.db", 0.0, None
    while run.poll() is None:
        if proc is None and db_path.exists():
            try:
                with sqlite3.connect(db_path, timeout=5) as db:
                    row = db.execute("SELECT pid FROM conductor WHERE id = 1").fetchone()
                proc = psutil.Process(row[0]) if row else None
            except (sqlite3.Error, psutil.Error):
                proc = None
        if proc is not None:
            try:
                times = proc.cpu_times()
                cpu = times.user + times.system
            except psutil.Error:
                pass
        time.sleep(0.02)
    return cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary repository")
    parser.add_argument("--dag", type=int, choices=sorted(DAGS), default=40)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--files", type=int, default=0, help="files in the repository besides "
                        "its README (100 to a folder)")
    parser.add_argument("--by-hand", action="store_true", help="after each Baton run, the "
                        "same DAG by a plain driver with no Baton, for Baton / by hand")
    parser.add_argument("--scope", action="store_true", help="each task scoped to the file "
                        "it writes (the scope check runs)")
    parser.add_argument("--count-git", action="store_true", help="count the git processes "
                        "of Baton's run (git's own event trace: its children too)")
    parser.add_argument("--hogs", type=int, default=0, help="busy CPU loops beside every run, "
                        "each in a session of its own")
    parser.add_argument("--hand-driver", nargs=2, metavar=("BASE", "SCRIPT"),
                        help=argparse.SUPPRESS)  # `hand_driver`'s child
    args = parser.parse_args()
    global LEVELS, WIDTH, PARALLEL
    LEVELS, WIDTH, PARALLEL = DAGS[args.dag]
    if args.hand_driver:
        durations, deps = make_dag(args.seed, args.scale)
        base, script = args.hand_driver
        agent = [sys.executable, "-m", "baton_tui.demo.agent", script]
        print(json.dumps(by_hand(Path(base), args.files, agent, durations, deps)))
        return 0
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(__file__).parents[1]
                                                                  / "baton_tui")], check=True)
    from cpu_hogs import running, said  # (beside this script)

    with running(args.hogs):
        runs = [one_run(args) for _ in range(args.runs)]
    if args.hogs > 0:
        print(said(args.hogs, "every run"))
    ratios = [ratio for ratio, _, _ in runs]
    for _, base, _ in runs:  # only now: see `one_run`
        if args.keep:
            print(f"kept at {base}")
        else:
            subprocess.run(["rm", "-rf", str(base)])
    if args.runs > 1:
        print_over_runs("ratios (command)", ratios)
    if args.runs > 1 and args.by_hand:
        print_over_runs("Baton / by hand", [against for _, _, against in runs])
    return 0


def print_over_runs(what: str, values: list[float]) -> None:
    values = sorted(values)
    print(f"{what} over {len(values)} runs: " + ", ".join(f"{v:.3f}" for v in values)
          + f"; median {values[len(values) // 2]:.3f}")


def one_run(args: argparse.Namespace) -> tuple[float, Path, float | None]:
    """One run: its ratio (command), its folder, which the caller removes after the last
    run, and with `--by-hand` its makespan (command) ÷ the by-hand one's. A removal between
    runs would slow the next one's checkouts, Baton's alone: ext4 passes over inodes freed in
    the last minutes when it makes new files, and a removed run frees tens of thousands
    (measured: 1,900 new files cost 1.0–1.4 s of kernel time for minutes after one, 0.1 s
    otherwise). Folders come from `tempfile` (`TMPDIR`)."""
    durations, deps = make_dag(args.seed, args.scale)
    critical, work = lower_bound(durations, deps)
    bound = max(critical, work)
    alone = order_alone(durations, deps)

    base = Path(tempfile.mkdtemp(prefix="baton-bench-makespan-"))
    repo, env = make_repo(base, args.files)
    git_trace = None
    if args.count_git:  # from here on, every git process (git's own children too) is traced
        git_trace = base / "git-trace2.json"
        env["GIT_TRACE2_EVENT"] = str(git_trace)

    def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(list(argv), cwd=repo, env=env, capture_output=True, text=True)
        if check and done.returncode != 0:
            sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
        return done

    baton = [sys.executable, "-m", "baton_tui"]
    script = {str(t): [{"sleep": d}, {"write": f"out/t{t}.txt", "content": f"{t}\n"},
                       {"report": "done", "summary": f"task {t}"}] for t, d in durations.items()}
    (base / "script.json").write_text(json.dumps(script))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(base / "script.json")]
    (repo / "baton.toml").write_text(f"[players.custom.bench]\ncommand = {json.dumps(argv)}\n\n"
                                     f"[limits]\nmax_parallel = {PARALLEL}\n")
    tasks = [{"id": t, "title": f"Task {t}", "prompt": f"Task {t}.", "player": "bench",
              "depends_on": deps[t], **({"scope": [f"out/t{t}.txt"]} if args.scope else {})}
             for t in durations]
    (base / "plan.json").write_text(json.dumps({"version": 1, "goal": "makespan benchmark",
                                                "tasks": tasks}))
    run(*baton, "plan", "--from", str(base / "plan.json"))
    run(*baton, "trust")
    fixed = agent_by_hand(base, env)
    own_critical, own_work = lower_bound({t: d + fixed for t, d in durations.items()}, deps)
    own_bound = max(own_critical, own_work)

    busy_before = busy_cpu()
    started, typed_at = time.monotonic(), time.time()
    with open(base / "run.out", "w+") as out:  # a file, not a pipe nobody reads meanwhile
        proc = subprocess.Popen([*baton, "run", "--approve"], cwd=repo, env=env, text=True,
                                stdout=out, stderr=subprocess.STDOUT)
        conductor_cpu = follow_conductor(repo, proc)  # the scheduler's own CPU, while it runs
        makespan, exited_at = time.monotonic() - started, time.time()
        busy_after = busy_cpu()
        if proc.returncode != 0:
            out.seek(0)
            print(out.read()[-3000:])
            sys.exit(f"the run exited {proc.returncode}")

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
          f"seed {args.seed}, scale {args.scale}, files {args.files + 1}")
    first_start = min(started_at.values())
    print(f"first task started  {first_start - typed_at:7.2f} s after the command was typed, "
          f"{first_start - conductor_at:.2f} s after the conductor started")
    print(f"critical path       {critical:7.2f} s")
    print(f"total work / {PARALLEL}      {work:7.2f} s")
    print(f"lower bound         {bound:7.2f} s")
    print(f"makespan (command)  {makespan:7.2f} s")
    print(f"makespan (conductor start -> last landing) {scheduler_span:7.2f} s")
    print(f"  the command's own: typed -> conductor started {conductor_at - typed_at:.2f} s, "
          f"last landing -> exit {exited_at - max(landed):.2f} s")
    print(f"per task: started -> landed beyond its sleep: median {per_task[len(per_task) // 2]:.2f}"
          f" s, max {per_task[-1]:.2f} s")
    print(f"dependency latency (last dep landed -> started): median "
          f"{waits[len(waits) // 2]:.2f} s, max {waits[-1]:.2f} s")
    print(f"conductor CPU (its own process) {conductor_cpu:7.2f} s, "
          f"{conductor_cpu / len(durations) * 1000:.0f} ms per task")
    if busy_before is not None and busy_after is not None:
        cores = os.cpu_count() or 1
        print(f"machine busy during the run {busy_after - busy_before:7.2f} CPU-s of "
              f"{makespan * cores:.2f} ({cores} cores), {fixed * len(durations):.2f} of it at "
              f"most the agents by hand")
    print(f"ratio (command):    {makespan / bound:.3f}   (target <= 1.05)")
    print(f"ratio (conductor):  {scheduler_span / bound:.3f}")
    print(f"Baton's start order alone, no overhead (simulated): {alone:.2f} s = "
          f"{alone / bound:.3f} x the lower bound; makespan (command) against it: "
          f"{makespan / alone:.3f}")
    print(f"the agent by hand beyond its sleep {fixed * 1000:.0f} ms; lower bound with it "
          f"{own_bound:.2f} s; ratio (command) against it: {makespan / own_bound:.3f}",
          flush=True)
    if git_trace is not None:
        counts, by_baton = traced_git_counts(git_trace)
        print(f"git processes per task: {sum(counts.values()) / len(durations):.2f} (the "
              f"run's fixed few included{', scope set' if args.scope else ''}; target <= 9), "
              f"{by_baton / len(durations):.2f} of them started by Baton, the rest by git")
        print("  by command: " + ", ".join(f"{k} {v}" for k, v in
                                           sorted(counts.items(), key=lambda kv: -kv[1])))
    if not args.by_hand:
        return makespan / bound, base, None
    hand, hand_busy = hand_driver(args, base / "plain", base / "script.json")
    print(f"by hand (the same DAG, agents and git steps, no Baton): makespan {hand:7.2f} s; "
          f"Baton / by hand {makespan / hand:.3f}   (target <= 1.1)")
    # The plain driver's own ratios: how near the targets against the lower bound and against
    # Baton's start order alone a run with no conductor at all comes, on this machine, now.
    print(f"  by hand against the lower bound {hand / bound:.3f}, against Baton's start order "
          f"alone {hand / alone:.3f}")
    if hand_busy is not None:
        print(f"  machine busy during the by-hand run {hand_busy:7.2f} CPU-s of "
              f"{hand * (os.cpu_count() or 1):.2f}", flush=True)
    return makespan / bound, base, makespan / hand


if __name__ == "__main__":
    sys.exit(main())
