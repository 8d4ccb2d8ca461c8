"""The editor's web client in Chromium (`baton web`): first paint of a `--tasks`-task plan
(target ≤ 2 s), and a key press in the plan (`C`, a task's checkpoint flag: `task/edit` through
the protocol, the row repainted) → the edited row painted, p95.

A script, not a timed test. It needs the editor tool chain (scripts/editor-toolchain). It builds
a throwaway repository with the plan (never approved, never run), starts `baton web` on 127.0.0.1, and drives the page with Playwright.

    python benchmarks/bench_editor.py [--tasks 1000] [--runs 60] [--json]

Not measured here yet: the echo page to compare against (its driver, ECHO and
editor_page.ECHO_PAGE, does not finish in headless Chromium), and the key round trip while 8
agents stream output.
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
ECHO = """
import asyncio, sys
from websockets.asyncio.server import serve
async def echo(ws):
    async for message in ws:
        await ws.send(message)
async def main():
    async with serve(echo, "127.0.0.1", 0) as server:
        print(next(iter(server.sockets)).getsockname()[1], flush=True)
        await server.serve_forever()
asyncio.run(main())
"""


# The plan's tasks are on the native `anthropic` player (which has checkpoints) with a dummy
# key: nothing is approved or run, so no model is ever asked.
ENV = {**os.environ, "ANTHROPIC_API_KEY": "bench-key"}


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def make_repo(folder: Path, tasks: int) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    plan = {"version": 1, "goal": "benchmark", "tasks": [
        {"id": n, "title": f"Task {n}", "prompt": f"step {n}", "player": "anthropic",
         "depends_on": [n - 1] if n > 1 and n % 10 else []} for n in range(1, tasks + 1)]}
    (folder / "plan.json").write_text(json.dumps(plan))
    subprocess.run([sys.executable, "-m", "baton_tui", "plan", "--from", str(folder / "plan.json")],
                   cwd=repo, check=True, capture_output=True, env=ENV)
    return repo


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()
    tools = Path(subprocess.run([str(ROOT / "scripts" / "editor-toolchain")], check=True,
                                capture_output=True, text=True).stdout.strip().splitlines()[-1])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        repo = make_repo(folder, opts.tasks)
        web = subprocess.Popen([sys.executable, "-m", "baton_tui", "web"], cwd=repo,
                               stdout=subprocess.PIPE, text=True, env=ENV)
        try:
            url = web.stdout.readline().strip() if web.stdout else ""
            out = folder / "result.json"
            subprocess.run([str(tools / "pw" / "bin" / "python"), str(ROOT / "benchmarks" / "editor_page.py"),
                            json.dumps({"url": url, "tasks": opts.tasks, "runs": opts.runs,
                                        "out": str(out)})],
                           check=True, timeout=900)
            result = json.loads(out.read_text())
        finally:
            web.terminate()
            web.wait(timeout=30)
    keys = result["key_to_paint_ms"]
    summary = {"tasks": opts.tasks, "first_paint_ms": round(result["first_paint_ms"], 1),
               "key_to_paint_p95_ms": round(p95(keys), 2), "runs": opts.runs}
    if opts.json:
        print(json.dumps(summary))
    else:
        print(f"first paint of a {opts.tasks}-task plan: {summary['first_paint_ms']:.0f} ms (target ≤ 2000)")
        print(f"key press → edited row painted, p95: {summary['key_to_paint_p95_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
