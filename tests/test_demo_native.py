"""`baton demo` runs on the native `anthropic` player against the scripted model server.

The demo needs no key and no network: it starts its own model server on 127.0.0.1 and points
the native agent loop at it for its own processes only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow


def test_demo_runs_offline_on_the_native_player(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
                        "OPENAI_BASE_URL")}
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "baton_tui", "demo", "--dir", str(tmp_path)],
                            capture_output=True, text=True, timeout=180, env=env,
                            stdin=subprocess.DEVNULL)
    elapsed = time.monotonic() - started
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert elapsed < 60, f"the demo took {elapsed:.1f}s"
    for task in ("#1 Survey the package", "#2 Count words", "#3 Count lines", "#4 Command line",
                 "#5 Tests", "#6 Document usage"):
        assert f"{task}: started on anthropic" in out
    assert "#1 Survey the package: done — One package `textstats`" in out
    assert out.count(": landed (") == 5
    assert "all landed work is on main" in out
    assert "tests on main after the merge: pass" in out

    # Each task ran Baton's native agent loop over HTTP: its log holds the loop's events.
    logs = list((tmp_path / "baton-home" / "runs").rglob("output.log"))
    assert len(logs) == 6
    for log in logs:
        events = [json.loads(line) for line in log.read_text().splitlines()
                  if line.startswith("{")]
        kinds = [e["type"] for e in events]
        assert kinds[0] == "init" and events[0]["provider"] == "anthropic", kinds
        assert "usage" in kinds and kinds[-1] == "result", kinds
        assert any(e["type"] == "tool" and e["name"] == "baton_report" and e["ok"]
                   for e in events)
