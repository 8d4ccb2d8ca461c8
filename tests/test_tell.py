"""`baton tell N TEXT`: a message reaches a running agent at its next turn (its inbox) without
stopping it, or its next prompt when it is not running; recorded, and shown with the task."""

from __future__ import annotations

import sys

from test_run_modes import prompts

from baton_tui.run import control
from helpers.run_kit import (
    AGENTS, events, load_plan, task, tree_files, wait_idle, wait_state, write_config,
)
from helpers.scripted_kit import Scripted


def test_a_running_agent_reads_the_message_in_its_inbox(repo, baton):
    write_config(repo, {"agent": [sys.executable, str(AGENTS / "inbox_reader.py")]})
    load_plan(baton, [task(1, "Wait for word")])
    assert baton("run", "--approve", "--detach").returncode == 0
    wait_state(baton, 1, "running")
    out = baton("tell", "1", "name it ZEBRA-5")
    assert out.returncode == 0, out.stderr
    assert "its agent reads it at its next turn" in out.stdout
    st = wait_idle(baton)
    t1 = st["tasks"][0]
    assert t1["state"] == "landed", t1
    told = tree_files(repo, st["plan"]["integration_branch"])["told.txt"]
    assert "- name it ZEBRA-5" in told
    assert t1["told"] == {"count": 1, "unread": 0, "last": "name it ZEBRA-5"}
    [read] = [e for e in events(baton) if e["kind"] == "task.told_read"]
    assert read["data"]["via"] == "inbox" and read["data"]["ids"] == [1]
    assert [e["kind"] for e in events(baton)].count("task.started") == 1  # never stopped
    assert "told (1): name it ZEBRA-5" in baton("status").stdout


# On the real conductor with scripted agents (`helpers.scripted_kit`); `baton tell` itself
# through the CLI.
def test_a_message_to_a_task_not_running_goes_into_its_next_prompt(repo, baton):
    run = Scripted(repo)
    run.config()
    run.plan([task(1, "Ask")])
    script = {"1": [{"report": "failed", "reason": "which API?"}]}
    assert run.run(script) == 1
    out = baton("tell", "1", "the v2 API")
    assert out.returncode == 0 and "delivered when the task next starts" in out.stdout
    assert run.task(1)["told"]["unread"] == 1
    run.conduct(script, lambda ws: control.retry_task(ws, 1))
    first, second = prompts(1)
    assert "the v2 API" not in first
    assert "Messages from the person" in second and "- the v2 API" in second
    assert run.task(1)["told"]["unread"] == 0
    assert "baton inbox" in first  # the rules say where messages arrive


def test_tell_is_refused_where_no_agent_will_hear_it(repo, baton):
    run = Scripted(repo)
    run.config()
    run.plan([task(1, "Build"), task(2, "By hand", mode="manual")])
    assert run.run({"1": [{"write": "x.txt", "content": "x\n"},
                          {"report": "done", "summary": "x"}]}) == 3  # 2 waits for `done`
    out = baton("tell", "1", "too late")
    assert out.returncode == 2 and "task 1 is landed: no agent works on it now" in out.stderr
    out = baton("tell", "2", "hello")
    assert out.returncode == 2 and "task 2 runs no agent" in out.stderr
    assert baton("tell", "1", "  ").returncode == 2
    assert not [e for e in run.events() if e["kind"] == "task.told"]
