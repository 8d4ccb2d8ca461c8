"""Task modes and supervision: manual tasks, checkpoints, autopilot, checks, script — the
checkpoint and the script player end to end, the rest on the real conductor with scripted
agents (`helpers.scripted_kit`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baton_tui.api import running
from baton_tui.core.errors import BatonError
from helpers.run_kit import (
    events, kinds, load_plan, script_agent, status, task, tree_files, wait_idle, write_config,
)
from helpers.scripted_kit import Scripted, reached, wait_until


def prompts(task_id: int) -> list[str]:
    home = Path(os.environ["BATON_HOME"])
    found = sorted(home.glob(f"runs/*/*/task-{task_id}/attempt-*/prompt.md"),
                   key=lambda p: int(p.parent.name.split("-")[1]))
    return [p.read_text() for p in found]


CHECKPOINTED = [
    {"write": "before.txt", "content": "prepared\n"},
    {"checkpoint": "drop the legacy table"},
    {"write": "after.txt", "content": "dropped\n"},
    {"report": "done", "summary": "migrated"},
]


def test_guarded_checkpoint_waits_for_the_answer_then_resumes_and_lands(repo, baton, tmp_path):
    write_config(repo, {"agent": script_agent(tmp_path, "c", {"1": CHECKPOINTED})},
                 limits={"checkpoint_wait": "1s"})
    load_plan(baton, [task(1, "Migrate", checkpoint=True)], autonomy="guarded")
    assert baton("approve").returncode == 0

    result = baton("run", timeout=60)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "checkpoint-answer 1" in result.stdout
    t1 = status(baton)["tasks"][0]
    assert t1["state"] == "checkpoint"
    assert "drop the legacy table" in t1["checkpoint"]["what"]
    # The irreversible step did not happen.
    workdir = Path(next(e for e in events(baton) if e["kind"] == "task.started")
                   ["data"]["workdir"])
    assert (workdir / "before.txt").exists() and not (workdir / "after.txt").exists()

    result = baton("checkpoint-answer", "1", "yes")
    assert result.returncode == 0, result.stderr
    st = wait_idle(baton, timeout=60)
    assert st["tasks"][0]["state"] == "landed", st["tasks"][0]
    evs = events(baton)
    answered = [e for e in evs if e["kind"] == "task.checkpoint_answered"]
    assert [a["data"]["by"] for a in answered] == ["person"]
    assert kinds(evs, 1).count("task.resumed") == 1
    assert kinds(evs, 1).count("task.checkpoint") == 1  # resumed after it, not asked again
    assert "YES" in prompts(1)[-1]
    files = tree_files(repo, st["plan"]["integration_branch"])
    assert files["before.txt"] == "prepared" and files["after.txt"] == "dropped"
    assert not any("never called" in f["detail"] for f in st["tasks"][0]["flags"])


def test_script_player_the_check_is_the_whole_task(repo, baton, tmp_path):
    write_config(repo, {})
    load_plan(baton, [
        task(1, "Generate", player="script", check="echo line >> generated.txt; echo SCRIPT-RAN"),
        task(2, "Verify", player="script", deps=[1], check="grep -c line generated.txt"),
        task(3, "Fails", player="script", check="echo SCRIPT-FAILS; exit 5"),
    ])
    result = baton("run", "--approve", timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    st = status(baton)
    by_id = {t["id"]: t for t in st["tasks"]}
    assert by_id[1]["state"] == "landed" and by_id[2]["state"] == "landed"
    assert by_id[3]["state"] == "failed" and "exited 5" in by_id[3]["reason"]
    # The script ran once: its output landed exactly as one run wrote it.
    assert tree_files(repo, st["plan"]["integration_branch"])["generated.txt"] == "line"
    assert "SCRIPT-RAN" in baton("logs", "1").stdout
    failed = [e for e in events(baton) if e["kind"] == "task.failed" and e["task"] == 3][-1]
    assert "SCRIPT-FAILS" in (failed["data"].get("output") or "")


# On the real conductor with scripted agents ---------------------------------------------------
def scripted(repo, **limits) -> Scripted:
    run = Scripted(repo)
    run.config(limits=limits)
    return run


def test_manual_task_waits_for_baton_done(repo):
    run = scripted(repo)
    run.plan([task(1, "Rotate the API key by hand", mode="manual"),
              task(2, "Use the new key", deps=[1]), task(3, "Independent")])
    script = {"2": [{"write": "after.txt", "content": "after\n"},
                    {"report": "done", "summary": "ok"}],
              "3": [{"write": "free.txt", "content": "free\n"},
                    {"report": "done", "summary": "ok"}]}
    assert run.run(script) == 3
    assert "baton done 1" in run.printed()
    st = run.status()
    assert {t["id"]: t["state"] for t in st["tasks"]} == {1: "queued", 2: "queued", 3: "landed"}
    assert st["conductor"] is None
    # Asking again changes nothing: still waiting on the person.
    assert run.run(script, approve=False) == 3
    assert "task.started" not in kinds(run.events(), 2)

    # An agent's task is not marked done by hand.
    with pytest.raises(BatonError) as refused:
        running.mark_done(run.ws, 3)
    assert refused.value.code == 2
    assert run.resume(script, before=lambda ws: running.mark_done(ws, 1)) == 0
    st = run.status()
    assert {t["id"]: t["state"] for t in st["tasks"]} == {1: "done", 2: "landed", 3: "landed"}
    assert tree_files(repo, st["plan"]["integration_branch"])["after.txt"] == "after"


def test_run_approve_approves_checkpoints_and_records_it(repo):
    run = scripted(repo)
    run.plan([task(1, "Migrate", checkpoint=True)], autonomy="guarded")
    assert run.run({"1": CHECKPOINTED}) == 0
    st = run.status()
    assert st["tasks"][0]["state"] == "landed"
    evs = run.events()
    [answer] = [e for e in evs if e["kind"] == "task.checkpoint_answered"]
    assert answer["data"]["answer"] == "yes" and answer["data"]["by"] == "run --approve"
    assert kinds(evs, 1).count("task.started") == 1 and "task.resumed" not in kinds(evs, 1)
    assert tree_files(repo, st["plan"]["integration_branch"])["after.txt"] == "dropped"


def test_autopilot_retries_a_failed_task_once_then_parks_it(repo):
    run = scripted(repo)
    run.plan([task(1, "Always fails"), task(2, "Fine")], autonomy="autopilot")
    code = run.run({
        "1": [{"print": "trying"}, {"report": "failed", "reason": "REASON-9: the API is gone"}],
        "2": [{"write": "ok.txt", "content": "ok\n"}, {"report": "done", "summary": "ok"}]})
    assert code == 1
    st = run.status()
    assert {t["id"]: t["state"] for t in st["tasks"]} == {1: "parked", 2: "landed"}
    assert "REASON-9" in st["tasks"][0]["reason"]
    evs = run.events()
    assert kinds(evs, 1).count("task.started") == 2
    assert kinds(evs, 1)[-1] == "task.parked"
    texts = prompts(1)
    assert len(texts) == 2
    assert "REASON-9" in texts[1] and "REASON-9" not in texts[0]


def test_failing_run_level_check_fails_the_run_with_its_output(repo):
    run = Scripted(repo)
    run.config(extra='[checks]\nrun = "cat landed.txt; echo RUN-CHECK-SAYS-NO; exit 4"\n')
    run.plan([task(1)])
    assert run.run({"*": [{"write": "landed.txt", "content": "LANDED-CONTENT\n"},
                          {"report": "done", "summary": "ok"}]}) == 1
    [check] = [e for e in run.events() if e["kind"] == "run.check"]
    assert check["data"]["exit"] == 4
    # It ran on the integration branch, after the task landed there.
    assert "LANDED-CONTENT" in check["data"]["output"]
    assert "RUN-CHECK-SAYS-NO" in check["data"]["output"]
    assert "run check: exit 4" in run.printed()
    assert run.task(1)["state"] == "landed"


def test_checkpoint_answered_no_while_the_agent_waits_stops_the_step(repo):
    run = scripted(repo, checkpoint_wait="60s")
    run.plan([task(1, "Migrate", checkpoint=True)], autonomy="guarded", approve=True)

    def answer_no(ws) -> None:  # the agent is still inside `baton checkpoint`
        wait_until(ws, reached(1, "checkpoint"), what="the checkpoint")
        running.answer_checkpoint(ws, 1, False)

    assert run.run({"1": CHECKPOINTED}, approve=False, meanwhile=answer_no) == 1
    t1 = run.task(1)
    assert t1["state"] == "failed" and "said no" in t1["reason"], t1
    evs = run.events()
    assert kinds(evs, 1).count("task.started") == 1 and "task.resumed" not in kinds(evs, 1)
    workdir = Path(next(e for e in evs if e["kind"] == "task.started")["data"]["workdir"])
    assert (workdir / "before.txt").exists() and not (workdir / "after.txt").exists()
    with pytest.raises(BatonError) as refused:  # nothing left to answer
        running.answer_checkpoint(run.ws, 1, True)
    assert refused.value.code == 2


def test_autopilot_retry_feedback_carries_the_failing_checks_output(repo):
    """A failing check's name alone does not say what failed: the retry's prompt holds the
    tail of its output, under a heading that is never empty."""
    run = scripted(repo)
    check = "seq 1 100 | sed 's/^/line /'; echo 'AssertionError: CHECK-OUTPUT-7'; exit 3"
    run.plan([task(1, "Checked", check=check)], autonomy="autopilot")
    assert run.run({"1": [{"write": "x.txt", "content": "x\n"},
                          {"report": "done", "summary": "ok"}]}) == 1
    first_prompt, retry = prompts(1)
    assert "## Feedback on the previous attempt" not in first_prompt
    feedback = retry.split("## Feedback on the previous attempt", 1)[1]
    assert "exited 3" in feedback and "AssertionError: CHECK-OUTPUT-7" in feedback
    assert "line 100" in feedback and "line 1\n" not in feedback  # the tail, not the whole
