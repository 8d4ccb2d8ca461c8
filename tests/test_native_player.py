"""The native API players (`anthropic`, `openai`) end to end, over real HTTP, without mocks.

Each test starts Baton's scripted model server on 127.0.0.1, points the official SDK's
base-URL and key variables at it (the conductor and the agent inherit them), loads a plan
on the native player and runs it with the real `baton` CLI in a real git repository. The
native agent loop (`baton_tui.native_agent`) runs as its own process under the
attempt shim, streams the model's answers, carries out the scripted tool calls with its own
tools, and reports through `baton_report`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baton_tui.players.base import AttemptContext
from baton_tui.players.builtin import BUILTIN_CLASSES
from baton_tui.players.native import AnthropicPlayer, OpenAIPlayer
from baton_tui.native_agent import reset_time
from conftest import git, write_plan

pytestmark = pytest.mark.slow

MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5"}
PROTOCOL = {"anthropic": "anthropic", "openai": "chat"}


def limits(repo: Path, baton, **values: object) -> None:
    """A baton.toml with `[limits]` (no commands in it, but trusted like any other)."""
    body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())
    (repo / "baton.toml").write_text(f"[limits]\n{body}")
    assert baton("trust").returncode == 0


def load(repo: Path, baton, player: str, **task: object) -> None:
    if player == "openai":
        # `openai` takes the names its endpoint lists; the scripted server lists only its own
        # (it answers any), so "the person" names gpt-5 (priced, hence a cost) in config.
        from baton_tui.paths import personal_config_path

        personal_config_path().parent.mkdir(parents=True, exist_ok=True)
        personal_config_path().write_text('[players.openai]\nmodels = ["gpt-5"]\n')
    spec = {"id": 1, "title": "Native task", "prompt": "Do the native task.", "player": player,
            "model": MODELS[player], **task}
    loaded = baton("plan", "--from", str(write_plan(repo.parent / "plan.json", [spec])))
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr


def task_of(baton) -> dict:
    return baton.json("status", "--json")["tasks"][0]


def events(baton, kind: str) -> list[dict]:
    return [e for e in map(json.loads, baton("log", "--json").stdout.splitlines())
            if e["kind"] == kind]


def tool_results(request: dict, provider: str) -> list[str]:
    """The tool results a request sends back, as text."""
    messages = request["json"]["messages"]
    if provider == "openai":
        return [m["content"] for m in messages if m["role"] == "tool"]
    out = []
    for m in messages:
        if m["role"] == "user" and isinstance(m["content"], list):
            out += [b["content"] for b in m["content"] if b.get("type") == "tool_result"]
    return out


def tool_names(request: dict, provider: str) -> set[str]:
    tools = request["json"].get("tools") or []
    if provider == "openai":
        return {t["function"]["name"] for t in tools}
    return {t["name"] for t in tools}


def report(summary: str) -> dict:
    return {"tool": "baton_report", "input": {"status": "done", "summary": summary}}


# --------------------------------------------------------------------------- build


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_build_task_edits_reports_and_lands_with_tokens_and_cost(repo, baton, model_server,
                                                                 provider):
    server = model_server([
        {"text": "Reading first.", "tool": "read_file", "input": {"path": "README.md"}},
        {"tools": [{"tool": "write_file", "input": {"path": "src/hello.py",
                                                     "content": "print('hello')\n"}},
                   {"tool": "edit_file", "input": {"path": "README.md", "old_string": "# sample",
                                                   "new_string": "# sample, edited"}},
                   {"tool": "run_command", "input": {"command": "ls src > listing.txt"}},
                   {"tool": "baton_checkpoint", "input": {"what": "replace README heading"}}]},
        {"tool": "baton_report", "input": {"status": "done", "summary": "hello and README"}},
        {"text": "All done."},
    ])
    load(repo, baton, provider, checkpoint=True)
    result = baton("run", "--approve")
    assert result.returncode == 0, result.stdout + result.stderr

    task = task_of(baton)
    assert task["state"] == "landed", task
    assert not task.get("flags"), task                      # it did call the checkpoint
    branch = task["branch"]
    assert git(repo, "show", f"{branch}:src/hello.py") == "print('hello')"
    assert git(repo, "show", f"{branch}:README.md") == "# sample, edited"
    assert git(repo, "show", f"{branch}:listing.txt") == "hello.py"
    assert (repo / "README.md").read_text() == "# sample\n"   # the person's checkout untouched

    # Four streamed model requests on the provider's own wire, with the build tools offered.
    model = server.model_requests()
    assert [r["protocol"] for r in model] == [PROTOCOL[provider]] * 4
    assert all(r["stream"] for r in model)
    assert {"read_file", "write_file", "edit_file", "run_command", "list_files", "grep",
            "baton_report", "baton_checkpoint"} <= tool_names(model[0], provider)
    assert model[0]["json"]["model"] == MODELS[provider]
    # `run --approve` answers checkpoints at once; the agent hears "go ahead".
    assert tool_results(model[2], provider)[-1].startswith("GO: approved (run --approve)")
    assert events(baton, "task.checkpoint")[0]["data"]["what"] == "replace README heading"

    # Tokens and cost are counted and recorded per task.
    assert task["tokens"] > 0
    assert task["cost"] > 0
    usage = events(baton, "task.usage")
    assert usage and usage[0]["data"]["tokens"] == task["tokens"]
    summary = baton.json("status", "--json")["summary"]
    assert summary["tokens"] == task["tokens"]


# --------------------------------------------------------------------------- research


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_research_cannot_edit_runs_commands_and_reports(repo, baton, model_server, provider):
    server = model_server([
        {"tool": "write_file", "input": {"path": "notes.txt", "content": "should not exist"}},
        {"tool": "read_file", "input": {"path": "README.md"}},
        {"tool": "run_command", "input": {"command": "wc -l README.md"}},
        report("README holds one heading"),
        {"text": "Reported."},
    ])
    load(repo, baton, provider, mode="research", title="Survey")
    result = baton("run", "--approve")
    assert result.returncode == 0, result.stdout + result.stderr
    task = task_of(baton)
    assert task["state"] == "done", task
    model = server.model_requests()
    offered = tool_names(model[0], provider)
    assert {"read_file", "list_files", "grep", "run_command", "baton_report"} <= offered
    assert not offered & {"write_file", "edit_file"}
    refused = tool_results(model[1], provider)[0]
    assert "not available in a read-only research task" in refused
    assert "# sample" in tool_results(model[2], provider)[-1]
    assert "1 README.md" in tool_results(model[3], provider)[-1]     # its shell ran
    reported = events(baton, "task.reported")
    assert reported[-1]["data"]["summary"] == "README holds one heading"
    assert not (repo / "notes.txt").exists()


# --------------------------------------------------------------------------- containment


def test_paths_outside_the_worktree_are_refused(repo, baton, model_server, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    server = model_server([
        {"tools": [
            {"tool": "write_file", "input": {"path": "../escaped.txt", "content": "x"}},
            {"tool": "write_file", "input": {"path": str(outside / "abs.txt"), "content": "x"}},
            {"tool": "run_command", "input": {"command": ["ln", "-s", str(outside), "link"]}},
        ]},
        {"tools": [
            {"tool": "write_file", "input": {"path": "link/through.txt", "content": "x"}},
            {"tool": "read_file", "input": {"path": "/etc/hostname"}},
            {"tool": "edit_file", "input": {"path": ".git", "old_string": "a",
                                            "new_string": "b"}},
            {"tool": "run_command", "input": {"command": "rm link"}},
            {"tool": "write_file", "input": {"path": "inside.txt", "content": "fine\n"}},
        ]},
        report("wrote inside only"),
        {"text": "Done."},
    ])
    load(repo, baton, "anthropic")
    result = baton("run", "--approve")
    assert result.returncode == 0, result.stdout + result.stderr
    assert list(outside.iterdir()) == []
    assert not (repo.parent / "escaped.txt").exists()
    model = server.model_requests()
    first = tool_results(model[1], "anthropic")
    assert "outside your worktree" in first[0] and "outside your worktree" in first[1]
    second = tool_results(model[2], "anthropic")[3:]
    assert "outside your worktree" in second[0]          # through the symlink
    assert "outside your worktree" in second[1]          # an absolute path elsewhere
    assert "refused" in second[2]                        # Baton's git metadata
    task = task_of(baton)
    assert task["state"] == "landed"
    assert git(repo, "show", f"{task['branch']}:inside.txt") == "fine"


def test_reset_time_from_headers_and_bodies():
    now = 1_000_000_000.0
    assert reset_time({"anthropic-ratelimit-unified-reset": "1000003600"}, None, now) == 1000003600
    assert reset_time({"retry-after": "30"}, None, now) == now + 30
    assert reset_time({"x-ratelimit-reset-requests": "6m0s"}, None, now) == now + 360
    assert reset_time({"x-ratelimit-reset-tokens": "250ms"}, None, now) == now + 0.25
    assert reset_time({"anthropic-ratelimit-requests-reset": "2001-09-09T01:47:00Z"}, None,
                      now) == 1000000020
    body = {"error": {"type": "usage_limit_reached", "resets_in_seconds": 60}}
    assert reset_time({}, body, now) == now + 60
    assert reset_time({}, {"error": {"type": "rate_limit_error"}}, now) is None


# --------------------------------------------------------------------------- usage limits


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_usage_limit_pauses_until_reset_then_resumes_the_session(repo, baton, model_server,
                                                                 provider):
    # Relative resets (counted from the 429 itself), so a slow machine cannot outrun them;
    # the absolute `anthropic-ratelimit-unified-reset` is covered by the unit test above.
    headers = ({"anthropic-ratelimit-unified-status": "rejected", "retry-after": "5"}
               if provider == "anthropic" else {"x-ratelimit-reset-requests": "5s"})
    server = model_server([
        {"tool": "write_file", "input": {"path": "part1.txt", "content": "one\n"}},
        {"error": 429, "headers": headers},
        {"tool": "write_file", "input": {"path": "part2.txt", "content": "two\n"}},
        report("both parts"),
        {"text": "Finished after the reset."},
    ])
    limits(repo, baton, max_wait="0s")     # no waiting: the run stops at the limit and says so
    load(repo, baton, provider)
    started = time.time()
    first = baton("run", "--approve")
    assert first.returncode == 3, first.stdout + first.stderr
    task = task_of(baton)
    assert task["state"] == "paused"
    assert started + 5 <= task["until"] <= time.time() + 5
    paused = events(baton, "task.paused")[-1]["data"]
    assert paused["reason"] == "usage limit" and paused["until"] == task["until"]

    time.sleep(max(0.0, task["until"] - time.time()) + 0.2)
    resumed = baton("resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    task = task_of(baton)
    assert task["state"] == "landed", task
    assert git(repo, "show", f"{task['branch']}:part1.txt") == "one"
    assert git(repo, "show", f"{task['branch']}:part2.txt") == "two"

    # The resumed attempt continued the same conversation: its first request carries the
    # first attempt's tool call and result, then the resume note.
    model = [r for r in server.model_requests() if r["status"] == 200]
    after = model[1]["json"]["messages"]
    assert "wrote part1.txt" in json.dumps(after)
    assert "You were paused" in json.dumps(after[-1])
    assert any(e["data"].get("attempt") for e in events(baton, "task.resumed"))


def test_usage_limit_within_max_wait_is_waited_through(repo, baton, model_server):
    server = model_server([
        {"error": 429, "headers": {"retry-after": "2"}},
        report("after waiting"),
        {"text": "Done."},
    ])
    load(repo, baton, "openai")
    result = baton("run", "--approve")
    assert result.returncode == 0, result.stdout + result.stderr
    assert task_of(baton)["state"] == "landed"
    assert events(baton, "task.paused")[0]["data"]["until"]
    assert len(server.model_requests()) == 3


def test_rate_limit_without_reset_retries_then_fails_visibly(repo, baton, model_server):
    server = model_server([{"error": 429}, {"error": 429}, report("never reached")])
    limits(repo, baton, retries=1)
    load(repo, baton, "anthropic")
    result = baton("run", "--approve")
    assert result.returncode == 1, result.stdout + result.stderr
    task = task_of(baton)
    assert task["state"] == "failed"
    assert "rate limited (429) after 1 retries" in task["reason"]
    queued = [e for e in events(baton, "task.queued") if e.get("data", {}).get("rate_limited")]
    assert len(queued) == 1
    assert len(server.model_requests()) == 2
    assert not events(baton, "task.paused")


# --------------------------------------------------------------------------- the adapter


def test_adapters_are_registered_detected_and_build_their_command_line(tmp_path, monkeypatch):
    assert BUILTIN_CLASSES["anthropic"] is AnthropicPlayer
    assert BUILTIN_CLASSES["openai"] is OpenAIPlayer
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert not AnthropicPlayer().detect().ready
    assert AnthropicPlayer(env={"ANTHROPIC_API_KEY": "k"}).detect().ready
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert OpenAIPlayer().detect().ready

    anthropic = AnthropicPlayer(extra_models=["my-claude"])
    assert "my-claude" in anthropic.catalog()
    assert anthropic.model_problem("claude-future-9") is None
    assert anthropic.model_problem("gpt-5") is not None
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)   # OpenAI's own API: its names
    assert "cannot start model" in OpenAIPlayer().model_problem("any-local-model")
    assert OpenAIPlayer().model_problem("gpt-5.2-pro") is None
    assert OpenAIPlayer(extra_models=["any-local-model"]).model_problem("any-local-model") is None

    attempt = tmp_path / "task-1" / "attempt-2"
    attempt.mkdir(parents=True)
    ctx = AttemptContext(task_id=1, mode="research", prompt_path=tmp_path / "p.md", prompt="",
                         worktree=tmp_path, attempt_dir=attempt, env={}, effort="high")
    argv = anthropic.launch(ctx).argv
    # Baton's own module, never a package of that name in the worktree (`-P`)
    assert argv[1:4] == ["-P", "-m", "baton_tui.native_agent"]
    assert argv[argv.index("--mode") + 1] == "research"
    assert argv[argv.index("--model") + 1] == anthropic.default_model
    assert argv[argv.index("--transcript") + 1] == str(attempt / "transcript.json")
    assert argv[argv.index("--effort") + 1] == "high"

    # Resume finds the previous attempt's transcript by its session id.
    previous = tmp_path / "task-1" / "attempt-1" / "transcript.json"
    previous.parent.mkdir()
    previous.write_text(json.dumps({"id": "s-1", "messages": []}))
    ctx.session_id, ctx.resume_message = "s-1", "go on"
    argv = anthropic.resume(ctx).argv
    assert argv[argv.index("--resume") + 1] == str(previous)
    assert argv[argv.index("--resume-message") + 1] == "go on"
    ctx.session_id = "unknown"
    assert anthropic.resume(ctx) is None

    log = "\n".join(json.dumps(e) for e in [
        {"type": "init", "session_id": "s-1"},
        {"type": "usage", "input_tokens": 10, "output_tokens": 5, "cost": 0.5},
        {"type": "usage", "input_tokens": 1, "output_tokens": 1, "cost": 0.25},
        {"type": "error", "status": 429, "reset": 123.0, "message": "limit"}])
    out = anthropic.outcome("noise\n" + log)
    assert (out.session_id, out.tokens, out.cost, out.limit_until) == ("s-1", 17, 0.75, 123.0)
    out = anthropic.outcome(json.dumps({"type": "error", "status": 429, "reset": None}))
    assert out.rate_limited and out.limit_until is None
    assert anthropic.progress(json.dumps({"type": "tool", "name": "write_file",
                                          "summary": "a.py", "ok": True})) == "write_file a.py"


def test_turn_limit_ends_the_loop_without_a_report(tmp_path, model_server):
    """The loop stops after --max-turns model turns; its outcome says why (no report: failed)."""
    server = model_server([{"tool": "list_files", "input": {}}] * 3)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    prompt = tmp_path / "prompt.md"
    prompt.write_text("# Task 1: loop\nKeep listing.")
    done = subprocess.run(
        [sys.executable, "-m", "baton_tui.native_agent", "--provider", "anthropic",
         "--model", "claude-haiku-4-5", "--prompt-file", str(prompt), "--transcript",
         str(tmp_path / "transcript.json"), "--max-turns", "2"],
        cwd=worktree, capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert len(server.model_requests()) == 2
    outcome = AnthropicPlayer().outcome(done.stdout)
    assert outcome.error == "turn limit (2) reached" and outcome.success_event is False
    assert outcome.tokens > 0 and outcome.cost > 0
    saved = json.loads((tmp_path / "transcript.json").read_text())
    assert saved["id"] == outcome.session_id and saved["turns"] == 2
    assert len(saved["messages"]) == 5      # prompt, then (answer, tool results) twice


def test_undecided_checkpoint_ends_the_turn_and_the_answer_resumes_the_session(repo, baton,
                                                                               model_server):
    server = model_server([
        {"tool": "baton_checkpoint", "input": {"what": "drop the old table"}},
        {"text": "Waiting for the person's answer."},
        {"tools": [{"tool": "write_file", "input": {"path": "migrated.txt", "content": "ok\n"}},
                   report("migrated after the yes")]},
        {"text": "Done."},
    ])
    limits(repo, baton, checkpoint_wait="1s")
    load(repo, baton, "anthropic", checkpoint=True)
    assert baton("approve").returncode == 0
    first = baton("run")
    assert first.returncode == 3, first.stdout + first.stderr
    assert task_of(baton)["state"] == "checkpoint"

    answered = baton("checkpoint-answer", "1", "yes")
    assert answered.returncode == 0, answered.stderr
    resumed = baton("resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    task = task_of(baton)
    assert task["state"] == "landed", task
    assert git(repo, "show", f"{task['branch']}:migrated.txt") == "ok"
    model = server.model_requests()
    assert tool_results(model[1], "anthropic")[0].startswith("WAIT: not decided yet")
    history = json.dumps(model[2]["json"]["messages"])
    assert "drop the old table" in history and "YES" in history
