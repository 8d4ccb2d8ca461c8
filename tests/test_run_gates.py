"""End-to-end gates: approval, trust, and the report channel's identity checks."""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers.run_kit import (
    events, kinds, load_plan, program, script_agent, status, states, task, tree_files,
    write_config,
)
from helpers.scripted_kit import Scripted

DONE = [{"write": "out.txt", "content": "out\n"}, {"report": "done", "summary": "ok"}]


def conductors_of(repo: Path) -> list[int]:
    """Live `baton conductor` processes of `repo`: named by it, or working in it (one
    started ahead, before the repository was known, and never cued)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"conductor" in argv and (str(repo).encode() in argv or cwd == str(repo)):
            found.append(int(entry.name))
    return found


def test_run_refuses_an_unapproved_plan_and_one_whose_approval_an_edit_voided(
        repo, baton, tmp_path):
    write_config(repo, {"agent": script_agent(tmp_path, "a", {"*": DONE})})
    load_plan(baton, [task(1), task(2)])

    result = baton("run")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not approved" in result.stderr
    assert baton("run", "--detach").returncode == 2
    assert states(baton) == {1: "draft", 2: "draft"}
    assert status(baton)["conductor"] is None
    assert conductors_of(repo) == []  # none started ahead is left waiting

    assert baton("approve").returncode == 0
    assert status(baton)["plan"]["approved"] is True
    assert baton("task-title", "2", "Renamed after approval").returncode == 0
    assert status(baton)["plan"]["approved"] is False

    result = baton("run")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not approved" in result.stderr
    assert not [k for k in kinds(events(baton)) if k in ("task.started", "conductor.started")]
    assert states(baton) == {1: "draft", 2: "draft"}


def test_untrusted_baton_toml_is_refused_and_a_change_after_trust_needs_trust_again(
        repo, baton, tmp_path):
    marker = tmp_path / "agent-ran"
    write_config(repo, {"agent": script_agent(tmp_path, "a", {"*": DONE})})
    load_plan(baton, [task(1)], trust=False)

    result = baton("run", "--approve")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "baton trust" in result.stderr
    assert "players.custom.agent" in result.stderr
    assert states(baton) == {1: "draft"}
    assert status(baton)["plan"]["approved"] is False  # the refused command changed nothing

    assert baton("trust").returncode == 0
    # The file changes after it was trusted: a command the person never saw.
    config = repo / "baton.toml"
    lines = config.read_text().splitlines()
    lines = [f'command = ["sh", "-c", "touch {marker}"]' if line.startswith("command = ")
             else line for line in lines]
    config.write_text("\n".join(lines) + "\n")
    result = baton("run", "--approve")
    assert result.returncode in (2,), result.stdout + result.stderr
    assert "baton trust" in result.stderr
    assert "changed" in result.stderr
    assert not marker.exists()
    assert states(baton) == {1: "draft"}


def test_report_outside_a_task_exits_2(repo, baton):
    for args in (["report", "done", "--summary", "x"], ["report", "progress", "hi"],
                 ["checkpoint", "about to drop a table"]):
        result = baton(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "inside a task" in result.stderr


def test_agent_environment_and_stale_or_foreign_reports_are_refused(repo, baton, tmp_path):
    dump = tmp_path / "env.json"
    write_config(repo, {"envdump": program("envdump.py", str(dump)),
                        "forger": program("foreign_report.py")})
    load_plan(baton, [task(1, "Records env", player="envdump", model="m-1", effort="high"),
                      task(2, "Forges a report", player="forger")])

    result = baton("run", "--approve", timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert states(baton) == {1: "landed", 2: "failed"}

    # The forged report was refused, logged, and did not count: the task never reported.
    evs = events(baton)
    refused = [e for e in evs if e["kind"] == "task.report_refused"]
    assert any(e.get("task") == 2 for e in refused), refused
    assert "task.reported" not in kinds(evs, 2)
    t2 = next(t for t in status(baton)["tasks"] if t["id"] == 2)
    assert "without reporting" in t2["reason"]
    failed = [e for e in evs if e["kind"] == "task.failed" and e.get("task") == 2][-1]
    assert "forged report exit status: 2" in failed["data"]["output"]

    # What the agent was given.
    seen = json.loads(dump.read_text())
    env = seen["env"]
    assert env["BATON_TASK"] == "1"
    assert env["BATON_MODEL"] == "m-1" and env["BATON_EFFORT"] == "high"
    assert env["BATON_MODE"] == "build"
    prompt_file = Path(env["BATON_PROMPT_FILE"])
    assert prompt_file.read_text() == seen["stdin"]
    assert "baton report done" in seen["stdin"]
    assert oct(prompt_file.stat().st_mode & 0o777) == "0o600"
    assert not str(prompt_file).startswith(str(repo))
    shim = Path(env["PATH"].split(os.pathsep)[0])
    assert [p.name for p in shim.iterdir()] == ["baton"]
    assert Path(seen["cwd"]) != repo and not str(seen["cwd"]).startswith(str(repo) + os.sep)
    assert os.environ["HOME"] == env["HOME"]  # added to, never replaced
    assert tree_files(repo, status(baton)["plan"]["integration_branch"])["envdump.txt"] == "seen"

    # Replaying the finished attempt's report is refused (exit 2) and logged.
    before = len([e for e in events(baton) if e["kind"] == "task.report_refused"])
    stale = {k: v for k, v in env.items() if k.startswith("BATON_")}
    result = baton("report", "done", "--summary", "replayed", env=stale)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "refused" in result.stderr
    # A wrong nonce for a real attempt: refused too.
    result = baton("report", "failed", "--reason", "x", env={**stale, "BATON_NONCE": "f" * 32})
    assert result.returncode == 2
    after = [e for e in events(baton) if e["kind"] == "task.report_refused"]
    assert len(after) == before + 2
    assert all(e.get("task") == 1 for e in after[before:])
    assert states(baton)[1] == "landed"


def test_a_task_that_edits_outside_its_scope_is_flagged_when_it_finishes(repo):
    """On the real conductor with scripted agents (`helpers.scripted_kit`)."""
    run = Scripted(repo)
    run.config()
    run.plan([task(1, scope=["src/"]), task(2, scope=["src/"])])
    assert run.run({"1": [{"write": "src/in.py", "content": "x = 1\n"},
                          {"write": "docs/off.md", "content": "off\n"},
                          {"report": "done", "summary": "ok"}],
                    "2": [{"write": "src/two.py", "content": "y = 2\n"},
                          {"report": "done", "summary": "ok"}]}) == 0
    flagged = {e["task"]: e["data"] for e in run.events()
               if e["kind"] == "task.flagged" and e["data"].get("flag") == "scope"}
    assert flagged[1]["files"] == ["docs/off.md"], flagged
    assert 2 not in flagged
    assert run.states() == {1: "landed", 2: "landed"}
