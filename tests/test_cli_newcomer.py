"""The CLI as a newcomer meets it (issue 52): a mistyped option gets what was meant and the
subcommand's own help; `baton players` gives the one-line fix; text `status` shows the
reasons its JSON has, a long one under its row rather than pushing the row right; a paused
task that ran keeps when it started; `task-effort --help` names `default`."""

from __future__ import annotations


import pytest

from conftest import write_plan
from baton_tui.plan.current import current
from baton_tui.workspace import Workspace

TASKS = [{"id": 1, "title": "First", "prompt": "p", "player": "claude-code"},
         {"id": 2, "title": "Second", "prompt": "p", "player": "claude-code"},
         {"id": 3, "title": "Third", "prompt": "p", "player": "claude-code"}]


@pytest.mark.parametrize("argv, said", [
    (["status", "--jsn"], "baton: status: unrecognized arguments: --jsn — did you mean "
                          "--json? — `baton status --help` says more"),
    (["plan", "--gaol", "x"], "did you mean --goal? — `baton plan --help` says more"),
    (["handoff", "review", "--tsk", "1"],
     "did you mean --task? — `baton handoff review --help` says more"),
])
def test_a_mistyped_option_says_what_was_meant_and_where_help_is(repo, baton, argv, said):
    result = baton(*argv)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert said in result.stderr


def test_an_option_with_nothing_close_still_points_at_the_subcommand(repo, baton):
    result = baton("status", "--zzzzzz")
    assert result.returncode == 2
    assert result.stderr.strip() == ("baton: status: unrecognized arguments: --zzzzzz — "
                                     "`baton status --help` says more")


def test_players_prints_the_one_line_fix(repo, baton):
    result = baton("players", env={"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "",
                                   "OPENAI_API_KEY": ""})
    assert result.returncode == 0
    rows = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert "npm i -g @openai/codex" in rows["codex"]
    assert "export ANTHROPIC_API_KEY=" in rows["anthropic"]


def test_task_effort_help_names_default(repo, baton):
    out = baton("task-effort", "--help").stdout
    assert "low|medium|high|default" in out


def stored(repo, baton) -> tuple[Workspace, int]:
    assert baton("plan", "--from", str(write_plan(repo / "plan.json", TASKS))).returncode == 0
    ws = Workspace(repo)
    return ws, current(ws).row.id


def test_text_status_shows_the_reasons_its_json_has(repo, baton):
    ws, plan = stored(repo, baton)
    ws.store.append(plan, 1, "task.started", {"base": "0" * 40})
    ws.store.append(plan, 1, "task.paused", {"reason": "interrupted"})
    ws.store.append(plan, 2, "task.queued", {"reason": "runner unreachable", "deferred": True})
    long = "the agent exited without reporting " + "and then some more words " * 8
    ws.store.append(plan, 3, "task.started", {"base": "0" * 40})
    ws.store.append(plan, 3, "task.failed", {"reason": long.strip()})
    ws.close()
    text = baton("status").stdout
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("  #")}
    assert "paused: interrupted" in rows["#1"]
    assert "queued: runner unreachable" in rows["#2"]
    # the long reason is cut in its row (the mode and player stay in their columns) and said
    # in full under it
    assert rows["#3"].index("build") == rows["#1"].index("build")
    assert "…" in rows["#3"]
    assert f"failed: {long.strip()}" in text
    tasks = {t["id"]: t for t in baton.json("status", "--json")["tasks"]}
    assert tasks[1]["reason"] == "interrupted" and tasks[2]["reason"] == "runner unreachable"


def test_a_paused_task_that_ran_keeps_when_it_started(repo, baton):
    ws, plan = stored(repo, baton)
    ws.store.append(plan, 1, "task.started", {"base": "0" * 40})
    ws.store.append(plan, 1, "task.paused", {"reason": "interrupted"})
    started = ws.store.conn.execute(
        "SELECT ts FROM events WHERE task_id = 1 AND kind = 'task.started'").fetchone()[0]
    ws.close()
    tasks = {t["id"]: t for t in baton.json("status", "--json")["tasks"]}
    assert tasks[1]["state"] == "paused"
    assert tasks[1]["started_at"] == pytest.approx(started)
    assert tasks[2]["started_at"] is None  # never ran


def test_the_detail_numbers_attempts_per_task(repo, baton):
    """Attempt ids run across the plan; the task detail counts a task's own."""
    from baton_tui.run.detail import load_detail

    ws, plan = stored(repo, baton)
    for task_id in (1, 1, 1, 2, 2):  # the store's ids: 1, 2, 3 for task 1; 4, 5 for task 2
        ws.store.new_attempt(plan, task_id, f"nonce-{task_id}", "claude-code", {}, "")
    shown = load_detail(ws.paths.store_path, repo, plan, 2, None, None).report
    ws.close()
    assert shown.splitlines()[0] == "attempt 2 · claude-code"


@pytest.mark.parametrize("waiting, said", [
    ([1], "no landed task to merge (task 1 has not landed)"),
    ([1, 2], "no landed task to merge (tasks 1, 2 have not landed)"),
])
def test_not_landed_is_said_in_the_singular_too(repo, baton, waiting, said):
    from baton_tui import api
    from baton_tui.api import Action

    ws, plan = stored(repo, baton)
    api.approve(ws)
    for task_id in (1, 2, 3):
        if task_id not in waiting:
            ws.store.append(plan, task_id, "task.discarded", {})
    board = api.snapshot(ws.store)
    ws.close()
    assert board.base_branch
    assert api.why_not(Action.MERGE, board) == said
