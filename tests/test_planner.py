"""The planner protocol end to end through the CLI, with a scripted planner program.

The planner is a custom player (trusted baton.toml) that prints one JSON object per turn, as
a real planner's final message would; Baton parses, checks, feeds back problems and stores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PLANNER = Path(__file__).parent / "planners" / "scripted_planner.py"


def task(id_, title, **extra):
    return {"id": id_, "title": title, "prompt": f"do {title}", "player": "mine", **extra}


def plan_doc(tasks, **extra):
    return {"version": 1, "goal": "add a limiter", "tasks": tasks, **extra}


@pytest.fixture
def planner_repo(repo, baton, tmp_path):
    def setup(outputs: list[dict], trust: bool = True) -> Path:
        script = tmp_path / "planner-script.json"
        script.write_text(json.dumps(outputs))
        argv = [sys.executable, str(PLANNER), str(script)]
        (repo / "baton.toml").write_text(
            'planner = "mine"\n[players.custom.mine]\n'
            f"command = {json.dumps(argv)}\nresearch_command = {json.dumps(argv)}\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
        if trust:
            assert baton("trust").returncode == 0
        return script
    return setup


def test_question_answer_then_valid_plan(planner_repo, baton, tmp_path):
    planner_repo([
        {"questions": [{"question": "Reuse the Redis connection?", "recommendation": "reuse it"},
                       {"question": "Per-user limits?", "recommendation": "yes"}]},
        plan_doc([task(1, "limiter", scope=["src/limiter.py"], skills=["tdd"]),
                  task(2, "docs", depends_on=[1], scope=["README.md"])]),
    ])
    asked = baton("plan", "--goal", "add a limiter")
    assert asked.returncode == 3, asked.stderr
    assert "Reuse the Redis connection?" in asked.stdout
    assert "Recommendation: reuse it" in asked.stdout
    partial = baton("plan", "--answer", "1", "no, a new pool")
    assert partial.returncode == 3  # question 2 still open
    assert "Per-user limits?" in partial.stdout and "Reuse the Redis" not in partial.stdout
    done = baton("plan", "--yes")
    assert done.returncode == 0, done.stderr
    doc = baton.json("plan", "--json")
    assert [t["title"] for t in doc["tasks"]] == ["limiter", "docs"]
    answers = {q["question"]: q["answer"] for q in doc["questions"]}
    assert answers == {"Reuse the Redis connection?": "no, a new pool", "Per-user limits?": "yes"}
    # The answers reached the planner on its second turn.
    second_prompt = (tmp_path / "prompt-1.txt").read_text()
    assert "no, a new pool" in second_prompt
    assert baton.json("status", "--json")["plan"]["approved"] is False


def test_answers_from_a_file(planner_repo, baton, tmp_path):
    planner_repo([{"questions": [{"question": "Q1?", "recommendation": "a"},
                                 {"question": "Q2?", "recommendation": "b"}]},
                  plan_doc([task(1, "only")])])
    assert baton("plan", "--goal", "g").returncode == 3
    answers = tmp_path / "answers.txt"
    answers.write_text("1: first\n2: second\n")
    assert baton("plan", "--answer", str(answers)).returncode == 0
    doc = baton.json("plan", "--json")
    assert [q["answer"] for q in doc["questions"]] == ["first", "second"]


def test_cyclic_draft_is_repaired(planner_repo, baton, tmp_path):
    planner_repo([
        plan_doc([task(1, "a", depends_on=[2]), task(2, "b", depends_on=[1])]),
        plan_doc([task(1, "a"), task(2, "b", depends_on=[1])]),
    ])
    result = baton("plan", "--goal", "g")
    assert result.returncode == 0, result.stderr
    assert "cycle" in result.stderr  # the repair was shown
    assert "cycle" in (tmp_path / "prompt-1.txt").read_text()  # and fed back
    assert baton.json("plan", "--json")["tasks"][1]["depends_on"] == [1]


def test_draft_that_never_becomes_valid_fails_clearly(planner_repo, baton, repo):
    planner_repo([plan_doc([task(1, "a", player="no-such-player")])])
    result = baton("plan", "--goal", "g")
    assert result.returncode == 1
    assert "still invalid after 3 repairs" in result.stderr
    assert "no-such-player" in result.stderr
    assert "Traceback" not in result.stderr
    assert baton.json("status", "--json")["plan"] is None  # nothing stored as a plan
    # The transcript is kept: four planner turns.
    from baton_tui.planner.drafting import load_session
    from baton_tui.workspace import Workspace

    session = load_session(Workspace(repo))
    assert len([m for m in session["transcript"] if m["role"] == "planner"]) == 4


def test_overlapping_scopes_of_independent_tasks_are_fed_back(planner_repo, baton, tmp_path):
    planner_repo([
        plan_doc([task(1, "a", scope=["src/api/"]), task(2, "b", scope=["src/api/routes.py"])]),
        plan_doc([task(1, "a", scope=["src/api/"]),
                  task(2, "b", scope=["src/api/routes.py"], depends_on=[1])]),
    ])
    assert baton("plan", "--goal", "g").returncode == 0
    assert "overlap" in (tmp_path / "prompt-1.txt").read_text()


def test_scope_escaping_the_repository_is_fed_back(planner_repo, baton, tmp_path):
    planner_repo([plan_doc([task(1, "a", scope=["../outside.py"])]),
                  plan_doc([task(1, "a", scope=["inside.py"])])])
    assert baton("plan", "--goal", "g").returncode == 0
    assert "inside the repository" in (tmp_path / "prompt-1.txt").read_text()


def test_a_write_during_planning_is_caught_and_no_plan_is_made(planner_repo, baton, repo):
    planner_repo([{"write": "stray.txt", "then": plan_doc([task(1, "a")])}])
    result = baton("plan", "--goal", "g")
    assert result.returncode == 1
    assert "read-only" in result.stderr
    assert baton.json("status", "--json")["plan"] is None
    branches = subprocess.run(["git", "branch", "--list", "baton/*"], cwd=repo,
                              capture_output=True, text=True).stdout
    assert branches.strip() == ""  # planning never creates branches


def test_a_players_own_cache_is_not_the_planner_changing_the_repository(planner_repo, baton,
                                                                        repo):
    """Aider writes its tag cache into the repository it reads: planning goes on, and the
    cache it created is cleared again (a cache the person already had is left alone)."""
    mine = repo / ".aider.chat.history.md"
    mine.write_text("the person's own\n")
    planner_repo([{"write": ".aider.tags.cache.v4/cache.db", "then": plan_doc([task(1, "a")])}])
    result = baton("plan", "--goal", "g")
    assert result.returncode == 0, result.stderr
    assert [t["title"] for t in baton.json("plan", "--json")["tasks"]] == ["a"]
    assert not (repo / ".aider.tags.cache.v4").exists()
    assert mine.read_text() == "the person's own\n"


def test_planning_never_creates_branches_or_worktrees(planner_repo, baton, repo):
    planner_repo([plan_doc([task(1, "a")])])
    assert baton("plan", "--goal", "g").returncode == 0
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True,
                               text=True).stdout.strip().splitlines()
    assert len(worktrees) == 1
    assert subprocess.run(["git", "branch", "--list", "baton/*"], cwd=repo, capture_output=True,
                          text=True).stdout.strip() == ""


def test_untrusted_planner_command_is_refused(planner_repo, baton):
    planner_repo([plan_doc([task(1, "a")])], trust=False)
    result = baton("plan", "--goal", "g")
    assert result.returncode == 2
    assert "baton trust" in result.stderr


def test_repo_skills_and_built_in_skills_reach_the_planner(planner_repo, baton, repo, tmp_path):
    skills = repo / ".baton" / "skills"
    skills.mkdir(parents=True)
    (skills / "migrations.md").write_text(
        "---\nname: migrations\ndescription: safe schema changes\nwhen: a task changes the "
        "database schema\n---\nWrite reversible migrations.\n")
    planner_repo([plan_doc([task(1, "a", skills=["migrations", "tdd"])])])
    assert baton("plan", "--goal", "g").returncode == 0
    first = (tmp_path / "prompt-0.txt").read_text()
    assert "migrations: a task changes the database schema" in first
    assert "tdd:" in first
    assert baton.json("plan", "--json")["tasks"][0]["skills"] == ["migrations", "tdd"]


def test_unknown_skill_is_fed_back(planner_repo, baton, tmp_path):
    planner_repo([plan_doc([task(1, "a", skills=["nonexistent"])]), plan_doc([task(1, "a")])])
    assert baton("plan", "--goal", "g").returncode == 0
    assert "unknown skill" in (tmp_path / "prompt-1.txt").read_text()


def test_answer_without_questions_is_bad_input(baton):
    result = baton("plan", "--answer", "1", "x")
    assert result.returncode == 2
    assert "no planner questions" in result.stderr


def test_planner_steps_are_events_in_the_log(planner_repo, baton):
    planner_repo([plan_doc([task(1, "a")])])
    assert baton("plan", "--goal", "g").returncode == 0
    events = [json.loads(line) for line in baton("log", "--json").stdout.splitlines()]
    kinds = [e["kind"] for e in events if e["kind"].startswith("planner.")]
    assert kinds[0] == "planner.step" and kinds[-1] == "planner.plan"
