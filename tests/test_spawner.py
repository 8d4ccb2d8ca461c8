"""Shims forked by the conductor's spawner (runners/spawner.py) start agents exactly as a fresh
shim would — and a spawner that dies costs nothing but speed: the next shim starts afresh."""

from __future__ import annotations

import json
import signal
import sys

import pytest

from helpers.run_kit import load_plan, program, status, task, write_config

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

CAUGHT = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _records(folder, ids):
    return {i: json.loads((folder / f"{i}.json").read_text()) for i in ids}


def test_a_forked_shim_gives_its_agent_a_session_a_folder_and_signals_of_its_own(
        repo, baton, tmp_path):
    out = tmp_path / "seen"
    out.mkdir()
    write_config(repo, {"inspector": program("shim_inspector.py", str(out))},
                 limits={"max_parallel": 2})
    load_plan(baton, [task(1, player="inspector"), task(2, player="inspector")])
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    st = status(baton)
    seen = _records(out, [1, 2])
    for t in st["tasks"]:
        one = seen[t["id"]]
        assert "baton_tui.runners.spawner" in one["above_cmd"], one  # forked, not started afresh
        assert not any(one["ignored"] & (1 << (sig - 1)) for sig in CAUGHT), one
        # The shim leads a session of its own; its agent, a group of its own in it.
        assert one["shim_sid"] == one["shim"] == one["sid"] and one["pgid"] == one["pid"]
        assert one["cwd"] == t["worktree"]
    assert seen[1]["shim"] != seen[2]["shim"]


def test_a_killed_spawner_costs_nothing_the_next_shims_still_start(repo, baton, tmp_path):
    out = tmp_path / "seen"
    out.mkdir()
    write_config(repo, {"inspector": program("shim_inspector.py", str(out), "--kill-spawner")})
    load_plan(baton, [task(1, player="inspector"), task(2, player="inspector", deps=[1]),
                      task(3, player="inspector", deps=[2])])
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {t["state"] for t in status(baton)["tasks"]} == {"landed"}
    seen = _records(out, [1, 2, 3])
    killed = [r["killed"] for r in seen.values() if r.get("killed")]
    assert killed and seen[1]["killed"] == seen[1]["above"]  # each agent ended its spawner
    # Each later shim came from a spawner started again, or afresh from the conductor.
    assert len({r["above"] for r in seen.values()}) == 3, seen
