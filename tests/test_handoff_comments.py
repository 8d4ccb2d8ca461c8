"""Review comments reach the agent that wrote the line: `baton comment N FILE:LINE TEXT`
finds the task by blame on the landed work, `baton retry` sends it its open comments with the
lines around them, and they close when the follow-up lands on top of the integration branch.
Real git, real `baton` processes, the scripted demo agent."""

from __future__ import annotations

import json
from pathlib import Path

from test_run_modes import prompts

from helpers.scripted_kit import Scripted
from helpers.run_kit import (
    events, integration, kinds, load_plan, script_agent, status, task, tree_files, wait_idle,
    write_config,
)


def three_landed(repo, baton, tmp_path) -> None:
    agent = script_agent(tmp_path, "c", {
        "1": [{"write": "a.txt", "content": "one\n"}, {"report": "done", "summary": "a"}],
        "2": [{"write": "b.txt", "content": "two\n"}, {"report": "done", "summary": "b"}],
        "3": [{"append": "c.txt", "content": "line A\nline B\nline C\n"},
              {"report": "done", "summary": "c"}],
    })
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "Alpha"), task(2, "Beta", deps=[1]), task(3, "Gamma")])
    # The run is the set-up: the real conductor in this process, the same scripts played by
    # the scripted runner (test_a_follow_up… below runs `baton run` with the agent a process).
    assert Scripted(repo).run(json.loads(Path(agent[-1]).read_text()), timeout=120) == 0


def test_a_comment_on_a_combined_diff_line_reaches_the_task_that_wrote_it(repo, baton, tmp_path):
    three_landed(repo, baton, tmp_path)
    # Reviewing task 1 (or the whole), the person comments on a line task 3 wrote.
    out = baton("comment", "1", "c.txt:2", "call it line BETA")
    assert out.returncode == 0, out.stderr
    assert "comment 1 on task 3 (task 3 wrote that line), c.txt:2" in out.stdout
    review = baton.json("handoff", "review", "--json")
    assert [(c["task"], c["file"], c["line"], c["text"]) for c in review["comments"]] == [
        (3, "c.txt", 2, "call it line BETA")]
    text = baton("handoff", "review", "--stat").stdout
    assert "task 3 · c.txt:2: call it line BETA" in text
    assert {t["id"]: t["open_comments"] for t in status(baton)["tasks"]} == {1: 0, 2: 0, 3: 1}

    # A landed task with no comment is not retried; the commented one is, as a follow-up.
    refused = baton("retry", "2")
    assert refused.returncode == 2 and "no open review comment" in refused.stderr
    out = baton("retry", "3")
    assert out.returncode == 0, out.stderr
    st = wait_idle(baton)
    assert {t["id"]: t["state"] for t in st["tasks"]} == {1: "landed", 2: "landed", 3: "landed"}
    retry_prompt = prompts(3)[-1]
    assert "Review comments on lines you wrote" in retry_prompt
    assert "c.txt:2: call it line BETA" in retry_prompt
    assert "    1  line A\n    2> line B\n    3  line C" in retry_prompt  # the lines around it
    assert len(prompts(1)) == 1 and len(prompts(2)) == 1  # nobody else re-ran
    evs = events(baton)
    assert kinds(evs, 3).count("task.landed") == 2 and kinds(evs, 1).count("task.started") == 1
    # The fix landed on top of the integration branch; the comment is closed.
    assert tree_files(repo, integration(repo, baton))["c.txt"].count("line B") == 2
    assert baton.json("handoff", "review", "--json")["comments"] == []
    assert {t["id"]: t["open_comments"] for t in status(baton)["tasks"]}[3] == 0


def test_a_comment_that_no_task_wrote_or_that_names_no_line_is_refused(repo, baton, tmp_path):
    three_landed(repo, baton, tmp_path)
    out = baton("comment", "3", "README.md:1", "nice")
    assert out.returncode == 2 and "was not written by a landed task" in out.stderr
    for location, said in (("c.txt", "is not FILE:LINE"), ("c.txt:0", "is not FILE:LINE"),
                           ("c.txt:9", "c.txt has 3 lines"), ("nope.txt:1", "is not in the")):
        out = baton("comment", "3", location, "x")
        assert out.returncode == 2 and said in out.stderr, (location, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1
    assert baton.json("handoff", "review", "--json")["comments"] == []


def test_a_follow_up_of_a_task_whose_worktree_was_recycled(repo, baton, tmp_path):
    """Task 3 took over task 1's worktree when 1 landed; a comment on task 1's line is
    still fixed on task 1's own branch, checked out again, and lands on top."""
    agent = script_agent(tmp_path, "r", {
        "1": [{"append": "a.txt", "content": "alpha\n"}, {"report": "done", "summary": "a"}],
        "2": [{"write": "b.txt", "content": "beta\n"}, {"report": "done", "summary": "b"}],
        "3": [{"write": "c.txt", "content": "gamma\n"}, {"report": "done", "summary": "c"}],
    })
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "Alpha"), task(2, "Beta", deps=[1]), task(3, "Gamma", deps=[2])])
    assert baton("run", "--approve", timeout=120).returncode == 0
    t1 = status(baton)["tasks"][0]
    assert t1["worktree_reason"] == "recycled for task 3 (its work is on its branch)", t1
    assert baton("comment", "2", "a.txt:1", "ALPHA in capitals").returncode == 0
    assert baton("retry", "1").returncode == 0
    st = wait_idle(baton)
    assert [t["state"] for t in st["tasks"]] == ["landed", "landed", "landed"]
    assert "a.txt:1: ALPHA in capitals" in prompts(1)[-1]
    files = tree_files(repo, integration(repo, baton))
    assert files["a.txt"] == "alpha\nalpha" and files["b.txt"] == "beta"
    branch = st["tasks"][0]["branch"]
    assert tree_files(repo, branch)["a.txt"] == "alpha\nalpha"  # fixed on its own branch
    assert "b.txt" not in tree_files(repo, branch)
