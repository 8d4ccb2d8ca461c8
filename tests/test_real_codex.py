"""Codex for real: the pinned npm build, driven by Baton against the scripted server.

`.ci/run` installs `@openai/codex` into `.ci/npm`; without it these tests FAIL (nothing skips
silently). Each test runs in a throwaway HOME (conftest); "the person's" Codex configuration is
`$HOME/codex/config.toml` (named by `CODEX_HOME`) with a provider whose base URL is Baton's
scripted model server on 127.0.0.1 (OpenAI Responses). Baton inherits that environment and never
edits the file. No vendor is reached.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


from baton_tui.demo.server import ScriptedServer
from conftest import git, write_plan
from real_cli_kit import (
    NPM_BIN, assert_contained, attempt_logs, data_of, events_of, kinds, npm_bin, run, task_of,
    worktree,
)

PIN = "@openai/codex@0.171.0"


def codex_bin() -> Path:
    return npm_bin("codex", "Codex", PIN)


def person_env(server: ScriptedServer, **extra: str) -> dict[str, str]:
    """The person's environment and Codex config (their own file, which Baton only reads)."""
    home = Path(os.environ["HOME"])
    codex_home = home / "codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(f'''model = "gpt-5.1-codex"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted"
base_url = "{server.url}/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
''')
    return {
        "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "CODEX_HOME": str(codex_home),
        "SCRIPTED_API_KEY": "scripted",
        **extra,
    }


def sh(cmd: str) -> dict:
    """Codex's own shell tool, as the model calls it."""
    return {"tool": "exec_command", "input": {"cmd": cmd}}


def mcp_report(status: str, summary: str) -> dict:
    """Codex's MCP tools sit in one namespace tool `mcp__baton`."""
    return {"tool": "baton_report", "namespace": "mcp__baton",
            "input": {"status": status, "summary": summary}}


# --------------------------------------------------------------------------- tests

def test_codex_detected_and_ready(server, baton):
    codex_bin()
    out = baton("players", "--json", env=person_env(server))
    assert out.returncode == 0, out.stderr
    entry = next(p for p in json.loads(out.stdout) if p["name"] == "codex")
    assert entry["ready"] is True, entry
    assert PIN.rsplit("@", 1)[1] in (entry["version"] or ""), "not the pinned build"


def test_build_edits_with_exec_command_and_reports_over_mcp_and_shell(server, baton, repo,
                                                                      tmp_path):
    codex_bin()
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.", "player": "codex",
         "mode": "build", "effort": "low"},
        {"id": 2, "title": "Write bye", "prompt": "Create bye.txt.", "player": "codex",
         "mode": "build", "depends_on": [1]},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    env = person_env(server)
    server.add_turns([
        sh("printf 'hello from codex\\n' > hello.txt"),
        mcp_report("done", "wrote hello.txt (mcp)"),
        {"text": "Reported."},
        sh("printf 'bye\\n' > bye.txt"),
        sh('baton report done --summary "wrote bye.txt (shell)"'),
        {"text": "Reported."},
    ])
    result = run(baton, env)
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    status = baton.json("status", "--json")
    assert [t["state"] for t in status["tasks"]] == ["landed", "landed"]
    done = [data_of(e).get("summary") for e in events_of(baton, 1) + events_of(baton, 2)
            if (e.get("kind") or e.get("type")) == "task.done"]
    assert done == ["wrote hello.txt (mcp)", "wrote bye.txt (shell)"]
    slug = status["plan"]["slug"]
    assert_contained(repo, f"baton/{slug}/1-write-hello", "hello.txt")
    assert_contained(repo, f"baton/{slug}/2-write-bye", "bye.txt")
    assert git(repo, "show", f"baton/{slug}/1-write-hello:hello.txt") == "hello from codex"
    calls = [r for r in server.requests if r.get("protocol") == "responses"
             and r.get("turn") is not None]
    assert len(calls) == 6
    first = calls[0]["json"]
    assert first.get("reasoning", {}).get("effort") == "low"
    names = json.dumps(first.get("tools"))
    assert "exec_command" in names and "baton_report" in names


def test_research_reads_reports_over_mcp_and_writes_nothing(server, baton, repo, tmp_path):
    codex_bin()
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Study readme", "prompt": "What does README.md say?",
         "player": "codex", "mode": "research"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1, "-research-1")
    server.add_turns([
        sh("cat README.md"),
        sh("printf 'no\\n' > stray.txt"),
        sh(f"printf 'no\\n' > {wt / 'stray2.txt'}"),
        mcp_report("done", "README.md is a one-line heading: sample"),
        {"text": "Reported."},
    ])
    result = run(baton, person_env(server))
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert task_of(baton, 1)["state"] == "done"
    outputs = [json.dumps(r["json"].get("input", [])[-1:]) for r in server.requests
               if r.get("protocol") == "responses" and r.get("turn") in (1, 2, 3)]
    assert "# sample" in outputs[0]                               # the read happened
    assert "Read-only file system" in outputs[1] or "denied" in outputs[1].lower(), outputs[1]
    assert not (wt / "stray.txt").exists() and not (wt / "stray2.txt").exists()
    assert git(repo, "status", "--porcelain") == ""
    summary = [data_of(e).get("summary") for e in events_of(baton, 1)
               if (e.get("kind") or e.get("type")) == "task.done"]
    assert summary == ["README.md is a one-line heading: sample"]


def test_429_is_retried_then_fails_visibly(server, baton, repo, tmp_path):
    codex_bin()
    config = tmp_path / "personal.toml"
    config.write_text("[limits]\nretries = 1\n")
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Throttled", "prompt": "Create x.txt.", "player": "codex",
         "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    server.add_turns([{"error": 429}, {"error": 429}])
    result = run(baton, person_env(server, BATON_CONFIG=str(config)))
    assert result.returncode == 1
    assert task_of(baton, 1)["state"] == "failed"
    failed = [data_of(e) for e in events_of(baton, 1)
              if (e.get("kind") or e.get("type")) == "task.failed"]
    assert failed and "429" in failed[-1]["reason"], failed
    assert "429" in failed[-1].get("output", "")
    assert len([r for r in server.requests if r.get("status") == 429]) == 2


def test_usage_limit_pauses_then_resumes_same_thread(server, baton, repo, tmp_path):
    """`usage_limit_reached` with `resets_at` a few seconds ahead: Codex says "try again at
    H:MM AM" (minutes, local time), so Baton pauses until that minute has passed, then resumes
    the same thread, which finishes the task."""
    codex_bin()
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Limited", "prompt": "Create limit.txt.", "player": "codex",
         "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    resets_at = int(time.time()) + 3
    server.add_turns([
        {"error": 429, "body": {"error": {
            "type": "usage_limit_reached", "message": "The usage limit has been reached",
            "plan_type": "plus", "resets_at": resets_at, "resets_in_seconds": 3}}},
        sh("printf 'after the reset\\n' > limit.txt"),
        sh('baton report done --summary "finished after the reset"'),
        {"text": "Done."},
    ])
    result = run(baton, person_env(server), timeout=240)
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    seen = events_of(baton, 1)
    order = kinds(seen)
    assert order.index("task.paused") < order.index("task.resumed")
    paused = next(data_of(e) for e in seen if (e.get("kind") or e.get("type")) == "task.paused")
    assert paused["reason"] == "usage limit"
    assert resets_at <= paused["until"] <= resets_at + 61
    resumed_at = next(e["ts"] for e in seen if (e.get("kind") or e.get("type")) == "task.resumed")
    assert resumed_at >= resets_at
    threads = {r["headers"].get("session-id") for r in server.requests
               if r.get("protocol") == "responses" and r.get("headers", {}).get("session-id")}
    logs = attempt_logs(repo)
    started = [json.loads(line)["thread_id"] for line in logs.splitlines()
               if line.startswith('{"type":"thread.started"')]
    assert len(started) == 2 and started[0] == started[1], started   # the same thread resumed
    assert len(threads) <= 2
    assert task_of(baton, 1)["state"] == "landed"
    slug = baton.json("status", "--json")["plan"]["slug"]
    assert_contained(repo, f"baton/{slug}/1-limited", "limit.txt")


def test_plan_mixing_claude_code_and_codex_reaches_a_clean_handoff(server, baton, repo, tmp_path):
    """Both real CLIs and a native task in one plan (each builds on the one before), then
    handoff merge."""
    codex_bin()
    npm_bin("claude", "Claude Code", "@anthropic-ai/claude-code (see .ci/run)")
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.", "player": "claude-code",
         "mode": "build", "model": "sonnet"},
        {"id": 2, "title": "Extend hello", "prompt": "Append a line to hello.txt.",
         "player": "codex", "mode": "build", "depends_on": [1]},
        {"id": 3, "title": "Sign hello", "prompt": "Append a signature to hello.txt.",
         "player": "anthropic", "mode": "build", "depends_on": [2]},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt1 = worktree(repo, baton, 1)
    server.add_turns([
        {"tool": "Write", "input": {"file_path": str(wt1 / "hello.txt"), "content": "hello\n"}},
        {"tool": "mcp__baton__baton_report", "input": {"status": "done", "summary": "hello"}},
        {"text": "Reported."},
        sh("printf 'from codex\\n' >> hello.txt"),
        mcp_report("done", "extended hello.txt"),
        {"text": "Reported."},
        {"tool": "edit_file", "input": {"path": "hello.txt", "old_string": "from codex\n",
                                        "new_string": "from codex\nfrom native\n"}},
        {"tool": "baton_report", "input": {"status": "done", "summary": "signed"}},
        {"text": "Reported."},
    ])
    env = {**person_env(server), "ANTHROPIC_BASE_URL": server.url,
           "ANTHROPIC_API_KEY": "sk-ant-scripted", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "0"}
    result = run(baton, env)
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert [t["state"] for t in baton.json("status", "--json")["tasks"]] == ["landed"] * 3
    first = next(r for r in server.requests if r.get("protocol") == "anthropic"
                 and r.get("turn") == 0)["json"]
    assert first["model"].startswith("claude-sonnet")          # the task's model reached the CLI
    assert git(repo, "status", "--porcelain") == ""
    merged = baton("handoff", "merge", env=env)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert (repo / "hello.txt").read_text() == "hello\nfrom codex\nfrom native\n"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
