"""Guarded, on a real CLI: Claude Code asks before its irreversible step through Baton's
`baton_checkpoint` MCP tool, with the dry run it gathered as evidence; the person sees both,
says yes, and the same session goes on to finish and land."""

from __future__ import annotations

import pytest

from conftest import git, write_plan
from helpers.real_cli_kit import attempt_logs, task_of, worktree
from helpers.real_players import CLAUDE_CODE

pytestmark = pytest.mark.slow
DRY_RUN = "would drop: table legacy_users (12 rows)\nwould keep: users"


def test_guarded_run_shows_what_and_evidence_then_resumes_on_yes(server, baton, repo, tmp_path):
    CLAUDE_CODE.require()
    (repo / "baton.toml").write_text('[limits]\ncheckpoint_wait = "1s"\n')
    assert baton("trust").returncode == 0
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Drop legacy", "prompt": "Drop the legacy table.",
         "player": "claude-code", "mode": "build", "checkpoint": True},
    ], autonomy="guarded")
    assert baton("plan", "--from", str(plan)).returncode == 0
    assert baton("approve").returncode == 0
    wt = worktree(repo, baton, 1)
    env = CLAUDE_CODE.env(server)
    server.add_turns([
        {"tool": "mcp__baton__baton_checkpoint",
         "input": {"what": "drop the legacy_users table", "evidence": DRY_RUN}},
        {"text": "Not decided yet: ending my turn."},
        CLAUDE_CODE.write(wt / "migration.sql", "DROP TABLE legacy_users;\n"),
        CLAUDE_CODE.report("done", "dropped legacy_users after the person said yes"),
        {"text": "Done."},
    ])
    first = baton("run", env=env, timeout=240)
    assert first.returncode == 3, first.stdout + first.stderr + attempt_logs(repo)[-3000:]
    waiting = task_of(baton, 1)
    assert waiting["state"] == "checkpoint"
    assert waiting["checkpoint"] == {"what": "drop the legacy_users table", "evidence": DRY_RUN}
    assert "asks: drop the legacy_users table" in baton("status").stdout
    answered = baton("checkpoint-answer", "1", "yes", env=env)
    assert answered.returncode == 0, answered.stderr
    resumed = baton("run", env=env, timeout=240)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr + attempt_logs(repo)[-3000:]
    assert task_of(baton, 1)["state"] == "landed"
    branch = baton.json("status", "--json")["plan"]["integration_branch"]
    assert git(repo, "show", f"{branch}:migration.sql") == "DROP TABLE legacy_users;"
