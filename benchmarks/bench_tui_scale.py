"""The TUI at scale (issue 17): first paint, idle CPU and cursor keys with large plans.

Each figure is a ratio against a baseline measured in the same run, every scenario in a
process of its own (headless: frames are composed, nothing is written to a terminal):

- first paint of a 1,000-task plan ÷ first paint of a minimal Textual app — each a process of
  its own, timed from its spawn to the first frame that shows the first card (target ≤ 2);
  the project is byte-compiled first, as an installed package is;
- CPU used by the app while idle with 1,000 tasks on screen, nothing running (target ≤ 2 %);
- 50 × `j` at 10,000 tasks ÷ 50 × `j` at 100, each press timed to the first frame that shows
  the moved cursor (target ≤ 1.3).

Key-to-paint with 8 agents streaming 200 lines/s is `bench_tui.py --only plan_pane_200`.

    .venv/bin/python benchmarks/bench_tui_scale.py [--runs 5] [--idle-seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRST_CARD = "#1 Task number 1 "


def frame_text(renderable) -> str:
    """The characters of a composed frame (a full layout or a set of changed spans)."""
    lines = getattr(renderable, "strips", None)
    if lines is None:
        lines = [chop.values() for chop in getattr(renderable, "chops", None) or ()]
    out = []
    for line in lines:
        for strip in ([line] if hasattr(line, "text") else line):
            if strip is not None:
                out.append(strip.text)
    return "".join(out)


def painted() -> None:
    """Print the seconds since the parent spawned this process (the first paint)."""
    print(json.dumps({"first_paint_s": time.time() - float(os.environ["BENCH_SPAWNED"])}),
          flush=True)


def watch_frames(app, seen) -> None:
    """Call `seen(text)` with each frame the app composes (benchmark instrumentation only)."""
    original = app._display

    def display(screen, renderable):
        original(screen, renderable)
        if renderable is not None:
            seen(frame_text(renderable))

    app._display = display


def run_to_first_card(app) -> None:
    """Run `app` headless until a frame shows the first card; report when that was."""
    done = []

    def seen(text: str) -> None:
        if FIRST_CARD in text and not done:
            done.append(painted())
            app.exit()

    watch_frames(app, seen)
    app.run(headless=True, size=(120, 40))
    if not done:
        raise SystemExit("the first card never showed")


def child_minimal() -> None:
    from textual.app import App
    from textual.widgets import Static

    class Minimal(App):
        def compose(self):
            yield Static(FIRST_CARD)

    run_to_first_card(Minimal())


def child_baton(repo: str) -> None:
    from baton_tui.tui.launch import make_app
    from baton_tui.workspace import Workspace

    run_to_first_card(make_app(Workspace(Path(repo)), blink=False, detect_players=False))


def child_idle(repo: str, seconds: float) -> None:
    from baton_tui.tui.launch import make_app
    from baton_tui.workspace import Workspace

    async def go() -> dict:
        app = make_app(Workspace(Path(repo)), blink=False, detect_players=False)
        async with app.run_test(size=(120, 40)) as pilot:
            while app.board_count == 0:
                await pilot.pause(0.05)
            await pilot.pause(2.0)  # settle: the first layout, the footer, the poller's start
            t0, c0 = time.monotonic(), _cpu()
            boards = app.board_count
            await asyncio.sleep(seconds)
            t1, c1 = time.monotonic(), _cpu()
            return {"tasks": len(app.board.tasks), "cpu_percent": round(100 * (c1 - c0) / (t1 - t0), 2),
                    "boards_while_idle": app.board_count - boards}

    print(json.dumps(asyncio.run(go())))


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def child_keys(repo: str, presses: int) -> None:
    sys.path.insert(0, str(HERE))
    from bench_tui import press_and_measure

    from baton_tui.tui.launch import make_app
    from baton_tui.workspace import Workspace

    async def go() -> dict:
        app = make_app(Workspace(Path(repo)), blink=False, detect_players=False)
        async with app.run_test(size=(120, 40)) as pilot:
            while app.board_count == 0:
                await pilot.pause(0.05)
            pane = app.plan_pane
            pane.focus()
            await pilot.pause(1.0)
            times = []
            for _ in range(presses):
                target = pane.cursor + 1
                times.append(await press_and_measure(pilot, app, "j",
                                                     lambda t=target: pane.cursor == t))
                await pilot.pause(0.01)
            return {"tasks": len(app.board.tasks), "total_ms": round(sum(times), 1),
                    "median_ms": round(statistics.median(times), 2),
                    "max_ms": round(max(times), 2)}

    print(json.dumps(asyncio.run(go())))


def make_plan_repo(base: Path, n: int) -> Path:
    sys.path.insert(0, str(HERE))
    from bench_tui import load_plan, make_repo

    base.mkdir(parents=True)
    repo = make_repo(base)
    load_plan(repo, n).close()
    return repo


def run_child(*args: str) -> tuple[float, str]:
    """Run a scenario in a process of its own: (its first paint when it reports one, its
    output)."""
    env = {**os.environ, "BENCH_SPAWNED": repr(time.time())}
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                         text=True, check=True, env=env, timeout=300)
    first = json.loads(out.stdout.splitlines()[0]) if out.stdout.startswith("{") else {}
    return first.get("first_paint_s", 0.0), out.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--only", default="", help="run the scenarios whose name holds this")
    parser.add_argument("--work", help="keep the plan repositories here (reused when present)")
    args = parser.parse_args(argv)
    if args.child:
        kind, *rest = args.child
        {"minimal": lambda: child_minimal(), "baton": lambda: child_baton(rest[0]),
         "idle": lambda: child_idle(rest[0], float(rest[1])),
         "keys": lambda: child_keys(rest[0], int(rest[1]))}[kind]()
        return 0
    results: dict[str, dict] = {}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "baton_tui")],
                   check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.work or tmp)
        repos = {n: base / str(n) / "repo" if (base / str(n) / "repo").exists()
                 else make_plan_repo(base / str(n), n) for n in (100, 1000, 10_000)}
        if args.only in "first_paint_1000":
            baton, minimal = [], []
            for _ in range(args.runs):  # interleaved: load drifts hit both alike
                minimal.append(run_child("minimal")[0])
                baton.append(run_child("baton", str(repos[1000]))[0])
            results["first_paint_1000"] = {
                "baton_s": round(statistics.median(baton), 3),
                "minimal_s": round(statistics.median(minimal), 3),
                "ratio": round(statistics.median(baton) / statistics.median(minimal), 2),
                "target": 2}
        if args.only in "idle_cpu_1000":
            runs = [json.loads(run_child("idle", str(repos[1000]), str(args.idle_seconds))[1])
                    for _ in range(max(1, args.runs // 2))]
            results["idle_cpu_1000"] = {**runs[-1], "cpu_percent": statistics.median(
                r["cpu_percent"] for r in runs), "target_percent": 2}
        if args.only in "keys_50_j_10000_vs_100":
            small, large = [], []
            for _ in range(max(1, args.runs // 2)):
                small.append(json.loads(run_child("keys", str(repos[100]), "50")[1]))
                large.append(json.loads(run_child("keys", str(repos[10_000]), "50")[1]))
            s = statistics.median(r["total_ms"] for r in small)
            big = statistics.median(r["total_ms"] for r in large)
            results["keys_50_j_10000_vs_100"] = {
                "at_100_ms": s, "at_10000_ms": big, "ratio": round(big / s, 2),
                "p_max_10000_ms": max(r["max_ms"] for r in large), "target": 1.3}
    for name, figures in results.items():
        print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    sys.exit(main())
