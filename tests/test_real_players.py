"""The real agent CLIs, driven by Baton against its scripted model server: one suite, one row
per player (profiles in tests/helpers/real_players.py; adding a player adds a row, not a file).
The plan that mixes them all is tests/test_real_plan_five_clis.py.

`.ci/run` installs the pinned npm builds into `.ci/npm`. Without one, its tests are skipped
with a loud reason locally and FAIL when BATON_REQUIRE_REAL_CLIS=1 (as `.ci/run` sets it). Each
test runs in a throwaway HOME (conftest) whose environment is "the person's": the CLI's base URL
and key (or its own config file) point at Baton's scripted model server on 127.0.0.1, and Baton
inherits them. No vendor is reached.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git, write_plan
from helpers.real_cli_kit import (
    assert_contained, attempt_logs, data_of, events_of, kinds, run, task_of, worktree,
)
from helpers.real_players import PLAYERS, last_input, tool_names


@pytest.fixture(params=PLAYERS, ids=lambda p: p.name)
def player(request):
    """Each profile in turn; its CLI must be installed (see helpers.real_cli_kit.require_cli)."""
    request.param.require()
    return request.param


def model_calls(server, player) -> list[dict]:
    """The requests that took a scripted turn, in order (side requests left out)."""
    return [r for r in server.requests if r.get("protocol") == player.protocol
            and r.get("turn") is not None]


# --------------------------------------------------------------------------- shared scenarios

def test_detected_and_ready(player, server, baton):
    out = baton("players", "--json", env=player.env(server))
    assert out.returncode == 0, out.stderr
    entry = next(p for p in json.loads(out.stdout) if p["name"] == player.name)
    assert entry["ready"] is True, entry
    assert player.cli.version in (entry["version"] or ""), "not the pinned build"


def test_build_edits_and_reports_over_mcp_and_shell(player, server, baton, repo, tmp_path):
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.", "player": player.name,
         "mode": "build", "effort": "low"},
        {"id": 2, "title": "Write bye", "prompt": "Create bye.txt.", "player": player.name,
         "mode": "build", "depends_on": [1]},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt1, wt2 = worktree(repo, baton, 1), worktree(repo, baton, 2)
    hello = f"hello from {player.cli.binary}"
    turns = [
        *player.conversation({"text": "Writing the file.", **player.write(wt1 / "hello.txt",
                                                                          hello + "\n")},
                             player.report("done", "wrote hello.txt (mcp)"),
                             {"text": "Reported."}),
        *player.conversation(player.write(wt2 / "bye.txt", "bye\n"),
                             player.shell('baton report done --summary "wrote bye.txt (shell)"'),
                             {"text": "Reported."}),
    ]
    server.add_turns(turns)
    result = run(baton, player.env(server))
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    status = baton.json("status", "--json")
    assert [t["state"] for t in status["tasks"]] == ["landed", "landed"]
    done = [data_of(e).get("summary") for e in events_of(baton, 1) + events_of(baton, 2)
            if (e.get("kind") or e.get("type")) == "task.done"]
    assert done == ["wrote hello.txt (mcp)", "wrote bye.txt (shell)"]
    slug = status["plan"]["slug"]
    assert_contained(repo, f"baton/{slug}/1-write-hello", "hello.txt")
    assert_contained(repo, f"baton/{slug}/2-write-bye", "bye.txt")
    assert git(repo, "show", f"baton/{slug}/1-write-hello:hello.txt") == hello
    # the real CLI talked to the scripted server, with its tools and the report tool offered
    calls = model_calls(server, player)
    assert len(calls) == len(turns)
    first = calls[0]["json"]
    assert player.build_tools <= tool_names(first), tool_names(first)
    assert player.effort(first) == "low"                 # the task's effort reached the model


def test_research_reads_reports_over_mcp_and_writes_nothing(player, server, baton, repo,
                                                            tmp_path):
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Study readme", "prompt": "What does README.md say?",
         "player": player.name, "mode": "research"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1, "-research-1")
    server.add_turns(player.conversation(
        player.read(wt / "README.md"),
        player.write(wt / "stray.txt", "no\n"),
        player.shell("echo no > stray2.txt"),
        player.report("done", "README.md is a one-line heading: sample"),
        {"text": "Reported."},
    ))
    result = run(baton, player.env(server))
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert task_of(baton, 1)["state"] == "done"
    turns = {r["turn"]: r for r in model_calls(server, player)}
    assert player.read_seen(turns, attempt_logs(repo), "# sample")   # the read really happened
    for refused in (last_input(turns[n]) for n in player.refused_turns):   # writes refused
        assert any(word in refused for word in player.refusals), refused
    assert not (wt / "stray.txt").exists() and not (wt / "stray2.txt").exists()
    assert git(repo, "status", "--porcelain") == ""
    names = tool_names(turns[0]["json"])
    assert not names & player.research_withheld, names
    assert player.research_tools <= names, names
    summary = [data_of(e).get("summary") for e in events_of(baton, 1)
               if (e.get("kind") or e.get("type")) == "task.done"]
    assert summary == ["README.md is a one-line heading: sample"]


def test_research_runs_the_test_suite_and_nothing_of_it_lands(player, server, baton, repo,
                                                              tmp_path):
    """The page's flaky-test example: a research task runs `pytest` with the CLI's own shell
    (Aider: its own `/run`), the model reads the result, the report lands — and nothing the
    run wrote (pytest's caches, bytecode) reaches a branch or the person's checkout."""
    (repo / "test_sample.py").write_text("def test_adds():\n    assert 1 + 1 == 2\n")
    git(repo, "add", "test_sample.py")
    git(repo, "commit", "-q", "-m", "a test")
    tip = git(repo, "rev-parse", "main")
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Run the tests", "prompt": "Run the test suite; does it pass?",
         "player": player.name, "mode": "research"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1, "-research-1")
    # It names no file: Aider would add a file its reply names and ask the model again.
    pytest_cmd = f"{shlex.quote(sys.executable)} -m pytest -q"
    server.add_turns(player.research_commands(
        [pytest_cmd], player.report("done", "the suite passes: 1 passed"), {"text": "Reported."}))
    result = run(baton, player.env(server), timeout=240)
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert task_of(baton, 1)["state"] == "done"
    summary = [data_of(e).get("summary") for e in events_of(baton, 1)
               if (e.get("kind") or e.get("type")) == "task.done"]
    assert summary == ["the suite passes: 1 passed"]
    calls = model_calls(server, player)
    assert any("1 passed" in json.dumps(c["json"]) for c in calls[1:]), \
        "pytest's result never reached the model"
    assert git(repo, "status", "--porcelain") == ""            # the person's checkout
    assert git(repo, "rev-parse", "main") == tip
    for branch in git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/").split():
        assert git(repo, "rev-parse", branch) == tip, branch        # no task branch moved on
    assert not wt.exists()                                       # the throwaway worktree


def test_429_is_retried_then_fails_visibly(player, server, baton, repo, tmp_path):
    config = tmp_path / "personal.toml"
    config.write_text("[limits]\nretries = 1\n")
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Throttled", "prompt": "Create x.txt.", "player": player.name,
         "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    server.add_turns(player.throttled(2))
    result = run(baton, player.env(server, BATON_CONFIG=str(config)))
    assert result.returncode == 1
    assert task_of(baton, 1)["state"] == "failed"
    failed = [data_of(e) for e in events_of(baton, 1)
              if (e.get("kind") or e.get("type")) == "task.failed"]
    assert failed and "429" in failed[-1]["reason"], failed
    assert "429" in failed[-1].get("output", "")
    assert len([r for r in server.requests if r.get("status") == 429]) == len(player.throttled(2))


def test_usage_limit_pauses_then_resumes_same_session(player, server, baton, repo, tmp_path):
    """A usage limit that resets a few seconds ahead: Baton pauses the task until the reset
    (as precisely as the CLI tells it), then resumes the same session, which finishes."""
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Limited", "prompt": "Create limit.txt.", "player": player.name,
         "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    env = player.env(server)
    resets_at = int(time.time()) + 3
    player.arrange_usage_limit(server, env, tmp_path, resets_at)
    started = time.monotonic()
    result = run(baton, env, timeout=240)
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert time.monotonic() - started >= 2.0                 # it waited for the reset
    seen = events_of(baton, 1)
    order = kinds(seen)
    assert order.index("task.paused") < order.index("task.resumed")
    paused = next(data_of(e) for e in seen if (e.get("kind") or e.get("type")) == "task.paused")
    assert paused["reason"] == "usage limit"
    reset = player.real_reset(server, resets_at)
    assert reset <= paused["until"] <= reset + player.reset_slack, paused
    assert paused["until"] < time.time()                      # the reset, now passed
    resumed_at = next(e["ts"] for e in seen if (e.get("kind") or e.get("type")) == "task.resumed")
    assert resumed_at >= resets_at
    sessions = player.sessions(attempt_logs(repo))
    assert len(sessions) == 2 and sessions[0] == sessions[1], sessions   # the same session
    player.check_usage_limit(server, tmp_path, sessions)
    assert task_of(baton, 1)["state"] == "landed"
    slug = baton.json("status", "--json")["plan"]["slug"]
    assert_contained(repo, f"baton/{slug}/1-limited", "limit.txt")


def test_work_stays_in_the_worktree_whatever_the_shell_it_inherits(player, server, baton, repo,
                                                                   tmp_path):
    """The person's shell sits in their checkout (PWD, OLDPWD, INIT_CWD name it): the agent's
    relative writes and its shell's working directory are still its own worktree."""
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Write relative", "prompt": "Create rel.txt.", "player": player.name,
         "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1)
    server.add_turns(player.conversation(
        player.write(Path("rel.txt"), "relative\n"),
        player.shell("pwd > where.txt"),
        player.shell('baton report done --summary "wrote by relative paths"'),
        {"text": "Reported."}))
    env = player.env(server, PWD=str(repo), OLDPWD=str(repo), INIT_CWD=str(repo))
    result = run(baton, env)
    assert result.returncode == 0, attempt_logs(repo)[-4000:]
    assert task_of(baton, 1)["state"] == "landed"
    branch = f"baton/{baton.json('status', '--json')['plan']['slug']}/1-write-relative"
    for name in player.relative_files:
        assert_contained(repo, branch, name)
        assert not (tmp_path / name).exists()
    if "where.txt" in player.relative_files:
        assert git(repo, "show", f"{branch}:where.txt") == str(wt)


def test_stop_is_not_success_even_when_the_cli_exits_0(player, server, baton, repo, tmp_path):
    """`baton stop` while the agent waits on the model: its whole process group goes at once
    (OpenCode would finish the pending reply first; Gemini CLI and OpenCode exit 0 on a
    signal), the task fails as stopped, nothing lands — and a retry then finishes it."""
    import psutil

    from helpers.run_kit import wait_for, wait_idle

    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Slow model", "prompt": "Create after.txt.", "player": player.name,
         "mode": "build"},
    ])
    assert baton("plan", "--from", str(plan)).returncode == 0
    wt = worktree(repo, baton, 1)
    lead = [player.shell("echo started")] * player.stop_lead
    server.add_turns([*lead, {"delay": 60, "text": "Still thinking."}])
    env = player.env(server)
    assert baton("run", "--approve", "--detach", env=env).returncode == 0
    wait_for(lambda: server.served > player.stop_lead, timeout=120,
             what="the agent to wait on the model")
    asked = time.monotonic()
    assert baton("stop", "1").returncode == 0
    stopped = wait_idle(baton, timeout=60)
    assert time.monotonic() - asked < 30                    # not the model's 60 s reply
    task = stopped["tasks"][0]
    assert task["state"] == "failed" and "stopped" in task["reason"], task
    assert "task.done" not in kinds(events_of(baton, 1))

    def inside(proc: psutil.Process) -> bool:
        try:
            return Path(proc.cwd()).is_relative_to(wt)
        except (psutil.Error, OSError):
            return False
    assert not [p.info for p in psutil.process_iter(["pid", "name"]) if inside(p)]
    slug = stopped["plan"]["slug"]
    assert subprocess.run(["git", "cat-file", "-e", f"baton/{slug}/integration:after.txt"],
                          cwd=repo, capture_output=True).returncode != 0
    server.add_turns(player.conversation(player.write(wt / "after.txt", "after the stop\n"),
                                         player.report("done", "finished after the stop"),
                                         {"text": "Done."}))
    assert baton("retry", "1", env=env).returncode == 0
    finished = wait_idle(baton, timeout=180)
    assert finished["tasks"][0]["state"] == "landed", attempt_logs(repo)[-4000:]
