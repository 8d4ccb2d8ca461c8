"""The built-in ACP profiles driven for real: Gemini CLI (`gemini --acp`) and OpenCode
(`opencode acp`), the pinned npm builds `.ci/run` installs, each a task's player with Baton as
their ACP client, against Baton's scripted model server on 127.0.0.1 in a throwaway HOME (the
person's set-up is the one tests/helpers/real_players_js.py gives each CLI). Each builds a task
that lands — its write went through Baton's `fs/write_text_file` or its own tool, inside the
worktree — and reports over the `baton` MCP server Baton hands the ACP session; a write it is
asked to make outside the worktree is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_plan
from helpers.real_cli_kit import assert_contained, attempt_logs, data_of, events_of, run, worktree
from helpers.real_players import PLAYERS, last_input

PROFILES = {f"{p.name}-acp": p for p in PLAYERS if p.name in ("gemini", "opencode")}


@pytest.fixture(params=list(PROFILES), ids=list(PROFILES))
def profile(request):
    cli = PROFILES[request.param]
    cli.require()
    return request.param, cli


def test_a_real_acp_agent_builds_a_task_that_lands(profile, server, baton, repo, tmp_path):
    name, cli = profile
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.", "player": name,
         "mode": "build"}], autonomy="autopilot")
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1)
    outside = wt.parent / "escaped.txt"
    server.add_turns([
        {"text": "Writing outside first.", **cli.write(outside, "escaped\n")},
        {"text": "Writing the file.", **cli.write(wt / "hello.txt", f"hello from {name}\n")},
        cli.report("done", f"wrote hello.txt over ACP ({name})"),
        {"text": "Reported."},
    ])
    result = run(baton, cli.env(server), timeout=240)
    logs = attempt_logs(repo)
    seen = "\n".join(last_input(r)[:600] for r in server.requests if r.get("turn") is not None)
    assert result.returncode == 0, logs[-3000:] + "\n--- the model was sent:\n" + seen
    status = baton.json("status", "--json")
    assert status["tasks"][0]["state"] == "landed", logs[-6000:]
    slug = status["plan"]["slug"]
    assert_contained(repo, f"baton/{slug}/1-write-hello", "hello.txt")
    assert not outside.exists(), "a write outside the worktree got through"
    done = [data_of(e).get("summary") for e in events_of(baton, 1)
            if (e.get("kind") or e.get("type")) == "task.done"]
    assert done == [f"wrote hello.txt over ACP ({name})"]
    bridge = [json.loads(line) for line in logs.splitlines() if line.startswith('{"type": "acp.')]
    kinds = [e["type"] for e in bridge]
    assert "acp.init" in kinds and "acp.session" in kinds and "acp.result" in kinds, kinds
    assert [e for e in bridge if e["type"] == "acp.result"][-1]["ok"] is True
    refused = [e for e in bridge if e["type"] == "acp.refused"]
    if name == "opencode-acp":
        # OpenCode asks before touching another directory: Baton said no, and flagged it once
        assert any("escaped.txt" in e["what"] for e in refused), refused
        assert [f["kind"] for f in status["tasks"][0]["flags"]] == ["contained"]
        usage = [e for e in bridge if e["type"] == "acp.usage"]
        assert usage and usage[-1].get("tokens"), usage      # its usage, counted
    else:
        # Gemini CLI keeps to its workspace (the worktree) by itself, and writes through
        # Baton's fs/write_text_file, which wrote inside the worktree
        assert "Path not in workspace" in seen
        writes = [e for e in bridge if e["type"] == "acp.fs" and e["op"] == "write"]
        assert [Path(e["path"]).name for e in writes] == ["hello.txt"]
    print(f"{name}: {len(server.requests)} model requests; bridge events: "
          f"{sorted(set(kinds))}")


def test_an_acp_profile_is_listed_with_its_cli_detection(profile, baton, server):
    name, cli = profile
    players = {p["name"]: p for p in baton.json("players", "--json")}
    assert players[name]["ready"] is False or players[name]["version"] is not None
    listed = baton("players", "--json", env=cli.env(server))
    entry = next(p for p in json.loads(listed.stdout) if p["name"] == name)
    assert entry["ready"] is True, entry
    assert Path(entry["path"]).name == cli.cli.binary


def test_stop_cancels_the_session_and_ends_the_agent(profile, server, baton, repo, tmp_path):
    """`baton stop` while the ACP agent waits on the model: Baton sends `session/cancel`, the
    agent's whole process group ends (not after the model's 60 s reply), nothing lands."""
    import time

    import psutil

    from helpers.run_kit import wait_for, wait_idle

    name, cli = profile
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Slow model", "prompt": "Create after.txt.", "player": name,
         "mode": "build"}], autonomy="autopilot")
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1)
    server.add_turns([{"delay": 60, "text": "Still thinking."}])
    assert baton("run", "--approve", "--detach", env=cli.env(server)).returncode == 0
    wait_for(lambda: server.served > 0, timeout=120, what="the agent to wait on the model")
    asked = time.monotonic()
    assert baton("stop", "1").returncode == 0
    stopped = wait_idle(baton, timeout=60)
    assert time.monotonic() - asked < 30
    task = stopped["tasks"][0]
    assert task["state"] == "failed" and "stopped" in task["reason"], task
    logs = attempt_logs(repo)
    assert '"acp.cancelled"' in logs, logs[-3000:]

    def inside(proc: psutil.Process) -> bool:
        try:
            return Path(proc.cwd()).is_relative_to(wt)
        except (psutil.Error, OSError):
            return False
    assert not [p.info for p in psutil.process_iter(["pid", "name"]) if inside(p)]
