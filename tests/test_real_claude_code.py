"""Claude Code for real: the pinned npm build, driven by Baton against the scripted server.

`.ci/run` installs `@anthropic-ai/claude-code` into `.ci/npm`; without it these tests FAIL
(nothing skips silently). Each test runs in a throwaway HOME (conftest) whose environment is
"the person's": `ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY` point at Baton's scripted model
server on 127.0.0.1, and Baton inherits them. No vendor is reached.

The subscriber usage limit ("You've hit your session limit · resets …") cannot be produced with
an API key, so that path runs a scripted `claude` that replays Claude Code's documented
stream-json messages.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


from baton_tui.demo.server import ScriptedServer
from conftest import git, write_plan
from real_cli_kit import (
    NPM_BIN, assert_contained, attempt_logs, data_of, events_of, kinds, npm_bin, run, task_of,
    worktree,
)

PIN = "@anthropic-ai/claude-code@2.1.332"


def claude_bin() -> Path:
    return npm_bin("claude", "Claude Code", PIN)


def person_env(server: ScriptedServer, **extra: str) -> dict[str, str]:
    """The person's environment as Claude Code needs it; Baton only adds to it."""
    return {
        "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-ant-scripted",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        **extra,
    }


# --------------------------------------------------------------------------- tests

def test_claude_code_detected_and_ready(server, baton):
    claude_bin()
    out = baton("players", "--json", env=person_env(server))
    assert out.returncode == 0, out.stderr
    entry = next(p for p in json.loads(out.stdout) if p["name"] == "claude-code")
    assert entry["ready"] is True, entry
    assert PIN.rsplit("@", 1)[1] in (entry["version"] or ""), "not the pinned build"


def test_build_edits_with_write_and_reports_over_mcp_and_shell(server, baton, repo, tmp_path):
    claude_bin()
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.", "player": "claude-code",
         "mode": "build"},
        {"id": 2, "title": "Write bye", "prompt": "Create bye.txt.", "player": "claude-code",
         "mode": "build", "depends_on": [1]},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt1, wt2 = worktree(repo, baton, 1), worktree(repo, baton, 2)
    server.add_turns([
        {"text": "Writing the file.", "tool": "Write",
         "input": {"file_path": str(wt1 / "hello.txt"), "content": "hello from claude\n"}},
        {"tool": "mcp__baton__baton_report",
         "input": {"status": "done", "summary": "wrote hello.txt (mcp)"}},
        {"text": "Reported."},
        {"tool": "Write", "input": {"file_path": str(wt2 / "bye.txt"), "content": "bye\n"}},
        {"tool": "Bash", "input": {"command": 'baton report done --summary "wrote bye.txt (shell)"',
                                   "description": "Report to Baton"}},
        {"text": "Reported."},
    ])
    result = run(baton, person_env(server))
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    status = baton.json("status", "--json")
    assert [t["state"] for t in status["tasks"]] == ["landed", "landed"]
    done = [data_of(e).get("summary") for e in events_of(baton, 1) + events_of(baton, 2)
            if (e.get("kind") or e.get("type")) == "task.done"]
    assert done == ["wrote hello.txt (mcp)", "wrote bye.txt (shell)"]
    slug = status["plan"]["slug"]
    assert_contained(repo, f"baton/{slug}/1-write-hello", "hello.txt")
    assert_contained(repo, f"baton/{slug}/2-write-bye", "bye.txt")
    assert git(repo, "show", f"baton/{slug}/1-write-hello:hello.txt") == "hello from claude"
    # the real CLI talked to the scripted server, with the report tool offered
    model_calls = [r for r in server.requests if r.get("protocol") == "anthropic"
                   and r.get("turn") is not None]
    assert len(model_calls) == 6
    first = model_calls[0]["json"]
    names = {t.get("name") for t in first.get("tools") or []}
    assert {"Write", "Bash", "mcp__baton__baton_report"} <= names


def test_research_reads_reports_over_mcp_and_writes_nothing(server, baton, repo, tmp_path):
    claude_bin()
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Study readme", "prompt": "What does README.md say?",
         "player": "claude-code", "mode": "research"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1, "-research-1")
    server.add_turns([
        {"tool": "Read", "input": {"file_path": str(wt / "README.md")}},
        {"tool": "Write", "input": {"file_path": str(wt / "stray.txt"), "content": "no\n"}},
        {"tool": "Bash", "input": {"command": "echo no > stray2.txt", "description": "write"}},
        {"tool": "mcp__baton__baton_report",
         "input": {"status": "done", "summary": "README.md is a one-line heading: sample"}},
        {"text": "Reported."},
    ])
    result = run(baton, person_env(server))
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert task_of(baton, 1)["state"] == "done"
    log = attempt_logs(repo)
    assert "# sample" in log                      # the Read really happened
    assert not (wt / "stray.txt").exists() and not (wt / "stray2.txt").exists()
    assert git(repo, "status", "--porcelain") == ""
    first = next(r for r in server.requests if r.get("turn") == 0)["json"]
    names = {t.get("name") for t in first.get("tools") or []}
    assert "Write" not in names and "Bash" not in names and "Edit" not in names
    assert {"Read", "mcp__baton__baton_report"} <= names
    summary = [data_of(e).get("summary") for e in events_of(baton, 1)
               if (e.get("kind") or e.get("type")) == "task.done"]
    assert summary == ["README.md is a one-line heading: sample"]


def test_429_is_retried_then_fails_visibly(server, baton, repo, tmp_path):
    claude_bin()
    config = tmp_path / "personal.toml"
    config.write_text("[limits]\nretries = 1\n")
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Throttled", "prompt": "Create x.txt.", "player": "claude-code",
         "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    server.add_turns([{"error": 429}, {"error": 429}])
    result = run(baton, person_env(server, BATON_CONFIG=str(config)))
    assert result.returncode == 1
    task = task_of(baton, 1)
    assert task["state"] == "failed"
    failed = [data_of(e) for e in events_of(baton, 1)
              if (e.get("kind") or e.get("type")) == "task.failed"]
    assert failed and "429" in failed[-1]["reason"], failed
    assert "API Error" in failed[-1].get("output", "") or "429" in failed[-1].get("output", "")
    assert len([r for r in server.requests if r.get("status") == 429]) == 2


FAKE_CLAUDE = r'''#!PYTHON
"""A scripted `claude` replaying Claude Code's documented subscriber-limit messages."""
import json, os, subprocess, sys, time
argv = sys.argv[1:]
with open(os.environ["FAKE_CLAUDE_LOG"], "a") as fh:
    fh.write(json.dumps(argv) + "\n")
if argv == ["--version"]:
    print("2.1.197 (Claude Code)"); sys.exit(0)
def emit(obj):
    print(json.dumps(obj), flush=True)
resume = argv[argv.index("--resume") + 1] if "--resume" in argv else None
sid = resume or argv[argv.index("--session-id") + 1]
emit({"type": "system", "subtype": "init", "session_id": sid, "model": "claude-opus-4-8",
      "tools": ["Bash", "Write"], "cwd": os.getcwd()})
if resume is None:
    reset = int(time.time()) + 3
    shown = time.strftime("%-I:%M%p", time.gmtime(reset)).lower()
    message = f"You've hit your session limit \u00b7 resets {shown} (UTC)"
    emit({"type": "rate_limit_event", "rate_limit_info": {"status": "rejected",
          "resetsAt": reset, "rateLimitType": "five_hour"}, "session_id": sid})
    emit({"type": "assistant", "message": {"id": "msg_1", "model": "<synthetic>", "role":
          "assistant", "content": [{"type": "text", "text": message}]}, "session_id": sid})
    emit({"type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
          "result": message, "session_id": sid, "total_cost_usd": 0, "num_turns": 1,
          "usage": {"input_tokens": 0, "output_tokens": 0}})
    sys.exit(1)
with open("limit.txt", "w") as fh:
    fh.write("after the reset\n")
done = subprocess.run(["baton", "report", "done", "--summary", "finished after the reset"],
                      capture_output=True, text=True)
emit({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result",
      "tool_use_id": "t1", "content": done.stdout + done.stderr}]}, "session_id": sid})
emit({"type": "result", "subtype": "success", "is_error": False, "result": "Done.",
      "session_id": sid, "total_cost_usd": 0.01, "num_turns": 2,
      "usage": {"input_tokens": 100, "output_tokens": 20}})
'''


def test_subscriber_usage_limit_pauses_then_resumes_same_session(server, baton, repo, tmp_path):
    claude_bin()
    fake_dir = tmp_path / "fake-bin"
    fake_dir.mkdir()
    fake = fake_dir / "claude"
    fake.write_text(FAKE_CLAUDE.replace("#!PYTHON", f"#!{sys.executable}"))
    fake.chmod(0o755)
    calls = tmp_path / "calls.jsonl"
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Limited", "prompt": "Create limit.txt.", "player": "claude-code",
         "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    env = person_env(server, FAKE_CLAUDE_LOG=str(calls))
    env["PATH"] = f"{fake_dir}{os.pathsep}{env['PATH']}"
    started = time.monotonic()
    result = run(baton, env)
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert time.monotonic() - started >= 2.0        # it waited for the reset
    kinds_seen = kinds(events_of(baton, 1))
    assert kinds_seen.index("task.paused") < kinds_seen.index("task.resumed")
    paused = next(data_of(e) for e in events_of(baton, 1)
                  if (e.get("kind") or e.get("type")) == "task.paused")
    assert paused["reason"] == "usage limit"
    assert time.time() - 60 < paused["until"] < time.time()   # the exact reset, now passed
    argvs = [json.loads(line) for line in calls.read_text().splitlines()]
    runs = [a for a in argvs if a != ["--version"]]
    assert len(runs) == 2
    first_sid = runs[0][runs[0].index("--session-id") + 1]
    assert runs[1][runs[1].index("--resume") + 1] == first_sid
    assert task_of(baton, 1)["state"] == "landed"
    slug = baton.json("status", "--json")["plan"]["slug"]
    assert_contained(repo, f"baton/{slug}/1-limited", "limit.txt")
