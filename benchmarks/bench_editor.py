"""The editor's web client in Chromium (`baton web`): first paint of a `--tasks`-task plan
(target ≤ 2 s), and a key press in the plan (`C`, a task's checkpoint flag: `task/edit` through
the protocol, the row repainted) → the edited row painted, and → Baton's answer applied, p95 —
with nothing running, and with 8 agents streaming output into their cards (target: ≤ 1.5 ×
the same round trip in a minimal page that echoes each key press through a local process over
a WebSocket). The view paints an edit at once, so "painted" is the page's own work under that
load; "answer applied" adds `task/edit` in Baton (a 1,000-task plan is parsed and checked
whole on each edit).

A script, not a timed test. It needs the editor tool chain (scripts/editor-toolchain). It builds
a throwaway repository whose plan's first `--streams` tasks run a stand-in agent that prints a
line every 50 ms until stopped (every other task waits on them), starts `baton web` and the
echo process on 127.0.0.1, and drives both pages with Playwright (editor_page.py).

    python benchmarks/bench_editor.py [--tasks 1000] [--runs 60] [--streams 8] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The minimal echo page and its process: the page is served by the process itself, so that
# the page and its WebSocket share the origin, as `baton web`'s do.
ECHO = """
import asyncio, http
from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response
PAGE = (b'<!DOCTYPE html><html><body><input id="keys" aria-label="keys">'
        b'<p id="out"></p></body></html>')
def page(connection, request):
    if request.path == "/ws":
        return None
    headers = Headers([("Content-Type", "text/html"), ("Content-Length", str(len(PAGE)))])
    return Response(http.HTTPStatus.OK, "OK", headers, PAGE)
async def echo(ws):
    async for message in ws:
        await ws.send(message)
async def serve_forever():
    async with serve(echo, "127.0.0.1", 0, process_request=page) as server:
        print(next(iter(server.sockets)).getsockname()[1], flush=True)
        await server.serve_forever()
asyncio.run(serve_forever())
"""

# A stand-in agent that streams: one line every 50 ms until it is stopped.
STREAMER = """
import sys, time
sys.stdin.read()
n = 0
while True:
    n += 1
    print(f"step {n}: reading src/module_{n % 97}.py, then thinking about the change", flush=True)
    time.sleep(0.05)
"""

# The plan's other tasks are on the native `anthropic` player (which has checkpoints) with a
# dummy key: they wait on the streaming tasks, so no model is ever asked.
ENV = {**os.environ, "ANTHROPIC_API_KEY": "bench-key"}


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def make_repo(folder: Path, tasks: int, streams: int) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    (folder / "streamer.py").write_text(STREAMER)
    command = json.dumps([sys.executable, str(folder / "streamer.py")])
    (repo / "baton.toml").write_text(f"[players.custom.streamer]\ncommand = {command}\n\n"
                                     f"[limits]\nmax_parallel = {streams}\nstall = \"3600s\"\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    plan = {"version": 1, "goal": "benchmark", "tasks": [
        {"id": n, "title": f"Task {n}", "prompt": f"step {n}",
         "player": "streamer" if n <= streams else "anthropic",
         "depends_on": [] if n <= streams else [n - 1] if n % 10 else [1]}
        for n in range(1, tasks + 1)]}
    (folder / "plan.json").write_text(json.dumps(plan))
    for args in (["trust"], ["plan", "--from", str(folder / "plan.json")]):
        subprocess.run([sys.executable, "-m", "baton_tui", *args], cwd=repo, check=True,
                       capture_output=True, env=ENV)
    return repo


def stop_streams(repo: Path, streams: int, env: dict[str, str]) -> None:
    """The streaming agents end (the page paused the run; this makes sure of it)."""
    for n in range(1, streams + 1):
        subprocess.run([sys.executable, "-m", "baton_tui", "stop", str(n)], cwd=repo,
                       capture_output=True, env=env, timeout=120)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--streams", type=int, default=8)
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()
    tools = Path(subprocess.run([str(ROOT / "scripts" / "editor-toolchain")], check=True,
                                capture_output=True, text=True).stdout.strip().splitlines()[-1])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ENV["BATON_HOME"] = str(folder / "baton-home")
        repo = make_repo(folder, opts.tasks, opts.streams)
        web = subprocess.Popen([sys.executable, "-m", "baton_tui", "web"], cwd=repo,
                               stdout=subprocess.PIPE, text=True, env=ENV)
        echo = subprocess.Popen([sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
        try:
            url = web.stdout.readline().strip() if web.stdout else ""
            port = echo.stdout.readline().strip() if echo.stdout else ""
            out = folder / "result.json"
            page = {"url": url, "echo": f"http://127.0.0.1:{port}/", "tasks": opts.tasks,
                    "runs": opts.runs, "streams": opts.streams, "out": str(out)}
            subprocess.run([str(tools / "pw" / "bin" / "python"),
                            str(ROOT / "benchmarks" / "editor_page.py"), json.dumps(page)],
                           check=True, timeout=1800)
            result = json.loads(out.read_text())
        finally:
            stop_streams(repo, opts.streams, ENV)
            for proc in (web, echo):
                proc.terminate()
                proc.wait(timeout=30)
    echoed = p95(result["echo_ms"])
    summary = {"tasks": opts.tasks, "runs": opts.runs, "streams": opts.streams,
               "streaming_cards": result["streaming_cards"],
               "still_streaming": result["still_streaming"],
               "first_paint_ms": round(result["first_paint_ms"], 1), "echo_p95_ms": round(echoed, 2)}
    for when in ("idle", "streaming"):
        for what in ("painted", "confirmed"):
            summary[f"key_to_{what}_{when}_p95_ms"] = round(p95(result[when][what]), 2)
    summary["ratio_painted"] = round(summary["key_to_painted_streaming_p95_ms"] / echoed, 2)
    summary["ratio_confirmed"] = round(summary["key_to_confirmed_streaming_p95_ms"] / echoed, 2)
    if opts.json:
        print(json.dumps(summary))
    else:
        print(f"first paint of a {opts.tasks}-task plan: {summary['first_paint_ms']:.0f} ms "
              "(target ≤ 2000)")
        for when in ("idle", "streaming"):
            load = "nothing running" if when == "idle" else f"{result['still_streaming']} agents streaming"
            print(f"key press, p95, {load}: "
                  f"edited row painted {summary[f'key_to_painted_{when}_p95_ms']:.1f} ms, "
                  f"server's answer applied {summary[f'key_to_confirmed_{when}_p95_ms']:.1f} ms")
        print(f"echo page, key → echo painted, p95: {echoed:.1f} ms; ratio with the agents streaming: "
              f"painted {summary['ratio_painted']:.2f} (target ≤ 1.5), answer applied "
              f"{summary['ratio_confirmed']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
