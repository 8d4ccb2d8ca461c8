"""Limits the real CLIs end a run with, beyond the parametrised suite's short reset.

Gemini CLI ends at once on a per-day quota (a `QuotaFailure` whose quota id says PerDay: "You
have exhausted your daily quota on this model.", no time given). Google resets per-day quotas at
midnight Pacific time, so Baton pauses the task until then; `baton run` waits for known resets
only up to `[limits] max_wait`, so it leaves the task paused and exits 3.
"""

from __future__ import annotations

import time

from conftest import write_plan
from helpers.real_cli_kit import attempt_logs, data_of, events_of, run
from helpers.real_players import GEMINI_PLAYER


def test_gemini_daily_quota_pauses_until_midnight_pacific(server, baton, repo, tmp_path):
    from baton_tui.players.limits import pacific_midnight

    GEMINI_PLAYER.require()
    config = tmp_path / "personal.toml"
    config.write_text('[limits]\nmax_wait = "1s"\n')
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Quota", "prompt": "Create q.txt.", "player": "gemini",
         "mode": "build"}])
    assert baton("plan", "--from", str(plan)).returncode == 0
    server.add_turns([{"error": 429, "body": {"error": {
        "code": 429, "status": "RESOURCE_EXHAUSTED",
        "message": "Quota exceeded for metric: generate_content_free_tier_requests",
        "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
            {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
             "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}}])
    started = time.time()
    result = run(baton, GEMINI_PLAYER.env(server, BATON_CONFIG=str(config)))
    assert result.returncode == 3, attempt_logs(repo)[-3000:]
    assert "daily quota" in attempt_logs(repo)
    paused = [data_of(e) for e in events_of(baton, 1)
              if (e.get("kind") or e.get("type")) == "task.paused"]
    assert paused and paused[-1]["reason"] == "usage limit", paused
    assert abs(paused[-1]["until"] - pacific_midnight(started)) < 120
    assert len([r for r in server.requests if r.get("status") == 429]) == 1   # no retry
