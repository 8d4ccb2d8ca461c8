"""ACP players (`[players.custom.NAME] protocol = "acp"`): Baton as the ACP client of a scripted
agent (tests/agents/acp_agent.py) through real runs — the work lands; tool calls and plan
entries become steps and progress; a hostile agent (reads /etc/passwd, writes outside, asks
to edit outside, floods updates) is contained with one flag; one that never answers
`initialize` is stopped with a clear reason; stop becomes `session/cancel`."""

from __future__ import annotations

import json
import time
import subprocess
import sys
from pathlib import Path

from helpers.run_kit import (
    AGENTS, events, load_plan, popen_baton, task, toml_value, wait_for, wait_state, write_config,
)

AGENT = [sys.executable, str(AGENTS / "acp_agent.py")]


def _setup(repo: Path, tmp: Path, baton, mode: str, autonomy: str = "autopilot",
           start_timeout: float = 120) -> Path:
    record = tmp / f"{mode}-record.jsonl"
    write_config(repo, {}, extra=(
        f"\n[players.custom.acpy]\nprotocol = \"acp\"\ncommand = {toml_value([*AGENT, mode])}\n"
        f"start_timeout = {start_timeout}\n"
        f"env = {{ ACP_RECORD = {toml_value(str(record))} }}\n"))
    load_plan(baton, [task(1, "Write ok", player="acpy")], autonomy=autonomy)
    return record


def _recorded(path: Path) -> dict:
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return {entry["what"]: entry["value"] for entry in lines}


def _flags(baton) -> list[dict]:
    return baton.json("status", "--json")["tasks"][0]["flags"]


def _log(repo: Path) -> str:
    import os

    home = Path(os.environ["BATON_HOME"])
    return "\n".join(p.read_text(errors="replace") for p in sorted(home.glob("runs/**/output.log")))


def test_an_acp_agent_builds_a_task_that_lands(repo, tmp_path, baton):
    record = _setup(repo, tmp_path, baton, "good")
    run = baton("run", "--approve")
    assert run.returncode == 0, run.stdout + run.stderr + _log(repo)
    status = baton.json("status", "--json")
    assert status["tasks"][0]["state"] == "landed"
    assert status["tasks"][0]["flags"] == []
    slug = status["plan"]["slug"]
    shown = subprocess.run(["git", "show", f"baton/{slug}/1-write-ok:ok.txt"], cwd=repo,
                           capture_output=True, text=True)
    assert shown.stdout == "written over ACP\n"
    seen = _recorded(record)
    assert seen["initialize"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert not seen["initialize"].get("terminal")     # its own shell, not Baton's terminals
    # the session got Baton's report tools over MCP, bound to this attempt
    server = seen["session_new"]["mcpServers"][0]
    assert server["name"] == "baton" and server["args"] == ["mcp"]
    assert {e["name"] for e in server["env"]} >= {"BATON_TASK", "BATON_NONCE", "BATON_STATE"}
    assert seen["session_new"]["cwd"] == str(Path(status["tasks"][0]["worktree"]).resolve())
    assert "error" not in seen["write_inside"] and seen["report"] == 0
    # tool calls and plan entries read as steps (the task's detail, the app's output view)
    from baton_tui import api

    reader = api.step_reader("acpy")
    steps = [f"{s.kind}: {s.text}" for line in _log(repo).splitlines() for s in reader.feed(line)]
    assert "note: plan 1/2: Write ok.txt" in steps, steps
    assert any(s.startswith("file: edit ") and s.endswith("/ok.txt") for s in steps), steps
    evs = events(baton)
    usage = [e["data"] for e in evs if e.get("kind") == "task.usage"]
    assert usage and usage[-1].get("tokens") == 1234, usage


def test_a_hostile_acp_agent_is_contained_with_one_flag(repo, tmp_path, baton):
    record = _setup(repo, tmp_path, baton, "hostile")
    run = baton("run", "--approve")
    assert run.returncode == 0, run.stdout + run.stderr + _log(repo)
    seen = _recorded(record)
    # /etc/passwd never reached it; nothing was written outside; the edit outside was rejected
    assert "error" in seen["read_passwd"] and "result" not in seen["read_passwd"]
    assert "root:" not in json.dumps(seen["read_passwd"])
    assert "outside the task's worktree" in json.dumps(seen["read_passwd"])
    assert "error" in seen["write_outside"]
    assert not Path(seen["outside_path"]).exists()
    assert seen["permission_outside"]["result"]["outcome"] == {"outcome": "selected",
                                                               "optionId": "no"}
    # … and its good work still landed, with one clear flag
    status = baton.json("status", "--json")
    assert status["tasks"][0]["state"] == "landed"
    flags = _flags(baton)
    assert [f["kind"] for f in flags] == ["contained"], flags
    assert "/etc/passwd" in flags[0]["detail"] and "outside the task's worktree" in flags[0]["detail"]
    log = _log(repo)
    assert log.count('"acp.refused"') >= 4      # read, write, permission, the flood
    dropped = [json.loads(line) for line in log.splitlines() if '"acp.dropped"' in line]
    assert dropped and dropped[0]["updates"] > 0
    assert log.count("flood ") < 5000 * 2        # the flood did not all reach the log


def test_an_agent_that_never_answers_initialize_is_stopped_with_a_clear_reason(repo, tmp_path,
                                                                               baton):
    record = _setup(repo, tmp_path, baton, "silent", autonomy="guarded", start_timeout=2)
    run = baton("run", "--approve")
    assert run.returncode == 1, run.stdout + run.stderr
    assert _recorded(record)["initialize"] is not None
    task = baton.json("status", "--json")["tasks"][0]
    assert task["state"] == "failed"
    assert [f["kind"] for f in task["flags"]] == ["contained"]
    assert "never answered initialize in 2s" in task["flags"][0]["detail"]


def test_stop_becomes_session_cancel(repo, tmp_path, baton):
    record = _setup(repo, tmp_path, baton, "hang")
    runner = popen_baton(repo, "run", "--approve")
    try:
        wait_for(lambda: _recorded(record).get("turn") == "started", timeout=60,
                 what="the agent's turn to start")
        assert baton("stop", "1").returncode == 0
        wait_for(lambda: _recorded(record).get("cancel") == "received", timeout=30,
                 what="session/cancel to reach the agent")
        wait_state(baton, 1, ("paused", "failed"), timeout=60)
    finally:
        runner.wait(timeout=120)
    assert '"acp.cancelled"' in _log(repo)


def test_guarded_a_permission_inside_waits_for_the_person(repo, tmp_path, baton):
    """Guarded: the agent's permission request is the person's checkpoint; the agent waits on
    it (past `checkpoint_wait`), the person says yes, the same turn goes on and lands."""
    record = _setup(repo, tmp_path, baton, "ask", autonomy="guarded")
    assert baton("approve").returncode == 0   # (`run --approve` would answer checkpoints)
    runner = popen_baton(repo, "run")
    try:
        waiting = wait_for(lambda: (lambda t: t if t.get("checkpoint") else None)(
            baton.json("status", "--json")["tasks"][0]), timeout=60,
            what="the permission to reach the person")
        assert waiting["checkpoint"]["what"] == "the agent asks to: Edit ok.txt"
        assert "permission_inside" not in _recorded(record)      # still waiting on the person
        assert baton("checkpoint-answer", "1", "yes").returncode == 0
        out, err = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, out + err + _log(repo)
    seen = _recorded(record)
    assert seen["permission_inside"]["result"]["outcome"] == {"outcome": "selected",
                                                              "optionId": "yes"}
    assert baton.json("status", "--json")["tasks"][0]["state"] == "landed"
    assert sum(1 for line in _log(repo).splitlines() if '"acp.session"' in line) == 1


def test_a_failed_turn_names_its_limit():
    """A turn the agent failed with a provider's limit pauses the task as every player's does:
    Gemini's daily quota until midnight Pacific, another agent's words read as a provider's."""
    from baton_tui.players.acp import AcpPlayer, GeminiAcp

    quota = json.dumps({"type": "acp.result", "ok": False, "stop_reason": "Internal error: "
                        "{\"details\": \"You have exhausted your daily quota on this model.\"}"})
    gemini = GeminiAcp().outcome(quota + "\n")
    assert gemini.success_event is False
    assert gemini.limit_until is not None and time.time() < gemini.limit_until <= time.time() + 86400
    other = AcpPlayer("x", ["x"]).outcome(json.dumps(
        {"type": "acp.result", "ok": False, "error": "429 Too Many Requests"}) + "\n")
    assert other.rate_limited and other.limit_until is None
    fine = AcpPlayer("x", ["x"]).outcome(json.dumps(
        {"type": "acp.result", "ok": True, "stop_reason": "end_turn"}) + "\n")
    assert fine.success_event is True and not (fine.limited or fine.rate_limited)
