"""TUI responsiveness under load: p95 key-press-to-paint, and RSS with a 100-task plan.

Eight scripted tasks each stream N lines/s into their attempt log files while writer
threads append state events (`task.progress`, 10/s per task) through their own Store
connections — as attempt shims do. Meanwhile Pilot presses j/k in the plan pane (and,
in the second scenario, switches tabs in a task's detail screen while its log is
followed). Latency is measured from the key press to the first frame the compositor
hands to the driver after the cursor moved (headless, so nothing is written to a
terminal; the frame is still composed). Targets (issue 7): p95 ≤ 50 ms at 200 lines/s;
RSS ≤ 200 MB with 100 tasks.

    .venv/bin/python benchmarks/bench_tui.py [--seconds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BATON_TOML = '[players.custom.demo]\ncommand = ["python3", "agent.py"]\n' \
             'research_command = ["python3", "agent.py", "--read-only"]\n'


def make_repo(base: Path) -> Path:
    home = base / "home"
    home.mkdir()
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                      XDG_DATA_HOME=str(home / ".local/share"), BATON_HOME=str(home / "bh"),
                      GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x",
                      GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@x")
    repo = base / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("bench\n")
    (repo / "baton.toml").write_text(BATON_TOML)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def load_plan(repo: Path, n: int):
    from baton_tui.plan.current import store_new_plan
    from baton_tui.plan.model import parse_document
    from baton_tui.workspace import Workspace

    ws = Workspace(repo)
    tasks = [{"id": i, "title": f"Task number {i}", "prompt": f"Do part {i}.", "player": "demo",
              "mode": "research", "depends_on": [i - 1] if i > 1 and i % 4 else [],
              "skills": ["tdd"], "scope": [f"src/part{i}.py"]} for i in range(1, n + 1)]
    store_new_plan(ws, parse_document({"version": 1, "goal": "Benchmark the TUI",
                                       "tasks": tasks}))
    return ws


class Writers:
    """Eight shims: log lines at `rate` per task, progress events at 10/s per task."""

    def __init__(self, ws, tasks: int, rate: int):
        from baton_tui.plan.current import current

        self.store_path = ws.paths.store_path
        self.plan_id = current(ws).row.id
        self.rate = rate
        self.stop = threading.Event()
        self.lines = 0
        self.events = 0
        self.logs: dict[int, Path] = {}
        for task_id in range(1, tasks + 1):
            log = ws.paths.state_dir / f"bench-{task_id}.log"
            log.write_text("")
            ws.store.new_attempt(self.plan_id, task_id, "n", "demo", {}, str(log))
            ws.store.append(self.plan_id, task_id, "task.started", {})
            self.logs[task_id] = log
        self.threads = [threading.Thread(target=self._log, args=(t,), daemon=True)
                        for t in self.logs] + [threading.Thread(target=self._events, daemon=True)]

    def _log(self, task_id: int) -> None:
        tick, sent, start = 0.02, 0, time.monotonic()
        with self.logs[task_id].open("a", buffering=1) as fh:
            while not self.stop.is_set():
                due = int((time.monotonic() - start) * self.rate)
                if due > sent:
                    fh.write("".join(f"[task {task_id}] line {i}: editing src/part{task_id}.py "
                                     f"and running the tests again\n" for i in range(sent, due)))
                    self.lines += due - sent
                    sent = due
                time.sleep(tick)

    def _events(self) -> None:
        from baton_tui.store.db import Store

        store = Store(self.store_path)
        i = 0
        while not self.stop.is_set():
            with store.tx():
                for task_id in self.logs:
                    store.append(self.plan_id, task_id, "task.progress",
                                 {"message": f"step {i} of task {task_id}"})
            self.events += len(self.logs)
            i += 1
            time.sleep(0.1)
        store.close()

    def __enter__(self) -> "Writers":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join()


def p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


async def press_and_measure(pilot, app, key: str, changed) -> float:
    """ms from the key press to the first composed frame in which `changed()` holds.

    The key is posted with `App.simulate_key` (Pilot's `press` also waits for the whole
    loop to go idle, which under a constant stream of updates measures the stream).
    """
    painted = asyncio.get_running_loop().create_future()
    original = app._display  # benchmark instrumentation only: timestamp each frame

    def display(screen, renderable):
        original(screen, renderable)
        if renderable is not None and changed() and not painted.done():
            painted.set_result(time.perf_counter())

    app._display = display
    t0 = time.perf_counter()
    try:
        app.simulate_key(key)  # posts the key as the terminal driver would
        t1 = await asyncio.wait_for(painted, 2.0)
    finally:
        app._display = original
    return (t1 - t0) * 1000


async def scenario_plan(ws, seconds: float, rate: int) -> dict:
    from baton_tui.tui.launch import make_app

    app = make_app(ws, blink=False, detect_players=False)
    latencies: list[float] = []
    with Writers(ws, 8, rate) as writers:
        async with app.run_test(size=(120, 40)) as pilot:
            while app.board_count == 0:
                await pilot.pause(0.02)
            pane = app.plan_pane
            pane.focus()
            await pilot.pause(0.3)
            end = time.monotonic() + seconds
            step = 1
            while time.monotonic() < end:
                if pane.cursor in (0, len(app.board.tasks) - 1):
                    step = 1 if pane.cursor == 0 else -1
                target = pane.cursor + step
                key = "j" if step > 0 else "k"
                latencies.append(await press_and_measure(
                    pilot, app, key, lambda t=target: pane.cursor == t))
                await pilot.pause(0.03)
            boards = app.board_count
    return {"rate": rate, "presses": len(latencies), "p50_ms": statistics.median(latencies),
            "p95_ms": p95(latencies), "max_ms": max(latencies), "boards": boards,
            "lines": writers.lines, "events": writers.events}


async def scenario_detail(ws, seconds: float, rate: int) -> dict:
    from baton_tui.tui.launch import make_app
    from baton_tui.tui.screens.task_detail import TaskDetail
    from textual.widgets import TabbedContent

    app = make_app(ws, blink=False, detect_players=False)
    latencies: list[float] = []
    with Writers(ws, 8, rate) as writers:
        async with app.run_test(size=(120, 40)) as pilot:
            while app.board_count == 0:
                await pilot.pause(0.02)
            app.plan_pane.focus()
            await pilot.press("enter")
            while not isinstance(app.screen, TaskDetail):
                await pilot.pause(0.02)
            await pilot.pause(0.5)
            tabs = app.screen.query_one(TabbedContent)
            end = time.monotonic() + seconds
            which = "report"
            while time.monotonic() < end:
                key = "2" if which == "report" else "1"
                latencies.append(await press_and_measure(
                    pilot, app, key, lambda w=which: tabs.active == w))
                which = "output" if which == "report" else "report"
                await pilot.pause(0.03)
            shown = app.screen.query_one("Log").line_count
    return {"rate": rate, "presses": len(latencies), "p50_ms": statistics.median(latencies),
            "p95_ms": p95(latencies), "max_ms": max(latencies), "log_lines_on_screen": shown,
            "lines": writers.lines}


async def scenario_rss(ws) -> dict:
    import psutil

    from baton_tui.tui.launch import make_app

    proc = psutil.Process()
    before = proc.memory_info().rss
    app = make_app(ws, blink=False, detect_players=False)
    async with app.run_test(size=(120, 40)) as pilot:
        while app.board_count == 0 or len(app.board.tasks) < 100:
            await pilot.pause(0.05)
        for _ in range(30):
            await pilot.press("j")
        await pilot.pause(0.5)
        rss = proc.memory_info().rss
    return {"tasks": 100, "rss_mb": round(rss / 2**20, 1),
            "rss_before_app_mb": round(before / 2**20, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        rss_repo = make_repo(base / "rss" if (base / "rss").mkdir() is None else base)
        results["rss_100_tasks"] = asyncio.run(scenario_rss(load_plan(rss_repo, 100)))
        for rate in (200, 1000):
            root = base / f"plan-{rate}"
            root.mkdir()
            ws = load_plan(make_repo(root), 8)
            results[f"plan_pane_{rate}_lines_s"] = asyncio.run(
                scenario_plan(ws, args.seconds, rate))
            ws.close()
        root = base / "detail"
        root.mkdir()
        ws = load_plan(make_repo(root), 8)
        results["detail_follow_1000_lines_s"] = asyncio.run(
            scenario_detail(ws, args.seconds, 1000))
        ws.close()
    for name, figures in results.items():
        shown = ", ".join(f"{k}={round(v, 1) if isinstance(v, float) else v}"
                          for k, v in figures.items())
        print(f"{name}: {shown}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
