"""A hundred agents reporting progress at once, beside the conductor's starts: how much the
reports' channel slows a start (target: ≤ 10 %).

A script, not a timed test. It makes a throwaway store holding 100 running attempts and serves
each attempt's channel (`channel/relay.py`) as its shim would — ten processes serving ten
channels each (a hundred shim processes would measure the machine's memory, not the
channel). One process plays the hundred agents: every `--every` seconds all of them send a
progress report at the same instant over their own channel, which writes the store. Meanwhile
this process does what the conductor does when it starts an attempt — a worktree of a
repository of `--files` files, then the attempt's records in the store (the attempt, its spec,
its log path, its shim's pid, the `task.started` event) — and times each start.

Phases alternate — starts alone, during bursts over the channels, during bursts of the direct
store writes the channel replaced (each agent opening the store itself) — so a busy machine
slows them alike; printed are the median and p95 of each, their ratios to the starts alone and
how many reports went through.

    python benchmarks/bench_report_burst.py [--agents 100] [--starts 40] [--rounds 6] [--files 300]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SERVE = """
import signal, sys
from baton_tui.channel.relay import Relay
state = sys.argv[1]
for pair in sys.argv[2:]:
    folder, attempt = pair.rsplit(":", 1)
    Relay(folder, int(attempt), state)
print("ready", flush=True)
signal.pause()
"""
NONCE = "bnc_" + "0" * 32
IDLE, CHANNEL, DIRECT = 0, 1, 2
PHASES = {"alone": IDLE, "channel": CHANNEL, "direct": DIRECT}


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]


def agents(envs: list[dict[str, str]], every: float, way: Any, stop: Any, sent: Any) -> None:
    """While `way` is CHANNEL or DIRECT: every `every` seconds, all agents report progress at
    once — over their channels, or writing the store themselves as before channels."""
    from baton_tui.channel import relay
    from baton_tui.channel import report as channel

    barrier = threading.Barrier(len(envs))
    step = [0]

    def one(env: dict[str, str]) -> None:
        while not stop.is_set():
            if way.value == IDLE:
                time.sleep(0.1)
                continue
            try:
                barrier.wait(timeout=5)
            except threading.BrokenBarrierError:
                barrier.reset()
                continue
            if way.value == CHANNEL:
                answer = relay.ask(env, {"op": "report", "status": "progress",
                                         "message": f"step {step[0]}"})
                ok = bool(answer and answer.get("ok"))
            else:  # the direct write the channel replaced (`baton report` without a socket)
                caller = channel.caller_from_env(env)
                channel.report(caller, "progress", f"step {step[0]}")
                caller.store.close()
                ok = True
            if ok:
                with sent.get_lock():
                    sent.value += 1
            time.sleep(every)

    threads = [threading.Thread(target=one, args=(env,), daemon=True) for env in envs]
    for thread in threads:
        thread.start()
    stop.wait()


def start_once(store, plan: int, task: int, folder: Path, repo: Path | None) -> float:
    """One attempt's start as the conductor makes it (`runners/launcher.start_attempt`):
    its worktree (in `repo`; None: the store's part alone), then its records; timed."""
    from baton_tui.core.events import EventKind

    began = time.perf_counter()
    if repo is not None:
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "-b", f"t{task}",
                        str(folder / f"wt{task}")], check=True, capture_output=True)
    attempt = store.new_attempt(plan, task, NONCE, "custom", {}, "")
    store.update_attempt(attempt, spec={"argv": ["agent"], "cwd": str(folder), "env_names": []},
                         log_path=str(folder / f"output-{attempt}.log"))
    store.update_attempt(attempt, shim_pid=os.getpid())
    store.append(plan, task, EventKind.TASK_STARTED, {"attempt": attempt})
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--starts", type=int, default=40, help="starts timed per phase")
    parser.add_argument("--rounds", type=int, default=6, help="phases of each kind")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between bursts")
    parser.add_argument("--files", type=int, default=300,
                        help="files in the repository each start checks out (0: time the "
                             "store's part of a start alone)")
    args = parser.parse_args()
    from baton_tui.store.db import Store

    with tempfile.TemporaryDirectory(prefix="bench-burst-") as tmp:
        root = Path(tmp)
        state = root / "baton.db"
        store = Store(state)
        plan = store.insert_plan("bench", {"version": 1, "goal": "g", "tasks": []})
        repo = root / "repo" if args.files else None
        if repo is not None:
            (repo / "src").mkdir(parents=True)
            for n in range(args.files):
                (repo / "src" / f"f{n}.py").write_text(f"x = {n}\n" * 20)
            for argv in (["init", "-q", "-b", "main"], ["add", "-A"],
                         ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "i"]):
                subprocess.run(["git", "-C", str(repo), *argv], check=True)
        envs, pairs = [], []
        for task in range(1, args.agents + 1):
            folder = root / f"a{task}"
            folder.mkdir()
            attempt = store.new_attempt(plan, task, NONCE, "custom", {},
                                        str(folder / "output.log"))
            store.update_attempt(attempt, started=time.time(), log_path=str(folder / "output.log"))
            pairs.append(f"{folder}:{attempt}")
            envs.append({"BATON_SOCKET": str(folder / "report.sock"), "BATON_ATTEMPT": str(attempt),
                         "BATON_NONCE": NONCE, "BATON_TASK": str(task), "BATON_STATE": str(state)})
        servers = [subprocess.Popen([sys.executable, "-c", SERVE, str(state), *pairs[i:i + 10]],
                                    stdout=subprocess.PIPE, text=True)
                   for i in range(0, len(pairs), 10)]
        for server in servers:
            assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        way, stop = multiprocessing.Value("i", IDLE), multiprocessing.Event()
        sent = multiprocessing.Value("i", 0)
        reporter = multiprocessing.Process(target=agents, args=(envs, args.every, way, stop, sent))
        reporter.start()
        times: dict[str, list[float]] = {phase: [] for phase in PHASES}
        task = 10_000
        try:
            for _ in range(args.rounds):
                for phase, value in PHASES.items():
                    way.value = value
                    if value != IDLE:
                        time.sleep(min(args.every, 1.0))  # the first burst is under way
                    for _ in range(args.starts):
                        task += 1
                        times[phase].append(start_once(store, plan, task, root, repo))
                        time.sleep(0.05)  # starts are spread out, as a run's are
                    way.value = IDLE
                    time.sleep(args.every * 1.5)  # the last burst has ended
        finally:
            stop.set()
            reporter.join(10)
            for server in servers:
                server.send_signal(signal.SIGTERM)
                server.wait()
            store.close()
    found: dict[str, dict[str, float]] = {
        phase: {"median_ms": statistics.median(v) * 1000, "p95_ms": p95(v) * 1000}
        for phase, v in times.items()}
    for phase in ("channel", "direct"):
        found[f"ratio_{phase}"] = {
            "median": found[phase]["median_ms"] / found["alone"]["median_ms"],
            "p95": found[phase]["p95_ms"] / found["alone"]["p95_ms"]}
    found["reports"] = {"recorded": sent.value, "load_1min_at_end": os.getloadavg()[0]}
    print(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
