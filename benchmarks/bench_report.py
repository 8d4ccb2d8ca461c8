"""A report's round trip: `baton report progress` through the attempt's channel ÷ the direct
write it replaced (target: p95 ≤ 2).

A script, not a timed test. It makes a throwaway store holding one running attempt, serves that
attempt's channel (`channel/relay.py`) in a process of its own as the attempt's shim would, and
times `python -m baton_tui report progress …` both ways, alternately (so a busy machine slows
both alike): through the channel (`BATON_SOCKET` set) and straight to the store (unset, as
before channels). It prints the median and p95 of each and their ratios.

    python benchmarks/bench_report.py [--runs 60]
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

SERVE = """
import signal, sys
from baton_tui.channel.relay import Relay
Relay(sys.argv[1], int(sys.argv[2]), sys.argv[3])
print("ready", flush=True)
signal.pause()
"""


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    from baton_tui.store.db import Store

    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        root = Path(tmp)
        state = root / "baton.db"
        store = Store(state)
        plan = store.insert_plan("bench", {"version": 1, "goal": "g", "tasks": []})
        folder = root / "attempt-1"
        folder.mkdir()
        nonce = "bnc_" + "0" * 32
        attempt = store.new_attempt(plan, 1, nonce, "custom", {}, str(folder / "output.log"))
        store.update_attempt(attempt, started=time.time())
        store.close()
        server = subprocess.Popen([sys.executable, "-c", SERVE, str(folder), str(attempt),
                                   str(state)], stdout=subprocess.PIPE, text=True)
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        base = {**os.environ, "BATON_STATE": str(state), "BATON_ATTEMPT": str(attempt),
                "BATON_NONCE": nonce, "BATON_TASK": "1"}
        ways = {"direct": {k: v for k, v in base.items() if k != "BATON_SOCKET"},
                "channel": {**base, "BATON_SOCKET": str(folder / "report.sock")}}
        times: dict[str, list[float]] = {name: [] for name in ways}
        try:
            for n in range(args.runs + 3):
                for name, env in ways.items():
                    began = time.perf_counter()
                    done = subprocess.run([sys.executable, "-m", "baton_tui", "report",
                                           "progress", f"step {n}"], env=env,
                                          capture_output=True, text=True)
                    took = time.perf_counter() - began
                    assert done.returncode == 0, done.stderr
                    if n >= 3:  # warm-up runs are not counted
                        times[name].append(took)
        finally:
            server.terminate()
            server.wait()
    found = {name: {"median_ms": statistics.median(v) * 1000, "p95_ms": p95(v) * 1000}
             for name, v in times.items()}
    found["ratio"] = {"median": found["channel"]["median_ms"] / found["direct"]["median_ms"],
                      "p95": found["channel"]["p95_ms"] / found["direct"]["p95_ms"]}
    print(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
