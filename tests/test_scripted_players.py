"""Players that cannot be installed here — Amp, Cursor Agent, Goose — driven by Baton against
scripted programs that replay their documented headless formats (tests/agents/*_replay.py,
profiles in tests/helpers/scripted_players.py): build, research (read-only), report, usage
limit → pause → resume in the same session, and stop (an exit 0 after a signal is not success).
"""

from __future__ import annotations

import json
import time

import pytest

from conftest import git, write_plan
from helpers.real_cli_kit import attempt_logs, data_of, events_of, kinds, task_of, worktree
from helpers.run_kit import wait_for, wait_idle
from helpers.scripted_players import PROFILES


@pytest.fixture(params=PROFILES, ids=lambda p: p.name)
def player(request, tmp_path):
    return request.param(tmp_path)


def load(baton, tmp_path, player, mode="build", title="Write hello", **task):
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": title, "prompt": "Create hello.txt.", "player": player.name,
         "mode": mode, **task}])
    out = baton("plan", "--from", str(plan), env=player.env())
    assert out.returncode == 0, out.stderr


def done_summaries(baton) -> list[str]:
    return [data_of(e)["summary"] for e in events_of(baton, 1) if e.get("kind") == "task.done"]


def test_detected_ready_when_installed_and_signed_in(player, baton):
    found = {p["name"]: p for p in baton.json("players", "--json") if p["name"] == player.name}
    assert found[player.name]["ready"] is False        # not on PATH in the plain environment
    out = baton("players", "--json", env=player.env())
    entry = next(p for p in json.loads(out.stdout) if p["name"] == player.name)
    assert entry["ready"] is True and entry["version"], entry
    unsigned = {k: "" for k in player.signed_in}
    out = baton("players", "--json", env={**player.env(), **unsigned})
    entry = next(p for p in json.loads(out.stdout) if p["name"] == player.name)
    assert entry["ready"] is False and "not signed in" in entry["reason"] and entry["fix"]


def test_build_edits_reports_and_lands(player, baton, repo, tmp_path):
    load(baton, tmp_path, player, model=player.model)
    wt = worktree(repo, baton, 1)
    env = player.script([player.write(wt / "hello.txt", "hi\n"),
                         *player.report("build", "done", "wrote it")])
    out = baton("run", "--approve", env=env)
    assert out.returncode == 0, out.stdout + out.stderr + attempt_logs(repo)[-3000:]
    assert task_of(baton, 1)["state"] == "landed"
    slug = baton.json("status", "--json")["plan"]["slug"]
    assert git(repo, "show", f"baton/{slug}/1-write-hello:hello.txt") == "hi"
    assert done_summaries(baton) == ["wrote it"]
    argv = player.calls()[0]
    assert argv[argv.index(player.model_flag) + 1] == player.model
    nonce = [line for line in attempt_logs(repo).splitlines() if "bnc_" in line]
    assert not any("bnc_" in word for word in argv), "the nonce must never be on argv"
    assert not nonce, "the nonce must never reach the agent's output"
    if player.name == "amp":
        assert "--dangerously-allow-all" in argv
    if player.name == "cursor-agent":
        assert "--force" in argv and argv[argv.index("--workspace") + 1] == str(wt)
    if player.name == "goose":
        assert "--no-profile" not in argv and \
            argv[argv.index("--with-builtin") + 1] == "developer"


def test_research_cannot_write_and_still_reports(player, baton, repo, tmp_path):
    load(baton, tmp_path, player, mode="research", title="Study")
    wt = worktree(repo, baton, 1, "-research-1")
    turns = [player.write(wt / "stray.txt", "no"), player.shell("echo no > stray2.txt")]
    if player.name == "goose":   # reads through the read-only server Baton lends it
        turns.append({"tool": "baton-read__read_file", "args": {"path": "README.md"}})
        turns.append({"tool": "baton-read__read_file", "args": {"path": "../../outside"}})
    env = player.script([*turns, *player.report("research", "done", "a sample readme")])
    out = baton("run", "--approve", env=env)
    assert out.returncode == 0, out.stdout + out.stderr + attempt_logs(repo)[-3000:]
    assert task_of(baton, 1)["state"] == "done"
    assert not (wt / "stray.txt").exists() and not (wt / "stray2.txt").exists()
    assert done_summaries(baton) == ["a sample readme"]
    logs = attempt_logs(repo)
    if player.name == "goose":
        assert "# sample" in logs and "outside the folder this task may read" in logs
        assert "--with-builtin" not in player.calls()[0]
        assert "--no-profile" in player.calls()[0]   # an extension of the person's could write
    if player.name == "cursor-agent":
        assert "--force" not in player.calls()[0]
    if player.name == "amp":
        assert "--dangerously-allow-all" not in player.calls()[0]


def test_usage_limit_pauses_then_resumes_the_same_session(player, baton, repo, tmp_path):
    load(baton, tmp_path, player, title="Limited")
    wt = worktree(repo, baton, 1)
    env = player.script(
        [player.write(wt / "half.txt", "half\n"),
         player.limit("You've hit your usage limit for this plan. Please try again in 3s.")],
        [player.write(wt / "limit.txt", "after the reset\n"),
         *player.report("build", "done", "finished after the reset")])
    started = time.monotonic()
    out = baton("run", "--approve", env=env, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr + attempt_logs(repo)[-3000:]
    assert time.monotonic() - started >= 2.5                 # it waited for the reset
    seen = events_of(baton, 1)
    order = kinds(seen)
    assert order.index("task.paused") < order.index("task.resumed")
    paused = next(data_of(e) for e in seen if e.get("kind") == "task.paused")
    assert paused["reason"] == "usage limit", paused
    first, second = player.calls()
    assert player.same_session(first, second, attempt_logs(repo)), (first, second)
    assert task_of(baton, 1)["state"] == "landed"
    slug = baton.json("status", "--json")["plan"]["slug"]
    assert git(repo, "show", f"baton/{slug}/1-limited:limit.txt") == "after the reset"
    assert git(repo, "show", f"baton/{slug}/1-limited:half.txt") == "half"


def test_stop_is_not_success_even_when_the_cli_exits_0(player, baton, repo, tmp_path):
    load(baton, tmp_path, player, title="Slow model")
    wt = worktree(repo, baton, 1)
    env = player.script([player.sleep(60)],
                        [player.write(wt / "after.txt", "after the stop\n"),
                         *player.report("build", "done", "finished after the stop")])
    assert baton("run", "--approve", "--detach", env=env).returncode == 0
    wait_for(lambda: player.calls(), timeout=60, what=f"{player.name} to start")
    time.sleep(0.5)     # the replay is now waiting on its "model"
    asked = time.monotonic()
    assert baton("stop", "1").returncode == 0
    stopped = wait_idle(baton, timeout=60)
    assert time.monotonic() - asked < 30
    task = stopped["tasks"][0]
    assert task["state"] == "failed" and "stopped" in task["reason"], task
    assert "task.done" not in kinds(events_of(baton, 1))
    assert baton("retry", "1", env=env).returncode == 0
    finished = wait_idle(baton, timeout=120)
    assert finished["tasks"][0]["state"] == "landed", attempt_logs(repo)[-3000:]


# --------------------------------------------------------------------------- one player each

def test_a_baton_line_counts_only_with_exit_0(baton, repo, tmp_path):
    """Cursor's research report is a `BATON:` line of its reply: a run that then exits 1 has
    not finished (the same rule as Aider's)."""
    from helpers.scripted_players import CursorAgent

    player = CursorAgent(tmp_path)
    load(baton, tmp_path, player, mode="research", title="Study")
    env = player.script([{"text": "BATON: done looks fine"}, {"exit": 1}])
    out = baton("run", "--approve", env=env)
    assert out.returncode == 1, out.stdout + out.stderr
    failed = [data_of(e) for e in events_of(baton, 1) if e.get("kind") == "task.failed"]
    assert "counts only with exit status 0" in failed[-1]["reason"], failed


def test_goose_builds_with_the_persons_own_extensions(baton, repo, tmp_path):
    """A build task runs Goose with the person's profile: an extension their config.yaml
    enables works unchanged (research leaves it out: see the research test above)."""
    from helpers.scripted_players import Goose

    player = Goose(tmp_path)
    config = tmp_path / "xdg" / "goose" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("GOOSE_PROVIDER: openai\nextensions:\n  notes:\n    enabled: true\n"
                      "    name: notes\n    type: builtin\n")
    load(baton, tmp_path, player)
    env = player.script([{"tool": "notes__hello", "args": {}},
                         *player.report("build", "done", "used my notes")])
    out = baton("run", "--approve", env={**env, "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert out.returncode == 0, out.stdout + out.stderr + attempt_logs(repo)[-3000:]
    assert "notes from the person's profile" in attempt_logs(repo)
    assert done_summaries(baton) == ["used my notes"]


def test_goose_refuses_a_model_its_provider_lacks_or_says_why_it_cannot_know(baton, tmp_path):
    from helpers.scripted_players import Goose

    player = Goose(tmp_path)
    env = player.env()                    # GOOSE_PROVIDER=openai: OpenAI's names
    load(baton, tmp_path, player, title="Pick")
    assert baton("task-model", "1", "gpt-4o", env=env).returncode == 0
    out = baton("task-model", "1", "nonsense", env=env)
    assert out.returncode == 2
    assert "player 'goose' cannot start model 'nonsense' (Goose's provider 'openai'" in out.stderr
    listed = tmp_path / "personal.toml"
    listed.write_text('[players.goose]\nmodels = ["my-gateway-model"]\n')
    assert baton("task-model", "1", "my-gateway-model",
                 env={**env, "BATON_CONFIG": str(listed)}).returncode == 0
    local = {**env, "GOOSE_PROVIDER": "ollama"}   # a provider whose names Baton cannot know
    assert baton("task-model", "1", "qwen3-coder:30b", env=local).returncode == 0
    out = baton("approve", env=local)
    assert out.returncode == 0, out.stderr
    assert "goose's provider 'ollama' has no model list Baton can read, so model " \
        "'qwen3-coder:30b' is not checked" in out.stdout + out.stderr


def test_doctor_says_which_adapters_never_met_their_real_cli(baton, tmp_path):
    """Amp, Cursor Agent and Goose were only ever run against replays; doctor says so, naming
    the version whose documented formats the replay (and the adapter) follow."""
    from baton_tui.players.builtin import BUILTIN_CLASSES
    from helpers.scripted_players import PROFILES

    out = baton("doctor")
    for profile in PROFILES:
        version = BUILTIN_CLASSES[profile.name].replayed_version
        assert version, profile.name
        assert (f"! {profile.name}: Baton's adapter has never been run against the real "
                f"{profile.name} CLI, only against replays of the formats {profile.name} "
                f"{version} documents") in out.stdout
        replay = profile(tmp_path)                  # the replay answers as that version
        listed = json.loads(baton("players", "--json", env=replay.env()).stdout)
        assert next(p for p in listed if p["name"] == profile.name)["version"] == version
    for real in ("claude-code", "codex", "opencode", "gemini", "aider"):
        assert f"! {real}:" not in out.stdout


def test_each_replayed_cli_plans(player, baton, repo, tmp_path):
    """Cursor Agent, Goose and Amp as the planner (AI_PROVIDER): read-only in the person's
    checkout, the final message becomes the plan, and nothing of the run stays there."""
    plan = {"version": 1, "goal": "g", "tasks": [
        {"id": 1, "title": "Limiter", "prompt": "Write limiter.py", "player": player.name}]}
    env = player.script([player.write(repo / "stray.txt", "no"),
                         {"text": "The plan:\n" + json.dumps(plan)}])
    out = baton("plan", "--goal", "add a limiter", env={**env, "AI_PROVIDER": player.name})
    assert out.returncode == 0, out.stdout + out.stderr
    assert [t["title"] for t in baton.json("plan", "--json")["tasks"]] == ["Limiter"]
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    argv = player.calls()[0]
    if player.name == "goose":
        assert "--no-profile" in argv and "--with-builtin" not in argv
    if player.name == "cursor-agent":
        assert "--force" not in argv and argv[argv.index("--mode") + 1] == "ask"


def test_cursor_models_come_from_cursor_itself(baton, tmp_path):
    from helpers.scripted_players import CursorAgent

    player = CursorAgent(tmp_path)
    env = player.env()
    load(baton, tmp_path, player, title="Pick")
    assert baton("task-model", "1", "sonnet-4.5", env=env).returncode == 0
    out = baton("task-model", "1", "nonsense-model", env=env)
    assert out.returncode == 2
    assert "not in `cursor-agent models`: auto, sonnet-4.5" in out.stderr


def test_outcomes_read_limits_throttles_and_sessions():
    from baton_tui.players.amp import AmpPlayer
    from baton_tui.players.cursor_agent import CursorAgentPlayer, parse_models
    from baton_tui.players.goose import GoosePlayer

    init = json.dumps({"type": "system", "subtype": "init", "session_id": "T-1"})
    limit = json.dumps({"type": "result", "subtype": "error_during_execution", "is_error": True,
                        "error": "You've hit your usage limit · resets 3pm (UTC)"})
    out = AmpPlayer().outcome(f"{init}\nnoise\n{limit}\n")
    assert out.session_id == "T-1" and out.limit_until and out.success_event is False
    throttled = json.dumps({"type": "result", "subtype": "error_during_execution",
                            "is_error": True, "error": "429 Too Many Requests: rate limit"})
    assert AmpPlayer().outcome(throttled).rate_limited
    cursor = CursorAgentPlayer().outcome(
        json.dumps({"type": "system", "subtype": "init", "session_id": "c-1"})
        + "\nError: You've hit your usage limit (resets at 2031-01-01T00:00:00Z)\n")
    assert cursor.session_id == "c-1" and cursor.limit_until == 1924992000.0
    assert CursorAgentPlayer().outcome("Error: 429 Too Many Requests\n").rate_limited
    goose = GoosePlayer().outcome(json.dumps({"type": "error", "error": "Credits exhausted: "
                                              "usage limit reached"}))
    assert goose.limited and goose.limit_until is None and goose.success_event is False
    complete = GoosePlayer().outcome(json.dumps({"type": "complete", "total_tokens": 1234,
                                                 "cost_usd": 0.5}))
    assert (complete.tokens, complete.cost, complete.success_event) == (1234, 0.5, True)
    assert parse_models("Available models\n\nauto - Auto  (current)\ngpt-5 - GPT-5\n") == (
        "auto", "gpt-5")


def test_progress_lines_are_readable():
    from baton_tui.players.cursor_agent import CursorAgentPlayer
    from baton_tui.players.goose import GoosePlayer

    cursor = CursorAgentPlayer()
    assert cursor.progress(json.dumps({"type": "tool_call", "subtype": "started", "tool_call": {
        "shellToolCall": {"args": {"command": "pytest -q"}}}})) == "$ pytest -q"
    assert cursor.progress(json.dumps({"type": "tool_call", "subtype": "started", "tool_call": {
        "readToolCall": {"args": {"path": "src/a.py"}}}})) == "read src/a.py"
    goose = GoosePlayer()
    request = {"type": "message", "message": {"role": "assistant", "content": [
        {"type": "toolRequest", "id": "t", "toolCall": {"status": "success", "value": {
            "name": "shell", "arguments": {"command": "ls"}}}}]}}
    assert goose.progress(json.dumps(request)) == "$ ls"
    assert goose.progress(json.dumps({"type": "complete", "total_tokens": 9})) == \
        "finished (9 tokens)"
