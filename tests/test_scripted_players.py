"""Players that cannot be installed here, driven by Baton against scripted programs that replay
their documented headless formats (tests/agents/*_replay.py): build, research, report via MCP,
(usage limit and resume: still to come)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import git, write_plan
from helpers.real_cli_kit import events_of, data_of, task_of, worktree

AGENTS = Path(__file__).parent / "agents"


@pytest.fixture
def amp(tmp_path, monkeypatch):
    """`amp` on PATH (the replay), signed in with AMP_API_KEY; `amp(runs)` sets the turns."""
    folder = tmp_path / "amp-bin"
    folder.mkdir()
    stub = folder / "amp"
    stub.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{AGENTS / "amp_replay.py"}" "$@"\n')
    stub.chmod(0o755)
    log, turns = tmp_path / "amp-calls.jsonl", tmp_path / "amp-turns.json"
    env = {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "AMP_API_KEY": "scripted",
           "FAKE_AMP_LOG": str(log), "FAKE_AMP_TURNS": str(turns)}

    def script(runs: list[list[dict]]) -> dict[str, str]:
        turns.write_text(json.dumps(runs))
        return env

    script.calls = lambda: [json.loads(line) for line in log.read_text().splitlines()]
    return script


def test_amp_builds_and_reports_over_mcp(amp, baton, repo, tmp_path):
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.", "player": "amp",
         "model": "rush"}])
    env = amp([])
    assert baton("plan", "--from", str(plan), env=env).returncode == 0
    wt = worktree(repo, baton, 1)
    amp([[{"tool": "create_file", "input": {"path": str(wt / "hello.txt"), "content": "hi\n"}},
          {"tool": "mcp__baton__baton_report", "input": {"status": "done", "summary": "wrote it"}}]])
    out = baton("run", "--approve", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert task_of(baton, 1)["state"] == "landed"
    slug = baton.json("status", "--json")["plan"]["slug"]
    assert git(repo, "show", f"baton/{slug}/1-write-hello:hello.txt") == "hi"
    argv = amp.calls()[0]
    assert argv[argv.index("--mode") + 1] == "rush" and "--dangerously-allow-all" in argv
    assert set(json.loads(argv[argv.index("--mcp-config") + 1])["baton"]["env"]) >= {
        "BATON_TASK", "BATON_ATTEMPT", "BATON_NONCE", "BATON_STATE"}
    done = [data_of(e)["summary"] for e in events_of(baton, 1) if e.get("kind") == "task.done"]
    assert done == ["wrote it"]


def test_amp_research_cannot_write_and_still_reports(amp, baton, repo, tmp_path):
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Study", "prompt": "Read README.md.", "player": "amp",
         "mode": "research"}])
    env = amp([])
    assert baton("plan", "--from", str(plan), env=env).returncode == 0
    wt = worktree(repo, baton, 1, "-research-1")
    amp([[{"tool": "create_file", "input": {"path": str(wt / "stray.txt"), "content": "no"}},
          {"tool": "Bash", "input": {"cmd": "echo no > stray2.txt"}},
          {"tool": "mcp__baton__baton_report", "input": {"status": "done", "summary": "sample"}}]])
    out = baton("run", "--approve", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert task_of(baton, 1)["state"] == "done"
    assert not (wt / "stray.txt").exists() and not (wt / "stray2.txt").exists()
    assert "--dangerously-allow-all" not in amp.calls()[0]


def test_amp_outcome_reads_limits_and_threads():
    """Amp's result event: a limit with a reset pauses; a throttle is a 429; the thread id."""
    from baton_tui.players.amp import AmpPlayer

    init = json.dumps({"type": "system", "subtype": "init", "session_id": "T-1"})
    limit = json.dumps({"type": "result", "subtype": "error_during_execution", "is_error": True,
                        "error": "You've hit your usage limit · resets 3pm (UTC)"})
    out = AmpPlayer().outcome(f"{init}\nnoise\n{limit}\n")
    assert out.session_id == "T-1" and out.limit_until and out.success_event is False
    throttled = json.dumps({"type": "result", "subtype": "error_during_execution",
                            "is_error": True, "error": "429 Too Many Requests: rate limit"})
    assert AmpPlayer().outcome(throttled).rate_limited
