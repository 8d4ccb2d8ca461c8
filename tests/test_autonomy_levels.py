"""Supervision that keeps its promises: the level in force, checkpoints with evidence, guarded's
hold before landing, watch's one review at the end, taking over during a live run, autopilot's
stop conditions and edits mid-run — a few end to end through the real CLI with the demo agent,
the rest on the real conductor with scripted agents (`helpers.scripted_kit`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from baton_tui.api import plans, reading, running
from baton_tui.core.errors import BatonError
from baton_tui.run import control
from baton_tui.runners.scripted import ScriptedRunner
from baton_tui.workspace import Workspace
from helpers.run_kit import (
    DEMO_AGENT, events, git, load_plan, status, task, task_status, wait_idle, wait_state,
)
from helpers.scripted_kit import Scripted, has_event



def agents(repo, scripts: dict[str, dict], toml: str = "", top: str = "") -> None:
    """Custom players driven by demo-agent scripts: name -> {task id or "*": steps}; `top`
    holds top-level keys, `toml` more `[limits]` keys."""
    lines = [top] if top else []
    for name, script in scripts.items():
        path = repo.parent / f"{name}.json"
        path.write_text(json.dumps(script))
        lines += [f"[players.custom.{name}]", f"command = {json.dumps([*DEMO_AGENT, str(path)])}",
                  ""]
    (repo / "baton.toml").write_text("\n".join(lines) + "[limits]\ncheckpoint_wait = \"1s\"\n"
                                     "stall = \"60s\"\n" + toml)


def code_of(baton) -> int:
    return [e for e in events(baton) if e["kind"] == "run.finished"][-1]["data"]["code"]


def test_the_configured_level_applies_and_the_environment_overrides_it(repo, baton):
    agents(repo, {"a": {"*": []}}, top='autonomy = "watch"')
    load_plan(baton, [task(1, player="a")])  # the plan file names no autonomy
    assert status(baton)["plan"]["autonomy"] == "watch"
    assert json.loads(baton("plan", "--json").stdout)["autonomy"] == "watch"
    overridden = subprocess.run([sys.executable, "-m", "baton_tui", "status", "--json"],
                                cwd=repo, capture_output=True, text=True,
                                env={**os.environ, "BATON_AUTONOMY": "autopilot"})
    assert json.loads(overridden.stdout)["plan"]["autonomy"] == "autopilot"
    assert baton("autonomy").stdout.strip() == "watch"


def test_a_plan_of_its_own_keeps_its_level(repo, baton):
    agents(repo, {"a": {"*": []}}, top='autonomy = "autopilot"')
    load_plan(baton, [task(1, player="a")], autonomy="guarded")
    assert status(baton)["plan"]["autonomy"] == "guarded"


@pytest.mark.slow
def test_guarded_checkpoint_shows_the_agents_words_and_evidence(repo, baton):
    agents(repo, {"a": {"*": [{"checkpoint": "delete the legacy exports",
                               "evidence": "rm exports/2019.csv\nrm exports/2020.csv"},
                              {"write": "done.txt", "content": "ok"},
                              {"report": "done", "summary": "deleted"}]}})
    load_plan(baton, [task(1, player="a", checkpoint=True)], approve=True)
    run = baton("run")
    assert run.returncode == 3, run.stdout + run.stderr
    waiting = task_status(baton, 1)
    assert waiting["checkpoint"] == {"what": "delete the legacy exports",
                                     "evidence": "rm exports/2019.csv\nrm exports/2020.csv"}
    assert "asks: delete the legacy exports" in baton("status").stdout
    assert baton("checkpoint-answer", "1", "yes").returncode == 0
    wait_state(baton, 1, "landed")
    assert task_status(baton, 1)["decisions"] == []  # the person decided: nothing to review


@pytest.mark.slow
def test_taking_over_during_a_live_run_lands_and_the_run_goes_on(repo, baton):
    agents(repo, {"a": {"1": [{"write": "half.txt", "content": "half"}, {"hang": True}],
                        "2": [{"write": "after.txt", "content": "after"},
                              {"report": "done", "summary": "after"}]}})
    load_plan(baton, [task(1, player="a"), task(2, player="a", deps=[1])], approve=True)
    assert baton("run", "--detach").returncode == 0
    wait_state(baton, 1, "running")
    worktree = task_status(baton, 1)["worktree"]
    took = baton("take", "1")
    assert took.returncode == 0, took.stderr
    assert f"worktree: {worktree}" in took.stdout
    paused = wait_state(baton, 1, "paused")
    assert paused["reason"] == "taken over by you"
    with open(os.path.join(worktree, "half.txt"), "a") as fh:
        fh.write(" and the rest\n")
    done = baton("done", "1")
    assert done.returncode == 0, done.stderr
    wait_state(baton, 2, "landed", timeout=60)
    final = wait_idle(baton)
    assert final["tasks"][0]["state"] == "landed"
    assert code_of(baton) == 0
    files = git(repo, "ls-tree", "-r", "--name-only", final["plan"]["integration_branch"])
    assert "half.txt" in files and "after.txt" in files


# On the real conductor with scripted agents ---------------------------------------------------
def scripted(repo, players=("a",), **limits) -> Scripted:
    run = Scripted(repo)
    run.config(players=players, limits=limits)
    return run


def files_of(repo, run: Scripted) -> str:
    return git(repo, "ls-tree", "-r", "--name-only", run.status()["plan"]["integration_branch"])


def test_a_take_asked_while_the_agent_starts_still_stops_it(repo):
    """`baton take` right after the agent started, read by the conductor before its start
    returned (the attempt not yet followed): the agent is stopped once it is, and the task
    pauses taken over — it used to run on, the take forgotten."""
    class TakenWhileStarting(ScriptedRunner):
        took = False

        async def start(self, request):
            handle = await super().start(request)
            if not self.took:
                self.took = True
                await asyncio.to_thread(take, 1)
                while run.conductor is None or 1 not in run.conductor.run.intents:
                    await asyncio.sleep(0.01)  # the conductor has read the take
            return handle

    def take(task_id: int) -> None:
        ws = Workspace(repo)
        try:
            control.take_task(ws, task_id)
        finally:
            ws.close()

    run = scripted(repo)
    run.runner_type = TakenWhileStarting
    run.plan([task(1, player="a")], approve=True)
    assert run.run({"*": [{"write": "half.txt", "content": "half"}, {"hang": True}]}) == 3
    taken = run.task(1)
    assert (taken["state"], taken["reason"]) == ("paused", "taken over by you")


def test_changing_the_level_mid_run_keeps_approval_and_decides_the_next_checkpoint(repo):
    run = scripted(repo)
    run.plan([task(1, player="a", checkpoint=True)], approve=True)
    # The person changes the level while the agent works, before it asks.
    code = run.run({"*": [{"call": lambda ws: plans.set_autonomy(ws, "watch")},
                          {"checkpoint": "drop the old table", "evidence": "DROP TABLE old;"},
                          {"write": "x.txt", "content": "x"},
                          {"report": "done", "summary": "dropped"}]}, approve=False)
    assert code == 0
    final = run.status()
    assert final["plan"]["approved"] is True and final["tasks"][0]["state"] == "landed"
    decided = final["tasks"][0]["decisions"]
    assert [(d["by"], d["answer"], d["evidence"]) for d in decided] == \
        [("watch", "yes", "DROP TABLE old;")]
    kinds = [e["kind"] for e in run.events()]
    assert "plan.autonomy" in kinds and "plan.approval_voided" not in kinds


def test_guarded_holds_a_checkpoint_task_that_never_asked(repo):
    run = scripted(repo)
    run.plan([task(1, player="a", checkpoint=True)], approve=True)
    script = {"*": [{"write": "schema.sql", "content": "DROP TABLE users;\n"},
                    {"report": "done", "summary": "migrated"}]}
    assert run.run(script, approve=False) == 3
    held = run.task(1)
    assert held["state"] == "checkpoint"
    assert held["checkpoint"]["what"] == "finished without asking first: review its diff"
    assert "schema.sql" in held["checkpoint"]["evidence"]
    assert files_of(repo, run) == "README.md"  # nothing landed yet
    assert run.conduct(script, lambda ws: running.answer_checkpoint(ws, 1, True)) == 0
    assert run.task(1)["state"] == "landed"
    assert "schema.sql" in files_of(repo, run)


def test_run_approve_answers_the_checkpoints_an_earlier_run_stopped_at(repo):
    """A guarded run stops at an agent's question and at a task held before landing (exit
    3); `baton run --approve` then answers both yes, as it answers the ones still to come."""
    run = scripted(repo)
    run.plan([task(1, player="a", checkpoint=True), task(2, player="a", checkpoint=True)],
             approve=True)
    script = {"1": [{"checkpoint": "drop the old table"},
                    {"write": "dropped.txt", "content": "x"},
                    {"report": "done", "summary": "dropped"}],
              "2": [{"write": "schema.sql", "content": "DROP TABLE users;\n"},
                    {"report": "done", "summary": "migrated"}]}
    assert run.run(script, approve=False) == 3
    assert [run.task(i)["state"] for i in (1, 2)] == ["checkpoint", "checkpoint"]
    assert run.run(script, approve=True) == 0
    assert [run.task(i)["state"] for i in (1, 2)] == ["landed", "landed"]
    files = files_of(repo, run)
    assert "dropped.txt" in files and "schema.sql" in files
    answers = [e["data"] for e in run.events() if e["kind"] == "task.checkpoint_answered"]
    assert [a["by"] for a in answers] == ["run --approve"] * 2


def test_guarded_hold_answered_no_lands_nothing_and_keeps_the_branch(repo):
    run = scripted(repo)
    run.plan([task(1, player="a", checkpoint=True)], approve=True)
    script = {"*": [{"write": "risky.txt", "content": "x"}, {"report": "done", "summary": "done"}]}
    assert run.run(script, approve=False) == 3
    assert run.conduct(script, lambda ws: running.answer_checkpoint(ws, 1, False)) == 1
    failed = run.task(1)
    assert failed["state"] == "failed" and "said no" in failed["reason"]
    assert "risky.txt" in git(repo, "ls-tree", "-r", "--name-only", failed["branch"])


def test_watch_decides_and_the_review_starts_with_what_was_decided(repo, baton):
    run = scripted(repo)
    run.plan([task(1, player="a", checkpoint=True, scope=["inside.txt"])], approve=True,
             autonomy="watch")
    code = run.run({"*": [{"write": "outside.txt", "content": "x"},
                          {"checkpoint": "upgrade the ORM", "evidence": "orm 1.4 -> 2.0"},
                          {"write": "inside.txt", "content": "y"},
                          {"report": "done", "summary": "upgraded"}]}, approve=False)
    assert code == 0
    review = baton("handoff", "review").stdout
    head = review.split("landed task")[0]
    assert "decided for you" in head and "upgrade the ORM" in head and "by watch" in head
    assert "orm 1.4 -> 2.0" in head and "outside.txt" in head
    data = json.loads(baton("handoff", "review", "--json").stdout)
    assert data["decided"][0]["decisions"][0]["evidence"] == "orm 1.4 -> 2.0"


def test_autopilot_stops_after_failures(repo):
    run = scripted(repo, max_parallel=1)
    run.plan([task(1, player="a"), task(2, player="a"), task(3, player="a")], approve=True,
             autonomy="autopilot")
    assert run.run({"*": [{"report": "failed", "reason": "cannot"}]}, approve=False,
                   until_failures=1) == 1
    final = run.status()
    assert final["plan"]["stopped_by"] == "failures"
    assert "run stopped by failures" in run.printed()
    assert sum(t["attempts"] for t in final["tasks"]) == 1  # nothing new started after it


def test_autopilot_stops_at_a_deadline_and_resume_goes_on(repo):
    run = scripted(repo, max_parallel=1)
    run.plan([task(1, player="a"), task(2, player="a")], approve=True, autonomy="autopilot")
    # The running task reports once the deadline stopped the run: it finishes all the same.
    script = {"1": [{"until": has_event("run.stopped")}, {"report": "done", "summary": "ok"}],
              "2": [{"report": "done", "summary": "ok"}]}
    assert run.run(script, approve=False, deadline="1s") == 3
    stopped = run.status()
    assert stopped["plan"]["stopped_by"] == "deadline"
    assert [t["state"] for t in stopped["tasks"]] == ["landed", "queued"]  # running ones finish
    assert run.resume(script) == 0
    assert run.status()["plan"]["stopped_by"] is None
    assert run.states() == {1: "landed", 2: "landed"}


def test_a_task_edited_mid_run_waits_alone_and_feedback_survives(repo):
    run = scripted(repo)
    run.plan([task(1, player="a"), task(2, player="a", deps=[1]), task(3, player="a")],
             approve=True)
    seen: dict[int, dict] = {}

    def retitle(ws) -> None:  # while task 1 runs
        plans.edit_task(ws, 2, "title", "Two, retitled")
        snapshot = json.loads(reading.snapshot_json(ws.store))
        seen.update({t["id"]: t for t in snapshot["tasks"]}, plan=snapshot["plan"])

    script = {"1": [{"call": retitle}, {"report": "done", "summary": "one"}],
              "2": [{"report": "done", "summary": "two"}],
              "3": [{"report": "failed", "reason": "first try"}]}
    run.run(script, approve=False)
    assert seen[2]["needs_approval"] and "waiting for your approval" in seen[2]["words"]
    assert seen["plan"]["approved"] is True
    final = run.status()
    assert [t["state"] for t in final["tasks"]] == ["landed", "queued", "failed"], \
        [(t["state"], t["reason"]) for t in final["tasks"]]
    # Feedback typed while the plan waits for approval is kept.
    with pytest.raises(BatonError):
        plans.edit_task(run.ws, 3, "title", "Three, retitled")  # started: frozen

    def retry_approve(ws) -> None:
        control.retry_task(ws, 3, "use the other API")
        plans.approve(ws)

    assert run.resume(script, before=retry_approve) in (0, 1)
    evs = run.events()
    assert run.task(2)["state"] == "landed"
    starts = [e for e in evs if e["kind"] == "task.started" and e["task"] == 3]
    assert len(starts) == 2
    queued = [e for e in evs if e["kind"] == "task.queued" and e["task"] == 3]
    assert queued[-1]["data"]["feedback"] == "use the other API"
